/*
 * roce-check: check every RoCEv2 frame of a pcap file.
 *
 *   roce-check [--min-roce N] FILE.pcap
 *
 * For each UDP/4791 frame: IP and UDP lengths agree with the frame, the
 * IPv4 header checksum is right, BTH TVer is 0, and the ICRC recomputed
 * over the masked headers equals the one on the wire.  Prints one line per
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

static int usage(void)
{
    fprintf(stderr, "usage: roce-check [--min-roce N] FILE.pcap\n");
    return 2;
}

int main(int argc, char **argv)
{
    unsigned long frames = 0, roce = 0, bad = 0, min_roce = 0;
    static uint8_t buf[262144];
    uint8_t gh[24], rh[16];
    const char *path = NULL;
    int swap, i;
    FILE *f;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--min-roce") && i + 1 < argc) {
            char *end;

            min_roce = strtoul(argv[++i], &end, 10);
            if (*end) {
                return usage();
            }
        } else if (argv[i][0] == '-' || path) {
            return usage();
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        return usage();
    }
    f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 2;
    }
    if (fread(gh, 1, sizeof(gh), f) != sizeof(gh)) {
        fprintf(stderr, "%s: not a pcap file\n", path);
        return 2;
    }
    if (rd32(gh, 0) == 0xa1b2c3d4 || rd32(gh, 0) == 0xa1b23c4d) {
        swap = 0;
    } else if (rd32(gh, 1) == 0xa1b2c3d4 || rd32(gh, 1) == 0xa1b23c4d) {
        swap = 1;
    } else {
        fprintf(stderr, "%s: not a classic pcap file\n", path);
        return 2;
    }
    if (rd32(gh + 20, swap) != 1) {
        fprintf(stderr, "%s: link type %u is not Ethernet\n", path,
                rd32(gh + 20, swap));
        return 2;
    }
    while (fread(rh, 1, sizeof(rh), f) == sizeof(rh)) {
        uint32_t caplen = rd32(rh + 8, swap), origlen = rd32(rh + 12, swap);
        RocePktIn p;
        const char *why = NULL;
        int ret;

        if (caplen > sizeof(buf) || fread(buf, 1, caplen, f) != caplen) {
            fprintf(stderr, "%s: truncated at frame %lu\n", path, frames + 1);
            return 2;
        }
        frames++;
        ret = roce_parse(buf, caplen, &p);
        if (ret == ROCE_NOT_ROCE) {
            continue;
        }
        roce++;
        if (caplen != origlen) {
            why = "frame truncated in the capture";
        } else if (ret == ROCE_ERR_LEN) {
            why = "IP/UDP lengths disagree with the frame";
        } else if (ret == ROCE_ERR_OPCODE) {
            why = "unknown opcode or missing headers";
        } else if (!p.ipv6 && roce_ip_csum(buf + ROCE_ETH_HLEN,
                                           ROCE_IP4_HLEN) != 0) {
            why = "bad IPv4 header checksum";
        } else if (p.tver) {
            why = "BTH TVer is not 0";
        } else if (!p.icrc_ok) {
            why = "bad ICRC";
        }
        if (why) {
            bad++;
            printf("frame %lu: opcode 0x%02x psn %u: %s\n", frames, p.opcode,
                   p.psn, why);
        }
    }
    fclose(f);
    printf("frames=%lu roce=%lu bad=%lu\n", frames, roce, bad);
    return bad || roce < min_roce ? 1 : 0;
}
