/*
 * qmp: run one QMP command on a QEMU monitor socket, for the harness
 * (tests/lib/lib.sh qr_qmp), which must not depend on Python.
 *
 *   qmp SOCKET COMMAND [ARGUMENTS-JSON]
 *
 * Connects to the UNIX socket, reads the greeting, negotiates
 * capabilities, sends {"execute": COMMAND, "arguments": ARGUMENTS} and
 * prints the value of the reply's "return" member (JSON, one line).  An
 * "error" reply prints its text on stderr and exits 1; a socket problem
 * or a reply that does not come within 30 s exits 2.  Asynchronous
 * events arriving in between are skipped.
 *
 * QEMU writes one JSON object per line, and the reply to a command sent
 * without "id" has a single member, so the value is the line between the
 * first ':' and the last '}'.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define LINE_MAX_LEN (1 << 20)

static char buf[LINE_MAX_LEN];
static size_t have;

/* the next line from the monitor, NUL-terminated, without its newline */
static char *read_line(int fd)
{
    static char line[LINE_MAX_LEN];
    char *nl;

    for (;;) {
        nl = memchr(buf, '\n', have);
        if (nl) {
            size_t n = nl - buf;

            memcpy(line, buf, n);
            line[n] = 0;
            memmove(buf, nl + 1, have - n - 1);
            have -= n + 1;
            return line;
        }
        if (have == sizeof(buf)) {
            fprintf(stderr, "qmp: reply line too long\n");
            return NULL;
        }
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = poll(&p, 1, 30000);

        if (r <= 0) {
            fprintf(stderr, "qmp: no reply within 30 s\n");
            return NULL;
        }
        ssize_t got = read(fd, buf + have, sizeof(buf) - have);

        if (got <= 0) {
            fprintf(stderr, "qmp: monitor closed the connection\n");
            return NULL;
        }
        have += got;
    }
}

static int send_all(int fd, const char *s)
{
    size_t len = strlen(s);

    while (len) {
        ssize_t w = write(fd, s, len);

        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            perror("qmp: write");
            return -1;
        }
        s += w;
        len -= w;
    }
    return 0;
}

/* the next reply (a line with "return" or "error"), events skipped */
static char *reply(int fd)
{
    char *l;

    while ((l = read_line(fd))) {
        if (strstr(l, "\"return\"") || strstr(l, "\"error\"")) {
            if (!strstr(l, "\"event\"")) {
                return l;
            }
        }
    }
    return NULL;
}

/* the member's value: from after the first ':' to before the last '}' */
static char *value_of(char *l)
{
    char *c = strchr(l, ':'), *e = strrchr(l, '}');

    if (!c || !e || e < c) {
        return NULL;
    }
    *e = 0;
    c++;
    while (*c == ' ') {
        c++;
    }
    while (e > c && e[-1] == ' ') {
        *--e = 0;
    }
    return c;
}

static void usage(void)
{
    fprintf(stderr, "usage: qmp SOCKET COMMAND [ARGUMENTS-JSON]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    char *l, *v, *cmd;
    int fd;

    if (argc < 3 || argc > 4 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
        usage();
    }
    strcpy(sa.sun_path, argv[1]);
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        fprintf(stderr, "qmp: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    if (!read_line(fd) ||
        send_all(fd, "{\"execute\": \"qmp_capabilities\"}\n") < 0 ||
        !(l = reply(fd))) {
        return 2;
    }
    if (asprintf(&cmd, "{\"execute\": \"%s\", \"arguments\": %s}\n",
                 argv[2], argc == 4 ? argv[3] : "{}") < 0 ||
        send_all(fd, cmd) < 0 || !(l = reply(fd))) {
        return 2;
    }
    if (strncmp(l, "{\"error\"", 8) == 0) {
        char *d = strstr(l, "\"desc\"");

        fprintf(stderr, "qmp: %s: %s\n", argv[2], d ? d + 7 : l);
        return 1;
    }
    v = value_of(l);
    if (!v) {
        fprintf(stderr, "qmp: unexpected reply: %s\n", l);
        return 2;
    }
    printf("%s\n", v);
    return 0;
}
