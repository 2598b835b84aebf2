#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages (make deb, make deb-kernel), built into
# build/tests/deb/ (build/deb/, a user's, is left alone) and checked:
#  - nsdump and netslice-dkms: lintian without an error (its other tags
#    printed as "# lintian:" comments); nsdump's unpacked into a scratch
#    root runs (--version), its man page renders without a warning, the
#    dissector lies in tshark's global Lua plugin folder, and its Depends
#    names the package of every library the binary links (dpkg-shlibdeps);
#    dkms.conf's fields, the module's sources as in kernel/ns_module;
#  - linux-image and linux-headers from the VM's kernel tree
#    (build/linux-netslice, bindeb-pkg on the built tree): the image's
#    vmlinuz, System.map and config with CONFIG_NETSLICE=y; the headers'
#    <linux/netslice.h> and <uapi/linux/netslice.h> (the repository's),
#    Module.symvers holding every core symbol the module uses;
#  - `dkms build` of netslice-dkms against those headers, in scratch DKMS
#    trees (the host's /var/lib/dkms untouched): the module's vermagic is
#    the kernel's.  The VM test t_dkms.sh loads that module (a copy in
#    build/tests/deb/netslice.ko) and captures with the packaged nsdump.
# TAP on stdout; exit 0 pass, 1 fail.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
. tests/tap.sh
OUT=$REPO/build/tests/deb
export DEB_OUT=$OUT
mkdir -p "$OUT"
comment() { sed 's/^/# /'; }
# Files of a package: "dpkg-deb -c" names, without the leading "."
contents() { dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's/^\.//'; }

version=$(sed -n 's/^#define NSDUMP_VERSION[[:space:]]*"\(.*\)"$/\1/p' nsdump/source/version.h)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# ---- nsdump and netslice-dkms
t0=$SECONDS
packaging/build-debs.sh >"$OUT/make-deb.log" 2>&1
rc=$?
comment <"$OUT/make-deb.log"
tap $rc "make deb: nsdump and netslice-dkms $version built ($((SECONDS - t0)) s)"
NSDUMP_DEB=$OUT/nsdump_${version}_$arch.deb
DKMS_DEB=$OUT/netslice-dkms_${version}_all.deb
[[ -f $NSDUMP_DEB && -f $DKMS_DEB ]] || { not_ok "packages in $OUT" "missing"; tap_finish; }

for deb in "$NSDUMP_DEB" "$DKMS_DEB"; do
	t0=$SECONDS
	tags=$(lintian --pedantic --display-info "$deb" 2>&1 | grep -v '^running with root privileges')
	errors=$(grep '^E:' <<<"$tags")
	grep -v '^E:' <<<"$tags" | grep . | sed 's/^/# lintian: /'
	[[ -z $errors ]]
	tap $? "lintian ${deb##*/}: no error ($(grep -c . <<<"$tags") tags, $((SECONDS - t0)) s)${errors:+: $(tr '\n' ' ' <<<"$errors")}"
done

root=$OUT/root
rm -rf "$root"
dpkg-deb -x "$NSDUMP_DEB" "$root"
out=$("$root/usr/bin/nsdump" --version 2>&1)
rc=$?
echo "$out" | comment
[[ $rc == 0 && $out == *"nsdump version $version"* ]]
tap $? "the packaged nsdump runs: --version says $version (exit $rc)"

man=$root/usr/share/man/man8/nsdump.8.gz
page=$(MANWIDTH=80 man --warnings -l "$man" 2>"$OUT/man.err")
rc=$?
[[ $rc == 0 && -s $OUT/man.err ]] && comment <"$OUT/man.err"
[[ $rc == 0 && ! -s $OUT/man.err && $page == *NAME*nsdump*SYNOPSIS* ]]
tap $? "man -l ${man#"$root"} renders without a warning (exit $rc, $(grep -c . <<<"$page") lines)"

lua=/usr/lib/$multiarch/wireshark/plugins/netslice.lua
cmp -s "$root$lua" contrib/wireshark/netslice.lua
tap $? "the dissector is at $lua"
if command -v tshark >/dev/null; then
	folder=$(tshark -G folders 2>/dev/null | awk -F'\t' '/^Global Lua Plugins:/ { print $2 }')
	[[ $folder == "${lua%/*}" ]]
	tap $? "that is tshark's global Lua plugin folder (tshark -G folders: ${folder:-none})"
else
	skip "the dissector's folder is tshark's" "no tshark"
fi
for f in /usr/share/bash-completion/completions/nsdump /usr/share/doc/nsdump/copyright \
	 /usr/share/doc/nsdump/changelog.gz; do
	[[ -s $root$f ]]
	tap $? "nsdump package: $f"
done

# Depends, from dpkg-shlibdeps: the package of every library nsdump links.
depends=$(dpkg-deb -f "$NSDUMP_DEB" Depends)
echo "# Depends: $depends"
needed=$(readelf -d "$root/usr/bin/nsdump" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
missing=
for so in $needed; do
	path=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ { print $NF; exit }')
	# dpkg knows the file by the name the link resolves to, under /lib
	# or /usr/lib, whichever the package ships (the two are merged here)
	real=$(realpath "$path")
	pkg=$(dpkg -S "$real" "/lib/${real#/usr/lib/}" 2>/dev/null | head -1 | cut -d: -f1)
	[[ -n $pkg && ",$depends," == *[,\ ]"$pkg"[\ ,]* ]] || missing+=" $so(${pkg:-?})"
done
[[ -z $missing ]]
tap $? "Depends names the package of every NEEDED library${missing:+; not:$missing}"
for lib in libpcap libjson-c libz libisal; do
	grep -q "^$lib" <<<"$needed"
	tap $? "nsdump links $lib"
done
# libpfm4 is opened for -e and -L (nsdump/source/pfm.c), not linked.
[[ ",$depends," == *[,\ ]libpfm4[\ ,]* ]]
tap $? "Depends names libpfm4, which -e and -L open"

# netslice-dkms: dkms.conf and the module's sources.
src=/usr/src/netslice-$version
conf=$(dpkg-deb --fsys-tarfile "$DKMS_DEB" | tar -xOf - ".$src/dkms.conf")
bad=
for kv in 'PACKAGE_NAME="netslice"' "PACKAGE_VERSION=\"$version\"" \
	  'BUILT_MODULE_NAME[0]="netslice"' 'DEST_MODULE_LOCATION[0]="/updates/dkms"' \
	  'AUTOINSTALL="yes"' 'BUILD_EXCLUSIVE_CONFIG="CONFIG_NETSLICE"'; do
	grep -qxF "$kv" <<<"$conf" || bad+=" $kv"
done
[[ -z $bad ]]
tap $? "$src/dkms.conf sets the module's name, version, location, AUTOINSTALL${bad:+; missing:$bad}"
want=$(cd kernel/ns_module && git ls-files --cached --others --exclude-standard -- Kbuild ':(glob)*.[ch]' \
	selftest/ring_test.c | LC_ALL=C sort)
have=$(contents "$DKMS_DEB" | grep "^$src/" | grep -v '/$' | sed "s|^$src/||" |
	grep -v '^dkms.conf$' | LC_ALL=C sort)
[[ $want == "$have" ]]
tap $? "netslice-dkms holds kernel/ns_module's Kbuild and sources, no more$([[ $want == "$have" ]] ||
	echo "; differ: $(diff <(echo "$want") <(echo "$have") | grep '^[<>]' | tr '\n' ' ')")"

# ---- the kernel's packages, from the VM's tree
t0=$SECONDS
kernel/build-kernel.sh deb >"$OUT/deb-kernel.log" 2>&1
rc=$?
grep '^build-kernel:' "$OUT/deb-kernel.log" | comment
((rc == 0)) || tail -n 30 "$OUT/deb-kernel.log" | comment
tap $rc "make deb-kernel: bindeb-pkg in ${KOBJ:-build/linux-netslice} ($((SECONDS - t0)) s)"
krel=$(cat "${KOBJ:-$REPO/build/linux-netslice}/include/config/kernel.release" 2>/dev/null)
image=$(ls -t "$OUT/linux-image-${krel}_"*.deb 2>/dev/null | head -1)
headers=$(ls -t "$OUT/linux-headers-${krel}_"*.deb 2>/dev/null | head -1)
[[ -n $krel && -f $image && -f $headers ]] || { not_ok "linux-image and linux-headers of ${krel:-?} in $OUT" "missing"; tap_finish; }
files=$(contents "$image")
for f in "/boot/vmlinuz-$krel" "/boot/System.map-$krel" "/boot/config-$krel"; do
	grep -qxF "$f" <<<"$files"
	tap $? "${image##*/}: $f"
done
config=$(dpkg-deb --fsys-tarfile "$image" | tar -xOf - "./boot/config-$krel")
grep -qx 'CONFIG_NETSLICE=y' <<<"$config"
tap $? "the packaged config-$krel has CONFIG_NETSLICE=y"

kroot=$OUT/kroot
rm -rf "$kroot"
dpkg-deb -x "$headers" "$kroot"
hdir=$kroot/usr/src/linux-headers-$krel
cmp -s "$hdir/include/uapi/linux/netslice.h" include/netslice.h
tap $? "${headers##*/}: include/uapi/linux/netslice.h, the repository's include/netslice.h"
cmp -s "$hdir/include/linux/netslice.h" kernel/ns_core/include/linux/netslice.h
tap $? "${headers##*/}: include/linux/netslice.h, the core's"
[[ $(readlink "$kroot/lib/modules/$krel/build") == "/usr/src/linux-headers-$krel" ]]
tap $? "${headers##*/}: /lib/modules/$krel/build points at the headers"

# ---- dkms build against those headers, in scratch trees
dk=$OUT/dkms
rm -rf "$dk"
mkdir -p "$dk/tree" "$dk/install"
dpkg-deb -x "$DKMS_DEB" "$kroot"
dkopts=(--dkmstree "$dk/tree" --sourcetree "$kroot/usr/src" --installtree "$dk/install")
had=$(ls /var/lib/dkms 2>/dev/null)
t0=$SECONDS
{ dkms add -m netslice -v "$version" "${dkopts[@]}" &&
	dkms build -m netslice -v "$version" -k "$krel" "${dkopts[@]}" --kernelsourcedir "$hdir"; } \
	>"$OUT/dkms.log" 2>&1
rc=$?
ko=$dk/tree/netslice/$version/$krel/$(uname -m)/module/netslice.ko
((rc == 0)) || { comment <"$OUT/dkms.log"; cat "$dk"/tree/netslice/"$version"/build/make.log 2>/dev/null | tail -n 30 | comment; }
[[ $rc == 0 && -f $ko ]]
tap $? "dkms build netslice/$version for $krel against ${headers##*/} ($((SECONDS - t0)) s)"
[[ $(ls /var/lib/dkms 2>/dev/null) == "$had" ]]
tap $? "the host's /var/lib/dkms untouched"
vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null)
[[ $vermagic == "$krel "* ]]
tap $? "the DKMS module's vermagic is the kernel's: $vermagic"
unknown=
for sym in $(nm -u "$ko" 2>/dev/null | awk '$2 ~ /nsl_/ { print $2 }'); do
	awk -v s="$sym" '$2 == s { f = 1 } END { exit !f }' "$hdir/Module.symvers" || unknown+=" $sym"
done
used=$(nm -u "$ko" 2>/dev/null | grep -c 'nsl_')
[[ -f $ko && $used -gt 0 && -z $unknown ]]
tap $? "Module.symvers exports the $used core symbols the module uses${unknown:+; not:$unknown}"
rm -f "$OUT/netslice.ko"
[[ -f $ko ]] && cp "$ko" "$OUT/netslice.ko"

tap_finish
