/*
 * memcpy-bw: host memcpy bandwidth, the physical reference for the
 * benchmark table.
 *
 *   memcpy-bw SIZE...
 *
 * For each SIZE (bytes) copies SIZE-byte blocks through a 64 MiB working
 * set (so large sizes are not served from cache alone) for about 0.3 s and
 * prints "SIZE MB/s" (10^6 bytes per second, as perftest counts).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SET (64u << 20)

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    uint8_t *a = malloc(SET), *b = malloc(SET);
    volatile uint8_t sink = 0;
    int i;

    if (argc < 2) {
        fprintf(stderr, "usage: memcpy-bw SIZE...\n");
        return 2;
    }
    if (!a || !b) {
        perror("memcpy-bw: malloc");
        return 1;
    }
    memset(a, 1, SET);
    memset(b, 2, SET);
    for (i = 1; i < argc; i++) {
        char *end;
        unsigned long size = strtoul(argv[i], &end, 0);
        uint64_t bytes = 0, off = 0;
        double t0, t;

        if (*end || size == 0 || size > SET) {
            fprintf(stderr, "memcpy-bw: bad size '%s' (1..%u)\n", argv[i],
                    SET);
            return 2;
        }
        t0 = now();
        do {
            int k;

            for (k = 0; k < 64; k++) {
                if (off + size > SET) {
                    off = 0;
                }
                memcpy(b + off, a + off, size);
                bytes += size;
                off += size;
            }
            sink ^= b[off - 1];
            t = now() - t0;
        } while (t < 0.3);
        printf("%lu %.0f\n", size, bytes / t / 1e6);
    }
    (void)sink;
    free(a);
    free(b);
    return 0;
}
