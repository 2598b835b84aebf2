#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo` runs this inside the VM.  Placeholder: the real demo (load
# netslice.ko, run traffic, show nsdump's per-layer report) comes later.
echo "demo not written yet"
exit 1
