/*
 * icrc-bench: the device's CRC-32 (roce_crc32: tables, and carry-less
 * multiplication where the CPU has it) against zlib's crc32(), the
 * library QEMU already links, at the packet sizes of the ICRC.
 *
 *   icrc-bench [SIZE...]        (default 256 512 1024 2048 4096)
 *
 * For each SIZE, both compute the CRC of every SIZE-byte block of a 4 MiB
 * buffer for about 0.3 s; prints "SIZE device-MB/s zlib-MB/s ratio" and
 * fails (exit 1) if the two disagree on any of 1000 blocks at odd offsets.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>
#include "roce_wire.h"

#define SET (4u << 20)

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* MB/s of @fn over @size-byte blocks; the last CRC in *last. */
static double run(int dev, const uint8_t *buf, size_t size, uint32_t *last)
{
    double t0 = now(), t;
    uint64_t bytes = 0;
    uint32_t c = 0;
    size_t off = 0;

    do {
        int i;

        for (i = 0; i < 256; i++) {
            c ^= dev ? ~roce_crc32(0xffffffffu, buf + off, size) :
                       (uint32_t)crc32(0, buf + off, size);
            off = (off + size) % (SET - size);
            bytes += size;
        }
        t = now() - t0;
    } while (t < 0.3);
    *last = c;
    return bytes / t / 1e6;
}

int main(int argc, char **argv)
{
    static const size_t def[] = { 256, 512, 1024, 2048, 4096 };
    uint8_t *buf = malloc(SET);
    size_t i, n = argc > 1 ? (size_t)argc - 1 : 5;
    int bad = 0;

    if (!buf) {
        return 2;
    }
    for (i = 0; i < SET; i++) {
        buf[i] = i * 2654435761u >> 13;
    }
    printf("%6s %12s %12s %8s\n", "bytes", "device MB/s", "zlib MB/s",
           "device/zlib");
    for (i = 0; i < n; i++) {
        size_t size = argc > 1 ? strtoul(argv[i + 1], NULL, 0) : def[i];
        uint32_t a, b, x, y;
        double d, z;

        if (size < 1 || size > 65536) {
            fprintf(stderr, "usage: icrc-bench [SIZE (1..65536)...]\n");
            return 2;
        }
        /* the same CRC of 1000 blocks at odd offsets, first */
        for (a = b = 0, x = 0; x < 1000; x++) {
            const uint8_t *p = buf + (x * 4099 + 17) % (SET - size);

            a ^= ~roce_crc32(0xffffffffu, p, size) + x;
            b ^= (uint32_t)crc32(0, p, size) + x;
        }
        d = run(1, buf, size, &y);
        z = run(0, buf, size, &y);
        printf("%6zu %12.0f %12.0f %8.2f\n", size, d, z, d / z);
        if (a != b) {
            printf("the two CRCs disagree at %zu bytes\n", size);
            bad = 1;
        }
    }
    return bad;
}
