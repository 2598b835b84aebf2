# SPDX-License-Identifier: GPL-2.0
# Builds the host-side helper of t_stress.sh (the guest runs it from the
# read-only 9p root):  make -f tests/vm/t_stress.mk
REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../..)
OUT ?= $(REPO)/build/tests/bin
CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Werror -pthread -I$(REPO)/include -I$(REPO)/nsdump

all: $(OUT)/stress

$(OUT)/stress: $(REPO)/tests/vm/stress.c $(REPO)/include/netslice.h \
		$(REPO)/nsdump/source/decode.c $(REPO)/nsdump/source/decode.h
	mkdir -p $(OUT)
	$(CC) $(CFLAGS) -o $@ $< $(REPO)/nsdump/source/decode.c

clean:
	rm -f $(OUT)/stress

.PHONY: all clean
