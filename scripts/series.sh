#!/bin/sh
# qroce as the three patch series its upstream trees take, and the build
# trees made from them.
#
#   sh scripts/series.sh export TREE      write build/patches/TREE/ with
#                                         git format-patch (cover letter,
#                                         one logical change a patch)
#   sh scripts/series.sh verify TREE      check that it applies with git am
#   sh scripts/series.sh refs TREE        check that every file a patch
#                                         names is a file of that tree
#   sh scripts/series.sh apply TREE SRC [K]
#                                         apply that series (its first K
#                                         patches) with git am to the
#                                         pristine files of the tarball and
#                                         bring the unpacked tree SRC to
#                                         the result (scripts/series-bisect.sh
#                                         builds each prefix)
#
# TREE is qemu (QEMU 11.1.1), linux (Debian's linux-source-7.3, the
# kernel the driver is written for and the guests run; LINUX=6.12: Debian's
# linux-source-6.12 of the LTS guest kernel, into build/patches/linux-6.12/)
# or rdma-core (65.0).  The sources stay where
# they are edited (qemu-device/, linux-driver/, rdma-core-provider/,
# include/); each export builds a small git repository from the pristine
# copies of the upstream files the series touches, commits the changes
# one by one and formats them.  include/qroce_hw.h and include/qroce-abi.h
# are the single sources of the hardware and uverbs interfaces; the export
# puts them where each tree keeps such headers (QEMU's copy in QEMU's own
# integer types, without <linux/types.h>).
#
# apply copies a file into SRC only when its content changed, so an edit
# rebuilds only what depends on it; files an older series added and this
# one does not are removed (or restored to upstream's version).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${QROCE_CACHE:-/var/cache/qroce}
B=$TOP/build

die() { echo "series: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: series.sh export TREE | apply TREE SRC (TREE: qemu, linux, rdma-core)"
CMD=$1
TREE=$2
case $TREE in
qemu)
	TAR=$CACHE/qemu_11.1.1+ds.orig.tar.xz
	BASE_NAME="QEMU v11.1.1"
	BASE_FILES="MAINTAINERS meson.build hw/net/Kconfig hw/net/meson.build
		include/hw/pci/pci.h docs/specs/index.rst docs/specs/pci-ids.rst
		tests/qtest/meson.build tests/qtest/libqos/meson.build
		tests/qtest/fuzz/meson.build tests/qtest/fuzz/generic_fuzz_configs.h" ;;
linux)
	# LINUX (the Makefile's, or LINUX_BASE): 7.3 (the default), or 6.12,
	# the LTS line, whose series goes to linux-6.12/
	LBASE=${LINUX_BASE:-${LINUX:-7.3}}
	case $LBASE in
	7.3) vfile=linux7-source-version ;;
	6.12) vfile=linux-source-version; TREE=linux-6.12 ;;
	*) die "LINUX must be 7.3 or 6.12, not '$LBASE'" ;;
	esac
	[ -f "$CACHE/$vfile" ] || die "$CACHE/$vfile missing: run 'make deps'"
	LVER=$(cat "$CACHE/$vfile")
	TAR=$CACHE/linux-source-$LVER.tar.xz
	BASE_NAME="Linux $LBASE as Debian ships it,
linux-source-$LBASE $LVER"
	BASE_FILES="MAINTAINERS drivers/net/ethernet/Kconfig
		drivers/net/ethernet/Makefile drivers/infiniband/Kconfig
		drivers/infiniband/hw/Makefile include/uapi/rdma/ib_user_ioctl_verbs.h" ;;
rdma-core)
	TAR=$CACHE/rdma-core_65.0.orig.tar.gz
	BASE_NAME="rdma-core v65.0"
	BASE_FILES="MAINTAINERS README.md CMakeLists.txt kernel-headers/CMakeLists.txt
		kernel-headers/rdma/ib_user_ioctl_verbs.h libibverbs/verbs.h debian/control
		debian/copyright redhat/rdma-core.spec suse/rdma-core.spec" ;;
*)
	die "unknown tree '$TREE' (qemu, linux, rdma-core)" ;;
esac
[ -f "$TAR" ] || die "$TAR missing: run 'make deps'"

S=$B/series/$TREE
OUT=$B/patches/$TREE

# The pristine upstream copies of BASE_FILES, extracted once per tarball
# and file list.
base() {
	key=$(printf '%s\n%s\n' "$TAR" "$BASE_FILES" | sha256sum | cut -c1-16)
	[ "$(cat "$S/base/.key" 2>/dev/null)" = "$key" ] && return 0
	rm -rf "$S/base" "$S/base.tmp"
	mkdir -p "$S/base.tmp"
	top=$(tar -tf "$TAR" 2>/dev/null | head -1)
	top=${top%%/*}
	members=
	for f in $BASE_FILES; do
		members="$members $top/$f"
	done
	# shellcheck disable=SC2086
	tar -xf "$TAR" -C "$S/base.tmp" --strip-components=1 $members ||
		die "cannot extract the upstream files from $TAR"
	echo "$key" >"$S/base.tmp/.key"
	mv "$S/base.tmp" "$S/base"
}

# --- building the series ------------------------------------------------

W=
git_w() { git -C "$W" -c core.autocrlf=false "$@"; }

# put REPO-FILE TREE-PATH: a file of this repository into the tree; the
# specification it names is QEMU's docs/specs/qroce.rst there
put() {
	mkdir -p "$W/$(dirname "$2")"
	case $TREE in
	qemu) spec='docs/specs/qroce.rst' ;;
	*) spec="QEMU's docs/specs/qroce.rst" ;;
	esac
	sed "s|docs/hw-spec\.md|$spec|g" "$TOP/$1" >"$W/$2"
}

commit() { # commit SUBJECT BODY
	git_w add -A
	git_w diff --cached --quiet && die "patch '$1' changes nothing"
	printf '%s\n\n%s\n\nSigned-off-by: %s\n' "$1" "$2" "$AUTHOR" >"$S/msg"
	git_w commit -q -F "$S/msg"
}

# addline FILE AFTER-PATTERN LINE (GNU sed keeps the indent after a\)
addline() {
	grep -qF "$3" "$W/$1" || sed -i "/$2/a\\$3" "$W/$1"
	grep -qF "$3" "$W/$1" || die "$TREE: no line matching '$2' in $1"
}
# insert FILE BEFORE-PATTERN TEXT-FILE
insert() {
	grep -q "$2" "$W/$1" || die "$TREE: no line matching '$2' in $1"
	awk -v pat="$2" -v f="$3" '
		!done && $0 ~ pat { while ((getline l < f) > 0) print l; done = 1 }
		{ print }' "$W/$1" >"$W/$1.tmp"
	mv "$W/$1.tmp" "$W/$1"
}

# The hardware header in QEMU's own types: <linux/types.h> is not there on
# every host QEMU builds on, and QEMU's style has no tabs.
qemu_hw_header() {
	sed -e '/^#include <linux\/types.h>$/d' -e 's|docs/hw-spec\.md|docs/specs/qroce.rst|g' \
	    -e 's/\b__u8\b/uint8_t/g; s/\b__u16\b/uint16_t/g' \
	    -e 's/\b__u32\b/uint32_t/g; s/\b__u64\b/uint64_t/g' \
	    -e 's/\b__le16\b/uint16_t/g; s/\b__le32\b/uint32_t/g' \
	    -e 's/\b__le64\b/uint64_t/g; s/\b__s32\b/int32_t/g' \
	    "$TOP/include/qroce_hw.h" | expand -t 8 | sed 's/[[:space:]]*$//' |
	awk '
	# a line past 80 columns with a comment after the code: the comment
	# goes on a line of its own above it, at the same indent
	length($0) > 80 && match($0, /[^ ] +\/\* .* \*\/$/) {
		code = substr($0, 1, RSTART)
		com = substr($0, RSTART + 1)
		sub(/^ +/, "", com)
		ind = code
		sub(/[^ ].*/, "", ind)
		print ind com
		print code
		next
	}
	{ print }'
}

QDEV=qemu-device/hw/net/qroce

# A file of this repository as the QEMU tree keeps it: the hardware header
# from hw/net/, the specification as docs/specs/qroce.rst
qemu_put() { # qemu_put REPO-FILE TREE-PATH
	put "$1" "$2"
	sed -i -e 's|^#include "qroce_hw.h"$|#include "hw/net/qroce_hw.h"|' \
	       -e 's|include/qroce_hw\.h|include/hw/net/qroce_hw.h|g' "$W/$2"
}

# qemu_dev SUBJECT BODY FILE...: the device's FILEs into hw/net/qroce/,
# its meson.build cut to the .c files present, its trace-events to the
# events they use (the tree's trace list names the directory from the
# first patch with an event), one commit
qemu_dev() {
	qd_subj=$1 qd_body=$2
	shift 2
	d=$W/hw/net/qroce
	for f; do
		qemu_put "$QDEV/$f" "hw/net/qroce/$f"
	done
	awk -v d="$d" '
		/^  \047[a-z_]*\.c\047,$/ {
			f = $1; gsub(/[\047,]/, "", f)
			if (system("test -f " d "/" f) != 0) next
		}
		{ print }' "$TOP/$QDEV/meson.build" >"$d/meson.build"
	# the events the files so far name (trace_NAME, or NAME in the macros
	# that paste it), under their sections' headers
	grep -ohE 'qroce_[a-z0-9_]+' "$d"/*.[ch] | sort -u >"$S/events"
	awk -v used="$S/events" '
		BEGIN { while ((getline l < used) > 0) u[l] = 1 }
		NR <= 3 { print; next }
		/^# [a-z_]*\.c$/ { sec = $0; shown = 0; next }
		/^qroce_/ {
			n = $1; sub(/\(.*/, "", n)
			if (!(n in u)) next
			if (!shown) { if (printed) print ""; print sec; shown = 1; printed = 1 }
			print
		}' "$TOP/$QDEV/trace-events" >"$d/trace-events"
	if grep -q '^qroce_' "$d/trace-events"; then
		put "$QDEV/trace.h" hw/net/qroce/trace.h
		addline meson.build "^    'hw\/net',$" "    'hw/net/qroce',"
	else
		rm -f "$d/trace-events"
	fi
	if [ ! -f "$d/Kconfig" ]; then
		put "$QDEV/Kconfig" hw/net/qroce/Kconfig
		echo "subdir('qroce')" >>"$W/hw/net/meson.build"
		printf '\nsource qroce/Kconfig\n' >>"$W/hw/net/Kconfig"
	fi
	commit "$qd_subj" "$qd_body"
}

# qemu_tests SUBJECT BODY DIR LINE-START FIRST-AFTER FILE...: test files
# of qemu-device/DIR into DIR, then in DIR/meson.build the line
# "LINE-START<.c files>))" after the last such line of qroce files, or
# after the line FIRST-AFTER (a regular expression) for the first; one
# commit
qemu_tests() {
	qt_subj=$1 qt_body=$2 qt_dir=$3 qt_start=$4 qt_first=$5
	shift 5
	qt_list=
	for f; do
		qemu_put "qemu-device/$qt_dir/$f" "$qt_dir/$f"
		case $f in *.c) qt_list="$qt_list${qt_list:+, }'$f'" ;; esac
	done
	m=$W/$qt_dir/meson.build
	n=$(grep -nF "$qt_start'qroce" "$m" | tail -1 | cut -d: -f1)
	[ -n "$n" ] || n=$(grep -n "$qt_first" "$m" | cut -d: -f1)
	[ -n "$n" ] || die "qemu: no line '$qt_first' in $qt_dir/meson.build"
	sed -i "${n}a\\$qt_start$qt_list))" "$m"
	commit "$qt_subj" "$qt_body"
}

# qemu_qtest SUBJECT BODY FILE...: qtests, listed in qos-test's sources
qemu_qtest() {
	qq_subj=$1 qq_body=$2
	shift 2
	qemu_tests "$qq_subj" "$qq_body" tests/qtest "qos_test_ss.add(files(" \
		'^qos_test_ss = ss.source_set()$' "$@"
}

# qemu_fuzz SUBJECT BODY FILE...: fuzz targets, in the fuzzer's sources
qemu_fuzz() {
	qf_subj=$1 qf_body=$2
	shift 2
	qemu_tests "$qf_subj" "$qf_body" tests/qtest/fuzz "specific_fuzz_ss.add(when: 'CONFIG_QROCE', if_true: files(" \
		"^specific_fuzz_ss.add(files('generic_fuzz.c'))$" "$@"
}

series_qemu() {
	# 1: the PCI ID and the specification
	addline include/hw/pci/pci.h '^#define PCI_DEVICE_ID_REDHAT_RISCV_IOMMU ' \
		'#define PCI_DEVICE_ID_REDHAT_QROCE       0x0015'
	sed -i '/^  PCI RISC-V IOMMU device$/a\
1b36:0015\
  PCI RoCEv2 RDMA NIC (``-device qroce``)' "$W/docs/specs/pci-ids.rst"
	addline docs/specs/index.rst '^   rocker$' '   qroce'
	{
		printf '..\n   SPDX-License-Identifier: GPL-2.0-or-later\n\n'
		pandoc -f gfm -t rst --wrap=auto --columns=78 "$TOP/docs/hw-spec.md" |
			sed 's|``include/qroce_hw.h``|``include/hw/net/qroce_hw.h``|g'
	} >"$W/docs/specs/qroce.rst"
	commit "docs/specs: add the qroce RoCEv2 NIC specification and its PCI ID" \
"qroce is an emulated PCIe RDMA NIC: an Ethernet function and a RoCEv2
engine behind one MAC, driven through a command queue (control path)
and userspace rings with doorbells (data path).  This is its hardware
interface as the device, the Linux driver and the rdma-core provider
implement it, and the 1b36:0015 device ID it asks for."

	# 2: the hardware header
	mkdir -p "$W/include/hw/net"
	qemu_hw_header >"$W/include/hw/net/qroce_hw.h"
	commit "include/hw/net: add qroce's hardware interface header" \
"Registers, command and event queue entries, work queue entries and
completions of docs/specs/qroce.rst as C structures, and the table of
work-request opcodes (which QP types take each one, what it reads and
writes, its completion opcode).  The device, its Linux drivers and its
rdma-core provider share this header.

It is (GPL-2.0-only OR BSD-2-Clause): rdma-core's providers are GPL-2.0
or BSD licensed."

	# 3..: the device, one layer after another from the wire up; no file
	# calls a file that comes after it, so every prefix builds, and
	# -device qroce exists from the last of them
	qemu_dev "hw/net/qroce: add the RoCEv2 frame codec" \
"roce_wire.c builds and parses RoCEv2 frames: Ethernet, IPv4 or IPv6,
UDP port 4791, the InfiniBand transport headers of each opcode and the
invariant CRC.  It depends on nothing else in QEMU, so the qtests' wire
peer can link it on its own (-DROCE_WIRE_STANDALONE).  Nothing uses it
yet; the device that does comes later in this series." \
		roce_wire.c roce_wire.h
	qemu_dev "hw/net/qroce: add the device state, DMA and the port" \
"qroce.h holds the state of the device the following patches fill in.
qroce_dma.c reads and writes guest memory for the device: only RAM,
never MMIO or holes, and inside the re-entrancy guard.  qroce_port.c is
the device's side of the netdev: frames out (with a loopback queue for
frames to the device's own addresses) and in, sorted into RoCEv2 and
Ethernet; qroce_wirefault.c sits under it and drops, duplicates,
reorders or delays frames when a test asks it to." \
		qroce.h qroce_dma.c qroce_dma.h qroce_wirefault.c qroce_wirefault.h \
		qroce_port.c qroce_port.h
	qemu_dev "hw/net/qroce: add rings and the on-demand paging table" \
"qroce_ring.c reads and writes the queues the guest shares with the
device (command, event, completion, send and receive rings) with each
index checked against its ring.  qroce_odp.c keeps which pages of an
on-demand-paging memory region are present; an access to an absent page
returns a miss the data path turns into a page-fault event." \
		qroce_odp.c qroce_odp.h qroce_ring.c qroce_ring.h
	qemu_dev "hw/net/qroce: add the object tables" \
"PDs, CQs, QPs, SRQs, MRs, memory windows, address handles and
multicast groups in tables indexed by handle, their keys and QPNs not
reused at once, every object charged to a state budget so that a guest
cannot make the device allocate without bound; buffer tables translate
an MR's addresses to guest pages." \
		qroce_objects.c qroce_objects.h
	qemu_dev "hw/net/qroce: add congestion control and the data path's common part" \
"DCQCN (ECN marks, CNPs, the rate and its timers) and what every
transport shares: WQE reading, scatter/gather through MRs and windows,
completions, the QP's error state and the run queue of QPs with work." \
		qroce_data_state.h qroce_data_xport.h qroce_data_cc.c qroce_data_cc.h \
		qroce_data_common.c qroce_data_common.h
	qemu_dev "hw/net/qroce: add the RC responder and requester" \
"Reliable connection: the responder checks PSNs, answers with ACKs,
NAKs and RNR NAKs, places SENDs, WRITEs and atomics and serves READs; the
requester segments messages into packets, keeps the retransmission
window and goes back N on a NAK or a timeout." \
		qroce_data_rc.h qroce_data_rc_resp.c qroce_data_rc_req.c
	qemu_dev "hw/net/qroce: add the RC completer, UC and UD" \
"The RC completer retires WQEs on ACKs and READ responses; UC sends and
receives without acknowledgement; UD and GSI send datagrams to address
handles and receive them with the GRH the verbs expect." \
		qroce_data_rc_comp.c qroce_data_uc.c qroce_data_ud.c
	qemu_dev "hw/net/qroce: add the engine's scheduler" \
"qroce_data.c runs the QPs on the run queue in turn, in the main loop or
in an IOThread, and dispatches the frames the port receives to their
QP's transport." \
		qroce_data.c qroce_data.h
	qemu_dev "hw/net/qroce: add the Ethernet function and the address, CQ and SRQ commands" \
"qroce_eth.c is the NIC's Ethernet side (its RX and TX rings share the
port with RoCEv2).  The commands of the control path come a family to a
file (what they share is in qroce_cmd.h); this patch has those of GIDs,
address handles and multicast groups, of event and completion queues,
and of SRQs.  The queue that runs them follows with the rest." \
		qroce_eth.c qroce_eth.h qroce_cmd.h \
		qroce_cmd_addr.c qroce_cmd_cq.c qroce_cmd_srq.c
	qemu_dev "hw/net/qroce: add the MR, ODP and QP commands and the command queue" \
"Registration of memory regions (plain, fast-registration, on-demand
paging, device memory) and windows, the ODP commands that map and unmap
pages after a fault, and the QP commands: create, modify with the state
machine's checks, query and destroy.  qroce_ctrl.c runs the command
queue and dispatches each command to its handler." \
		qroce_cmd_mr.c qroce_cmd_odp.c qroce_cmd_qp.c qroce_ctrl.c qroce_ctrl.h
	qemu_dev "hw/net/qroce: add the register file and doorbells" \
"BAR0's registers (identity, command queue, event queues, reset and
health) and BAR2's doorbell pages, each value checked when it is
written." \
		qroce_regs.c qroce_regs.h
	qemu_dev "hw/net/qroce: add migration" \
"The device's VMState: objects, rings, QP transport state and frames in
flight move to the destination, and each value is checked as it comes in
(a stream is guest-controlled input).  On-demand-paging MRs move without
their present pages; they fault again on the destination." \
		qroce_migration.c qroce_migration.h
	qemu_dev "hw/net/qroce: add the qroce PCI device" \
"-device qroce: the PCIe function (BARs, MSI-X, reset, properties) that
ties the previous patches together, and its run-time knobs (congestion
control, fault injection for tests, x-objects)." \
		qroce_debug.c qroce_debug.h qroce_pci.c
	cmp -s "$W/hw/net/qroce/meson.build" "$TOP/$QDEV/meson.build" ||
		die "qemu: a file of $QDEV/meson.build is in no patch"
	for f in "$TOP/$QDEV"/*; do
		[ -f "$W/hw/net/qroce/${f##*/}" ] || die "qemu: $QDEV/${f##*/} is in no patch"
	done

	# the libqos driver, then the qtests by area
	qemu_put qemu-device/tests/qtest/libqos/qroce.c tests/qtest/libqos/qroce.c
	qemu_put qemu-device/tests/qtest/libqos/qroce.h tests/qtest/libqos/qroce.h
	addline tests/qtest/libqos/meson.build "^        'igb.c',$" "        'qroce.c',"
	# the driver's wire peer uses the device's frame codec, built on its
	# own (no QEMU headers); not in a fuzzing build, whose qemu-fuzz links
	# libqos with the device and so with the device's copy
	cat >>"$W/tests/qtest/libqos/meson.build" <<-'EOF'
	qroce_wire = static_library('qroce-wire', meson.project_source_root() / 'hw/net/qroce/roce_wire.c', c_args: '-DROCE_WIRE_STANDALONE', build_by_default: false)
	qos = declare_dependency(dependencies: qos, objects: get_option('fuzzing') ? [] : qroce_wire.extract_all_objects(recursive: false))
	EOF
	commit "tests/qtest/libqos: add a driver for qroce" \
"libqos/qroce.c drives the device as a guest driver would (command queue,
event queues, rings, doorbells) and plays a RoCEv2 peer on the wire with
the device's frame codec.  The qtests that follow use it."
	qemu_qtest "tests/qtest: add qroce register and wire tests" \
"Registers and their checks, doorbells, and the frames on the wire
(headers, ICRC, DCQCN's window against a peer that ACKs late)." \
		qroce-regs-test.c qroce-wire-test.c
	qemu_qtest "tests/qtest: add qroce command tests" \
"Every command of the control path, with good and bad arguments: each
bad one completes with an error status and changes nothing." \
		qroce-cmd-test.c
	qemu_qtest "tests/qtest: add qroce memory registration tests" \
"Plain, fast-registration, on-demand-paging and device-memory regions,
windows of both types, and the access rights each grants." \
		qroce-mr-test.c
	qemu_qtest "tests/qtest: add qroce RC tests" \
"SEND, WRITE, READ and atomics on RC against the libqos peer, with
retransmission, NAKs and RNR." \
		qroce-rc-test.c
	qemu_qtest "tests/qtest: add qroce UD, UC and SRQ tests" \
"Datagrams and the GRH, unreliable connection, and receives from shared
receive queues with their limit event." \
		qroce-ud-uc-test.c qroce-srq-test.c
	qemu_qtest "tests/qtest: add qroce Ethernet and fault-injection tests" \
"The Ethernet function beside RoCEv2 on one MAC, and the knobs that make
the wire and the commands fail for tests." \
		qroce-eth-test.c qroce-inject-test.c
	qemu_qtest "tests/qtest: add qroce security tests" \
"What a hostile or broken guest or peer must not get from the device:
out-of-range indices, lengths, keys and addresses, rewritten WQEs,
producer indices moving backwards, DMA outside RAM." \
		qroce-security-test.c
	qemu_qtest "tests/qtest: add qroce migration tests" \
"Migration with objects and traffic in flight, and streams with
out-of-range values that the destination refuses." \
		qroce-migration-test.c
	for f in "$TOP"/qemu-device/tests/qtest/qroce-*-test.c; do
		[ -f "$W/tests/qtest/${f##*/}" ] || die "qemu: ${f##*/} is in no patch"
	done

	# the fuzz targets (qroce_fuzz.[ch]: what they share)
	sed -i '/^const generic_fuzz_config predefined_configs\[\] = {$/a\
    {\
        .name = "qroce",\
        .args = "-machine q35 -nodefaults "\
        "-device qroce,netdev=n0,mac=52:54:00:12:34:56 "\
        "-netdev hubport,id=n0,hubid=0",\
        .objects = "qroce*",\
    },' "$W/tests/qtest/fuzz/generic_fuzz_configs.h"
	qemu_fuzz "tests/qtest/fuzz: add qroce targets" \
"generic-fuzz-qroce runs the generic fuzzer over qroce's BARs, its PCI
configuration space and every DMA read it makes; qroce-frames feeds a
set-up device (command queue, EQ, CQ, PD, MR, QPs of each type in RTS,
an SRQ, the Ethernet rings) the fuzzer's bytes as frames from the wire.
qroce_fuzz.c sets the device up for this target and the next." \
		qroce_fuzz.c qroce_fuzz.h qroce_frames_fuzz.c
	qemu_fuzz "tests/qtest/fuzz: add a qroce migration-stream target" \
"qroce-migstream loads the fuzzer's bytes as the device's migration
section into a reset device, then drives it with doorbells, frames, the
clock and destroy commands, and resets it: a migration stream is input
the destination must check like any other." \
		qroce_migstream_fuzz.c
	for f in "$TOP"/qemu-device/tests/qtest/fuzz/qroce_*; do
		[ -f "$W/tests/qtest/fuzz/${f##*/}" ] || die "qemu: fuzz/${f##*/} is in no patch"
	done

	# MAINTAINERS
	cat >"$S/maint" <<-'EOF'
	qroce
	M: qroce developers <qroce@invalid>
	S: Maintained
	F: hw/net/qroce/
	F: include/hw/net/qroce_hw.h
	F: docs/specs/qroce.rst
	F: tests/qtest/libqos/qroce.*
	F: tests/qtest/qroce-*-test.c
	F: tests/qtest/fuzz/qroce_*

	EOF
	insert MAINTAINERS '^Rocker$' "$S/maint"
	commit "MAINTAINERS: add qroce" "The RoCEv2 NIC's files and who looks after them."
}

# qroce's value in enum rdma_driver_id, as include/qroce-abi.h states it
driver_id() {
	id=$(sed -n 's/^#define QROCE_RDMA_DRIVER_ID[[:space:]]*\([0-9]*\).*/\1/p' \
		"$TOP/include/qroce-abi.h")
	[ -n "$id" ] || die "no QROCE_RDMA_DRIVER_ID in include/qroce-abi.h"
	echo "$id"
}

# the entries of enum rdma_driver_id in a header: their number and the last
driver_enum() { # driver_enum HEADER
	awk '/^enum rdma_driver_id/ { on = 1; n = 0; next } on && /^};/ { print n, last; exit }
		on && /^\tRDMA_DRIVER_[A-Z0-9_]*,$/ { n++; last = $1 }' "$1"
}

# linux: the object list of one module from linux-driver/Kbuild
kbuild_objs() { # kbuild_objs MODULE
	awk -v m="$1-y" '$1 == m { on = 1 } on { print; if ($NF != "\\") exit }' \
		"$TOP/linux-driver/Kbuild"
}

# linux: one entry of linux-driver/Kconfig
kconfig_entry() { # kconfig_entry SYMBOL
	awk -v s="config $1" '$0 == s { on = 1 } on && /^config / && $0 != s { exit } on' \
		"$TOP/linux-driver/Kconfig" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}

# linux_includes FILE...: the shared headers as the kernel tree keeps
# them, in #include lines and where comments name them
linux_includes() {
	sed -i -e 's|^#include "qroce_hw.h"$|#include <linux/qroce/qroce_hw.h>|' \
	       -e 's|^#include "qroce_core.h"$|#include <linux/qroce/qroce_core.h>|' \
	       -e 's|^#include "qroce-abi.h"$|#include <rdma/qroce-abi.h>|' \
	       -e 's|\(\.\./\)\{0,1\}include/qroce_hw\.h|include/linux/qroce/qroce_hw.h|g' "$@"
}

# linux_mod DIR MODULE SYMBOL SUBJECT BODY FILE...: FILEs of
# linux-driver/ into DIR and their objects into DIR/Makefile (MODULE,
# built when CONFIG_SYMBOL is set; the first patch makes the Makefile,
# each later one adds a line), one commit
linux_mod() {
	lm_dir=$1 lm_mod=$2 lm_sym=$3 lm_subj=$4 lm_body=$5
	shift 5
	lm_objs=
	for f; do
		put "linux-driver/$f" "$lm_dir/$f"
		linux_includes "$W/$lm_dir/$f"
		case $f in
		*.c)
			kbuild_objs "$lm_mod" | grep -qw "${f%.c}\.o" ||
				die "linux: ${f%.c}.o is not in $lm_mod of linux-driver/Kbuild"
			lm_objs="$lm_objs ${f%.c}.o" ;;
		esac
	done
	if [ ! -f "$W/$lm_dir/Makefile" ]; then
		printf '# SPDX-License-Identifier: GPL-2.0\nobj-$(CONFIG_%s) += %s.o\n\n%s-y :=%s\n' \
			"$lm_sym" "$lm_mod" "$lm_mod" "$lm_objs" >"$W/$lm_dir/Makefile"
	else
		for o in $lm_objs; do
			echo "$lm_mod-y += $o" >>"$W/$lm_dir/Makefile"
		done
	fi
	commit "$lm_subj" "$lm_body"
}

series_linux() {
	ID=$(sed -n 's/^#define QROCE_RDMA_DRIVER_ID[[:space:]]*\([0-9]*\).*/\1/p' \
		"$TOP/include/qroce-abi.h")
	[ -n "$ID" ] || die "no QROCE_RDMA_DRIVER_ID in include/qroce-abi.h"
	verbs=include/uapi/rdma/ib_user_ioctl_verbs.h
	# RDMA_DRIVER_QROCE goes after the enum's last entry, RDMA_DRIVER_IONIC
	# since Linux 6.18 (its value, 22, is rdma-core's too); 6.12's enum
	# ends at RDMA_DRIVER_MANA, so IONIC's place is kept there first
	grep -q '^	RDMA_DRIVER_IONIC,$' "$W/$verbs" ||
		addline "$verbs" '^\tRDMA_DRIVER_MANA,$' '	RDMA_DRIVER_IONIC,'
	before=$(awk '/^enum rdma_driver_id/ { on = 1; n = 0; next } on && /^};/ { print n; exit }
		on && /^\tRDMA_DRIVER_[A-Z0-9_]*,$/ { n++ }' "$W/$verbs")
	[ "$before" = "$ID" ] ||
		die "RDMA_DRIVER_QROCE would be $before in this kernel, qroce-abi.h says $ID"
	addline "$verbs" '^\tRDMA_DRIVER_IONIC,$' '	RDMA_DRIVER_QROCE,'
	put include/qroce-abi.h include/uapi/rdma/qroce-abi.h
	commit "RDMA/uapi: add the qroce ABI and RDMA_DRIVER_QROCE" \
"The uverbs ABI of the qroce RDMA driver (the udata of alloc_ucontext,
create_cq, create_qp, create_srq and their responses) and its driver id,
by which rdma-core's provider finds the device."

	put include/qroce_hw.h include/linux/qroce/qroce_hw.h
	put linux-driver/qroce_core.h include/linux/qroce/qroce_core.h
	linux_includes "$W/include/linux/qroce/qroce_core.h"
	commit "net: qroce: add the hardware interface and the core interface" \
"qroce_hw.h is the device's interface (registers, command and event
queue entries, work queue entries and completions), shared by the
Ethernet driver and the RDMA driver; qroce_core.h is what the Ethernet
driver gives the RDMA driver through the auxiliary device: the PCI
function, the command queue, event queue vectors and the netdev."

	d=drivers/net/ethernet/qroce
	mkdir -p "$W/$d"
	{
		echo '# SPDX-License-Identifier: GPL-2.0'
		echo 'config NET_VENDOR_QROCE'
		printf '\tbool "qroce devices"\n\tdefault y\n\tdepends on PCI\n\thelp\n'
		printf '\t  If you have a network (Ethernet) device of this class, say Y.\n\n'
		printf '\t  qroce is the RoCEv2 RDMA NIC that QEMU emulates (-device qroce).\n'
		printf '\t  Saying N skips the questions about qroce devices; by itself\n'
		printf '\t  it does not change the kernel.\n\n'
		echo 'if NET_VENDOR_QROCE'
		echo
		kconfig_entry QROCE_EN
		echo
		echo 'endif # NET_VENDOR_QROCE'
	} >"$W/$d/Kconfig"
	addline drivers/net/ethernet/Kconfig '^source "drivers\/net\/ethernet\/qlogic\/Kconfig"$' \
		'source "drivers/net/ethernet/qroce/Kconfig"'
	addline drivers/net/ethernet/Makefile '^obj-$(CONFIG_NET_VENDOR_QLOGIC) += qlogic\/$' \
		'obj-$(CONFIG_NET_VENDOR_QROCE) += qroce/'
	linux_mod $d qroce_en QROCE_EN "net: qroce: add the command queue" \
"qroce_en is the Ethernet PCI driver of qroce, the RoCEv2 NIC QEMU
emulates; the patches after this one add the rest of it.  This one has
the device's command queue: commands posted to a ring in DMA memory,
their completions matched by tag with a timeout, a health check that
declares the function dead and recovers it, and the commands' names for
the logs." \
		qroce_en.h qroce_en_cmdq.c
	linux_mod $d qroce_en QROCE_EN "net: qroce: add the netdev" \
"The Ethernet function: its RX and TX rings, the MAC filter, link state,
and the device's counters as ethtool statistics." \
		qroce_en_eth.c
	linux_mod $d qroce_en QROCE_EN "net: qroce: add the PCI driver and the auxiliary device" \
"qroce_en binds to the PCI function: BARs, MSI-X, the command queue and
the asynchronous event queue, the netdev.  It adds an auxiliary device,
qroce_en.rdma.N, for the RDMA driver, as ice/irdma and bnxt_en/bnxt_re
do; the two modules do not link against each other." \
		qroce_en_eq.c qroce_en_aux.c qroce_en_main.c
	for f in "$TOP"/linux-driver/qroce_en*.[ch]; do
		case $f in *.mod.c) continue ;; esac
		[ -f "$W/$d/${f##*/}" ] || die "linux: ${f##*/} is in no patch"
	done

	d=drivers/infiniband/hw/qroce
	mkdir -p "$W/$d"
	{
		echo '# SPDX-License-Identifier: GPL-2.0'
		kconfig_entry INFINIBAND_QROCE
	} >"$W/$d/Kconfig"
	addline drivers/infiniband/Kconfig '^source "drivers\/infiniband\/hw\/qedr\/Kconfig"$' \
		'source "drivers/infiniband/hw/qroce/Kconfig"'
	addline drivers/infiniband/hw/Makefile '^obj-$(CONFIG_INFINIBAND_QEDR)' \
		'obj-$(CONFIG_INFINIBAND_QROCE)		+= qroce/'
	linux_mod $d qroce_ib INFINIBAND_QROCE "RDMA/qroce: add buffer tables and work queues" \
"qroce_ib is the RDMA driver of qroce, bound to the auxiliary device of
qroce_en; the patches after this one add it a family of verbs at a time,
and the last registers the ib_device.  This one has what they share:
the driver's structures, buffer tables (the pages of an MR or a queue as
the device reads them) and the work queues of kernel QPs and SRQs." \
		qroce.h qroce_verbs.h qroce_bt.c qroce_wq.c
	linux_mod $d qroce_ib INFINIBAND_QROCE "RDMA/qroce: add on-demand paging and dma-buf MRs" \
"ODP MRs: the device reports a page fault as an event, the driver maps
the pages through ib_umem_odp and tells the device; invalidations unmap
them.  dma-buf MRs are mapped on registration and moved on a move
notification.  advise_mr prefetches." \
		qroce_odp.h qroce_odp.c
	linux_mod $d qroce_ib INFINIBAND_QROCE "RDMA/qroce: add device memory" \
"The device's on-chip memory as ib_dm: allocated from a bitmap, mapped
into userspace and registered as an MR." \
		qroce_dm.c
	linux_mod $d qroce_ib INFINIBAND_QROCE "RDMA/qroce: add the device, contexts, PDs, MRs, MWs and AHs" \
"The verbs of the device itself: query_device and query_port, GIDs,
user contexts and their mmap entries, PDs, MRs (user, DMA, fast
registration, rereg), memory windows, address handles and counters." \
		qroce_ctrl.c
	linux_mod $d qroce_ib INFINIBAND_QROCE "RDMA/qroce: add completion queues" \
"CQs in DMA memory shared with userspace, their completion events, and
the asynchronous events of the device's objects." \
		qroce_cq.c
	linux_mod $d qroce_ib INFINIBAND_QROCE "RDMA/qroce: add shared receive queues" \
"SRQs with their limit event; kernel SRQs post through qroce_wq.c." \
		qroce_srq.c
	linux_mod $d qroce_ib INFINIBAND_QROCE "RDMA/qroce: add queue pairs" \
"RC, UC, UD and GSI QPs: create with the rings the device reads, modify
through the QP state machine, query, destroy, multicast attach, and
post_send/post_recv for kernel consumers." \
		qroce_qp.c
	linux_mod $d qroce_ib INFINIBAND_QROCE "RDMA/qroce: add restrack entries" \
"rdma resource show -dd shows the device's own view of QPs, CQs and MRs
(its PSNs, indices and states) beside the core's." \
		qroce_restrack.c
	linux_mod $d qroce_ib INFINIBAND_QROCE "RDMA/qroce: register the ib_device" \
"qroce_ib binds to the auxiliary device of qroce_en, creates the
completion event queues and registers an ib_device with the verbs of
the previous patches.  The data path is in userspace (rdma-core's
qroce provider); kernel consumers post through the same rings." \
		qroce_ib_main.c
	for f in "$TOP"/linux-driver/qroce*.[ch]; do
		# qroce_compat.h: the out-of-tree build's, for older kernels
		case ${f##*/} in qroce_en*|qroce_core.h|qroce_compat.h|*.mod.c) continue ;; esac
		[ -f "$W/$d/${f##*/}" ] || die "linux: ${f##*/} is in no patch"
	done

	cat >"$S/maint" <<-'EOF'
	QROCE EMULATED RoCEv2 NIC DRIVERS
	M:	qroce developers <qroce@invalid>
	L:	linux-rdma@vger.kernel.org
	L:	netdev@vger.kernel.org
	S:	Maintained
	F:	drivers/infiniband/hw/qroce/
	F:	drivers/net/ethernet/qroce/
	F:	include/linux/qroce/
	F:	include/uapi/rdma/qroce-abi.h

	EOF
	insert MAINTAINERS '^QT1010 MEDIA DRIVER$' "$S/maint"
	commit "MAINTAINERS: add qroce" "The qroce drivers and who looks after them."
}

# prov SUBJECT BODY FILE...: FILEs of rdma-core-provider/ into
# providers/qroce/, its CMakeLists.txt listing the .c files there so far,
# one commit
prov() {
	pv_subj=$1 pv_body=$2
	shift 2
	for f; do
		put "rdma-core-provider/$f" "providers/qroce/$f"
	done
	awk -v d="$W/providers/qroce" '
		/^  [a-z_]*\.c$/ { f = $1; if (system("test -f " d "/" f) != 0) next }
		{ print }' "$TOP/rdma-core-provider/CMakeLists.txt" >"$W/providers/qroce/CMakeLists.txt"
	commit "$pv_subj" "$pv_body"
}

series_rdma_core() {
	put include/qroce-abi.h kernel-headers/rdma/qroce-abi.h
	# both lists (the headers, the ABI wrappers), in order after qedr
	sed -i 's|^  rdma/qedr-abi.h$|  rdma/qedr-abi.h\n  rdma/qroce-abi.h|' \
		"$W/kernel-headers/CMakeLists.txt"
	grep -c 'rdma/qroce-abi.h' "$W/kernel-headers/CMakeLists.txt" | grep -qx 2 ||
		die "rdma-core: kernel-headers/CMakeLists.txt has not two qedr-abi.h lines"
	# the next free driver id, which include/qroce-abi.h states
	ID=$(driver_id)
	before=$(driver_enum "$W/kernel-headers/rdma/ib_user_ioctl_verbs.h")
	[ "${before% *}" = "$ID" ] ||
		die "RDMA_DRIVER_QROCE would be ${before% *} in rdma-core, qroce-abi.h says $ID"
	addline kernel-headers/rdma/ib_user_ioctl_verbs.h '^\tRDMA_DRIVER_IONIC,$' \
		'	RDMA_DRIVER_QROCE,'
	commit "Update kernel headers" \
"To commit ('RDMA/uapi: add the qroce ABI and RDMA_DRIVER_QROCE') of the
qroce kernel series: Linux's include/uapi/rdma/qroce-abi.h and the driver
id."

	put include/qroce_hw.h providers/qroce/qroce_hw.h
	commit "providers/qroce: add the hardware interface of QEMU's qroce NIC" \
"qroce is the RoCEv2 NIC QEMU emulates (-device qroce); its kernel driver
is qroce_ib.  This header is the device's interface as described in
QEMU's docs/specs/qroce.rst: work queue entries, completions and
doorbells, and the table of work-request opcodes (which QP types take
each one, what it reads and writes, its completion opcode).  The device
model, the kernel driver and this provider share it.  The provider that
uses it follows, a part at a time."
	sed -i '/^add_subdirectory(providers\/qedr)$/a add_subdirectory(providers/qroce)' \
		"$W/CMakeLists.txt"
	grep -qx 'add_subdirectory(providers/qroce)' "$W/CMakeLists.txt" ||
		die "rdma-core: no providers/qedr in CMakeLists.txt"
	prov "providers/qroce: add PDs, MRs and the mapped rings" \
"The provider's structures, and the verbs that need no ring of their
own: protection domains (with parent domains and their thread domains),
memory regions and windows, address handles; and the rings the driver
maps for CQs, QPs and SRQs." \
		qroce.h qroce_abi.h qroce_ctrl_pd.c qroce_ctrl_mr.c
	prov "providers/qroce: add CQs" \
"Completion queues on rings shared with the device: ibv_poll_cq and the
extended CQ (ibv_start_poll and the read_* accessors), notification
requests, resize and destroy." \
		qroce_poll.c qroce_ctrl_cq.c
	prov "providers/qroce: add posting of work requests" \
"WQEs written to the send and receive rings and the doorbell rung from
userspace: ibv_post_send, ibv_post_recv and ibv_post_srq_recv, the
extended ibv_wr_* API, memory window binds, inline data." \
		qroce_post.c
	prov "providers/qroce: add QPs and SRQs" \
"Creating, modifying, querying and destroying QPs of type RC, UC and UD
and SRQs, with rings the driver maps and the device reads." \
		qroce_ctrl_qp.c
	# what a static link names in -DRDMA_STATIC_PROVIDERS=qroce
	addline libibverbs/verbs.h '^extern const struct verbs_device_ops verbs_provider_qedr;$' \
		'extern const struct verbs_device_ops verbs_provider_qroce;'
	sed -i 's/^ - qedr.ko$/ - qedr.ko\n - qroce_ib.ko/' "$W/README.md"
	cat >"$S/maint" <<-'EOF'
	QROCE USERSPACE PROVIDER (for qroce_ib.ko)
	M:	qroce developers <qroce@invalid>
	S:	Maintained
	F:	providers/qroce/

	EOF
	insert MAINTAINERS '^RXE SOFT ROCEE* USERSPACE PROVIDER' "$S/maint"
	prov "providers/qroce: register the provider" \
"The device is matched by its driver id, RDMA_DRIVER_QROCE; its context
is allocated with the ABI version and ring sizes the driver returns.
libibverbs/verbs.h declares verbs_provider_qroce, so that a static link
can name the provider in RDMA_STATIC_PROVIDERS." \
		qroce.c CMakeLists.txt
	for f in "$TOP"/rdma-core-provider/*; do
		[ -f "$W/providers/qroce/${f##*/}" ] || die "rdma-core: ${f##*/} is in no patch"
	done

	sed -i 's/^  - qedr: QLogic QL4xxx RoCE HCAs$/&\n  - qroce: QEMU emulated RoCEv2 NIC/' "$W/debian/control"
	cat >"$S/copy" <<-'EOF'
	Files: providers/qroce/*
	Copyright: 2026 qroce developers
	License: BSD-2-clause or GPL-2

	EOF
	insert debian/copyright '^Files: providers/rxe/\*$' "$S/copy"
	sed -i 's/^- libqedr: QLogic QL4xxx RoCE HCA$/&\n- libqroce: QEMU emulated RoCEv2 NIC/' \
		"$W/redhat/rdma-core.spec" "$W/suse/rdma-core.spec"
	for f in debian/control redhat/rdma-core.spec suse/rdma-core.spec; do
		grep -q 'qroce' "$W/$f" || die "rdma-core: no qroce entry made in $f"
	done
	commit "debian, redhat, suse: package the qroce provider" \
"libqroce-rdmav*.so goes into ibverbs-providers (Debian) and libibverbs
(Red Hat, SUSE) with the other providers."
}

cover() { # cover TREE-TITLE BLURB
	c=$(ls "$S"/out/0000-cover-letter.patch)
	title=$1
	blurb=$2
	awk -v t="$title" -v b="$blurb" '
		/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, t) }
		/^\*\*\* BLURB HERE \*\*\*$/ { print b; next }
		{ print }' "$c" >"$c.tmp"
	mv "$c.tmp" "$c"
}

export_series() {
	base
	W=$S/work
	rm -rf "$W" "$S/out"
	cp -a "$S/base" "$W"
	rm -f "$W/.key"
	AUTHOR=$(git -C "$TOP" config user.name 2>/dev/null || true)
	email=$(git -C "$TOP" config user.email 2>/dev/null || true)
	[ -n "$AUTHOR" ] && [ -n "$email" ] || { AUTHOR="qroce developers"; email=qroce@invalid; }
	AUTHOR="$AUTHOR <$email>"
	# fixed dates: the same sources give the same patches
	GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"
	GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
	GIT_AUTHOR_NAME=${AUTHOR% <*}
	GIT_AUTHOR_EMAIL=$email
	GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME
	GIT_COMMITTER_EMAIL=$email
	export GIT_AUTHOR_DATE GIT_COMMITTER_DATE GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL \
		GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
	git init -q "$W"
	git_w add -A
	git_w commit -q -m "$BASE_NAME (the files this series touches)"
	git_w tag base
	case $TREE in
	qemu) series_qemu ;;
	linux*) series_linux ;;
	rdma-core) series_rdma_core ;;
	esac
	git_w format-patch -q --cover-letter --zero-commit --no-signature \
		--subject-prefix="PATCH qroce" -o "$S/out" base..HEAD
	case $TREE in
	qemu) cover "hw/net/qroce: an emulated RoCEv2 RDMA NIC" \
"qroce is a PCIe RoCEv2 NIC for guests: stock rdma-core tools, perftest,
RDMA CM, NVMe-oF, NFS, SRP and iSER over RDMA run on it, its frames are
valid RoCEv2 on the wire, and every guest-supplied value is checked.
Its Linux drivers (qroce_en, qroce_ib) and rdma-core provider are sent
to those trees as series of their own.

Why a device: rxe and siw are RDMA in software inside the guest kernel;
they have no command queue, no doorbells, no DMA and no device state to
migrate, so a driver developer cannot test a hardware driver's paths on
them.  pvrdma, the last emulated RDMA device, needed RDMA hardware on
the host and was removed.  qroce needs nothing on the host: its RoCEv2
frames go through any netdev backend.

Tested: the qtests of this series (registers, commands, memory
registration, RC, UC, UD, SRQ, Ethernet, fault injection, hostile
input, migration) in the main loop and with the engine in an IOThread;
the three fuzz targets; and, in guests, rdma-core's own test suite,
perftest, RDMA CM, NVMe-oF, NFS, SRP and iSER, live migration under
traffic.  Every patch builds on its own.  Maintained by the qroce
developers (MAINTAINERS, last patch).

Based on $BASE_NAME." ;;
	linux*) cover "qroce: drivers for QEMU's emulated RoCEv2 NIC" \
"qroce is a RoCEv2 RDMA NIC emulated by QEMU (-device qroce).  This series
adds its two drivers, split as ice/irdma and bnxt_en/bnxt_re are:
qroce_en, the Ethernet PCI driver, and qroce_ib, the RDMA driver bound to
its auxiliary device.  The userspace half is rdma-core's qroce provider.

Why: rxe and siw are software RDMA inside the kernel, not devices; a
driver developer needs a device with a command queue, event queues,
doorbells and DMA to test a hardware driver's paths in a VM, and
pvrdma, which needed RDMA hardware on the host, was removed.  Tested in
QEMU guests with rdma-core's test suite, perftest, RDMA CM, the kernel
verbs of NVMe-oF, NFS, SRP and iSER, module reload under traffic and
live migration; every patch builds on its own (W=1, sparse).
Maintained by the qroce developers (MAINTAINERS, last patch).

Based on $BASE_NAME." ;;
	rdma-core) cover "providers/qroce: QEMU's emulated RoCEv2 NIC" \
"The userspace provider of qroce_ib (QEMU's -device qroce), matched by
RDMA_DRIVER_QROCE, and its packaging.

Based on $BASE_NAME." ;;
	esac
	# replace the old series only if something changed
	if [ -d "$OUT" ] && diff -r -q "$OUT" "$S/out" >/dev/null 2>&1; then
		rm -rf "$S/out"
	else
		rm -rf "$OUT"
		mkdir -p "$(dirname "$OUT")"
		mv "$S/out" "$OUT"
		echo "series: wrote $OUT: $(($(ls "$OUT" | wc -l) - 1)) patches and a cover letter"
	fi
	rm -rf "$W" "$S/msg" "$S/maint" "$S/copy" "$S/events"
}

# --- applying it --------------------------------------------------------

# the pristine files with the series (its first $UPTO patches, all if
# empty) applied by git am, in $S/applied
UPTO=
stage() {
	[ -d "$OUT" ] || die "$OUT missing: run 'sh scripts/series.sh export $TREE'"
	base
	A=$S/applied
	rm -rf "$A"
	cp -a "$S/base" "$A"
	rm -f "$A/.key"
	git init -q "$A"
	git -C "$A" add -A
	git -C "$A" -c user.name=qroce -c user.email=qroce@invalid commit -q -m base
	git -C "$A" -c user.name=qroce -c user.email=qroce@invalid am -q --whitespace=error-all \
		$(ls "$OUT"/*.patch | grep -v '/0000-cover-letter.patch$' | head -n "${UPTO:-1000000}") ||
		{ git -C "$A" am --abort 2>/dev/null; die "$OUT does not apply to $BASE_NAME"; }
	# the build's own adjustment, not part of the series: Debian's QEMU
	# tarball has no edk2 images, so never try to unpack them
	[ "$TREE" != qemu ] ||
		sed -i "s/unpack_edk2_blobs = bzip2.found()$/unpack_edk2_blobs = bzip2.found() and get_option('install_blobs')/" \
			"$A/meson.build"
	# and the drivers, written for Linux 7.3, on the 6.12 base: the
	# out-of-tree build's qroce_compat.h before each of their sources
	if [ "$TREE" = linux-6.12 ]; then
		for d in drivers/net/ethernet/qroce drivers/infiniband/hw/qroce; do
			[ -d "$A/$d" ] || continue
			cp "$TOP/linux-driver/qroce_compat.h" "$A/$d/"
			echo 'ccflags-y += -include $(src)/qroce_compat.h' >>"$A/$d/Makefile"
		done
		git -C "$A" add -A
	fi
}

apply_series() {
	SRC=$1
	[ -d "$SRC" ] || die "$SRC is not an unpacked $TREE tree"
	stage
	list=$SRC/.qroce-series-files
	# the overlay of symlinks that came before the series
	[ -f "$list" ] || find "$SRC" -type l -lname "$TOP/*" -exec rm -f {} +
	git -C "$A" ls-files | sort >"$S/files.new"
	if [ -f "$list" ]; then
		comm -23 "$list" "$S/files.new" | while read -r f; do
			if [ -f "$S/base/$f" ]; then cp "$S/base/$f" "$SRC/$f"; else rm -f "$SRC/$f"; fi
		done
	fi
	n=0
	while read -r f; do
		if ! cmp -s "$A/$f" "$SRC/$f"; then
			mkdir -p "$SRC/$(dirname "$f")"
			cp "$A/$f" "$SRC/$f"
			n=$((n + 1))
		fi
	done <"$S/files.new"
	mv "$S/files.new" "$list"
	rm -rf "$A"
	[ $n -eq 0 ] || echo "series: $n files of $SRC updated from $OUT"
}

# refs: every path a patch of the series names (in its message, its
# comments or its code) must be a file of the tree the series makes: the
# tarball's files and those the series adds.  A name counts as there when
# it is a path of the tree, a path under include/ (an #include) or the end
# of one (a header named from its directory, or relative with ../).
# System headers (#include <...>), names another tree's ("QEMU's
# docs/...") and QEMU's generated trace headers are not checked.  Prints
# each missing one as
# "PATCH: NAME"; status 1 if there is any.
refs() {
	[ -d "$OUT" ] || die "$OUT missing: run 'sh scripts/series.sh export $TREE'"
	rt=$(mktemp -d)
	tar -tf "$TAR" | sed -n 's|^[^/]*/||p' | grep -v '/$' >"$rt/files"
	cat "$OUT"/0*.patch | sed -n 's|^+++ b/||p' >>"$rt/files"
	sort -u -o "$rt/files" "$rt/files"
	rf=0
	for p in "$OUT"/0*.patch; do
		case $p in */0000-cover-letter.patch) continue ;; esac
		# the message and the added lines, not the context or diffstat
		# (not system headers, not names said to be another tree's, not
		# QEMU's generated trace headers)
		awk '/^diff --git / { body = 1 } !body && !/^ [^ ].*\|/ || /^\+[^+]/' "$p" |
		grep -v '^+#include <' |
		sed -E "s/(QEMU|Linux|rdma-core)'s [^ ]+//g" |
		grep -oE '(\.?\.?/)*([A-Za-z0-9_.-]+/)+[A-Za-z0-9_-]+\.(c|h|md|rst|sh|py|txt|pl|build|json|spec)\b' |
		sed -E 's|^(\.\.?/)+||' | grep -v '^trace/trace-' | sort -u |
		while read -r n; do
			grep -qxF -e "$n" -e "include/$n" "$rt/files" && continue
			grep -q "/$(printf '%s' "$n" | sed 's/[.[\*^$]/\\&/g')\$" "$rt/files" && continue
			echo "${p##*/}: $n"
		done >>"$rt/missing"
	done
	if [ -s "$rt/missing" ]; then
		cat "$rt/missing"
		rf=1
	fi
	rm -rf "$rt"
	return $rf
}

case $CMD in
export) export_series ;;
refs) refs ;;
verify) stage; rm -rf "$A" ;;
apply)
	[ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: series.sh apply TREE SRC [K]"
	UPTO=${4:-}
	case $UPTO in
	'' | *[!0-9]* | 0) [ -z "$UPTO" ] || die "apply: K must be a patch count, not '$UPTO'" ;;
	esac
	apply_series "$3" ;;
*) die "unknown command '$CMD' (export, verify, apply, refs)" ;;
esac
