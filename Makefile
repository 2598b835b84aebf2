# SPDX-License-Identifier: GPL-2.0
#
# NetSlice: one entry point.  `make help` lists the targets.

FLAVOUR    ?= netslice
KSRC       ?=
KSRC_DIR   := $(if $(KSRC),$(abspath $(KSRC)),$(CURDIR)/build/linux)
KOBJ       ?= $(CURDIR)/build/linux-$(FLAVOUR)
KIMAGE     ?= $(KOBJ)/arch/x86/boot/bzImage
KCC        ?= $(if $(shell command -v ccache),ccache gcc,gcc)
JOBS       ?= $(shell nproc)
MODULE_DIR := $(CURDIR)/kernel/ns_module
USER_DIRS  := nsdump bench

# Debian packages the build and the tests need; `make deps` installs the
# missing ones.  Add here what your part needs.
DEB_PKGS := make gcc libc6-dev gcc-multilib patch perl python3 xz-utils \
	linux-source-6.12 flex bison bc libelf-dev libssl-dev ccache cpio kmod \
	qemu-system-x86 busybox-static util-linux coreutils \
	iproute2 iputils-ping iperf3 tcpdump ethtool libpfm4-dev \
	libjson-c-dev zlib1g-dev libisal-dev libpcap-dev man-db groff-base \
	clang-14 libclang-rt-14-dev tshark prometheus curl
# What `make` alone (nsdump and the bench programs) needs.  nsdump builds
# without libpfm4-dev too (no -e, no -L): it is installed for the full tool.
# libpcap compiles the pcap-filter expressions.
TOOL_PKGS := make gcc libc6-dev libpfm4-dev libjson-c-dev zlib1g-dev libisal-dev libpcap-dev
# What the host tests add: the -m32 ABI test, python3 to parse --json
# output, man-db and groff to check the man page, clang and its libFuzzer
# for the fuzz targets' short fixed-seed runs (make -C tests/fuzz smoke),
# tshark (with editcap and mergecap) to read nsdump --export pcapng with
# the Lua dissector (tests/host/t_pcapng.sh), Prometheus (and its promtool)
# and curl to scrape nsdump --serve (tests/host/t_serve.sh).
HOST_PKGS := $(TOOL_PKGS) gcc-multilib python3 man-db groff-base \
	clang-14 libclang-rt-14-dev tshark prometheus curl
# What the browser test of nsdump --html adds (tests/host/t_html.sh, which
# runs `make deps-browser` and skips, saying why, when it cannot): a
# headless Chromium to render the report, and a font for its text.
BROWSER_PKGS := chromium fonts-dejavu-core python3
# What the Debian packages need (`make deb`, `make deb-kernel`, and the
# tests/deb phase of `make check`): dpkg-buildpackage and debhelper with
# its DKMS sequence for nsdump and netslice-dkms, the kernel's bindeb-pkg
# (debhelper too), dkms to build the module from its package, lintian;
# pahole (dwarves) for a configuration of yours with BTF.  Installed
# without the recommended packages: dkms recommends this machine's kernel
# headers, which nothing here uses.
DEBPKG_PKGS := $(TOOL_PKGS) dpkg-dev debhelper dh-dkms dkms lintian man-db groff-base
DEBKERNEL_PKGS := dwarves
# What `make bench` adds: bpftrace for configuration V, the peer (the
# guest runs the host's, its root being the host's /).
BENCH_PKGS := bpftrace

export FLAVOUR KSRC KOBJ KCC JOBS KIMAGE
# CMD reaches the VM verbatim ($ and quotes untouched by make).
export NSVM_CMD := $(value CMD)

.NOTPARALLEL:
.PHONY: all help deps deps-tools deps-browser kernel kernel-config module vm check checkpatch \
	hosttest vmtest demo clean distclean install deb deb-kernel debcheck

all: deps-tools
	@for d in $(USER_DIRS); do \
		if [ -f $$d/Makefile ]; then $(MAKE) -C $$d || exit 1; \
		else echo "make: $$d/Makefile not written yet, skipping $$d"; fi; \
	done

help:
	@echo 'make                 build the user tools (nsdump/, bench/)'
	@echo 'make deps            install missing Debian packages (root)'
	@echo 'make kernel          unpack 6.12, install ns_core, configure, build bzImage'
	@echo '                     FLAVOUR=netslice|stock|debug, KSRC=<6.12.y tree>'
	@echo 'make module          build kernel/ns_module/netslice.ko against it'
	@echo "make vm CMD='...'    run CMD in the VM, exit with its status; no CMD: shell"
	@echo '                     KIMAGE=, VM_TIMEOUT=, VM_SCRATCH=, QEMU_EXTRA=, VM_APPEND='
	@echo 'make install         install nsdump, its man page, completion, Wireshark dissector'
	@echo '                     PREFIX=/usr/local, DESTDIR= (staging root)'
	@echo 'make deb             nsdump and netslice-dkms Debian packages in build/deb/'
	@echo 'make deb-kernel      linux-image and linux-headers packages of the NetSlice kernel'
	@echo '                     in build/deb/: KCONFIG=/boot/config-$$(uname -r) from your'
	@echo '                     configuration (in build/linux-deb), else the VM'"'"'s'
	@echo 'make debcheck        build the packages and test them (lintian, DKMS build)'
	@echo 'make check           build what is missing, run every test (TAP)'
	@echo '                     TESTS=t_boot.sh (VM tests to run), V=1 (show all output)'
	@echo 'make checkpatch      checkpatch.pl --strict on the kernel code and patches'
	@echo 'make demo            boot the VM and run tests/vm/demo.sh'
	@echo 'make bench           overhead table (Table 3, Fig. 5) in the VM, building the'
	@echo '                     stock kernel first; BENCH_ARGS="-R 5 -N 10000 -t 10";'
	@echo '                     then where III'"'"'s cost goes, stage by stage, in one'
	@echo '                     boot (bench/sameboot.sh -L); LADDER_ROUNDS=5, 0: none'
	@echo 'make insnprof        every instruction of a round trip and a MiB counted, per function'
	@echo '                     in the VM (QEMU plugin), per configuration and'
	@echo '                     per function; INSN_ARGS="-R 3 -N 2000"'
	@echo 'make hotpath         NSS/NST timed natively on this CPU (record.h in user'
	@echo '                     space) against two bare rdtsc, warm and cache-cold'
	@echo 'make fuzz            libFuzzer on the file reader, item decoder and option'
	@echo '                     parsers, FUZZ_SECONDS=60 each; corpus in tests/fuzz/'

# $(call apt_install,<target>,<packages>[,<apt-get options>]): installs
# the missing ones, or says in one line what to install when not root.
# Without dpkg (not Debian) nothing is checked: the build says what is
# missing.
define apt_install
	@command -v dpkg >/dev/null || exit 0; \
	missing=; for p in $(2); do \
		dpkg -s $$p 2>/dev/null | grep -q '^Status: install ok installed' || \
			missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "make $(1): missing packages, run: sudo apt-get install -y $(3)$$missing" >&2; \
		exit 1; \
	fi; \
	echo "make $(1): installing$$missing"; \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(3) $$missing
endef

deps:
	$(call apt_install,deps,$(DEB_PKGS))
	$(call apt_install,deps,$(DEBPKG_PKGS),--no-install-recommends)

deps-tools:
	$(call apt_install,all,$(TOOL_PKGS))

deps-browser:
	$(call apt_install,deps-browser,$(BROWSER_PKGS))

kernel: deps
	kernel/build-kernel.sh build

kernel-config: deps
	kernel/build-kernel.sh config

# kbuild M= against build/linux-$(FLAVOUR), after making sure the kernel
# is up to date (under the same lock as `make kernel`).
module: deps
	kernel/build-kernel.sh module

# nsdump, nsdump.8, the bash completion and the Wireshark dissector under
# $(DESTDIR)$(PREFIX).
install: deps-tools
	$(MAKE) -C nsdump install

# Debian packages (packaging/, doc/design.md#debian-packages).
KCONFIG ?=
deb: deps-tools
	$(call apt_install,deb,$(DEBPKG_PKGS),--no-install-recommends)
	@packaging/build-debs.sh

# The kernel's own `make bindeb-pkg`; from KCONFIG in a tree of its own.
deb-kernel: deps
	$(call apt_install,deb-kernel,$(DEBKERNEL_PKGS),--no-install-recommends)
	@$(if $(KCONFIG),KOBJ=$(if $(filter command line,$(origin KOBJ)),$(KOBJ),$(CURDIR)/build/linux-deb) \
		KCONFIG=$(abspath $(KCONFIG))) kernel/build-kernel.sh deb

debcheck: deps
	@tests/run-tests.sh deb

vm:
	@tests/vm/run-vm.sh $(if $(value CMD),"$$NSVM_CMD")

check: deps
	@tests/run-tests.sh

checkpatch: deps
	@tests/run-tests.sh checkpatch

hosttest:
	$(call apt_install,hosttest,$(HOST_PKGS))
	@tests/run-tests.sh host

vmtest:
	@tests/run-tests.sh vm

demo: deps kernel all
	@if [ -f $(MODULE_DIR)/Kbuild ] || [ -f $(MODULE_DIR)/Makefile ]; then \
		$(MAKE) module || exit 1; fi
	@tests/vm/run-vm.sh "$(CURDIR)/tests/vm/demo.sh"

clean:
	@for d in $(USER_DIRS); do [ ! -f $$d/Makefile ] || $(MAKE) -C $$d clean; done
	@if [ -f $(KOBJ)/Makefile ] && [ -d $(MODULE_DIR) ]; then \
		$(MAKE) -C $(KSRC_DIR) O=$(KOBJ) ARCH=x86_64 CC="$(KCC)" M=$(MODULE_DIR) clean; fi
	rm -rf build/tests build/vm-run.* build/vm-scratch

# Removes the kernel trees too (the next `make kernel` starts cold).
distclean: clean
	rm -rf build

# Every guest instruction of lat_tcp's round trips (over loopback and
# through the e1000 path, lat_nic) and tcp_stream's bulk
# counted by a QEMU TCG plugin (bench/insn/insncount.so; TCG with
# thread=single, so the counts are exact), per configuration and per
# function (bench/insnprof.sh in the VM, bench/insnprof.py on the host).
# INSN_ARGS: insnprof.sh's options; INSN_DIFF="A B": one comparison.
.PHONY: insnprof
INSN_ARGS ?= -R 3 -N 2000 -T 2 -w 'lat_tcp lat_nic tcp_stream'
INSN_DIFF ?=
insnprof: deps kernel all
	@if [ -f $(MODULE_DIR)/Kbuild ]; then $(MAKE) -s module || exit 1; fi
	@rm -rf build/insnprof && mkdir -p build/insnprof/scratch/insn
	@VM_SCRATCH=$(CURDIR)/build/insnprof/scratch VM_TIMEOUT=3600 \
		QEMU_EXTRA="-plugin $(CURDIR)/bench/insn/insncount.so,dir=$(CURDIR)/build/insnprof/scratch/insn" \
		tests/vm/run-vm.sh "$(CURDIR)/bench/insnprof.sh $(INSN_ARGS)" \
		>build/insnprof/run.out
	@bench/insnprof.py build/insnprof/scratch/insn --json build/insnprof/insnprof.json \
		--vmlinux build/linux-netslice/vmlinux \
		$(if $(INSN_DIFF),--diff $(INSN_DIFF)) --budget bench/insn/budget \
		| tee build/insnprof/insnprof.txt

.PHONY: hotpath
hotpath:
	@$(MAKE) -s --no-print-directory -C kernel/ns_core/selftest/host bench

.PHONY: bench
LADDER_ROUNDS ?= 5
bench: deps all
	$(call apt_install,bench,$(BENCH_PKGS))
	@bench/overhead.sh $(BENCH_ARGS)
ifneq ($(LADDER_ROUNDS),0)
	@echo
	@echo "Where III's cost goes: lat_tcp over loopback with each block's life cut short at a stage (bench/sameboot.sh -L)"
	@mkdir -p build/bench
	@tests/vm/run-vm.sh "$(CURDIR)/bench/sameboot.sh -L -R $(LADDER_ROUNDS)" \
		>build/bench/ladder.out
	@grep -v '^# ' build/bench/ladder.out | tee build/bench/ladder.txt
endif
	@echo
	@echo "Every instruction counted, per configuration and per function (make insnprof)"
	@$(MAKE) -s --no-print-directory insnprof

# Coverage-guided fuzzing (tests/fuzz/Makefile); `make check` replays the
# corpus it keeps without clang.  clang's runtime holds libFuzzer.
FUZZ_PKGS := $(TOOL_PKGS) clang-14 libclang-rt-14-dev
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	$(call apt_install,fuzz,$(FUZZ_PKGS))
	@$(MAKE) --no-print-directory -C tests/fuzz fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)
