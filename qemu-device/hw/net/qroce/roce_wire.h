/*
 * RoCEv2 on the wire: header layouts, ICRC, frame building and parsing.
 * Plain C with no QEMU dependency, so that host tools (tests/tools) use
 * the same code as the device.  Wire fields are big-endian.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef ROCE_WIRE_H
#define ROCE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROCE_UDP_PORT       4791
#define ROCE_ETH_HLEN       14
#define ROCE_IP4_HLEN       20
#define ROCE_IP6_HLEN       40
#define ROCE_UDP_HLEN       8
#define ROCE_BTH_LEN        12
#define ROCE_RETH_LEN       16
#define ROCE_AETH_LEN       4
#define ROCE_IMMDT_LEN      4
#define ROCE_IETH_LEN       4
#define ROCE_FETH_LEN       4
#define ROCE_ATOMICETH_LEN  28
#define ROCE_ATOMICACK_LEN  8
#define ROCE_DETH_LEN       8
#define ROCE_ICRC_LEN       4
#define ROCE_MAX_HDRS       (ROCE_ETH_HLEN + ROCE_IP6_HLEN + ROCE_UDP_HLEN + \
                             ROCE_BTH_LEN + ROCE_ATOMICETH_LEN + ROCE_IMMDT_LEN)

/* BTH opcodes (RC; UC = RC + 0x20) */
enum {
    ROCE_SEND_FIRST = 0x00,
    ROCE_SEND_MIDDLE = 0x01,
    ROCE_SEND_LAST = 0x02,
    ROCE_SEND_LAST_IMM = 0x03,
    ROCE_SEND_ONLY = 0x04,
    ROCE_SEND_ONLY_IMM = 0x05,
    ROCE_WRITE_FIRST = 0x06,
    ROCE_WRITE_MIDDLE = 0x07,
    ROCE_WRITE_LAST = 0x08,
    ROCE_WRITE_LAST_IMM = 0x09,
    ROCE_WRITE_ONLY = 0x0a,
    ROCE_WRITE_ONLY_IMM = 0x0b,
    ROCE_READ_REQ = 0x0c,
    ROCE_READ_RESP_FIRST = 0x0d,
    ROCE_READ_RESP_MIDDLE = 0x0e,
    ROCE_READ_RESP_LAST = 0x0f,
    ROCE_READ_RESP_ONLY = 0x10,
    ROCE_ACK = 0x11,
    ROCE_ATOMIC_ACK = 0x12,
    ROCE_CMP_SWAP = 0x13,
    ROCE_FETCH_ADD = 0x14,
    ROCE_SEND_LAST_INV = 0x16,      /* with an IETH; RC only */
    ROCE_SEND_ONLY_INV = 0x17,
    ROCE_FLUSH = 0x1c,              /* FETH and RETH; RC only */
    ROCE_ATOMIC_WRITE = 0x1d,       /* RETH and 8 bytes; RC only */
    ROCE_UD_SEND_ONLY = 0x64,
    ROCE_UD_SEND_ONLY_IMM = 0x65,
    ROCE_CNP = 0x81,                /* Congestion Notification Packet */
};
#define ROCE_CNP_LEN        16      /* reserved bytes after the BTH */

/* FETH: placement type in bits 3..0, selectivity level in bits 5..4 */
#define ROCE_FETH(type, level)  (((type) & 0xf) | ((level) & 3) << 4)
#define ROCE_FETH_TYPE(f)       ((f) & 0xf)
#define ROCE_FETH_LEVEL(f)      (((f) >> 4) & 3)

/* ECN codepoints: the low two bits of the IPv4 TOS / IPv6 traffic class. */
#define ROCE_ECN_MASK       3
#define ROCE_ECN_NOT_ECT    0
#define ROCE_ECN_ECT1       1
#define ROCE_ECN_ECT0       2
#define ROCE_ECN_CE         3
#define ROCE_UC             0x20    /* | an RC SEND or WRITE opcode */

/* AETH syndromes */
#define ROCE_AETH_ACK_NO_CREDIT 0x1f
#define ROCE_AETH_RNR           0x20    /* | timer */
#define ROCE_AETH_NAK_SEQ       0x60
#define ROCE_AETH_NAK_INV       0x61
#define ROCE_AETH_NAK_ACCESS    0x62
#define ROCE_AETH_NAK_OP        0x63
#define ROCE_AETH_TYPE(s)       (((s) >> 5) & 3)    /* 0 ACK, 1 RNR, 3 NAK */

/* A packet to build (all host order). */
typedef struct RocePktOut {
    const uint8_t *dmac, *smac;
    const uint8_t *sgid, *dgid;     /* 16 bytes: IPv4-mapped means IPv4 */
    uint8_t tclass, hop_limit;      /* tclass: DSCP and ECN bits as sent */
    uint32_t flow_label;
    uint16_t sport;
    uint8_t opcode;
    bool se, ackreq;
    uint32_t dqpn, psn;
    /* extension headers present per opcode */
    uint64_t reth_va;
    uint32_t reth_rkey, reth_len;
    uint8_t aeth_syndrome;
    uint32_t aeth_msn;
    uint32_t imm;                   /* as on the wire (big-endian value) */
    uint32_t ieth;                  /* IETH: the rkey to invalidate */
    uint32_t feth;                  /* FETH (FLUSH): ROCE_FETH() */
    uint64_t atomic_orig;           /* AtomicAckETH */
    uint64_t atomic_swap_add, atomic_compare;   /* AtomicETH (+reth_va/rkey) */
    uint32_t deth_qkey, deth_sqp;   /* DETH (UD) */
} RocePktOut;

/* A parsed packet. */
typedef struct RocePktIn {
    bool ipv6;
    uint8_t ecn;                    /* ROCE_ECN_* of the IP header */
    const uint8_t *l3;              /* the IPv4 or IPv6 header */
    uint8_t sgid[16], dgid[16];     /* IPv4 addresses IPv4-mapped */
    const uint8_t *smac;
    uint8_t opcode;
    bool se, ackreq;
    uint8_t padcnt, tver;
    uint16_t pkey;
    uint32_t dqpn, psn;
    uint64_t reth_va;
    uint32_t reth_rkey, reth_len;
    uint8_t aeth_syndrome;
    uint32_t aeth_msn;
    bool has_imm;
    uint32_t imm;
    bool has_ieth;                  /* SEND with Invalidate */
    uint32_t ieth;
    uint32_t feth;                  /* FLUSH */
    uint64_t atomic_orig;
    uint64_t atomic_swap_add, atomic_compare;   /* AtomicETH (+reth_va/rkey) */
    uint32_t deth_qkey, deth_sqp;
    const uint8_t *payload;
    uint32_t paylen;
    bool icrc_ok;
} RocePktIn;

uint32_t roce_crc32(uint32_t state, const void *buf, size_t len);
bool roce_gid_is_v4(const uint8_t *gid);
/* Length of the headers of a packet with @opcode. */
size_t roce_hdr_len(uint8_t opcode, bool ipv6);
/*
 * Build a whole frame: headers, @paylen bytes of payload already placed
 * by the caller at @buf + roce_hdr_len(), pad, ICRC; returns the frame
 * length (padded to 60 bytes).
 */
size_t roce_build(uint8_t *buf, const RocePktOut *p, uint32_t paylen);
/* Parse @len bytes; 0 on success, or a negative reason (ROCE_ERR_*). */
int roce_parse(const uint8_t *buf, size_t len, RocePktIn *p);
/* Compute the ICRC over the L3 packet @l3 (@len bytes, without ICRC). */
uint32_t roce_icrc(const uint8_t *l3, size_t len, bool ipv6);
uint16_t roce_ip_csum(const uint8_t *hdr, size_t len);

enum {
    ROCE_NOT_ROCE = -1,     /* not IP/UDP 4791: not for the RoCE engine */
    ROCE_ERR_LEN = -2,      /* lengths inconsistent */
    ROCE_ERR_OPCODE = -3,   /* opcode unknown or headers missing */
    ROCE_ERR_CSUM = -4,     /* IPv4 header checksum wrong */
};

#endif
