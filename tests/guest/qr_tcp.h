/*
 * The TCP side channel of the two-guest test programs: each side sends
 * the other its QP numbers, GID and keys over it, then a byte or two to
 * keep in step.
 */
#ifndef QR_TCP_H
#define QR_TCP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* Send (@out) or receive @n bytes at @p: 0, or -1 if the peer is gone. */
static inline int qr_xfer(int fd, void *p, size_t n, int out)
{
    uint8_t *b = p;

    while (n) {
        ssize_t k = out ? write(fd, b, n) : read(fd, b, n);

        if (k <= 0) {
            return -1;
        }
        b += k;
        n -= k;
    }
    return 0;
}

/*
 * A connection on TCP @port: accepted (@host NULL, the server) or made
 * to @host, an IPv4 address, retried for 10 s while the server starts.
 * @prog names the program in messages; exits on failure.
 */
static inline int qr_tcp(const char *prog, const char *host, int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, c, i;

    if (fd < 0) {
        perror("socket");
        exit(2);
    }
    if (!host) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1)) {
            perror("bind/listen");
            exit(2);
        }
        c = accept(fd, NULL, NULL);
        close(fd);
        if (c < 0) {
            perror("accept");
            exit(2);
        }
        return c;
    }
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        fprintf(stderr, "%s: %s: not an IPv4 address\n", prog, host);
        exit(2);
    }
    for (i = 0; i < 100; i++) {
        if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
            return fd;
        }
        usleep(100000);
    }
    perror("connect");
    exit(2);
}

#endif
