/*
 * roce-check: check every RoCEv2 frame of a pcap file.
 *
 *   roce-check [--min-roce N] FILE.pcap
 *
 * For each UDP/4791 frame: IP and UDP lengths agree with the frame, the
 * IPv4 header checksum is right, BTH TVer is 0, the opcode is one this
 * checker knows and the frame is long enough for its extension headers,
 * and the ICRC recomputed over the masked headers equals the one on the
 * wire.  The ICRC is computed here, bit by bit, independently of the
 * device's table and carry-less-multiply code in roce_wire.c, and the
 * extension header lengths come from a table of this checker's own
 * (roce_wire.c only splits the frame up): a frame on which the two
 * disagree is reported too.  Prints one line per
 * bad frame and a summary "frames=N roce=N bad=N"; exits 1 if any frame is
 * bad or fewer than N RoCE frames were seen, 2 on a usage or file error.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "roce_wire.h"

static uint32_t rd32(const uint8_t *p, int swap)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return swap ? __builtin_bswap32(v) : v;
}

/* CRC-32, reflected polynomial 0xedb88320, one bit at a time. */
static uint32_t crc32_bits(uint32_t crc, const uint8_t *p, size_t n)
{
    int k;

    while (n--) {
        crc ^= *p++;
        for (k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
        }
    }
    return crc;
}

/*
 * The ICRC of the L3 packet @l3 of @len bytes (ICRC excluded): 8 bytes of
 * ones for the LRH, then the IP, UDP and BTH headers with the fields a
 * router may change set to ones (IPv4 TOS, TTL, checksum; IPv6 traffic
 * class, flow label, hop limit; the UDP checksum; BTH byte 4), then the
 * rest as it is.
 */
static uint32_t icrc_ref(const uint8_t *l3, size_t len, int v6)
{
    static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0xff };
    size_t iplen = v6 ? 40 : 20, hl = iplen + 8 + 12;
    uint8_t h[60];
    uint32_t crc;

    memcpy(h, l3, hl);
    if (v6) {
        h[0] |= 0x0f;
        h[1] = h[2] = h[3] = 0xff;
        h[7] = 0xff;
    } else {
        h[1] = 0xff;
        h[8] = 0xff;
        h[10] = h[11] = 0xff;
    }
    h[iplen + 6] = h[iplen + 7] = 0xff;
    h[iplen + 8 + 4] = 0xff;
    crc = crc32_bits(0xffffffffu, ones, sizeof(ones));
    crc = crc32_bits(crc, h, hl);
    crc = crc32_bits(crc, l3 + hl, len - hl);
    return ~crc;
}

/*
 * Bytes of extension headers after the BTH for BTH opcode @op (IBA vol 1
 * ch. 9, RoCEv2 annex), or -1 for an opcode this checker does not know.
 * RETH 16, AETH 4, ImmDt 4, IETH 4, FETH 4, AtomicETH 28, AtomicAckETH 8,
 * DETH 8.
 */
static int ext_len(uint8_t op)
{
    static const int8_t rc[0x20] = {
        [0x00] = 0, [0x01] = 0, [0x02] = 0, [0x03] = 4,    /* SEND */
        [0x04] = 0, [0x05] = 4,
        [0x06] = 16, [0x07] = 0, [0x08] = 0, [0x09] = 4,  /* WRITE */
        [0x0a] = 16, [0x0b] = 20,
        [0x0c] = 16,                                        /* READ req */
        [0x0d] = 4, [0x0e] = 0, [0x0f] = 4, [0x10] = 4,    /* READ resp */
        [0x11] = 4, [0x12] = 12,                            /* ACKs */
        [0x13] = 28, [0x14] = 28,                           /* atomics */
        [0x15] = -1,
        [0x16] = 4, [0x17] = 4,                 /* SEND with Invalidate */
        [0x18 ... 0x1b] = -1,
        [0x1c] = 20,                            /* FLUSH: FETH, RETH */
        [0x1d] = 16,                            /* ATOMIC WRITE: RETH */
        [0x1e ... 0x1f] = -1,
    };

    switch (op >> 5) {
    case 0:                     /* RC */
        return rc[op & 0x1f];
    case 1:                     /* UC: SEND and WRITE only */
        return (op & 0x1f) <= 0x0b ? rc[op & 0x1f] : -1;
    case 3:                     /* UD: SEND ONLY (with immediate) */
        return op == 0x64 ? 8 : op == 0x65 ? 12 : -1;
    case 4:                     /* CNP: 16 reserved bytes */
        return op == 0x81 ? 16 : -1;
    }
    return -1;
}

/*
 * Check the BTH opcode and the length of the frame against the table
 * above: the payload length the device's parser found must be what is
 * left after these headers.  NULL if they agree, else why not.
 */
static const char *hdr_check(const uint8_t *l3, int v6, const RocePktIn *p)
{
    const uint8_t *udp = l3 + (v6 ? 40 : 20), *bth = udp + 8;
    long udplen = (long)udp[4] << 8 | udp[5];
    int ext = ext_len(bth[0]);
    long paylen;

    if (ext < 0) {
        return "opcode unknown to the checker";
    }
    paylen = udplen - 8 - 12 - ext - ((bth[1] >> 4) & 3) - 4;
    if (paylen < 0) {
        return "frame too short for the headers of its opcode";
    }
    if (paylen != (long)p->paylen) {
        return "header lengths: the device's parser and this checker "
               "disagree";
    }
    return NULL;
}

static int usage(void)
{
    fprintf(stderr, "usage: roce-check [--min-roce N] FILE.pcap\n");
    return 2;
}

/* The arguments into *@path and *@min_roce: 0, or usage()'s 2. */
static int parse_args(int argc, char **argv, const char **path,
                      unsigned long *min_roce)
{
    int i;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--min-roce") && i + 1 < argc) {
            char *end;

            *min_roce = strtoul(argv[++i], &end, 10);
            if (*end) {
                return usage();
            }
        } else if (argv[i][0] == '-' || *path) {
            return usage();
        } else {
            *path = argv[i];
        }
    }
    if (!*path) {
        return usage();
    }
    return 0;
}

/*
 * @path opened past its global header, which must be a classic pcap's
 * of Ethernet frames, in either byte order (*@swap: the other one).  NULL,
 * said on stderr, if it is not.
 */
static FILE *open_pcap(const char *path, int *swap)
{
    uint8_t gh[24];
    FILE *f;

    f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    if (fread(gh, 1, sizeof(gh), f) != sizeof(gh)) {
        fprintf(stderr, "%s: not a pcap file\n", path);
        return NULL;
    }
    if (rd32(gh, 0) == 0xa1b2c3d4 || rd32(gh, 0) == 0xa1b23c4d) {
        *swap = 0;
    } else if (rd32(gh, 1) == 0xa1b2c3d4 || rd32(gh, 1) == 0xa1b23c4d) {
        *swap = 1;
    } else {
        fprintf(stderr, "%s: not a classic pcap file\n", path);
        return NULL;
    }
    if (rd32(gh + 20, *swap) != 1) {
        fprintf(stderr, "%s: link type %u is not Ethernet\n", path,
                rd32(gh + 20, *swap));
        return NULL;
    }
    return f;
}

/*
 * The ICRC of RoCE frame @frame (@buf, parsed into @p) recomputed here,
 * then its header lengths: NULL if both are right, else why not.  A
 * disagreement with the device's ICRC code is printed too.
 */
static const char *icrc_problem(const uint8_t *buf, const RocePktIn *p,
                                unsigned long frame)
{
    const uint8_t *l3 = buf + ROCE_ETH_HLEN;
    size_t l3len = p->ipv6 ? 40 + ((size_t)l3[4] << 8 | l3[5]) :
                             ((size_t)l3[2] << 8 | l3[3]);
    const uint8_t *w = l3 + l3len - 4;
    uint32_t wire = w[0] | w[1] << 8 | w[2] << 16 |
                    (uint32_t)w[3] << 24;
    int ok = icrc_ref(l3, l3len - 4, p->ipv6) == wire;
    const char *why = NULL;

    if (!ok) {
        why = "bad ICRC";
    }
    if (!why) {
        why = hdr_check(l3, p->ipv6, p);
    }
    if (ok != p->icrc_ok) {
        printf("frame %lu: the device's ICRC code says %s, this "
               "checker %s\n", frame, p->icrc_ok ? "good" : "bad",
               ok ? "good" : "bad");
        why = why ? why : "ICRC implementations disagree";
    }
    return why;
}

/*
 * What is wrong with RoCE frame @frame, @caplen of its @origlen bytes in
 * @buf, which roce_parse() returned @ret for and parsed into @p: NULL if
 * nothing.
 */
static const char *frame_problem(const uint8_t *buf, uint32_t caplen,
                                 uint32_t origlen, int ret,
                                 const RocePktIn *p, unsigned long frame)
{
    if (caplen != origlen) {
        return "frame truncated in the capture";
    } else if (ret == ROCE_ERR_LEN) {
        return "IP/UDP lengths disagree with the frame";
    } else if (ret == ROCE_ERR_OPCODE) {
        return "unknown opcode or missing headers";
    } else if (!p->ipv6 && roce_ip_csum(buf + ROCE_ETH_HLEN,
                                        ROCE_IP4_HLEN) != 0) {
        return "bad IPv4 header checksum";
    } else if (p->tver) {
        return "BTH TVer is not 0";
    }
    return icrc_problem(buf, p, frame);
}

struct counts {
    unsigned long frames, roce, bad;
};

/* Every frame of @f (@path) checked and counted into @c: 0, or 2 if the
 * file is truncated. */
static int check_frames(FILE *f, int swap, const char *path, struct counts *c)
{
    static uint8_t buf[262144];
    uint8_t rh[16];

    while (fread(rh, 1, sizeof(rh), f) == sizeof(rh)) {
        uint32_t caplen = rd32(rh + 8, swap), origlen = rd32(rh + 12, swap);
        RocePktIn p;
        const char *why;
        int ret;

        if (caplen > sizeof(buf) || fread(buf, 1, caplen, f) != caplen) {
            fprintf(stderr, "%s: truncated at frame %lu\n", path,
                    c->frames + 1);
            return 2;
        }
        c->frames++;
        ret = roce_parse(buf, caplen, &p);
        if (ret == ROCE_NOT_ROCE) {
            continue;
        }
        c->roce++;
        why = frame_problem(buf, caplen, origlen, ret, &p, c->frames);
        if (why) {
            c->bad++;
            printf("frame %lu: opcode 0x%02x psn %u: %s\n", c->frames,
                   p.opcode, p.psn, why);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long min_roce = 0;
    struct counts c = { 0, 0, 0 };
    const char *path = NULL;
    int swap;
    FILE *f;

    if (parse_args(argc, argv, &path, &min_roce)) {
        return 2;
    }
    f = open_pcap(path, &swap);
    if (!f || check_frames(f, swap, path, &c)) {
        return 2;
    }
    fclose(f);
    printf("frames=%lu roce=%lu bad=%lu\n", c.frames, c.roce, c.bad);
    return c.bad || c.roce < min_roce ? 1 : 0;
}
