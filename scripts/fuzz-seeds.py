#!/usr/bin/env python3
"""Write the seed corpus of qroce's fuzz targets (tests/fuzz-corpus/).

The seeds replay what the qtests (qemu-device/tests/qtest/qroce-test.c) do,
in the input formats of the two targets:

generic-fuzz-qroce  QEMU's generic-fuzz: operations separated by "FUZZ"
    (tests/qtest/fuzz/generic_fuzz.c).  Commands and WQEs reach the device
    as DMA patterns: every DMA read the device makes is filled with the
    next pattern.  MMIO region 0 is BAR0 (registers), 1 is BAR2 (doorbells).
qroce-frames        qemu-device/tests/qtest/fuzz/qroce_frames_fuzz.c:
    operations separated by "FUZZ" against a device set up with QPs of
    every type in RTS.

Usage: scripts/fuzz-seeds.py [OUTDIR]   (default tests/fuzz-corpus)
"""
import os
import struct
import sys

SEP = b"FUZZ"

# ---------------------------------------------------------------- generic
OP_READ, OP_WRITE, OP_PCI_READ, OP_PCI_WRITE = 2, 3, 4, 5
OP_ADD_DMA, OP_CLEAR_DMA, OP_STEP = 7, 8, 9
REGS, DB = 0, 1

CTRL, CMDQ_BASE_LO, CMDQ_BASE_HI, CMDQ_LOG2, CMDQ_PI = 0x10, 0x40, 0x44, 0x48, 0x4c
CMDQ_CQ_LO, CMDQ_CQ_HI = 0x54, 0x58
ETH_CTRL, TXQ_LO, TXQ_HI, TXQ_LOG2, TXQ_PI = 0x80, 0x84, 0x88, 0x8c, 0x90
RXQ_LO, RXQ_HI, RXQ_LOG2, RXQ_PI = 0x98, 0x9c, 0xa0, 0xa4
DB_SQ, DB_RQ, DB_SRQ, DB_CQ_ARM, DB_CQ_CI = 0x0, 0x8, 0x10, 0x18, 0x20

CMDQ, COMP = 0x100000, 0x101000
MR = 0x300000
OWN_MAC = bytes.fromhex("525400123456")

(CMD_NOP, CMD_CREATE_EQ, CMD_DESTROY_EQ, CMD_ALLOC_PD, CMD_DEALLOC_PD,
 CMD_CREATE_CQ, CMD_DESTROY_CQ, CMD_CREATE_QP, CMD_MODIFY_QP, CMD_QUERY_QP,
 CMD_DESTROY_QP, CMD_REG_MR, CMD_DEREG_MR, CMD_CREATE_SRQ, CMD_MODIFY_SRQ,
 CMD_DESTROY_SRQ, CMD_CREATE_AH, CMD_DESTROY_AH, CMD_SET_GID,
 CMD_DEL_GID, CMD_QUERY_SRQ) = range(0x15)


def w(base, off, val, size=2):
    return bytes([OP_WRITE]) + struct.pack("<BBxxIQ", size, base, off, val)


def r(base, off, size=2):
    return bytes([OP_READ]) + struct.pack("<BBxxI", size, base, off)


def dma(data):
    return bytes([OP_ADD_DMA]) + struct.pack("<BB", 0, 0) + data


def clear():
    return bytes([OP_CLEAR_DMA])


def step():
    return bytes([OP_STEP])


def db(off, obj, val):
    return w(DB, off, (val << 32) | obj, 3)


def bt(addr, npages, level=0, shift=12):
    return struct.pack("<QIBBH", addr, npages, shift, level, 0)


def cmd(op, body=b""):
    c = struct.pack("<BBHI", op, 0, 0, 0) + body
    return c + bytes(128 - len(c))


def create_eq(eqn, addr):
    return cmd(CMD_CREATE_EQ, struct.pack("<IB3x", eqn, 8) + bt(addr, 1))


def create_cq(eqn, addr, log2=6):
    return cmd(CMD_CREATE_CQ, struct.pack("<IIB7x", eqn, 0, log2) + bt(addr, 1))


def set_gid(idx, gid):
    return cmd(CMD_SET_GID, struct.pack("<IB3x", idx, 1) + gid)


V4_GID = bytes(10) + b"\xff\xff" + bytes([10, 0, 0, 1])


def reg_mr(pdn, addr, npages, access=0xf):
    return cmd(CMD_REG_MR, struct.pack("<IIQQII", pdn, access, addr,
                                       npages * 4096, 0, 0) + bt(addr, npages))


def create_qp(pdn, cqn, qtype, sq, rq, srqn=0, flags=0):
    return cmd(CMD_CREATE_QP, struct.pack("<IIIIIBBBBBB6x", pdn, cqn, cqn,
                                          srqn, 0, qtype, flags, 4,
                                          0 if flags & 1 else 4, 6, 5) +
               bt(sq, 1) + (bt(0, 0) if flags & 1 else bt(rq, 1)))


def av(dgid=V4_GID, dmac=OWN_MAC, sgid=0, net=1):
    return dgid + dmac + struct.pack("<BBBBHI", sgid, 64, 0, net, 0, 0)


def modify(qpn, mask, state, mtu=1, dest=0, qkey=0, sq_psn=0, rq_psn=0,
           access=0xf, a=None):
    body = struct.pack("<IIBBBBBBBBB3xIIIIII", qpn, mask, 0, state, mtu, 14,
                       7, 7, 1, 1, 1, access, qkey, sq_psn, rq_psn, dest, 0)
    return cmd(CMD_MODIFY_QP, body + (a or av()))


M_STATE, M_ACCESS, M_PKEY, M_PORT, M_QKEY, M_AV, M_MTU = 1, 8, 16, 32, 64, 128, 256
M_TIMEOUT, M_RETRY, M_RNR_RETRY, M_RQ_PSN, M_MAX_RD = 512, 1024, 2048, 4096, 8192
M_MIN_RNR, M_SQ_PSN, M_MAX_DEST_RD, M_DEST_QPN = 1 << 15, 1 << 16, 1 << 17, 1 << 20
RC_INIT = M_STATE | M_PKEY | M_PORT | M_ACCESS
RC_RTR = M_STATE | M_AV | M_MTU | M_DEST_QPN | M_RQ_PSN | M_MAX_DEST_RD | M_MIN_RNR
RC_RTS = M_STATE | M_TIMEOUT | M_RETRY | M_RNR_RETRY | M_SQ_PSN | M_MAX_RD
UC_RTR = M_STATE | M_AV | M_MTU | M_DEST_QPN | M_RQ_PSN


def send_wqe(op, addr, length, key, flags=1, raddr=0, rkey=0, cmp=0, swap=0,
             inline=None):
    if inline is not None:
        h = struct.pack("<BBBBIII", op, flags | 4, 0, 0, 0, len(inline), 0)
        h += struct.pack("<QIIQQ", raddr, rkey, 0, cmp, swap)
        return h + inline
    h = struct.pack("<BBBBIII", op, flags, 1, 0, 0, 0, 0)
    h += struct.pack("<QIIQQ", raddr, rkey, 0, cmp, swap)
    return h + struct.pack("<QII", addr, length, key)


def recv_wqe(addr, length, key):
    return struct.pack("<B15x", 1) + struct.pack("<QII", addr, length, key)


def enable():
    return [w(REGS, CTRL, 2), w(REGS, CMDQ_BASE_LO, CMDQ), w(REGS, CMDQ_BASE_HI, 0),
            w(REGS, CMDQ_CQ_LO, COMP), w(REGS, CMDQ_CQ_HI, 0),
            w(REGS, CMDQ_LOG2, 4), w(REGS, CTRL, 1), r(REGS, 0xc)]


def commands(cmds, pi):
    """Post cmds as DMA patterns, ring the command doorbell at pi.

    Each command takes four patterns: the device reads the command, then
    maps its completion three times (out[], the first bytes, the owner
    byte), and generic-fuzz fills every mapping with the next pattern."""
    return [clear()] + [dma(c) for c in cmds for _ in range(4)] + \
        [w(REGS, CMDQ_PI, pi)]


# The QPNs and keys the qtests see on a fresh device: PD 1, CQ 1, QPs 2, 3,
# MR key 0x101 (index 1, variant 1).  The fuzzer mutates them anyway.
PDN, CQN, QA, QB, KEY = 1, 1, 2, 3, 0x101


def base_objects():
    return [cmd(CMD_ALLOC_PD), create_eq(0, 0x102000), create_eq(1, 0x103000),
            create_cq(1, 0x104000), set_gid(0, V4_GID), reg_mr(PDN, MR, 4)]


def connect(qpn, dest, qtype=0):
    if qtype == 1:
        return [modify(qpn, RC_INIT, 1), modify(qpn, UC_RTR, 2, dest=dest,
                rq_psn=100), modify(qpn, M_STATE | M_SQ_PSN, 3, sq_psn=100)]
    return [modify(qpn, RC_INIT, 1),
            modify(qpn, RC_RTR, 2, dest=dest, rq_psn=100),
            modify(qpn, RC_RTS, 3, sq_psn=100)]


def generic_seeds():
    s = {}
    s["enable"] = enable() + commands([cmd(CMD_NOP)], 1)
    objs = base_objects()
    s["objects"] = enable() + commands(objs, len(objs))
    # two RC QPs connected to each other through the device's own MAC
    qps = objs + [create_qp(PDN, CQN, 0, 0x110000, 0x111000),
                  create_qp(PDN, CQN, 0, 0x112000, 0x113000)]
    qps += connect(QA, QB) + connect(QB, QA)
    n = len(qps)
    base = enable() + commands(qps, n)
    for name, wqe in (("rc-send", send_wqe(0, MR, 1000, KEY)),
                      ("rc-write", send_wqe(3, MR, 3000, KEY, raddr=MR + 0x2000, rkey=KEY)),
                      ("rc-read", send_wqe(5, MR, 2000, KEY, raddr=MR + 0x2000, rkey=KEY)),
                      ("rc-atomic", send_wqe(7, MR + 8, 8, KEY, raddr=MR + 0x2000, rkey=KEY, cmp=5)),
                      ("rc-inline", send_wqe(0, 0, 0, 0, inline=bytes(range(64))))):
        s[name] = base + [clear(), dma(recv_wqe(MR + 0x1000, 4096, KEY)),
                          db(DB_RQ, QB, 1), clear(), dma(wqe),
                          dma(wqe[48:] * 4), db(DB_SQ, QA, 1),
                          step(), db(DB_CQ_ARM, CQN, 0x80000000)]
    # UC pair
    uc = objs + [create_qp(PDN, CQN, 1, 0x110000, 0x111000),
                 create_qp(PDN, CQN, 1, 0x112000, 0x113000)]
    uc += connect(QA, QB, 1) + connect(QB, QA, 1)
    s["uc-send"] = enable() + commands(uc, len(uc)) + [
        clear(), dma(recv_wqe(MR + 0x1000, 4096, KEY)), db(DB_RQ, QB, 1),
        clear(), dma(send_wqe(0, MR, 1500, KEY)), db(DB_SQ, QA, 1)]
    # UD: an AH to ourselves, a UD QP
    ud = objs + [cmd(CMD_CREATE_AH, struct.pack("<II", PDN, 0) + av()),
                 create_qp(PDN, CQN, 2, 0x110000, 0x111000)]
    ud += [modify(QA, M_STATE | M_PKEY | M_QKEY | M_PORT, 1, qkey=0x1111),
           modify(QA, M_STATE, 2), modify(QA, M_STATE | M_SQ_PSN, 3, sq_psn=7)]
    udw = struct.pack("<BBBBIII", 1, 1, 1, 0, 0x1234, 0, 0) + \
        struct.pack("<III20x", 1, QA, 0x1111) + struct.pack("<QII", MR, 100, KEY)
    s["ud-send"] = enable() + commands(ud, len(ud)) + [
        clear(), dma(recv_wqe(MR + 0x1000, 4096, KEY)), db(DB_RQ, QA, 1),
        clear(), dma(udw), db(DB_SQ, QA, 1)]
    # SRQ
    srq = objs + [cmd(CMD_CREATE_SRQ, struct.pack("<IIIBBHII", PDN, 0, 0, 6, 5,
                                                   0, 8, 0) + bt(0x120000, 1))]
    s["srq"] = enable() + commands(srq, len(srq)) + [
        clear(), dma(recv_wqe(MR, 64, KEY)), db(DB_SRQ, 1, 4)]
    # Ethernet: TX and RX rings
    s["ethernet"] = enable() + [
        w(REGS, TXQ_LO, 0x200000), w(REGS, TXQ_HI, 0), w(REGS, TXQ_LOG2, 3),
        w(REGS, RXQ_LO, 0x201000), w(REGS, RXQ_HI, 0), w(REGS, RXQ_LOG2, 3),
        w(REGS, ETH_CTRL, 3), clear(),
        dma(struct.pack("<QHHI", 0x202000, 60, 0, 0)),
        dma(OWN_MAC + OWN_MAC + b"\x08\x06" + bytes(46)),
        w(REGS, TXQ_PI, 1), w(REGS, RXQ_PI, 4)]
    # buffer tables through page lists (LIST1, LIST2)
    lst = [cmd(CMD_ALLOC_PD),
           cmd(CMD_REG_MR, struct.pack("<IIQQII", PDN, 1, MR, 8 * 4096, 0, 0) +
               bt(0x130000, 8, 2)),
           cmd(CMD_REG_MR, struct.pack("<IIQQII", PDN, 1, MR, 8 * 4096, 0, 0) +
               bt(0x131000, 8, 3))]
    s["page-lists"] = enable() + [clear()] + [dma(c) for c in lst] + [
        dma(struct.pack("<8Q", *[MR + i * 4096 for i in range(8)])),
        dma(struct.pack("<Q", 0x132000)),
        dma(struct.pack("<8Q", *[MR + i * 4096 for i in range(8)])),
        w(REGS, CMDQ_PI, 3)]
    # PCI config space and MSI-X
    s["pci"] = [bytes([OP_PCI_READ]) + struct.pack("<BBB", 2, 0, 0),
                bytes([OP_PCI_WRITE]) + struct.pack("<BBBxI", 1, 0, 4, 6)] + enable()
    return {k: SEP.join(v) for k, v in s.items()}


# ---------------------------------------------------------------- frames
F_OP_RAW, F_OP_ROCE, F_OP_STEP, F_OP_DB, F_OP_ETH = range(5)
F_V6, F_RAW_QPN, F_RAW_PSN, F_RAW_RKEY, F_RAW_VA = 1, 2, 4, 8, 16
F_CORRUPT, F_TRUNC, F_OTHER_MAC = 32, 64, 128
Q_RC4, Q_RC6, Q_UC, Q_UD, Q_GSI, Q_SRQ = range(6)


def roce(qp, opcode, psn=0, flags=0, bits=2, va=0, rkey=0, length=0,
         syndrome=0, msn=0, imm=0, swap_add=0, compare=0, orig=0, qkey=0,
         sqp=0x33, corrupt_off=0, corrupt_xor=0, trunc=0, payload=b"",
         dqpn=0):
    o = struct.pack("<BBBBIiQIIBBHIIQQQIIH", flags, qp, opcode, bits, dqpn,
                    psn, va, rkey, length, syndrome, corrupt_xor, corrupt_off,
                    msn, imm, swap_add, compare, orig, qkey, sqp, trunc)
    return bytes([F_OP_ROCE]) + o + payload


def fdb(which, qp, val):
    return bytes([F_OP_DB]) + struct.pack("<BBI", which, qp, val)


def pay(n, k=1):
    return bytes((i * k + 7) & 0xff for i in range(n))


def frames_seeds():
    s = {}
    # responses to QP 0's requests: SEND (PSN 0..2), WRITE (3..4), READ
    # (5..6), FETCH_ADD (7), CMP_SWAP (8)
    s["acks"] = [roce(Q_RC4, 0x11, 2, msn=1), roce(Q_RC4, 0x11, 4, msn=2),
                 roce(Q_RC4, 0x0d, 5, msn=2, payload=pay(1024)),
                 roce(Q_RC4, 0x0f, 6, msn=3, payload=pay(976)),
                 roce(Q_RC4, 0x12, 7, msn=4, orig=0x1122334455667788),
                 roce(Q_RC4, 0x12, 8, msn=5, orig=1)]
    s["naks"] = [roce(Q_RC4, 0x11, 0, syndrome=0x60), roce(Q_RC4, 0x11, 1, syndrome=0x21),
                 bytes([F_OP_STEP]), roce(Q_RC4, 0x11, 2, syndrome=0x62),
                 bytes([F_OP_STEP])]
    s["retransmit"] = [bytes([F_OP_STEP])] * 8
    s["read-resp-only"] = [roce(Q_RC4, 0x11, 4, msn=2),
                           roce(Q_RC4, 0x10, 5, msn=3, payload=pay(2000))]
    s["send-rc"] = [roce(Q_RC4, 0x00, 0, payload=pay(1024)),
                    roce(Q_RC4, 0x01, 1, payload=pay(1024, 3)),
                    roce(Q_RC4, 0x03, 2, imm=0xdeadbeef, payload=pay(100))]
    s["send-rc6"] = [roce(Q_RC6, 0x04, 0, payload=pay(200)),
                     roce(Q_RC6, 0x05, 1, bits=3, imm=7, payload=pay(10))]
    s["write"] = [roce(Q_RC4, 0x0a, 0, va=0, length=200, payload=pay(200)),
                  roce(Q_RC4, 0x06, 1, va=0x1000, length=2100, payload=pay(1024)),
                  roce(Q_RC4, 0x07, 2, payload=pay(1024)),
                  roce(Q_RC4, 0x09, 3, imm=5, payload=pay(52))]
    s["write-imm"] = [roce(Q_RC4, 0x0b, 0, va=0x100, length=16, imm=9, payload=pay(16))]
    s["read-req"] = [roce(Q_RC4, 0x0c, 0, va=0x2000, length=3000),
                     roce(Q_RC4, 0x0c, 0, va=0x2000, length=3000),
                     roce(Q_RC4, 0x0c, 3, va=0x0, length=0x80000000)]
    s["atomics"] = [roce(Q_RC4, 0x13, 0, va=0x40, compare=0, swap_add=5),
                    roce(Q_RC4, 0x14, 1, va=0x48, swap_add=1),
                    roce(Q_RC4, 0x14, 1, va=0x48, swap_add=1),
                    roce(Q_RC4, 0x14, 2, va=0x43, swap_add=1)]
    s["uc"] = [roce(Q_UC, 0x24, 0, payload=pay(300)),
               roce(Q_UC, 0x2a, 1, va=0x800, length=64, payload=pay(64)),
               roce(Q_UC, 0x20, 2, payload=pay(1024)),
               roce(Q_UC, 0x22, 4, payload=pay(10))]
    s["ud"] = [roce(Q_UD, 0x64, 0, qkey=0x1111, payload=pay(256)),
               roce(Q_UD, 0x65, 1, imm=3, payload=pay(1000)),
               roce(Q_UD, 0x64, 2, F_V6, payload=pay(100))]
    s["gsi"] = [roce(Q_GSI, 0x64, 0, bits=4, payload=pay(256))]
    s["srq"] = [roce(Q_SRQ, 0x04, 0, payload=pay(500)),
                roce(Q_SRQ, 0x04, 1, payload=pay(2048)),
                fdb(2, 0, 20)]
    s["cnp"] = [roce(Q_RC4, 0x81, 0, bits=0)]
    s["malformed"] = [roce(Q_RC4, 0x04, 0, F_CORRUPT, corrupt_off=24, corrupt_xor=1, payload=pay(64)),
                      roce(Q_RC4, 0x04, 0, F_CORRUPT, corrupt_off=50, corrupt_xor=0x80, payload=pay(64)),
                      roce(Q_RC4, 0x04, 0, F_TRUNC, trunc=20, payload=pay(64)),
                      roce(Q_RC4, 0x0a, 0, F_RAW_RKEY, rkey=0x4242, length=8, payload=pay(8)),
                      roce(Q_RC4, 0x0a, 0, F_RAW_VA, va=0xffffffffffff0000, length=64, payload=pay(64)),
                      roce(Q_RC4, 0x04, 0, F_RAW_QPN, dqpn=0xffffff, payload=pay(8)),
                      roce(Q_RC4, 0x04, 0, F_OTHER_MAC, payload=pay(8)),
                      roce(Q_RC4, 0x1f, 0, payload=pay(8)),
                      roce(Q_RC4, 0x04, 0x7fffff, payload=pay(8))]
    arp = bytes.fromhex("0806") + bytes.fromhex("0001080006040001") + \
        bytes.fromhex("525400aabb01") + bytes([10, 0, 0, 2]) + bytes(6) + bytes([10, 0, 0, 1])
    ipv4_short = bytes.fromhex("0800") + bytes.fromhex("4500001c0000400040110000") + bytes(8)
    s["ethernet"] = [bytes([F_OP_ETH]) + arp, bytes([F_OP_ETH]) + ipv4_short,
                     bytes([F_OP_RAW]) + b"\xff" * 6 + bytes.fromhex("525400aabb01") + b"\x86\xdd" + bytes(60),
                     bytes([F_OP_RAW]) + bytes(13)]
    s["doorbells"] = [fdb(0, 0, 6), fdb(1, 0, 17), fdb(3, 0, 0x80000001), fdb(4, 0, 1000),
                      fdb(2, 0, 65), fdb(1, 3, 0xffffffff)]
    return {k: SEP.join(v) for k, v in s.items()}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fuzz-corpus")
    for target, seeds in (("generic-fuzz-qroce", generic_seeds()),
                          ("qroce-frames", frames_seeds())):
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, "seed-" + name), "wb") as f:
                f.write(data)
        print(f"{d}: {len(seeds)} seeds")


if __name__ == "__main__":
    main()
