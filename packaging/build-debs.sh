#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb`: the nsdump and netslice-dkms packages in build/deb/, built by
# dpkg-buildpackage (debhelper) from a copy of the files they are made of,
# with packaging/debian/ as its debian/.  The version is nsdump's
# (nsdump/source/version.h), which packaging/debian/changelog must name.
#
# Environment: DEB_OUT (default build/deb), JOBS (default nproc).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${DEB_OUT:-$REPO/build/deb}
JOBS=${JOBS:-$(nproc)}
die() { echo "build-debs: error: $*" >&2; exit 1; }

cd "$REPO"
version=$(sed -n 's/^#define NSDUMP_VERSION[[:space:]]*"\(.*\)"$/\1/p' nsdump/source/version.h)
[[ -n $version ]] || die "no NSDUMP_VERSION in nsdump/source/version.h"
clversion=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
[[ $clversion == "$version" ]] ||
	die "packaging/debian/changelog is at $clversion, nsdump/source/version.h at $version: add a changelog entry (dch -c packaging/debian/changelog -v $version)"

# The tree: the files git knows (tracked, or new and not ignored) of what
# the packages are made of, as they are in the work tree.
src=$OUT/netslice-$version
rm -rf "$src"
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard -- \
	nsdump include contrib doc/nsdump.8 doc/nsdump.bash kernel/ns_module \
	':!kernel/ns_module/selftest/host' |
	while IFS= read -r -d '' f; do [[ -f $f ]] && printf '%s\0' "$f"; done |
	tar -c --null -T - -f - | tar -x -C "$src" -f -
cp -r packaging/debian "$src/debian"

rm -f "$OUT"/nsdump_*.deb "$OUT"/netslice-dkms_*.deb "$OUT"/netslice_*.buildinfo "$OUT"/netslice_*.changes
t0=$SECONDS
(cd "$src" && dpkg-buildpackage --build=binary --no-sign -J"$JOBS") >"$OUT/build-debs.log" 2>&1 ||
	{ tail -n 40 "$OUT/build-debs.log" >&2; die "dpkg-buildpackage failed (log: $OUT/build-debs.log)"; }
rm -rf "$src"
for p in nsdump_"$version"_*.deb netslice-dkms_"$version"_all.deb; do
	compgen -G "$OUT/$p" >/dev/null || die "dpkg-buildpackage made no $p"
done
echo "build-debs: $(cd "$OUT" && ls nsdump_"$version"_*.deb netslice-dkms_"$version"_all.deb | tr '\n' ' ')in $OUT ($((SECONDS - t0)) s)"
