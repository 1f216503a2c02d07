/*
 * qroce-vanish: a peer QP that goes away.
 *
 *   qroce-vanish [-d DEV] [-g GID_INDEX] [-p PORT] -l
 *   qroce-vanish [-d DEV] [-g GID_INDEX] [-p PORT] [-r RETRY_CNT] SERVER
 *
 * Two RC QPs from the client to the server.  The server destroys the
 * first as soon as both are connected; the client's SEND on it must end
 * with IBV_WC_RETRY_EXC_ERR (after RETRY_CNT retries, with the local ACK
 * timeout of the QP), and 100 SENDs on the second QP, checked byte for
 * byte by the server, must still go through.  The client prints PASS/FAIL
 * lines; both exit non-zero on a failure.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "qr_verbs.h"
#include "qr_tcp.h"

struct info {
    uint32_t qpn[2];
    uint8_t gid[16];
};

/* Poll one completion within @sec seconds. */
static int poll_wait(struct ibv_cq *cq, struct ibv_wc *wc, int sec)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (ibv_poll_cq(cq, 1, wc)) {
            return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > sec) {
            return 0;
        }
        usleep(100);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: qroce-vanish [-d DEV] [-g GID_INDEX] [-p PORT] "
            "-l | [-r RETRY_CNT] SERVER\n");
    exit(2);
}

/*
 * Create the two QPs on @cq, exchange them with the other side (@server,
 * or wait for it if NULL) over a TCP connection, whose fd is returned,
 * and connect them: the client's first with @retry retries and a short
 * ACK timeout, so that the test is quick.
 */
static int connect_qps(struct ibv_cq *cq, struct ibv_qp *qp[2],
                       const char *server, int port, int retry)
{
    struct info me = {}, peer;
    union ibv_gid gid;
    int i, fd;

    if (ibv_query_gid(ctx, 1, gid_index, &gid)) {
        die("ibv_create_cq/ibv_query_gid");
    }
    qp_depth = 128;
    for (i = 0; i < 2; i++) {
        qp[i] = make_qp(cq);
        me.qpn[i] = htonl(qp[i]->qp_num);
    }
    memcpy(me.gid, gid.raw, 16);
    fd = qr_tcp("qroce-vanish", server, port);
    if (qr_xfer(fd, &me, sizeof(me), 1) || qr_xfer(fd, &peer, sizeof(peer), 0)) {
        die("exchange");
    }
    memcpy(gid.raw, peer.gid, 16);
    /* the client's first QP: few retries, so that the test is quick */
    if (server) {
        qp_retry = retry;
        qp_timeout = 12;            /* 16.8 ms */
    }
    connect_to(qp[0], ntohl(peer.qpn[0]), &gid, 100, 100);
    qp_retry = 7;
    qp_timeout = 14;
    connect_to(qp[1], ntohl(peer.qpn[1]), &gid, 100, 100);
    return fd;
}

/* the server: QP 0 vanishes; QP 1 receives 100 messages */
static int server_side(struct ibv_cq *cq, struct ibv_qp *qp[2], int fd)
{
    struct ibv_wc wc;
    uint8_t done = 1;
    int i;

    for (i = 0; i < 100; i++) {
        if (post_recv(qp[1], (uintptr_t)buf + (i % 8) * 1024, 1024, i)) {
            die("ibv_post_recv");
        }
        if (i >= 7) {
            break;
        }
    }
    if (ibv_destroy_qp(qp[0])) {
        die("ibv_destroy_qp");
    }
    if (qr_xfer(fd, &done, 1, 1)) {
        die("sync");
    }
    for (i = 0; i < 100; i++) {
        uint32_t k, bad = 0;

        if (!poll_wait(cq, &wc, 60) || wc.status != IBV_WC_SUCCESS ||
            wc.byte_len != 1000) {
            printf("FAIL server: message %d: %s\n", i,
                   ibv_wc_status_str(wc.status));
            return 1;
        }
        for (k = 0; k < 1000; k++) {
            bad |= buf[(wc.wr_id % 8) * 1024 + k] != (uint8_t)(i + k);
        }
        if (bad) {
            printf("FAIL server: message %d corrupted\n", i);
            return 1;
        }
        if (i + 8 < 100 &&
            post_recv(qp[1], (uintptr_t)buf + (wc.wr_id % 8) * 1024,
                      1024, i + 8)) {
            die("ibv_post_recv");
        }
        if (qr_xfer(fd, &done, 1, 1)) {
            die("sync");
        }
    }
    printf("PASS server: 100 messages on the second QP\n");
    return 0;
}

/*
 * The client's SEND on @qp, whose peer is gone: it must end with
 * RETRY_EXC_ERR.  False if no completion came at all (*@wc: the last).
 */
static int client_vanished_peer(struct ibv_cq *cq, struct ibv_qp *qp,
                                struct ibv_wc *wc)
{
    struct timespec t0, t1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (post_send(qp, (uintptr_t)buf, 100, mr->lkey, 7)) {
        die("ibv_post_send");
    }
    if (!poll_wait(cq, wc, 120)) {
        check(0, "vanished peer: no completion in 120 s");
        return 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%s vanished peer: %s after %.2f s\n",
           wc->status == IBV_WC_RETRY_EXC_ERR && wc->wr_id == 7 ? "PASS" :
           "FAIL", wc->status == IBV_WC_RETRY_EXC_ERR ?
           "IBV_WC_RETRY_EXC_ERR" : ibv_wc_status_str(wc->status),
           (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    if (wc->status != IBV_WC_RETRY_EXC_ERR) {
        failed = 1;
    }
    return 1;
}

/* The client's 100 SENDs on the other QP, @qp: 0 if all went through. */
static int client_other_qp(struct ibv_cq *cq, struct ibv_qp *qp, int fd,
                           struct ibv_wc *wc)
{
    uint8_t done = 1;
    int i;

    for (i = 0; i < 100; i++) {
        uint32_t k;

        for (k = 0; k < 1000; k++) {
            buf[4096 + k] = i + k;
        }
        if (post_send(qp, (uintptr_t)buf + 4096, 1000, mr->lkey, 100 + i) ||
            !poll_wait(cq, wc, 60) || wc->status != IBV_WC_SUCCESS ||
            wc->wr_id != 100 + (uint64_t)i || qr_xfer(fd, &done, 1, 0)) {
            printf("FAIL other QP: message %d: %s\n", i,
                   ibv_wc_status_str(wc->status));
            return 1;
        }
    }
    printf("PASS other QP: 100 messages\n");
    return 0;
}

/* the client: the server's QP 0 is gone once the server says so */
static int client_side(struct ibv_cq *cq, struct ibv_qp *qp[2], int fd)
{
    struct ibv_wc wc;
    uint8_t done = 1;

    if (qr_xfer(fd, &done, 1, 0)) {
        die("sync");
    }
    if (!client_vanished_peer(cq, qp[0], &wc)) {
        return 1;
    }
    if (client_other_qp(cq, qp[1], fd, &wc)) {
        return 1;
    }
    return failed;
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0", *server = NULL;
    int port = 18517, listen_side = 0, retry = 3, c, fd;
    struct ibv_cq *cq;
    struct ibv_qp *qp[2];

    while ((c = getopt(argc, argv, "d:g:p:r:l")) != -1) {
        switch (c) {
        case 'd': dev = optarg; break;
        case 'g': gid_index = atoi(optarg); break;
        case 'p': port = atoi(optarg); break;
        case 'r': retry = atoi(optarg); break;
        case 'l': listen_side = 1; break;
        default: usage();
        }
    }
    if (listen_side == (optind < argc) || retry < 0 || retry > 7) {
        usage();
    }
    if (!listen_side) {
        server = argv[optind];
    }
    open_dev(dev);
    cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
    if (!cq) {
        die("ibv_create_cq/ibv_query_gid");
    }
    fd = connect_qps(cq, qp, server, port, retry);
    return listen_side ? server_side(cq, qp, fd) : client_side(cq, qp, fd);
}
