# qroce: one Makefile for the device (QEMU), the driver, the provider, the
# guest image and the tests.  Everything is built under build/.
#
#   make deps    install packages, fetch the pinned tarballs (needs root/sudo)
#   make         build everything
#   make demo    two guests, RoCE between them
#   make test    gates, qtests, guest tests, printed as TAP (prove reads
#                it); ends with "N passed, N failed"
#   make check   style gates: checkpatch, sparse, -Werror, one-way calls
#   make bench   perftest table, qroce vs rdma_rxe (not pass/fail)

TOP      := $(CURDIR)
B        := $(TOP)/build
CACHE    ?= /var/cache/qroce
export QROCE_CACHE := $(CACHE)
# The Debian kernel (6.12) whose headers make deps installs on the host:
# the out-of-tree build's default (linux-driver/Makefile, make clean)
KVER      = $(shell cat $(CACHE)/kernel-version 2>/dev/null)
# The guests' kernel, LINUX: 7.3 (the default: Linux 7.3.4 built here
# from Debian's linux-source-7.3 with guest-images/linux-guest.config,
# cached under $(CACHE)/kernel/, scripts/kernel-build.sh) or 6.12 (the
# LTS line: Debian's bookworm-backports kernel as packaged).  build/kernel
# holds its image, modules, release and build tree.
LINUX    ?= 7.3
export LINUX
# The driver's modules (qroce_en.ko, qroce_ib.ko) are built from the Linux
# series (make patches) in a tree of the guest kernel's source and
# configuration: build/src/linux (7.3) or build/src/linux-6.12
# (scripts/linux-prepare.sh).
# A developer's own kernel: KERNEL_SRC (a configured and built tree, or
# a headers package) builds them from linux-driver/ against it instead;
# KERNEL_IMAGE (its bzImage) and KERNEL_MODULES (its lib/modules/VERSION,
# from modules_install) make the guests boot it instead.
KERNEL_SRC ?=
LINUX_SRC  := $(B)/src/linux$(if $(filter 7.3,$(LINUX)),,-$(LINUX))
DRIVER_OUT := $(B)/driver
ifneq ($(KERNEL_IMAGE),)
export QR_KERNEL := $(abspath $(KERNEL_IMAGE))
endif
ifneq ($(KERNEL_MODULES),)
export QR_KMOD := $(abspath $(KERNEL_MODULES))
endif
JOBS     ?= 2

QEMU_SRC := $(B)/src/qemu
QEMU_BLD := $(B)/qemu
QEMU_BIN := $(QEMU_BLD)/qemu-system-x86_64
QTEST    := $(QEMU_BLD)/tests/qtest/qos-test
# A user's rdma-core tree: RDMA_CORE_SRC (its working files) is copied,
# the rdma-core series applied to the copy (scripts/rdma-core-prepare.sh),
# built in build/rdma-core-user and put into the guest image instead of
# the pinned 65.0; the next make without it puts 65.0 back
RDMA_CORE_SRC ?=
ifneq ($(RDMA_CORE_SRC),)
export RDMA_CORE_SRC := $(abspath $(RDMA_CORE_SRC))
RDMA_SRC := $(B)/src/rdma-core-user
RDMA_BLD := $(B)/rdma-core-user
RDMA_DST := $(B)/rdma-core-user-install
else
RDMA_SRC := $(B)/src/rdma-core
RDMA_BLD := $(B)/rdma-core
RDMA_DST := $(B)/rdma-core-install
endif
export QR_RDMA_DST := $(RDMA_DST)
KERNEL   := $(B)/kernel
INITRD   := $(B)/initramfs.cpio.gz

QEMU_CONFIGURE := --python=/usr/bin/python3 --target-list=x86_64-softmmu \
	--without-default-devices --with-devices-x86_64=qroce \
	--disable-docs --disable-tools --disable-user --disable-guest-agent \
	--disable-install-blobs --enable-slirp --disable-gtk --disable-sdl \
	--disable-vnc --disable-opengl --disable-spice --disable-curses \
	--disable-nitro --disable-werror

.PHONY: all deps qemu kernel driver rdma-core guest-bin initramfs tools demo test bench bench-pingpong bench-odp bench-scale \
	check-headers clean FORCE

all: deps qemu driver rdma-core initramfs tools

deps:
	@sh scripts/deps.sh

# --- QEMU ---------------------------------------------------------------
# One definition for the three QEMU builds (qemu, qemu-asan, qemu-fuzz):
#   $(call qemu_build,TARGET,DIR,PREPARE,DEPS,CONFIGURE_ENV,CONFIGURE_FLAGS,NINJA_TARGETS,FIRMWARE)
# DIR/build.ninja: scripts/PREPARE on the source, then configure with
# QEMU_CONFIGURE and CONFIGURE_FLAGS (CONFIGURE_ENV before it) in DIR,
# remade only when it is missing or older than DEPS (DIR made anew: a
# build directory of another QEMU version does not reconfigure); TARGET: PREPARE again
# (it is idempotent), ninja NINJA_TARGETS, and the FIRMWARE files linked
# into DIR's qemu-bundle, where QEMU looks first (Debian's SeaBIOS and
# option ROMs).
define qemu_build
$(2)/build.ninja: $(4)
	sh scripts/$(3) $$(QEMU_SRC)
	rm -rf $(2) && mkdir -p $(2)
	cd $(2) && $(strip $(5) $$(QEMU_SRC)/configure $$(QEMU_CONFIGURE) $(6)) >configure.log 2>&1 || \
		{ tail -30 configure.log; exit 1; }

$(1): $(2)/build.ninja
	@sh scripts/$(3) $$(QEMU_SRC)
	ninja -C $(2) -j$$(JOBS) $(7)
	@mkdir -p $(2)/qemu-bundle/usr/local/share/qemu
	@for f in $(8); do \
		[ -f $$$$f ] || { echo "$$$$f missing: run 'make deps'"; exit 1; }; \
		ln -sf $$$$f $(2)/qemu-bundle/usr/local/share/qemu/; done
endef

QEMU_FW := /usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin \
	/usr/share/qemu/kvmvapic.bin

$(eval $(call qemu_build,qemu,$(QEMU_BLD),qemu-prepare.sh,scripts/qemu-prepare.sh,,,qemu-system-x86_64 tests/qtest/qos-test,$(QEMU_FW)))

# --- guest kernel and driver --------------------------------------------
kernel:
	@sh scripts/kernel-build.sh $(KERNEL)

# the two modules, and the kernel verbs test module of tests/kmod (not part
# of the series), into build/driver/
driver: $(if $(KERNEL_SRC),,kernel)
ifeq ($(KERNEL_SRC),)
	@kmake="$$(sh scripts/linux-prepare.sh $(LINUX_SRC))" && \
	for d in drivers/net/ethernet/qroce drivers/infiniband/hw/qroce $(TOP)/tests/kmod; do \
		$(MAKE) -s -C $(LINUX_SRC) $$kmake -j$(JOBS) M=$$d modules || exit 1; done
	@mkdir -p $(DRIVER_OUT)
	@cp $(LINUX_SRC)/drivers/net/ethernet/qroce/qroce_en.ko \
		$(LINUX_SRC)/drivers/infiniband/hw/qroce/qroce_ib.ko tests/kmod/qroce_ktest.ko $(DRIVER_OUT)/
else
	$(MAKE) -C $(KERNEL_SRC) M=$(TOP)/linux-driver modules
	$(MAKE) -C $(KERNEL_SRC) M=$(TOP)/tests/kmod modules
	@mkdir -p $(DRIVER_OUT)
	@cp linux-driver/qroce_en.ko linux-driver/qroce_ib.ko tests/kmod/qroce_ktest.ko $(DRIVER_OUT)/
endif

# the three series, one per upstream tree, in build/patches/ (scripts/series.sh)
.PHONY: patches
patches:
	@for t in qemu linux rdma-core; do sh scripts/series.sh export $$t || exit 1; done

# each prefix of each series builds on its own (scripts/series-bisect.sh);
# it builds in the build's own trees: not while the harness runs
.PHONY: patches-bisect
patches-bisect: qemu driver rdma-core
	sh scripts/series-bisect.sh

# the series as a maintainer receives them: each applies to its pinned
# base, passes its tree's checkpatch, has no patch over 1500 lines and
# names no file its tree lacks, and every prefix builds (patches-bisect)
.PHONY: patches-check
patches-check: qemu driver rdma-core
	sh scripts/patches-check.sh

# --- rdma-core with providers/qroce -------------------------------------
$(RDMA_BLD)/build.ninja: scripts/rdma-core-prepare.sh
	sh scripts/rdma-core-prepare.sh $(RDMA_SRC)
	mkdir -p $(RDMA_BLD)
	cd $(RDMA_BLD) && cmake -GNinja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc \
		-DCMAKE_INSTALL_RUNDIR=/run -DNO_MAN_PAGES=1 -DNO_PYVERBS=1 \
		-DENABLE_STATIC=0 \
		$(RDMA_SRC) >cmake.log 2>&1 || { tail -30 cmake.log; exit 1; }

rdma-core: $(RDMA_BLD)/build.ninja
	@sh scripts/rdma-core-prepare.sh $(RDMA_SRC)
	ninja -C $(RDMA_BLD) -j$(JOBS)
	DESTDIR=$(RDMA_DST) ninja -C $(RDMA_BLD) install >/dev/null

# --- pyverbs and rdma-core's Python tests (make test-rdma-core) ---------
# The same rdma-core source and flags, with pyverbs, in a build of its own;
# only pyverbs and the tests are taken from it (guest-images/
# mkoverlay-pyverbs.sh), the guests keep the image's libibverbs.
RDMA_PYBLD := $(RDMA_BLD)-py
RDMA_PYDST := $(RDMA_BLD)-py-install
export QR_RDMA_PYDST := $(RDMA_PYDST)
PYV_STAMP  := $(RDMA_PYDST)/.installed
PYV_INITRD := $(B)/initramfs-pyverbs.cpio.gz

.PHONY: pyverbs test-rdma-core

$(RDMA_PYBLD)/build.ninja: scripts/rdma-core-prepare.sh
	sh scripts/rdma-core-prepare.sh $(RDMA_SRC)
	mkdir -p $(RDMA_PYBLD)
	cd $(RDMA_PYBLD) && cmake -GNinja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc \
		-DCMAKE_INSTALL_RUNDIR=/run -DNO_MAN_PAGES=1 \
		-DPYTHON_EXECUTABLE=/usr/bin/python3.11 \
		-DENABLE_STATIC=0 \
		$(RDMA_SRC) >cmake.log 2>&1 || { tail -30 cmake.log; exit 1; }

# the stamp changes only when the install changed something
pyverbs: $(RDMA_PYBLD)/build.ninja
	@sh scripts/rdma-core-prepare.sh $(RDMA_SRC)
	nice -n 10 ninja -C $(RDMA_PYBLD) -j$(JOBS)
	DESTDIR=$(RDMA_PYDST) ninja -C $(RDMA_PYBLD) install >$(RDMA_PYBLD)/install.log 2>&1 || \
		{ tail -30 $(RDMA_PYBLD)/install.log; exit 1; }
	@[ -f $(PYV_STAMP) ] && [ -z "$$(find $(RDMA_PYDST) -type f -newer $(PYV_STAMP) | head -1)" ] || \
		touch $(PYV_STAMP)

$(PYV_STAMP):
	$(MAKE) pyverbs

# the normal image with python3, pyverbs and the tests appended as a
# second cpio archive
$(PYV_INITRD): $(INITRD) $(PYV_STAMP) guest-images/mkoverlay-pyverbs.sh
	sh guest-images/mkoverlay-pyverbs.sh $@

# rdma-core's own test suite on qroce_0 and on rxe0 in one guest
test-rdma-core: all pyverbs $(PYV_INITRD)
	sh tests/rdma-core-suite.sh

# the kernel's storage ULPs: SRP, iSER, and recovery of those, NVMe-oF and
# NFS over RDMA under link and QP faults (tests/ulp/u-*.sh)
.PHONY: test-ulp
test-ulp: all
	sh tests/ulp/run-ulp.sh

# Debian packages for trixie guests in build/debs/ (scripts/debs.sh): Debian's
# rdma-core 65.0 with the series, qroce-dkms; built in a cached trixie root,
# lintian-checked.  sh scripts/debs.sh verify: installed, DKMS builds them
.PHONY: debs
debs: deps
	sh scripts/debs.sh

# The Debian guest (guest-images/mkimage-debian.sh): Debian 13 (trixie) on a
# disk in build/debian/, with its own 6.12 kernel, systemd, and qroce from
# the packages of build/debs/ (scripts/debs.sh), DKMS building the modules
# in the image; the bootstrap is cached in $(CACHE).  qr_boot N debian
# boots it; make test-distro: two of them, qroce as a Debian user has it.
.PHONY: image-debian test-distro
image-debian: debs
	sh guest-images/mkimage-debian.sh

test-distro: image-debian
	sh tests/distro/t-distro.sh

# The bundle (scripts/dist.sh): qroce-vm, the harness, QEMU and its
# firmware, the guest kernel, the image, the modules and the packages of
# make debs, in build/dist/qroce-VERSION.tar.gz, for machines that build
# nothing (docs/ci.md).  DIST_DEBS=0 leaves the packages out (and make
# debs with them).  make test-dist: the bundle in a bare Debian 12 root.
DIST_DEBS ?= 1
.PHONY: dist test-dist
dist: all $(if $(filter 0,$(DIST_DEBS)),,debs)
	DIST_DEBS=$(DIST_DEBS) sh scripts/dist.sh

test-dist: dist
	sh tests/dist/t-dist.sh

# Linux 6.12 LTS: the same build with Debian's 6.12 kernel in the guests
# (the whole suite: make test LINUX=6.12), and CI's short pass on it: the
# driver built, pingpong, perftest, the kernel verbs module and a ULP
# (NVMe-oF).  The next make without LINUX=6.12 puts 7.3 back.
LTS_GROUPS := tests/suite/t-rc-pingpong.sh tests/suite/t-rdma-write.sh \
	tests/suite/t-kverbs.sh tests/suite/t-nvmeof.sh
.PHONY: test-lts
test-lts:
	$(MAKE) LINUX=6.12 all
	LINUX=6.12 QR_ONLY="$(LTS_GROUPS)" sh tests/run.sh

# --- guest test programs and the initramfs ------------------------------
GUEST_SRCS := $(wildcard tests/guest/*.c)
GUEST_BINS := $(patsubst tests/guest/%.c,$(B)/guest-bin/%,$(GUEST_SRCS))

$(B)/guest-bin/%: tests/guest/%.c $(wildcard tests/guest/*.h) rdma-core
	@mkdir -p $(B)/guest-bin
	$(CC) -O2 -g -Wall -Wextra -I$(RDMA_BLD)/include -Iinclude -o $@ $< \
		-L$(RDMA_BLD)/lib -libverbs -lrdmacm -lpthread

guest-bin: $(GUEST_BINS)

initramfs: $(if $(KERNEL_MODULES),,kernel) driver rdma-core guest-bin
	sh guest-images/mkinitramfs.sh $(INITRD)

# --- tools on the host (they share the device's wire code) --------------
TOOLS := $(patsubst tests/tools/%.c,$(B)/tools/%,$(wildcard tests/tools/*.c))
WIRE  := qemu-device/hw/net/qroce/roce_wire.c

$(B)/tools/%: tests/tools/%.c $(WIRE) qemu-device/hw/net/qroce/roce_wire.h
	@mkdir -p $(B)/tools
	$(CC) -O2 -g -Wall -Wextra -DROCE_WIRE_STANDALONE -Iqemu-device/hw/net/qroce -o $@ $< $(WIRE)

# the CRC benchmark also links zlib, the library it is compared with
$(B)/tools/icrc-bench: tests/tools/icrc-bench.c $(WIRE) qemu-device/hw/net/qroce/roce_wire.h
	@mkdir -p $(B)/tools
	$(CC) -O2 -g -Wall -Wextra -DROCE_WIRE_STANDALONE -Iqemu-device/hw/net/qroce -o $@ $< $(WIRE) -lz

tools: $(TOOLS)

# --- the two commands of the README --------------------------------------
# DEMO_OPTS: more qr_boot options for the demo's guests, e.g. mgmt
demo: all
	QR_DEMO_OPTS="$(DEMO_OPTS)" sh tests/demo/demo.sh

# TAP, a group per test file (docs/harness.md); QR_ONLY="tests/suite/t-srq.sh"
# (or gates, qtest) runs only those groups
test: all
	sh tests/run.sh

# Guests by hand, or commands in them (./qroce-vm --help): make run
# RUN_ARGS="-n 3 --rxe"; QR_ACCEL=tcg|kvm as for make test.  Uses the
# built tree as it is (run 'make' first).
.PHONY: run
run:
	./qroce-vm $(RUN_ARGS)

# The edit loop: rebuild only the driver and the provider, lay them over
# the existing guest image as a second cpio archive (the kernel unpacks
# both, the later files win), boot two guests and run one pingpong.
OVERLAY := $(B)/overlay
.PHONY: pingpong
pingpong:
	@start=$$(date +%s); \
	[ -f $(INITRD) ] && [ -x $(QEMU_BIN) ] || { echo "pingpong: run 'make' once first"; exit 1; }; \
	$(MAKE) -s driver >/dev/null && \
	ninja -C $(RDMA_BLD) -j$(JOBS) >/dev/null && \
	rm -rf $(OVERLAY) && \
	mkdir -p $(OVERLAY)/root/lib/modules/qroce $(OVERLAY)/root/usr/lib/x86_64-linux-gnu/libibverbs && \
	cp $(DRIVER_OUT)/qroce_en.ko $(DRIVER_OUT)/qroce_ib.ko $(OVERLAY)/root/lib/modules/qroce/ && \
	cp -L $(RDMA_BLD)/lib/libqroce-rdmav*.so $(OVERLAY)/root/usr/lib/x86_64-linux-gnu/libibverbs/ && \
	(cd $(OVERLAY)/root && find . | cpio -o -H newc --quiet | gzip -1) >$(OVERLAY)/overlay.cpio.gz && \
	cat $(INITRD) $(OVERLAY)/overlay.cpio.gz >$(OVERLAY)/initramfs.cpio.gz && \
	echo "pingpong: driver and provider built in $$(( $$(date +%s) - start )) s" && \
	sh tests/demo/pingpong.sh $(OVERLAY)/initramfs.cpio.gz $$start

# docs/walkthrough.md: one ibv_rc_pingpong -n 2, traced and captured
.PHONY: walkthrough
walkthrough: all
	sh tests/demo/walkthrough.sh docs/walkthrough.md

# Benchmarks print ratios against a peer run in the same invocation; they
# are not part of 'make test'.
bench: all
	sh tests/bench/bench.sh

bench-pingpong: all
	sh tests/bench/bench-pingpong.sh 4096 1000 3

# On-demand paging against a pinned MR in one guest (tests/bench/bench-odp.sh):
# first-touch, again and prefetched MB/s, odp_faults and faults/s
bench-odp: all
	sh tests/bench/bench-odp.sh

# NVMe over Fabrics with dd: nvme-rdma over qroce and over rxe, same guests.
.PHONY: bench-nvmeof
bench-nvmeof: all
	sh tests/bench/bench-nvmeof.sh

# live migration of a guest, idle and under qroce and rxe traffic
# (tests/bench/bench-migrate.sh): move times, downtime, the peer's stall
.PHONY: bench-migrate
bench-migrate: all
	sh tests/bench/bench-migrate.sh

# Many flows on one segment (ring, incast), qroce and rxe, switch and hub.
.PHONY: bench-fabric
bench-fabric: all
	sh tests/bench/bench-fabric.sh

# Many QPs at once (tests/bench/bench-scale.sh): ib_write_bw -q 1 to 1000, a
# stream on 1 and 1000 QPs with per-QP fairness, QP create+destroy rate,
# memory per idle QP; qroce and rxe in the same guests, medians of 3
bench-scale: all
	sh tests/bench/bench-scale.sh

check-headers:
	@sh scripts/check-headers.sh

# Style and structure gates; make test runs them first.
.PHONY: check
check: all
	@sh scripts/check.sh

clean:
	rm -rf $(B)
	-$(MAKE) -C /lib/modules/$(KVER)/build M=$(TOP)/linux-driver clean >/dev/null 2>&1
	-$(MAKE) -C /lib/modules/$(KVER)/build M=$(TOP)/tests/kmod clean >/dev/null 2>&1

# --- sanitizers and fuzzing (not part of 'make test') ---------------------
#   make test-asan   QEMU built with ASAN+UBSAN (gcc) in build/qemu-asan; the
#                    qtests and the two-guest RC tests on it; any report fails
#   make fuzz        libFuzzer (clang) over the device in build/qemu-fuzz:
#                    generic-fuzz-qroce (BARs, config space, DMA), then
#                    qroce-frames (frames from the wire), then
#                    qroce-migstream (migration sections), FUZZ_MINUTES each
QEMU_ASAN    := $(B)/qemu-asan
QEMU_FUZZ    := $(B)/qemu-fuzz
FUZZ_MINUTES ?= 10
FUZZ_TARGETS ?= generic-fuzz-qroce qroce-frames qroce-migstream
export FUZZ_MINUTES FUZZ_TARGETS

.PHONY: qemu-asan test-asan qemu-fuzz fuzz

# the sanitizer builds' build.ninja depend on nothing (a configured
# tree is not configured again when the prepare scripts change)
$(eval $(call qemu_build,qemu-asan,$(QEMU_ASAN),qemu-prepare.sh,,,--enable-asan --enable-ubsan,qemu-system-x86_64 tests/qtest/qos-test,$(QEMU_FW)))

test-asan: all qemu-asan
	sh tests/asan.sh

$(eval $(call qemu_build,qemu-fuzz,$(QEMU_FUZZ),qemu-fuzz-prepare.sh,,CC=clang CXX=clang++,--enable-fuzzing --enable-asan --enable-ubsan,qemu-fuzz-x86_64,/usr/share/seabios/bios-256k.bin /usr/share/qemu/kvmvapic.bin))

fuzz:
	@sh scripts/deps.sh fuzz
	@$(MAKE) --no-print-directory qemu-fuzz
	sh scripts/fuzz.sh
