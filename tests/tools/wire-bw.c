/*
 * wire-bw: the ceiling of the harness's wire on this host, the second
 * physical reference for the benchmark table (memcpy-bw is the first).
 *
 *   wire-bw FRAME_BYTES [SECONDS]
 *
 * Two processes joined by a Unix stream socket do what QEMU's stream
 * netdev does for each frame and nothing else: the sender writes a 4-byte
 * big-endian length and the frame in one writev(), the receiver reads
 * what has arrived in 69 632-byte chunks and walks the frames in it.
 * Prints "FRAME_BYTES MB/s frames/s" for the frames received in SECONDS
 * (default 3), bytes counted as perftest counts them (10^6 a second).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RXBUF (4096 + 65536)    /* QEMU's NET_BUFSIZE */

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void usage(void)
{
    fprintf(stderr, "usage: wire-bw FRAME_BYTES [SECONDS]\n"
            "  FRAME_BYTES 60..65535, SECONDS 1..60 (default 3)\n");
    exit(2);
}

static long arg(const char *s, long lo, long hi)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        usage();
    }
    return v;
}

/* the sender: frames until the receiver closes its end */
static void send_frames(int fd, uint32_t size)
{
    uint8_t *frame = calloc(1, size);
    uint32_t be = htonl(size);
    struct iovec iov[2] = {
        { .iov_base = &be, .iov_len = 4 },
        { .iov_base = frame, .iov_len = size },
    };

    if (!frame) {
        _exit(1);
    }
    for (;;) {
        ssize_t n = writev(fd, iov, 2);

        if (n < 0 && errno != EINTR) {
            _exit(0);
        }
        if (n >= 0 && (size_t)n != size + 4) {
            /* a short write: send the rest before the next frame */
            size_t done = n;

            while (done < size + 4) {
                ssize_t m = done < 4 ?
                    write(fd, (uint8_t *)&be + done, 4 - done) :
                    write(fd, frame + done - 4, size + 4 - done);

                if (m <= 0) {
                    _exit(0);
                }
                done += m;
            }
        }
    }
}

int main(int argc, char **argv)
{
    static uint8_t buf[RXBUF];
    uint64_t frames = 0, bytes = 0, in_frame = 0;
    int sv[2], status;
    uint32_t size;
    double secs, t0, t;
    pid_t pid;

    if (argc < 2 || argc > 3) {
        usage();
    }
    size = arg(argv[1], 60, 65535);
    secs = argc == 3 ? arg(argv[2], 1, 60) : 3;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
        perror("wire-bw: socketpair");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    pid = fork();
    if (pid < 0) {
        perror("wire-bw: fork");
        return 1;
    }
    if (!pid) {
        close(sv[0]);
        send_frames(sv[1], size);
    }
    close(sv[1]);
    t = t0 = now();
    /* frames are counted as they complete: a 4-byte header, then size */
    do {
        ssize_t n = read(sv[0], buf, sizeof(buf));

        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            fprintf(stderr, "wire-bw: the sender stopped\n");
            return 1;
        }
        in_frame += n;
        frames += in_frame / (size + 4);
        in_frame %= size + 4;
        t = now();
    } while (t - t0 < secs);
    bytes = frames * size;
    close(sv[0]);
    waitpid(pid, &status, 0);
    printf("%u %.0f %.0f\n", size, bytes / (t - t0) / 1e6, frames / (t - t0));
    return 0;
}
