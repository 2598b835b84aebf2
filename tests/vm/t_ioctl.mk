# SPDX-License-Identifier: GPL-2.0
# Builds the host-side helper of t_ioctl.sh (the guest runs it from the
# read-only 9p root):  make -f tests/vm/t_ioctl.mk
REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../..)
# nsdump's decoder of the compact blocks (decode.c, decode.h)
DECODE_DIR := $(REPO)/nsdump/source
OUT ?= $(REPO)/build/tests/bin
CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Werror -I$(REPO)/include -I$(REPO)/nsdump

all: $(OUT)/ioctl_test

$(OUT)/ioctl_test: $(REPO)/tests/vm/ioctl_test.c $(REPO)/include/netslice.h \
		$(REPO)/tests/tap.h $(REPO)/tests/tapterm.h $(REPO)/tests/vm/itemstream.[ch] \
		$(DECODE_DIR)/decode.c $(DECODE_DIR)/decode.h
	mkdir -p $(OUT)
	$(CC) $(CFLAGS) -o $@ $< $(REPO)/tests/vm/itemstream.c $(DECODE_DIR)/decode.c

clean:
	rm -f $(OUT)/ioctl_test

.PHONY: all clean
