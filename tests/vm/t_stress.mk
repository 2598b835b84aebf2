# SPDX-License-Identifier: GPL-2.0
# Builds the host-side helper of t_stress.sh (the guest runs it from the
# read-only 9p root):  make -f tests/vm/t_stress.mk
REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../..)
# nsdump's decoder of the compact blocks (decode.c, decode.h)
DECODE_DIR := $(REPO)/nsdump/source
OUT ?= $(REPO)/build/tests/bin
CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Werror -pthread -I$(REPO)/include -I$(REPO)/nsdump

STRESS_SRC := $(wildcard $(REPO)/tests/vm/stress/*.c) $(REPO)/tests/vm/itemstream.c

all: $(OUT)/stress

$(OUT)/stress: $(STRESS_SRC) $(REPO)/tests/vm/stress/stress.h $(REPO)/tests/vm/itemstream.h \
		$(REPO)/tests/tap.h $(REPO)/tests/tapterm.h $(REPO)/include/netslice.h \
		$(DECODE_DIR)/decode.c $(DECODE_DIR)/decode.h
	mkdir -p $(OUT)
	$(CC) $(CFLAGS) -o $@ $(STRESS_SRC) $(DECODE_DIR)/decode.c

clean:
	rm -f $(OUT)/stress

.PHONY: all clean
