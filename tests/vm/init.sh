#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the NetSlice test VM (started by tests/vm/run-vm.sh as init=).
# Root is the host's / over 9p, read-only.  Mounts the pseudo file systems,
# tmpfs on /tmp /run /var/tmp /mnt, the scratch share on /mnt/scratch, sets
# up the two NICs (eth0 192.0.2.1 here, eth1 192.0.2.2 in netns "peer"),
# runs the command, then writes the verdict and reboots (QEMU runs with
# -no-reboot, so a reboot ends it).
#
# Our stdout is the kernel console (ttyS0, the host's console log); the
# command's stdin/stdout/stderr are /dev/hvc0 (the host's terminal).

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=${TERM:-linux}

log() { echo "nsvm-init: $*"; }
uptime_s() { local up _; read -r up _ </proc/uptime; echo "$up"; }

# Last resort: never let PID 1 exit (that is a panic, and no verdict).
finish() {
	sync
	if [[ -w /proc/sysrq-trigger ]]; then
		echo b >/proc/sysrq-trigger
	fi
	busybox reboot -f
	sleep 1000
}

verdict_dev=
find_verdict_port() {
	local d
	for d in /sys/class/virtio-ports/*; do
		local name=
		read -r name <"$d/name" 2>/dev/null
		[[ $name == verdict ]] || continue
		verdict_dev=/dev/${d##*/}
	done
	[[ -n $verdict_dev && -c $verdict_dev ]]
}

# Setup failures are reported as a verdict the host cannot mistake.
setup_failed() {
	log "setup failed: $*"
	echo "nsvm-init: setup failed: $*" >/dev/hvc0 2>/dev/null
	find_verdict_port && echo "NSVM-ERROR $*" >"$verdict_dev"
	finish
}

# Every program here is exec'd over 9p from the host's root; busybox is
# static, so it needs no shared libraries looked up and loaded: boot is
# seconds faster under TCG.
mnt() { busybox mount "$@" || setup_failed "mount $*"; }

mnt -t proc -o nosuid,nodev,noexec proc /proc
mnt -t sysfs -o nosuid,nodev,noexec sysfs /sys
# CONFIG_DEVTMPFS_MOUNT mounts /dev, unless it failed.
grep -q '^[^ ]* /dev ' /proc/mounts || mnt -t devtmpfs -o nosuid devtmpfs /dev
# What udev would add: bash process substitution needs /dev/fd.
busybox ln -sf /proc/self/fd /dev/fd
busybox ln -sf /proc/self/fd/0 /dev/stdin
busybox ln -sf /proc/self/fd/1 /dev/stdout
busybox ln -sf /proc/self/fd/2 /dev/stderr
busybox mkdir -p /dev/pts /dev/shm
mnt -t devpts -o nosuid,noexec,gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mnt -t tmpfs -o nosuid,nodev tmpfs /dev/shm
ctl= ninep=
read -r -a cmdline </proc/cmdline
for arg in "${cmdline[@]}"; do
	case $arg in
	nsvm.ctl=*) ctl=${arg#nsvm.ctl=} ;;
	nsvm.ninep=*) ninep=${arg#nsvm.ninep=} ;;
	esac
done

# A tmpfs over a directory of the host's root; if the repository (where
# the control directory is) lives below it, a clone in /tmp say, that
# subtree stays visible at its path.
tmpfs_over() { # <dir> <mount options>
	local dir=$1 keep=
	if [[ $ctl == "$dir"/* ]]; then
		keep=${ctl#"$dir"/}
		keep=$dir/${keep%%/*}
		busybox mkdir -p /dev/.nsvm-keep
		mnt --bind "$keep" /dev/.nsvm-keep
	fi
	mnt -t tmpfs -o "$2" tmpfs "$dir"
	if [[ -n $keep ]]; then
		busybox mkdir -p "$keep"
		mnt --move /dev/.nsvm-keep "$keep"
	fi
}
tmpfs_over /tmp nosuid,nodev,mode=1777
tmpfs_over /var/tmp nosuid,nodev,mode=1777
mnt -t tmpfs -o nosuid,nodev,mode=755 tmpfs /run
tmpfs_over /mnt mode=755
[[ -d /root ]] && tmpfs_over /root mode=700
[[ -d /sys/kernel/debug ]] && mnt -t debugfs -o nosuid,nodev,noexec debugfs /sys/kernel/debug
# ip netns bind-mounts namespaces under /run/netns and expects shared
# propagation.
busybox mount --make-rshared /
busybox mkdir -p /run/netns /run/lock /mnt/scratch

[[ -d $ctl ]] || setup_failed "control directory '$ctl' not visible"
mnt -t 9p -o "$ninep" scratch /mnt/scratch
find_verdict_port || setup_failed "no virtio-serial port named verdict"
[[ -c /dev/hvc0 ]] || setup_failed "no /dev/hvc0"
# shellcheck source=/dev/null
. "$ctl/env"
busybox hostname nsvm

# QEMU's NICs named by their MAC (run-vm.sh): the e1000s eth0 and eth1
# whatever order the drivers probed in (virtio_net registers first), the
# virtio-net pair on the second hub vnet0 and vnet1, left down for the
# tests that use them.  One ip process, renaming through temporary names.
nic_names() {
	local d mac want first="" then="" i=0
	for d in /sys/class/net/*; do
		read -r mac <"$d/address" || continue
		case $mac in
		52:54:00:00:02:01) want=$NS_LOCAL_IF ;;
		52:54:00:00:02:02) want=$NS_PEER_IF ;;
		52:54:00:00:03:01) want=$NS_VIRTIO_IF ;;
		52:54:00:00:03:02) want=$NS_VIRTIO_PEER_IF ;;
		*) continue ;;
		esac
		[[ ${d##*/} == "$want" ]] && continue
		first+="link set dev ${d##*/} name nsvmnic$i"$'\n'
		then+="link set dev nsvmnic$i name $want"$'\n'
		i=$((i + 1))
	done
	[[ -z $first ]] || ip -batch - <<<"$first$then"
}

# Network: both e1000 NICs sit on one QEMU hub.
net_setup() {
	local deadline carrier out
	# Two ip processes, not ten: each exec over 9p costs under TCG.
	ip -batch - <<-EOF || return 1
		link set lo up
		netns add $NS_PEER_NS
		link set $NS_PEER_IF netns $NS_PEER_NS
		addr add $NS_LOCAL_IP/24 dev $NS_LOCAL_IF
		link set $NS_LOCAL_IF up
	EOF
	ip -n "$NS_PEER_NS" -batch - <<-EOF || return 1
		link set lo up
		addr add $NS_PEER_IP/24 dev $NS_PEER_IF
		link set $NS_PEER_IF up
	EOF
	# e1000 reports carrier a second or two after going up; a debug
	# kernel (KASAN, lockdep) under TCG can take far longer.
	deadline=$((SECONDS + 60))
	while ((SECONDS < deadline)); do
		carrier=0
		read -r carrier </sys/class/net/"$NS_LOCAL_IF"/carrier 2>/dev/null
		if ((carrier)); then
			out=$(ip -n "$NS_PEER_NS" -o link show "$NS_PEER_IF")
			[[ $out == *LOWER_UP* ]] && return 0
		fi
		busybox sleep 0.1
	done
	return 1
}
log "mounts done after $(uptime_s) s"
nic_names || setup_failed "NIC names ($(ip -br link 2>&1 | tr '\n' ' '))"
net_setup || setup_failed "network setup ($(ip -br link 2>&1 | tr '\n' ' '))"
log "ready after $(uptime_s) s"

cd "$NS_REPO" || setup_failed "cd $NS_REPO"
if [[ -e $ctl/interactive ]]; then
	# hvc resets its termios on last close: size it from inside the shell.
	size=$(cat "$ctl/interactive")
	setsid -w -c /bin/bash -c '[[ -z $1 ]] || stty rows ${1% *} cols ${1#* }
		PS1="nsvm:\w# " exec /bin/bash --norc -i' \
		_ "$size" </dev/hvc0 >/dev/hvc0 2>&1
	status=$?
else
	/bin/sh -c "$(cat "$ctl/cmd")" </dev/null >/dev/hvc0 2>&1
	status=$?
fi

# Everything else finishes before the verdict: leftover processes (iperf3
# daemons and the like), a kmemleak scan on debug kernels, the scratch share.
kill -TERM -1 2>/dev/null
sleep 0.2
kill -KILL -1 2>/dev/null
if [[ -w /sys/kernel/debug/kmemleak ]]; then
	# kmemleak reports an object only once it is 5 s old (its minimum
	# age) and unreferenced in two scans: what the test freed last must
	# age first, or its leaks would go unseen.  Debug kernels only.
	sleep 5
	# The host fails the run on "unreferenced object" in the console,
	# and shows the verdict line beside the test's result; a scan that
	# fails (kmemleak switched itself off) gives no verdict, and so
	# fails the run too.
	if echo scan >/sys/kernel/debug/kmemleak &&
	    echo scan >/sys/kernel/debug/kmemleak; then
		cat /sys/kernel/debug/kmemleak
		leaks=$(grep -c '^unreferenced object' /sys/kernel/debug/kmemleak)
		log "kmemleak: $leaks leaks"
		echo "# kmemleak: $leaks leaks" >/dev/hvc0 2>/dev/null
	else
		log "kmemleak: scan failed, no verdict"
		echo "# kmemleak: scan failed, no verdict" >/dev/hvc0 2>/dev/null
	fi
fi
umount /mnt/scratch 2>/dev/null || log "warning: cannot unmount /mnt/scratch"
sync
echo "NSVM-VERDICT $status" >"$verdict_dev"
finish
