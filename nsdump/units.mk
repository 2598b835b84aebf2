# SPDX-License-Identifier: GPL-2.0
# nsdump's units by room, without the file extension: the one list that
# nsdump/Makefile and the tests' Makefiles (tests/host, tests/fuzz) build
# from.  A unit is in the room of what it does for one item's walk:
#   source/  the ways items come in: the device, the trace file (read and
#            written), decoding, the layout, the counters the device is
#            asked for, the kernel's histograms (aggregate mode)
#   stage/   the pipeline and its stages: correction, filter, MAGNeT,
#            accumulation, statistics, the exemplars kept for --serve
#   view/    what the user sees: text, JSON, HTML, the Chrome trace, pcapng,
#            Prometheus metrics and the HTTP server they go out by
#   lib/     what stages and views both use: the trace's clock, devices
#   (top)    main.c, which dispatches what the options (opts.c) ask for;
#            the device session (live.c); --serve's loop (serve.c);
#            errors and notes (msg.c)
# The counters' names come from pfm.c or nopfm.c (source/), which each
# Makefile picks.
NS_SOURCE := $(addprefix source/,source capture file writer decode layout crc32 \
	     calib counters version histograms join)
NS_STAGE  := $(addprefix stage/,pipeline correct filter expr tuple \
	     magnet accum stats hist by rtt exemplar join align)
NS_VIEW   := $(addprefix view/,report json html chart waterfall chrome \
	     markup flags shortlist jsonv utf8 nest evorder tstamp \
	     pcapng pcapopt metrics http joinrep)
NS_LIB    := $(addprefix lib/,clock devname)
NS_UNITS  := $(NS_SOURCE) $(NS_STAGE) $(NS_VIEW) $(NS_LIB)
NS_OPTS   := opts msg
NS_TOP    := main live serve $(NS_OPTS)
