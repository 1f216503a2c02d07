/*
 * RoCEv2 on the wire.  See roce_wire.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
/*
 * Inside QEMU the codec uses QEMU's helpers for byte order, the Internet
 * checksum and the ethertypes.  The host tools (tests/tools) and the
 * qtest compile this file on its own with ROCE_WIRE_STANDALONE, without
 * QEMU's headers and libraries, and get small local versions instead.
 * The ICRC's CRC-32 is the device's own in both: tests/tools/icrc-bench
 * measures it 2-17x faster than zlib's crc32() at RoCE frame sizes.
 */
#ifndef ROCE_WIRE_STANDALONE
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "net/checksum.h"
#include "net/eth.h"
#endif
#include <string.h>
#include "roce_wire.h"

/*
 * x86 hosts may have PCLMULQDQ for the ICRC; checked at run time.  (The file
 * is shared with host tools built without QEMU's headers, hence no
 * host/cpuinfo.h.)
 */
#if defined(__SSE2__) && defined(__GNUC__)
#define ROCE_CLMUL
#endif

static uint32_t crc_tab[8][256];
static bool crc_ready;

static void crc_init(void)
{
    uint32_t i, j, c;

    for (i = 0; i < 256; i++) {
        c = i;
        for (j = 0; j < 8; j++) {
            c = (c >> 1) ^ (0xedb88320u & -(c & 1));
        }
        crc_tab[0][i] = c;
    }
    for (i = 0; i < 256; i++) {
        for (j = 1; j < 8; j++) {
            crc_tab[j][i] = (crc_tab[j - 1][i] >> 8) ^
                            crc_tab[0][crc_tab[j - 1][i] & 0xff];
        }
    }
    crc_ready = true;
}

/* Reflected CRC-32 (Ethernet polynomial), 8 bytes a step from tables. */
static uint32_t crc32_tables(uint32_t c, const uint8_t *p, size_t len)
{
    if (!crc_ready) {
        crc_init();
    }
    while (len >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                           (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        c = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
            crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^
            crc_tab[3][p[4]] ^ crc_tab[2][p[5]] ^ crc_tab[1][p[6]] ^
            crc_tab[0][p[7]];
        p += 8;
        len -= 8;
    }
    while (len--) {
        c = (c >> 8) ^ crc_tab[0][(c ^ *p++) & 0xff];
    }
    return c;
}

#ifdef ROCE_CLMUL
#include <immintrin.h>

/*
 * The same CRC by folding with carry-less multiplication: four 128-bit
 * lanes are multiplied forward by x^(512+-32..64) and added to the next
 * 64 bytes, folded to one lane, reduced to 64 and 32 bits and finished
 * with a Barrett reduction.  The constants are x^k mod P(x), bit-reflected,
 * for the k each step needs; P'(x) and mu = x^64 / P(x) close it.  @len is
 * a multiple of 16, at least 64.
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc32_clmul(uint32_t c, const uint8_t *p, size_t len)
{
    const __m128i k512 = _mm_set_epi64x(0x1c6e41596ull, 0x154442bd4ull);
    const __m128i k128 = _mm_set_epi64x(0x0ccaa009eull, 0x1751997d0ull);
    const __m128i k64 = _mm_set_epi64x(0, 0x163cd6124ull);
    const __m128i pmu = _mm_set_epi64x(0x1f7011641ull, 0x1db710641ull);
    const __m128i m32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x0, x1, x2, x3, t;

#define FOLD(x, k, next)                                        \
    _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), \
                                _mm_clmulepi64_si128(x, k, 0x11)), next)

    x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p),
                       _mm_cvtsi32_si128(c));
    x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    p += 64;
    len -= 64;
    while (len >= 64) {
        x0 = FOLD(x0, k512, _mm_loadu_si128((const __m128i *)p));
        x1 = FOLD(x1, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = FOLD(x2, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = FOLD(x3, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        len -= 64;
    }
    x0 = FOLD(x0, k128, x1);
    x0 = FOLD(x0, k128, x2);
    x0 = FOLD(x0, k128, x3);
    while (len >= 16) {
        x0 = FOLD(x0, k128, _mm_loadu_si128((const __m128i *)p));
        p += 16;
        len -= 16;
    }
#undef FOLD
    /* 128 -> 64 bits */
    x0 = _mm_xor_si128(_mm_clmulepi64_si128(x0, k128, 0x10),
                       _mm_srli_si128(x0, 8));
    /* 64 -> 32 bits */
    t = _mm_srli_si128(x0, 4);
    x0 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, m32), k64,
                                            0x00), t);
    /* Barrett reduction */
    t = x0;
    x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, m32), pmu, 0x10);
    x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, m32), pmu, 0x00);
    return _mm_extract_epi32(_mm_xor_si128(x0, t), 1);
}

/* 1 if the CPU has it and it agrees with the tables, else -1. */
static int clmul_state;

static bool crc32_clmul_ok(void)
{
    if (!clmul_state) {
        uint8_t b[200];
        bool same = true;
        size_t i, n;

        __builtin_cpu_init();
        if (__builtin_cpu_supports("pclmul") &&
            __builtin_cpu_supports("sse4.1")) {
            for (i = 0; i < sizeof(b); i++) {
                b[i] = i * 131 + 7;
            }
            for (n = 64; n <= sizeof(b); n += 16) {
                same &= crc32_clmul(0x12345678u, b, n) ==
                        crc32_tables(0x12345678u, b, n);
            }
        }
        clmul_state = __builtin_cpu_supports("pclmul") &&
                      __builtin_cpu_supports("sse4.1") && same ? 1 : -1;
    }
    return clmul_state > 0;
}
#endif

/* Reflected CRC-32 (Ethernet polynomial) without pre/post inversion. */
uint32_t roce_crc32(uint32_t c, const void *buf, size_t len)
{
    const uint8_t *p = buf;

#ifdef ROCE_CLMUL
    if (len >= 64 && crc32_clmul_ok()) {
        size_t n = len & ~(size_t)15;

        c = crc32_clmul(c, p, n);
        p += n;
        len -= n;
    }
#endif
    return crc32_tables(c, p, len);
}

#ifdef ROCE_WIRE_STANDALONE
#define ETH_P_IP    0x0800
#define ETH_P_IPV6  0x86dd

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, v >> 32);
    put32(p + 4, v);
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
           (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* The Internet checksum: a running sum of @n bytes, and its end. */
static uint32_t wire_csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
    size_t i;

    for (i = 0; i + 1 < n; i += 2) {
        sum += get16(p + i);
    }
    if (n & 1) {
        sum += (uint32_t)p[n - 1] << 8;
    }
    return sum;
}

static uint16_t wire_csum_finish(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return ~sum;
}
#else
static void put16(uint8_t *p, uint16_t v)
{
    stw_be_p(p, v);
}

static void put32(uint8_t *p, uint32_t v)
{
    stl_be_p(p, v);
}

static void put64(uint8_t *p, uint64_t v)
{
    stq_be_p(p, v);
}

static uint16_t get16(const uint8_t *p)
{
    return lduw_be_p(p);
}

static uint32_t get32(const uint8_t *p)
{
    return ldl_be_p(p);
}

static uint64_t get64(const uint8_t *p)
{
    return ldq_be_p(p);
}

static uint32_t wire_csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
    return sum + net_checksum_add_cont(n, (uint8_t *)p, 0);
}

static uint16_t wire_csum_finish(uint32_t sum)
{
    return net_checksum_finish(sum);
}
#endif

/* 24-bit fields (PSN, QPN): the low three bytes of a 32-bit one */
static void put24(uint8_t *p, uint32_t v)
{
    p[0] = v >> 16;
    put16(p + 1, v);
}

static uint32_t get24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | get16(p + 1);
}

bool roce_gid_is_v4(const uint8_t *gid)
{
    static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

    return !memcmp(gid, pfx, 12);
}

/* Which extension headers follow the BTH, for an RC/UC opcode. */
#define X_RETH   1
#define X_AETH   2
#define X_IMM    4
#define X_ATOMIC 8
#define X_AACK   16
#define X_VALID  32
#define X_DETH   64
#define X_CNP    128
#define X_IETH   256
#define X_FETH   512     /* before the RETH */

static unsigned roce_ext(uint8_t opcode)
{
    switch (opcode >> 5) {
    case 0:     /* RC */
        break;
    case 1:     /* UC: SEND and RDMA WRITE only */
        if ((opcode & 0x1f) > ROCE_WRITE_ONLY_IMM) {
            return 0;
        }
        break;
    case 4:     /* CNP: a BTH and 16 reserved bytes */
        return opcode == ROCE_CNP ? X_VALID | X_CNP : 0;
    case 3:     /* UD */
        return opcode == ROCE_UD_SEND_ONLY ? X_VALID | X_DETH :
               opcode == ROCE_UD_SEND_ONLY_IMM ? X_VALID | X_DETH | X_IMM : 0;
    default:
        return 0;
    }
    switch (opcode & 0x1f) {
    case ROCE_SEND_FIRST:
    case ROCE_SEND_MIDDLE:
    case ROCE_SEND_LAST:
    case ROCE_SEND_ONLY:
    case ROCE_WRITE_MIDDLE:
    case ROCE_WRITE_LAST:
    case ROCE_READ_RESP_MIDDLE:
        return X_VALID;
    case ROCE_SEND_LAST_IMM:
    case ROCE_SEND_ONLY_IMM:
    case ROCE_WRITE_LAST_IMM:
        return X_VALID | X_IMM;
    case ROCE_WRITE_FIRST:
    case ROCE_WRITE_ONLY:
    case ROCE_READ_REQ:
        return X_VALID | X_RETH;
    case ROCE_WRITE_ONLY_IMM:
        return X_VALID | X_RETH | X_IMM;
    case ROCE_READ_RESP_FIRST:
    case ROCE_READ_RESP_LAST:
    case ROCE_READ_RESP_ONLY:
    case ROCE_ACK:
        return X_VALID | X_AETH;
    case ROCE_ATOMIC_ACK:
        return X_VALID | X_AETH | X_AACK;
    case ROCE_CMP_SWAP:
    case ROCE_FETCH_ADD:
        return X_VALID | X_ATOMIC;
    case ROCE_SEND_LAST_INV:
    case ROCE_SEND_ONLY_INV:
        return X_VALID | X_IETH;
    case ROCE_FLUSH:
        return X_VALID | X_FETH | X_RETH;
    case ROCE_ATOMIC_WRITE:
        return X_VALID | X_RETH;
    }
    return 0;
}

static size_t roce_ext_len(unsigned x)
{
    return (x & X_DETH ? ROCE_DETH_LEN : 0) +
           (x & X_FETH ? ROCE_FETH_LEN : 0) +
           (x & X_RETH ? ROCE_RETH_LEN : 0) + (x & X_AETH ? ROCE_AETH_LEN : 0) +
           (x & X_IMM ? ROCE_IMMDT_LEN : 0) +
           (x & X_IETH ? ROCE_IETH_LEN : 0) +
           (x & X_ATOMIC ? ROCE_ATOMICETH_LEN : 0) +
           (x & X_AACK ? ROCE_ATOMICACK_LEN : 0) +
           (x & X_CNP ? ROCE_CNP_LEN : 0);
}

size_t roce_hdr_len(uint8_t opcode, bool ipv6)
{
    return ROCE_ETH_HLEN + (ipv6 ? ROCE_IP6_HLEN : ROCE_IP4_HLEN) +
           ROCE_UDP_HLEN + ROCE_BTH_LEN + roce_ext_len(roce_ext(opcode));
}

uint16_t roce_ip_csum(const uint8_t *hdr, size_t len)
{
    return wire_csum_finish(wire_csum_add(0, hdr, len));
}

uint32_t roce_icrc(const uint8_t *l3, size_t len, bool ipv6)
{
    uint8_t hdr[ROCE_IP6_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN];
    size_t iplen = ipv6 ? ROCE_IP6_HLEN : ROCE_IP4_HLEN;
    size_t hlen = iplen + ROCE_UDP_HLEN + ROCE_BTH_LEN;
    static const uint8_t ff[8] = { 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff };
    uint32_t c;

    if (len < hlen) {
        return 0;
    }
    memcpy(hdr, l3, hlen);
    if (ipv6) {
        hdr[0] = 0x6f;                  /* traffic class, flow label */
        hdr[1] = hdr[2] = hdr[3] = 0xff;
        hdr[7] = 0xff;                  /* hop limit */
    } else {
        hdr[1] = 0xff;                  /* TOS */
        hdr[8] = 0xff;                  /* TTL */
        hdr[10] = hdr[11] = 0xff;       /* header checksum */
    }
    hdr[iplen + 6] = hdr[iplen + 7] = 0xff;     /* UDP checksum */
    hdr[iplen + ROCE_UDP_HLEN + 4] = 0xff;      /* BTH FECN/BECN/resv */
    c = roce_crc32(0xffffffffu, ff, sizeof(ff));
    c = roce_crc32(c, hdr, hlen);
    c = roce_crc32(c, l3 + hlen, len - hlen);
    return ~c;
}

/* The IPv4 or IPv6 header of packet @p, @l4len bytes after it. */
static void roce_build_ip(uint8_t *ip, const RocePktOut *p, bool v6,
                          size_t iplen, size_t l4len)
{
    if (v6) {
        put32(ip, 6u << 28 | (uint32_t)p->tclass << 20 |
                  (p->flow_label & 0xfffff));
        put16(ip + 4, l4len);
        ip[6] = 17;
        ip[7] = p->hop_limit;
        memcpy(ip + 8, p->sgid, 16);
        memcpy(ip + 24, p->dgid, 16);
    } else {
        ip[0] = 0x45;
        ip[1] = p->tclass;
        put16(ip + 2, iplen + l4len);
        put16(ip + 4, 0);               /* ID */
        put16(ip + 6, 0x4000);          /* DF */
        ip[8] = p->hop_limit;
        ip[9] = 17;
        put16(ip + 10, 0);
        memcpy(ip + 12, p->sgid + 12, 4);
        memcpy(ip + 16, p->dgid + 12, 4);
        put16(ip + 10, roce_ip_csum(ip, ROCE_IP4_HLEN));
    }
}

/* The extension headers @x of packet @p at @e; returns their end. */
static uint8_t *roce_build_ext(uint8_t *e, const RocePktOut *p, unsigned x)
{
    if (x & X_DETH) {
        put32(e, p->deth_qkey);
        e[4] = 0;
        put24(e + 5, p->deth_sqp);
        e += ROCE_DETH_LEN;
    }
    if (x & X_FETH) {
        put32(e, p->feth);
        e += ROCE_FETH_LEN;
    }
    if (x & X_RETH) {
        put64(e, p->reth_va);
        put32(e + 8, p->reth_rkey);
        put32(e + 12, p->reth_len);
        e += ROCE_RETH_LEN;
    }
    if (x & X_AETH) {
        e[0] = p->aeth_syndrome;
        put24(e + 1, p->aeth_msn);
        e += ROCE_AETH_LEN;
    }
    if (x & X_AACK) {
        put64(e, p->atomic_orig);
        e += ROCE_ATOMICACK_LEN;
    }
    if (x & X_ATOMIC) {
        put64(e, p->reth_va);
        put32(e + 8, p->reth_rkey);
        put64(e + 12, p->atomic_swap_add);
        put64(e + 20, p->atomic_compare);
        e += ROCE_ATOMICETH_LEN;
    }
    if (x & X_IMM) {
        put32(e, p->imm);
        e += ROCE_IMMDT_LEN;
    }
    if (x & X_IETH) {
        put32(e, p->ieth);
        e += ROCE_IETH_LEN;
    }
    if (x & X_CNP) {
        memset(e, 0, ROCE_CNP_LEN);
        e += ROCE_CNP_LEN;
    }
    return e;
}

/*
 * The ICRC after the @flen bytes of the frame in @buf and, over IPv6, the
 * UDP checksum.
 */
static void roce_build_icrc(uint8_t *buf, size_t flen, bool v6)
{
    size_t iplen = v6 ? ROCE_IP6_HLEN : ROCE_IP4_HLEN;
    uint8_t *ip = buf + ROCE_ETH_HLEN;
    uint8_t *udp = ip + iplen;
    uint32_t icrc;

    if (v6) {
        /*
         * Wireshark rejects a zero UDP checksum over IPv6: compute it,
         * over the pseudo-header (addresses, length, next header 17) and
         * the UDP header and payload, ICRC included.
         */
        size_t n = flen + ROCE_ICRC_LEN - ROCE_ETH_HLEN - iplen;
        uint16_t sum;

        icrc = roce_icrc(ip, flen - ROCE_ETH_HLEN, true);
        buf[flen] = icrc;
        buf[flen + 1] = icrc >> 8;
        buf[flen + 2] = icrc >> 16;
        buf[flen + 3] = icrc >> 24;
        sum = wire_csum_finish(wire_csum_add(wire_csum_add(n + 17, ip + 8,
                                                           32), udp, n));
        put16(udp + 6, sum ? sum : 0xffff);
    } else {
        icrc = roce_icrc(ip, flen - ROCE_ETH_HLEN, false);
        buf[flen] = icrc;
        buf[flen + 1] = icrc >> 8;
        buf[flen + 2] = icrc >> 16;
        buf[flen + 3] = icrc >> 24;
    }
}

size_t roce_build(uint8_t *buf, const RocePktOut *p, uint32_t paylen)
{
    bool v6 = !roce_gid_is_v4(p->dgid);
    unsigned x = roce_ext(p->opcode);
    size_t iplen = v6 ? ROCE_IP6_HLEN : ROCE_IP4_HLEN;
    uint8_t *ip = buf + ROCE_ETH_HLEN;
    uint8_t *udp = ip + iplen;
    uint8_t *bth = udp + ROCE_UDP_HLEN;
    uint32_t pad = (-paylen) & 3;
    size_t hlen = roce_hdr_len(p->opcode, v6);
    size_t l4len = hlen - ROCE_ETH_HLEN - iplen + paylen + pad + ROCE_ICRC_LEN;
    size_t flen;

    memcpy(buf, p->dmac, 6);
    memcpy(buf + 6, p->smac, 6);
    put16(buf + 12, v6 ? ETH_P_IPV6 : ETH_P_IP);
    roce_build_ip(ip, p, v6, iplen, l4len);
    put16(udp, p->sport);
    put16(udp + 2, ROCE_UDP_PORT);
    put16(udp + 4, l4len);
    put16(udp + 6, 0);
    bth[0] = p->opcode;
    bth[1] = (p->se ? 0x80 : 0) | pad << 4;
    put16(bth + 2, 0xffff);
    bth[4] = p->opcode == ROCE_CNP ? 0x40 : 0;     /* a CNP has BECN set */
    put24(bth + 5, p->dqpn);
    bth[8] = p->ackreq ? 0x80 : 0;
    put24(bth + 9, p->psn);
    roce_build_ext(bth + ROCE_BTH_LEN, p, x);
    memset(buf + hlen + paylen, 0, pad);
    flen = hlen + paylen + pad;
    roce_build_icrc(buf, flen, v6);
    flen += ROCE_ICRC_LEN;
    if (flen < 60) {
        memset(buf + flen, 0, 60 - flen);
        flen = 60;
    }
    return flen;
}

/*
 * The Ethernet and IP headers of a frame: the addresses, ECN and the
 * lengths of the IP header and packet in *@iplen, *@l3len.  0 or
 * ROCE_NOT_ROCE.
 */
static int roce_parse_l3(const uint8_t *buf, size_t len, RocePktIn *p,
                         size_t *iplen, size_t *l3len)
{
    const uint8_t *ip = buf + ROCE_ETH_HLEN;
    uint16_t ethertype = get16(buf + 12);

    p->smac = buf + 6;
    p->l3 = ip;
    if (ethertype == ETH_P_IP) {
        if (ip[0] != 0x45 || ip[9] != 17 || (get16(ip + 6) & 0x3fff)) {
            return ROCE_NOT_ROCE;       /* options, fragments, not UDP */
        }
        *iplen = ROCE_IP4_HLEN;
        *l3len = get16(ip + 2);
        p->ecn = ip[1] & ROCE_ECN_MASK;
        memset(p->sgid, 0, 16);
        p->sgid[10] = p->sgid[11] = 0xff;
        memcpy(p->dgid, p->sgid, 12);
        memcpy(p->sgid + 12, ip + 12, 4);
        memcpy(p->dgid + 12, ip + 16, 4);
    } else if (ethertype == ETH_P_IPV6) {
        if (len < ROCE_ETH_HLEN + ROCE_IP6_HLEN + ROCE_UDP_HLEN ||
            (ip[0] >> 4) != 6 || ip[6] != 17) {
            return ROCE_NOT_ROCE;
        }
        *iplen = ROCE_IP6_HLEN;
        *l3len = ROCE_IP6_HLEN + get16(ip + 4);
        p->ecn = (ip[1] >> 4) & ROCE_ECN_MASK;
        memcpy(p->sgid, ip + 8, 16);
        memcpy(p->dgid, ip + 24, 16);
        p->ipv6 = true;
    } else {
        return ROCE_NOT_ROCE;
    }
    return 0;
}

/* The extension headers @x at @e into @p; returns their end. */
static const uint8_t *roce_parse_ext(const uint8_t *e, unsigned x,
                                     RocePktIn *p)
{
    if (x & X_DETH) {
        p->deth_qkey = get32(e);
        p->deth_sqp = get24(e + 5);
        e += ROCE_DETH_LEN;
    }
    if (x & X_FETH) {
        p->feth = get32(e);
        e += ROCE_FETH_LEN;
    }
    if (x & X_RETH) {
        p->reth_va = get64(e);
        p->reth_rkey = get32(e + 8);
        p->reth_len = get32(e + 12);
        e += ROCE_RETH_LEN;
    }
    if (x & X_AETH) {
        p->aeth_syndrome = e[0];
        p->aeth_msn = get24(e + 1);
        e += ROCE_AETH_LEN;
    }
    if (x & X_AACK) {
        p->atomic_orig = get64(e);
        e += ROCE_ATOMICACK_LEN;
    }
    if (x & X_ATOMIC) {
        p->reth_va = get64(e);
        p->reth_rkey = get32(e + 8);
        p->atomic_swap_add = get64(e + 12);
        p->atomic_compare = get64(e + 20);
        e += ROCE_ATOMICETH_LEN;
    }
    if (x & X_IMM) {
        p->has_imm = true;
        p->imm = get32(e);
        e += ROCE_IMMDT_LEN;
    }
    if (x & X_IETH) {
        p->has_ieth = true;
        p->ieth = get32(e);
        e += ROCE_IETH_LEN;
    }
    return e;
}

int roce_parse(const uint8_t *buf, size_t len, RocePktIn *p)
{
    const uint8_t *ip = buf + ROCE_ETH_HLEN, *udp, *bth, *e;
    size_t iplen, l3len, udplen;
    unsigned x;
    uint32_t icrc, extlen;

    memset(p, 0, sizeof(*p));
    if (len < ROCE_ETH_HLEN + ROCE_IP4_HLEN + ROCE_UDP_HLEN) {
        return ROCE_NOT_ROCE;
    }
    if (roce_parse_l3(buf, len, p, &iplen, &l3len)) {
        return ROCE_NOT_ROCE;
    }
    udp = ip + iplen;
    if (get16(udp + 2) != ROCE_UDP_PORT) {
        return ROCE_NOT_ROCE;
    }
    udplen = get16(udp + 4);
    if (l3len > len - ROCE_ETH_HLEN || udplen != l3len - iplen ||
        udplen < ROCE_UDP_HLEN + ROCE_BTH_LEN + ROCE_ICRC_LEN) {
        return ROCE_ERR_LEN;
    }
    if (!p->ipv6 && roce_ip_csum(ip, ROCE_IP4_HLEN) != 0) {
        return ROCE_ERR_CSUM;
    }
    bth = udp + ROCE_UDP_HLEN;
    p->opcode = bth[0];
    p->se = bth[1] & 0x80;
    p->padcnt = (bth[1] >> 4) & 3;
    p->tver = bth[1] & 0xf;
    p->pkey = get16(bth + 2);
    p->dqpn = get24(bth + 5);
    p->ackreq = bth[8] & 0x80;
    p->psn = get24(bth + 9);
    x = roce_ext(p->opcode);
    if (!x) {
        return ROCE_ERR_OPCODE;
    }
    extlen = roce_ext_len(x);
    if (udplen < ROCE_UDP_HLEN + ROCE_BTH_LEN + extlen + p->padcnt +
        ROCE_ICRC_LEN) {
        return ROCE_ERR_LEN;
    }
    e = roce_parse_ext(bth + ROCE_BTH_LEN, x, p);
    p->payload = e;
    p->paylen = udplen - ROCE_UDP_HLEN - ROCE_BTH_LEN - extlen - p->padcnt -
                ROCE_ICRC_LEN;
    icrc = roce_icrc(ip, l3len - ROCE_ICRC_LEN, p->ipv6);
    e = ip + l3len - ROCE_ICRC_LEN;
    p->icrc_ok = icrc == ((uint32_t)e[0] | (uint32_t)e[1] << 8 |
                          (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24);
    return 0;
}
