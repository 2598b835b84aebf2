#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nsdump --serve scraped by a real Prometheus (Debian's prometheus, with
# --enable-feature=exemplar-storage): a known snapshot (mkagg) served,
# histogram_quantile() of its p50 and p99 in the buckets of the truth,
# _count its counts, up 1; 20 concurrent scrapes whole and alike while
# Prometheus scrapes and a slow client holds a connection; promtool check
# metrics on the text; a new load (another load_id, smaller counts): said,
# the counters reset; the file gone: netslice_up 0, still serving.  And
# with --exemplars all -w (fakedev.so standing in for /dev/ns, the
# snapshot mkagg folded from the same blocks): each exemplar in its
# bucket, its trace_id and number those of a block of the file, and in
# Prometheus's exemplar storage.  TAP; exit 0 / 1, 4 to skip.
here=$(cd "$(dirname "$0")" && pwd)
obj=$here/obj
for tool in prometheus promtool curl; do
	if ! command -v $tool >/dev/null; then
		echo "SKIP: no $tool (Debian's prometheus package: make hosttest installs it)"
		exit 4
	fi
done
make -s --no-print-directory -C "$here" obj/nsdump obj/mkagg obj/mkblocks obj/fakedev.so \
	>/dev/null || exit 1
exec python3 "$here/check_serve.py" "$obj"
