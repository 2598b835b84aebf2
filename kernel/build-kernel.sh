#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a NetSlice VM kernel: unpack the source (or use KSRC=), install the
# ns_core sources and hook patches into it, configure an out-of-tree build
# (O=build/linux-$FLAVOUR) from allnoconfig + kernel/ns_core/config, verify
# the config, build.  Every step is incremental: re-running with nothing
# changed touches nothing.
#
# Usage: kernel/build-kernel.sh [install|config|build|module|deb] (default: build)
#   install  only unpack the source and install ns_core into it
#   config   install + write and verify .config
#   build    config + make (vmlinux, bzImage, in-tree modules)
#   module   build + kernel/ns_module (netslice.ko) with M=
#   deb      config + `make bindeb-pkg`, which builds: linux-image and
#            linux-headers packages in $DEB_OUT; with KCONFIG=, from that
#            configuration (see configure_user) instead of the VM's
# Flavours build side by side; two runs for one KOBJ queue (locks below).
#
# Environment (the top-level Makefile sets these):
#   FLAVOUR    netslice (default) | stock (CONFIG_NETSLICE off) |
#              debug (netslice + KASAN, lockdep, kmemleak)
#   KSRC       an existing v6.12.y source tree to use instead of build/linux
#   KOBJ       build output directory (default build/linux-$FLAVOUR)
#   KCC        compiler (default "ccache gcc" when ccache is installed)
#   CCACHE_BASEDIR, CCACHE_NOHASHDIR  default the clone and 1 (see below)
#   JOBS       parallel jobs (default nproc)
#   LINUX_TARBALL  default /usr/src/linux-source-6.12.tar.xz
#   KCONFIG    (config, deb) a kernel configuration to start from, e.g.
#              /boot/config-$(uname -r) (.gz and .xz are read too); KOBJ
#              should then be a tree of its own (make deb-kernel: build/linux-deb)
#   DEB_OUT    (deb) where the packages go (default build/deb)
#   KDEB_COMPRESS  (deb) dpkg-deb's compressor (default gzip: xz took
#              twice as long for the VM's kernel)

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FLAVOUR=${FLAVOUR:-netslice}
LINUX_TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
KSRC=${KSRC:-}
SRC=${KSRC:-$REPO/build/linux}
KOBJ=${KOBJ:-$REPO/build/linux-$FLAVOUR}
JOBS=${JOBS:-$(nproc)}
if [[ -z ${KCC:-} ]]; then
	if command -v ccache >/dev/null; then KCC="ccache gcc"; else KCC=gcc; fi
fi
# Paths under the clone hash as relative ones, so that another clone of the
# project (a CI checkout, a second work tree) hits the same cache entries.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$REPO} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
CORE=$REPO/kernel/ns_core
CONFIG_DIR=$CORE/config
STATE=$SRC/.netslice-applied
KMAKE=(make -C "$SRC" O="$KOBJ" ARCH=x86_64 CC="$KCC")

die() { echo "build-kernel: error: $*" >&2; exit 1; }
say() { echo "build-kernel: $*"; }

case $FLAVOUR in
netslice|stock|debug) ;;
*) die "FLAVOUR=$FLAVOUR: expected netslice, stock or debug" ;;
esac

# ---------------------------------------------------------------- source
unpack_source() {
	if [[ -n $KSRC ]]; then
		[[ -f $KSRC/Makefile && -d $KSRC/net ]] ||
			die "KSRC=$KSRC is not a kernel source tree"
		local v
		v=$(make -s -C "$KSRC" kernelversion 2>/dev/null) || v=unknown
		[[ $v == 6.12* ]] || say "warning: KSRC is $v, NetSlice targets 6.12"
		return
	fi
	[[ -f $SRC/Makefile ]] && return
	[[ -f $LINUX_TARBALL ]] ||
		die "$LINUX_TARBALL missing: apt-get install linux-source-6.12 (or 'make deps'), or set KSRC="
	say "unpacking $LINUX_TARBALL into $SRC"
	local tmp=$SRC.unpack.$$
	rm -rf "$tmp"
	mkdir -p "$tmp"
	tar -C "$tmp" --strip-components=1 -xf "$LINUX_TARBALL"
	mv "$tmp" "$SRC"
}

# ------------------------------------------------------ ns_core install
# Drop-in files as "destination<TAB>source" lines, destination relative
# to the kernel tree.
core_files() {
	[[ -f $REPO/include/netslice.h ]] &&
		printf 'include/uapi/linux/netslice.h\t%s\n' "$REPO/include/netslice.h"
	[[ -f $CORE/include/linux/netslice.h ]] &&
		printf 'include/linux/netslice.h\t%s\n' "$CORE/include/linux/netslice.h"
	if [[ -d $CORE/net ]]; then
		(cd "$CORE/net" && find . -type f ! -name '*~' ! -name '.*' | LC_ALL=C sort) |
		while read -r f; do
			printf 'net/%s\t%s\n' "${f#./}" "$CORE/net/${f#./}"
		done
	fi
	return 0
}

# The patch series in order: patches/series if present, else glob order.
core_series() {
	local dir=$CORE/patches p
	[[ -d $dir ]] || return 0
	if [[ -f $dir/series ]]; then
		while read -r p _; do
			[[ -z $p || $p == \#* ]] && continue
			[[ -f $dir/$p ]] || die "patches/series lists $p, which does not exist"
			echo "$p"
		done <"$dir/series"
	else
		(cd "$dir" && ls -1 -- *.patch 2>/dev/null | LC_ALL=C sort) || true
	fi
}

# Files a patch touches (-p1), from its ---/+++ header pairs.
patch_files() {
	awk '
	function strip(p) { sub(/\t.*/, "", p); sub(/^[^\/]*\//, "", p); return p }
	prev ~ /^--- / && /^\+\+\+ / {
		a = substr(prev, 5); b = substr($0, 5)
		if (a !~ /^\/dev\/null/) print strip(a)
		if (b !~ /^\/dev\/null/) print strip(b)
	}
	{ prev = $0 }' "$@"
}

# The core counts as present once the installed tree hooks its Kconfig in;
# until then CONFIG_NETSLICE cannot exist and is not required.
core_present() { grep -qs 'net/netslice/Kconfig' "$SRC/net/Kconfig"; }

# Hash of everything install_core puts into the tree.
core_stamp() {
	local files series
	files=$(core_files)
	series=$(core_series)
	{
		echo "files:"
		[[ -n $files ]] && while IFS=$'\t' read -r dst src; do
			echo "$dst $(sha256sum <"$src" | cut -d' ' -f1)"
		done <<<"$files"
		echo "series:"
		for p in $series; do
			echo "$p $(sha256sum <"$CORE/patches/$p" | cut -d' ' -f1)"
		done
	} | sha256sum | cut -d' ' -f1
}

install_core() {
	local files series stamp old_stamp
	files=$(core_files)
	series=$(core_series)
	stamp=$(core_stamp)
	old_stamp=$(cat "$STATE/stamp" 2>/dev/null || true)
	if [[ $stamp == "$old_stamp" ]]; then
		say "ns_core already installed in $SRC (unchanged)"
		return
	fi

	# Replay old-series-reversed + new-series on copies of just the files
	# the two series touch; the tree is written only if all of it works.
	local old_series="" p f
	work=$(mktemp -d "${TMPDIR:-/tmp}/ns-install.XXXXXX")
	trap 'rm -rf "${work:-}"' EXIT
	[[ -f $STATE/series ]] && old_series=$(cat "$STATE/series")
	{
		for p in $old_series; do patch_files "$STATE/patches/$p"; done
		for p in $series; do patch_files "$CORE/patches/$p"; done
	} | LC_ALL=C sort -u >"$work/touched"
	mkdir "$work/tree"
	while read -r f; do
		[[ -e $SRC/$f ]] || continue
		mkdir -p "$work/tree/$(dirname "$f")"
		cp -p "$SRC/$f" "$work/tree/$f"
	done <"$work/touched"

	local revlist=() out
	for p in $old_series; do revlist=("$p" "${revlist[@]}"); done
	for p in "${revlist[@]}"; do
		out=$(cd "$work/tree" && patch -p1 -R -f -s --no-backup-if-mismatch -r - \
			<"$STATE/patches/$p" 2>&1) ||
			die "cannot reverse the previously applied $p in $SRC:
$out
The tree no longer matches $STATE; delete $SRC and re-run."
	done
	for p in $series; do
		if ! out=$(cd "$work/tree" && patch -p1 -f --dry-run --no-backup-if-mismatch \
				<"$CORE/patches/$p" 2>&1); then
			die "patch $p does not apply to $SRC (tree left untouched):
$out"
		fi
		(cd "$work/tree" && patch -p1 -f -s --no-backup-if-mismatch \
			<"$CORE/patches/$p") || die "patch $p failed after a clean dry run"
	done

	# Everything applies: now write the tree, only files whose content
	# differs, so kbuild rebuilds only what changed.
	local changed=0
	while read -r f; do
		if [[ -e $work/tree/$f ]]; then
			cmp -s "$work/tree/$f" "$SRC/$f" && continue
			mkdir -p "$SRC/$(dirname "$f")"
			cp --remove-destination "$work/tree/$f" "$SRC/$f"
		else
			[[ -e $SRC/$f ]] || continue
			rm -f "$SRC/$f"
			rmdir -p --ignore-fail-on-non-empty "$(dirname "$SRC/$f")"
		fi
		changed=$((changed + 1))
	done <"$work/touched"
	if [[ -f $STATE/files ]]; then
		while read -r f; do
			grep -qxF "$f" <(cut -f1 <<<"$files") && continue
			rm -f "$SRC/$f"
			rmdir -p --ignore-fail-on-non-empty "$(dirname "$SRC/$f")"
			changed=$((changed + 1))
		done <"$STATE/files"
	fi
	[[ -n $files ]] && while IFS=$'\t' read -r dst src; do
		cmp -s "$src" "$SRC/$dst" && continue
		mkdir -p "$SRC/$(dirname "$dst")"
		cp --remove-destination "$src" "$SRC/$dst"
		changed=$((changed + 1))
	done <<<"$files"

	rm -rf "$STATE"
	mkdir -p "$STATE/patches"
	for p in $series; do cp "$CORE/patches/$p" "$STATE/patches/$p"; done
	printf '%s\n' $series >"$STATE/series"
	[[ -n $files ]] && cut -f1 <<<"$files" >"$STATE/files"
	echo "$stamp" >"$STATE/stamp"
	say "ns_core installed in $SRC: $(grep -c . <<<"$files") drop-in file(s), $(wc -w <<<"$series") patch(es), $changed file(s) changed"
	core_present || say "warning: net/Kconfig does not source net/netslice/Kconfig (no hook patch yet): CONFIG_NETSLICE not required"
}

# ---------------------------------------------------------------- config
# The fragment actually requested for this flavour.
wanted_fragment() {
	local drop_netslice=0
	[[ $FLAVOUR == stock ]] && drop_netslice=1
	core_present || drop_netslice=1
	# debug.config's lines take the place of netslice.config's for
	# the same symbols (it turns off what the debug tests never use).
	local over='^CONFIG_NETSLICE='
	if [[ $FLAVOUR == debug ]]; then
		over=$(grep -oE '^(# )?CONFIG_[A-Za-z0-9_]+' "$CONFIG_DIR/debug.config" |
			sed 's/^# //; s/.*/^(# )?&[= ]/' | paste -sd'|')
		((drop_netslice)) && over+='|^CONFIG_NETSLICE='
	elif ! ((drop_netslice)); then
		over='^$'
	fi
	grep -vE "$over" "$CONFIG_DIR/netslice.config"
	[[ $FLAVOUR == debug ]] && cat "$CONFIG_DIR/debug.config"
	if [[ $FLAVOUR == stock ]] && core_present; then
		echo "# CONFIG_NETSLICE is not set"
	fi
	echo "CONFIG_LOCALVERSION=\"-$FLAVOUR\""
	echo "# CONFIG_LOCALVERSION_AUTO is not set"
}

# Print every fragment line that .config does not honour; fail if any.
verify_config() {
	local frag=$1 config=$2 bad=0 line sym val have
	while read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
			sym=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]}
			grep -qxF "$sym=$val" "$config" && continue
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			sym=${BASH_REMATCH[1]} val=n
			grep -q "^$sym=" "$config" || continue
		else
			continue
		fi
		have=$(grep -E "^$sym=|^# $sym is not set" "$config" || echo "absent (unknown symbol or unmet dependency)")
		echo "build-kernel: config: wanted $sym=$val, got: $have" >&2
		bad=1
	done <"$frag"
	return $bad
}

configure() {
	mkdir -p "$KOBJ"
	local frag=$KOBJ/netslice-wanted.config stamp p f
	wanted_fragment >"$frag.new"
	# Inputs of the configuration: the fragment, the compiler, the kernel
	# version and the Kconfig files ns_core installs or patches (its C
	# sources do not matter here).
	stamp=$( {
		cat "$frag.new"
		{
			cut -f1 "$STATE/files" 2>/dev/null
			for p in $(cat "$STATE/series" 2>/dev/null); do
				patch_files "$STATE/patches/$p"
			done
		} | grep -E '(^|/)Kconfig[^/]*$' | LC_ALL=C sort -u |
		while read -r f; do
			echo "$f"
			cat "$SRC/$f" 2>/dev/null
		done
		echo "$KCC"
		sha256sum "$SRC/Makefile" | cut -d' ' -f1
	} | sha256sum | cut -d' ' -f1)
	mv "$frag.new" "$frag"
	if [[ -f $KOBJ/.config && $(cat "$KOBJ/.netslice-config-stamp" 2>/dev/null) == "$stamp" ]]; then
		say "config for $FLAVOUR unchanged"
		return
	fi
	rm -f "$KOBJ/.netslice-config-stamp"
	say "configuring $KOBJ (allnoconfig + $(basename "$CONFIG_DIR")/*.config, FLAVOUR=$FLAVOUR)"
	"${KMAKE[@]}" -s allnoconfig
	"$SRC/scripts/kconfig/merge_config.sh" -m -O "$KOBJ" "$KOBJ/.config" "$frag" >"$KOBJ/merge_config.log" 2>&1 ||
		{ cat "$KOBJ/merge_config.log" >&2; die "merge_config.sh failed"; }
	"${KMAKE[@]}" -s olddefconfig
	verify_config "$frag" "$KOBJ/.config" ||
		die "$KOBJ/.config does not honour the fragment (lines above); fix kernel/ns_core/config/"
	echo "$stamp" >"$KOBJ/.netslice-config-stamp"
	say "config verified: every line of the fragment is in $KOBJ/.config"
}

# ----------------------------------------------- a configuration of yours
# KCONFIG (a distribution's or your running kernel's configuration) with
# the NetSlice options of the VM's fragment, its CONFIG_NETSLICE lines, and
# -netslice for a local version, through olddefconfig.  The fragment's
# other lines are the test VM's (built-in virtio and e1000, a panic on oops,
# no MEI, no SIT): they are not forced onto a machine's kernel.  Fails,
# naming the option, if one of them, or what the module needs (modules
# that unload), does not survive olddefconfig.
user_fragment() {
	grep -E '^(# )?CONFIG_NETSLICE[A-Z0-9_]*[= ]' "$CONFIG_DIR/netslice.config"
	echo "CONFIG_MODULES=y"
	echo "CONFIG_MODULE_UNLOAD=y"
	echo 'CONFIG_LOCALVERSION="-netslice"'
	echo "# CONFIG_LOCALVERSION_AUTO is not set"
}

configure_user() {
	local frag=$KOBJ/netslice-wanted.config stamp cat=cat key val
	[[ -f $KCONFIG ]] || die "KCONFIG=$KCONFIG: no such file"
	core_present || die "the NetSlice series is not installed in $SRC (no CONFIG_NETSLICE to turn on)"
	case $KCONFIG in
	*.gz) cat=zcat ;;
	*.xz) cat=xzcat ;;
	esac
	mkdir -p "$KOBJ"
	user_fragment >"$frag"
	stamp=$( { "$cat" "$KCONFIG"; cat "$frag" "$SRC/net/netslice/Kconfig"; echo "$KCC"
		sha256sum "$SRC/Makefile"; } | sha256sum | cut -d' ' -f1)
	if [[ -f $KOBJ/.config && $(cat "$KOBJ/.netslice-config-stamp" 2>/dev/null) == "$stamp" ]]; then
		say "config from $KCONFIG unchanged"
		return
	fi
	rm -f "$KOBJ/.netslice-config-stamp"
	say "configuring $KOBJ from $KCONFIG + the NetSlice options"
	"$cat" "$KCONFIG" >"$KOBJ/.config"
	"$SRC/scripts/kconfig/merge_config.sh" -m -O "$KOBJ" "$KOBJ/.config" "$frag" >"$KOBJ/merge_config.log" 2>&1 ||
		{ cat "$KOBJ/merge_config.log" >&2; die "merge_config.sh failed"; }
	# A distribution's configuration names the certificates its kernels
	# trust (Debian: debian/certs/...), which this tree does not have:
	# the build would stop there.  Modules are still signed, with a key
	# the build makes.
	for key in SYSTEM_TRUSTED_KEYS SYSTEM_REVOCATION_KEYS; do
		val=$(sed -n "s/^CONFIG_$key=\"\(.*\)\"\$/\1/p" "$KOBJ/.config")
		[[ -n $val && ! -e $SRC/$val && ! -e $val ]] || continue
		say "CONFIG_$key=\"$val\": no such file here, set to \"\""
		"$SRC/scripts/config" --file "$KOBJ/.config" --set-str "$key" ""
	done
	"${KMAKE[@]}" -s olddefconfig
	verify_config "$frag" "$KOBJ/.config" ||
		die "$KCONFIG cannot carry NetSlice: olddefconfig dropped the options above (net/netslice/Kconfig: CONFIG_NETSLICE depends on INET && X86_64)"
	echo "$stamp" >"$KOBJ/.netslice-config-stamp"
	say "config verified: $(grep -c . "$frag") NetSlice options kept in $KOBJ/.config"
}

# `make bindeb-pkg` in KOBJ; dpkg-buildpackage writes the packages beside
# KOBJ, from where they move to DEB_OUT.  linux-libc-dev, the user-space
# headers, is left out: it would replace the system's.
deb_pkg() {
	local out=${DEB_OUT:-$REPO/build/deb} up t0=$SECONDS kver f
	up=$(dirname "$KOBJ")
	kver=$("${KMAKE[@]}" -s kernelrelease)
	mkdir -p "$out"
	rm -f "$up"/linux-*.deb "$up"/linux-upstream_*.buildinfo "$up"/linux-upstream_*.changes
	say "make bindeb-pkg in $KOBJ ($kver)"
	"${KMAKE[@]}" -j"$JOBS" KDEB_COMPRESS="${KDEB_COMPRESS:-gzip}" \
		KDEB_CHANGELOG_DIST="${KDEB_CHANGELOG_DIST:-unstable}" bindeb-pkg
	rm -f "$out/linux-image-$kver"_*.deb "$out/linux-headers-$kver"_*.deb \
		"$out"/linux-upstream_*.buildinfo "$out"/linux-upstream_*.changes
	rm -f "$up"/linux-libc-dev_*.deb
	for f in "$up/linux-image-$kver"_*.deb "$up/linux-headers-$kver"_*.deb; do
		[[ -f $f ]] || die "bindeb-pkg made no ${f##*/}"
		mv "$f" "$out/"
	done
	mv "$up"/linux-upstream_*.buildinfo "$up"/linux-upstream_*.changes "$out/" 2>/dev/null || true
	say "packages ready ($((SECONDS - t0)) s): $(cd "$out" && ls "linux-image-$kver"_*.deb "linux-headers-$kver"_*.deb | tr '\n' ' ')in $out"
}

build() {
	say "building in $KOBJ with CC=\"$KCC\" -j$JOBS"
	local t0=$SECONDS
	"${KMAKE[@]}" -j"$JOBS" all
	say "kernel ready: $KOBJ/arch/x86/boot/bzImage ($((SECONDS - t0)) s, $(make -s -C "$SRC" O="$KOBJ" kernelrelease 2>/dev/null))"
}

build_module() {
	local mdir=$REPO/kernel/ns_module
	[[ -f $mdir/Kbuild || -f $mdir/Makefile ]] ||
		die "kernel/ns_module has no Kbuild or Makefile yet"
	"${KMAKE[@]}" -j"$JOBS" M="$mdir" modules
	# A copy beside the kernel it was built for: the next flavour's build
	# overwrites the one in kernel/ns_module (VM_MODULE picks the copy).
	cp "$mdir/netslice.ko" "$KOBJ/netslice.ko"
	say "module ready: $(ls "$mdir"/*.ko 2>/dev/null | tr '\n' ' ')(copy: $KOBJ/netslice.ko)"
}

step=${1:-build}
case $step in
install|config|build|module|deb) ;;
*) die "unknown step '$step' (install, config, build, module or deb)" ;;
esac
KCONFIG=${KCONFIG:-}
if [[ -n $KCONFIG ]]; then
	[[ $step == deb || $step == config ]] || die "KCONFIG= is for the config and deb steps"
	[[ $FLAVOUR == netslice ]] || die "KCONFIG= builds the netslice flavour, not $FLAVOUR"
	KCONFIG=$(realpath "$KCONFIG")
fi

# `install` with nothing to do does not wait for a build holding the lock.
if [[ $step == install && -f $SRC/Makefile &&
      $(core_stamp) == "$(cat "$STATE/stamp" 2>/dev/null)" ]]; then
	say "ns_core already installed in $SRC (unchanged)"
	exit 0
fi

# The flavours share one source tree and build into their own KOBJ.
# Installing ns_core writes the tree, so it holds the source lock alone;
# builds hold it shared (the debug kernel builds beside the netslice one,
# make check starts both) and their own KOBJ's lock, since concurrent
# makes in one output directory corrupt it.  kbuild's M= writes the
# module's objects into kernel/ns_module itself: one module build at a time.
mkdir -p "$REPO/build"
wait_lock() { # [-s] <fd>: flock, saying so when it must wait
	flock -n "$@" && return
	say "waiting for another kernel build in this repository to finish"
	flock "$@"
}
exec 9>"$REPO/build/.kernel-build.lock"
installed() {
	[[ -f $SRC/Makefile && $(core_stamp) == "$(cat "$STATE/stamp" 2>/dev/null)" ]]
}
wait_lock -s 9
if ! installed; then
	wait_lock 9	# converts: the shared lock goes first, no deadlock
	unpack_source
	install_core
	flock -s 9
fi
[[ $step == install ]] && exit 0
mkdir -p "$KOBJ"
exec 8>"$KOBJ/.netslice-build.lock"
wait_lock 8
case $step in
config) if [[ -n $KCONFIG ]]; then configure_user; else configure; fi ;;
build) configure; build ;;
module)
	configure; build
	exec 7>"$REPO/build/.module-build.lock"
	wait_lock 7
	build_module
	;;
deb)
	# bindeb-pkg builds what is out of date itself (debian/rules)
	if [[ -n $KCONFIG ]]; then configure_user; else configure; fi
	deb_pkg
	;;
esac
