# SPDX-License-Identifier: GPL-2.0
# bash completion for nsdump(8); installed as
# $(PREFIX)/share/bash-completion/completions/nsdump.
# Plain compgen only: it works without the bash-completion package too.
# The options and what each argument completes to are nsdump's option
# table's (nsdump/opts.c); tests/host/test_opts.c holds them together.

_nsdump()
{
	local cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD-1]}
	local opts="-B -c -e -h -i -L -M -n -p -q -r -t -v -w
		--addr --by --calibrate --cold --device --dir --exemplars --export --help
		--html --join-window --json --raw --rtt --sample --sample-flows --serve
		--version"

	case $prev in
	-r | -w | --html | chrome-trace | pcapng)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--export)
		COMPREPLY=($(compgen -W "chrome-trace pcapng" -- "$cur"))
		return
		;;
	-i)
		COMPREPLY=($(compgen -W "any $(ls /sys/class/net 2>/dev/null)" -- "$cur"))
		return
		;;
	--device)
		COMPREPLY=($(compgen -f -- "${cur:-/dev/}"))
		return
		;;
	--dir)
		COMPREPLY=($(compgen -W "tx rx" -- "$cur"))
		return
		;;
	--by)
		COMPREPLY=($(compgen -W "conn cpu dir dev" -- "$cur"))
		return
		;;
	--exemplars)
		COMPREPLY=($(compgen -W "all span>p99" -- "$cur"))
		return
		;;
	-e)
		# the events this machine can count, as nsdump -L names them
		local events
		events=$(nsdump -L 2>/dev/null |
			awk '/^  [^ (]/ { print $1; if ($2 == "OR") print $3 }')
		COMPREPLY=($(compgen -W "$events" -- "${cur##*,}"))
		if [[ $cur == *,* ]]; then
			COMPREPLY=("${COMPREPLY[@]/#/${cur%,*},}")
		fi
		return
		;;
	-B | -c | -p | --sample | --sample-flows | --serve | --join-window)
		return	# a number, lport.rport, [addr:]port
		;;
	esac
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}

complete -F _nsdump nsdump
