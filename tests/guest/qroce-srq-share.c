/*
 * qroce-srq-share: one SRQ shared by four RC QPs that two peers send to
 * at once, so that the packets of their messages arrive interleaved.
 *
 *   qroce-srq-share [-d DEVICE] [-g GID_INDEX] [-p PORT] [-n MSGS] -l
 *   qroce-srq-share [-d DEVICE] [-g GID_INDEX] [-p PORT] [-n MSGS]
 *                   -c PEER SERVER
 *
 * The server (-l) makes an SRQ of SRQ_SLOTS 64 KiB WQEs and four QPs on
 * it, two for each peer; peer 0 connects over TCP port PORT, peer 1 over
 * PORT + 1.  Each peer sends MSGS messages on each of its two QPs, up to
 * DEPTH outstanding on each, of lengths from 16 bytes to 64 KiB (every
 * fourth exactly 64 KiB); a message starts with a header naming its
 * peer, QP, sequence number and length, the rest is a pattern of those.
 * The server checks every receive completion: status, the QP it came on,
 * its length against the header, the sequence (RC keeps order per QP)
 * and every byte; it posts a WQE back after each.  Half way it stops
 * posting for DRY_MS with the SRQ empty, so the peers' SENDs meet RNR
 * NAKs and are retried.  Prints PASS/FAIL lines; exit status 1 if a
 * check failed, 2 on a set-up error.
 */
#include <getopt.h>
#include <poll.h>
#include "qr_verbs.h"
#include "qr_tcp.h"

#define MSG_MAX     65536
#define SRQ_SLOTS   8       /* fewer than the messages in flight: runs dry */
#define DEPTH       8       /* SENDs outstanding per peer QP */
#define DRY_MS      400

struct msg_hdr {
    uint32_t peer, qp, seq, len;
};

struct wire {
    uint32_t qpn[2];
    uint8_t gid[16];
};

static int nmsg = 200;

/* Length of message @seq: 16..64 KiB, every fourth the maximum. */
static uint32_t msg_len(uint32_t peer, uint32_t q, uint32_t seq)
{
    uint32_t h = (seq * 2654435761u) ^ (peer * 40503u + q * 9176u);

    if (seq % 4 == 0) {
        return MSG_MAX;
    }
    return sizeof(struct msg_hdr) + h % (MSG_MAX - sizeof(struct msg_hdr));
}

static uint8_t msg_byte(const struct msg_hdr *h, uint32_t i)
{
    return (uint8_t)(h->seq * 7 + h->peer * 101 + h->qp * 53 + i * 13 +
                     (i >> 8));
}

static void msg_fill(uint8_t *p, uint32_t peer, uint32_t q, uint32_t seq)
{
    struct msg_hdr h = { peer, q, seq, msg_len(peer, q, seq) };
    uint32_t i;

    memcpy(p, &h, sizeof(h));
    for (i = sizeof(h); i < h.len; i++) {
        p[i] = msg_byte(&h, i);
    }
}

/* Bytes after the header differing from the pattern: the first, or -1. */
static long msg_bad(const uint8_t *p, const struct msg_hdr *h)
{
    uint32_t i;

    for (i = sizeof(*h); i < h->len; i++) {
        if (p[i] != msg_byte(h, i)) {
            return i;
        }
    }
    return -1;
}

/* A completion from @cq within 30 s (the SRQ may be dry for a while). */
static int poll_long(struct ibv_cq *cq, struct ibv_wc *wc)
{
    int i;

    for (i = 0; i < 6; i++) {
        if (poll1(cq, wc)) {
            return 1;
        }
    }
    return 0;
}

static struct ibv_mr *big_mr(size_t len, uint8_t **p)
{
    struct ibv_mr *m;

    *p = aligned_alloc(4096, len);
    if (!*p) {
        die("aligned_alloc");
    }
    memset(*p, 0, len);
    m = ibv_reg_mr(pd, *p, len, IBV_ACCESS_LOCAL_WRITE);
    if (!m) {
        die("ibv_reg_mr");
    }
    return m;
}

/* ---- the server ---- */

struct server {
    struct ibv_srq *srq;
    struct ibv_cq *cq;
    struct ibv_qp *qp[4];       /* peer p's QP q is qp[2 * p + q] */
    struct ibv_mr *rmr;
    uint8_t *rbuf;
    uint32_t next_seq[4];
    uint64_t bytes;
    int bad_status, bad_qp, bad_len, bad_seq, bad_bytes;
};

static void srq_post(struct server *s, uint64_t slot)
{
    struct ibv_sge sge = { .addr = (uintptr_t)s->rbuf + slot * MSG_MAX,
                           .length = MSG_MAX, .lkey = s->rmr->lkey };
    struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 },
                       *bad;

    memset(s->rbuf + slot * MSG_MAX, 0xee, MSG_MAX);
    if (ibv_post_srq_recv(s->srq, &wr, &bad)) {
        die("ibv_post_srq_recv");
    }
}

static void server_setup(struct server *s)
{
    struct ibv_srq_init_attr sa = { .attr = { .max_wr = SRQ_SLOTS,
                                              .max_sge = 1 } };
    int i;

    s->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
    s->srq = ibv_create_srq(pd, &sa);
    if (!s->cq || !s->srq) {
        die("ibv_create_cq/ibv_create_srq");
    }
    for (i = 0; i < 4; i++) {
        s->qp[i] = make_srq_qp(s->cq, s->srq);
    }
    s->rmr = big_mr((size_t)SRQ_SLOTS * MSG_MAX, &s->rbuf);
    for (i = 0; i < SRQ_SLOTS; i++) {
        srq_post(s, i);
    }
}

/* Check one receive completion against the message it should hold. */
static void server_check(struct server *s, const struct ibv_wc *wc)
{
    const uint8_t *p = s->rbuf + wc->wr_id * MSG_MAX;
    struct msg_hdr h;
    int i, k = -1;

    if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
        wc->wr_id >= SRQ_SLOTS) {
        if (s->bad_status++ < 5) {
            printf("  completion: %s, opcode %d, wr_id %llu\n",
                   ibv_wc_status_str(wc->status), wc->opcode,
                   (unsigned long long)wc->wr_id);
        }
        return;
    }
    memcpy(&h, p, sizeof(h));
    for (i = 0; i < 4; i++) {
        k = s->qp[i]->qp_num == wc->qp_num ? i : k;
    }
    if (k < 0 || h.peer > 1 || h.qp > 1 || (int)(2 * h.peer + h.qp) != k) {
        s->bad_qp++;
        return;
    }
    if (wc->byte_len != h.len || h.len != msg_len(h.peer, h.qp, h.seq)) {
        if (s->bad_len++ < 5) {
            printf("  qp %d seq %u: byte_len %u, header %u\n", k, h.seq,
                   wc->byte_len, h.len);
        }
        return;
    }
    if (h.seq != s->next_seq[k]) {
        if (s->bad_seq++ < 5) {
            printf("  qp %d: seq %u, expected %u\n", k, h.seq,
                   s->next_seq[k]);
        }
    }
    s->next_seq[k] = h.seq + 1;
    if (msg_bad(p, &h) >= 0 && s->bad_bytes++ < 5) {
        printf("  qp %d seq %u: byte %ld differs\n", k, h.seq, msg_bad(p, &h));
    }
    s->bytes += h.len;
}

static void server_run(struct server *s)
{
    int total = 4 * nmsg, got = 0, dried = 0;
    struct ibv_wc wc;

    while (got < total) {
        if (!poll_long(s->cq, &wc)) {
            printf("  no completion after %d of %d messages\n", got, total);
            break;
        }
        server_check(s, &wc);
        got++;
        if (!dried && got >= total / 2) {
            /* run dry: the WQEs come back only after DRY_MS */
            uint64_t held[SRQ_SLOTS];
            int n = 0, i;

            held[n++] = wc.wr_id;
            while (n < SRQ_SLOTS && got < total && poll_long(s->cq, &wc)) {
                server_check(s, &wc);
                got++;
                held[n++] = wc.wr_id;
            }
            poll(NULL, 0, DRY_MS);
            for (i = 0; i < n; i++) {
                srq_post(s, held[i] % SRQ_SLOTS);
            }
            dried = 1;
            continue;
        }
        srq_post(s, wc.wr_id % SRQ_SLOTS);
    }
    check(got == total && !s->bad_status,
          "server: every receive completed successfully");
    check(!s->bad_qp, "server: each message on the QP its header names");
    check(!s->bad_len, "server: every completion's length is the message's");
    check(!s->bad_seq, "server: messages in order on each QP");
    check(!s->bad_bytes && got == total, "server: every byte as sent");
    check(dried, "server: the SRQ ran dry with SENDs waiting, then refilled");
    printf("server: %d messages, %llu bytes on 4 QPs of one SRQ\n", got,
           (unsigned long long)s->bytes);
}

static int server(int port)
{
    struct server s = {};
    union ibv_gid gid;
    struct wire me, peer[2];
    uint8_t ok[2] = { 1, 1 };
    int fd[2], i, q;

    server_setup(&s);
    if (ibv_query_gid(ctx, 1, gid_index, &gid)) {
        die("ibv_query_gid");
    }
    for (i = 0; i < 2; i++) {
        fd[i] = qr_tcp("qroce-srq-share", NULL, port + i);
        me.qpn[0] = htonl(s.qp[2 * i]->qp_num);
        me.qpn[1] = htonl(s.qp[2 * i + 1]->qp_num);
        memcpy(me.gid, gid.raw, 16);
        if (qr_xfer(fd[i], &me, sizeof(me), 1) ||
            qr_xfer(fd[i], &peer[i], sizeof(peer[i]), 0)) {
            die("exchange");
        }
        memcpy(gid.raw, peer[i].gid, 16);
        for (q = 0; q < 2; q++) {
            connect_to(s.qp[2 * i + q], ntohl(peer[i].qpn[q]), &gid,
                       100, 100);
        }
        ibv_query_gid(ctx, 1, gid_index, &gid);
    }
    for (i = 0; i < 2; i++) {
        qr_xfer(fd[i], &ok[i], 1, 1);      /* both connected: go */
    }
    server_run(&s);
    for (i = 0; i < 2; i++) {
        ok[i] = !failed;
        if (qr_xfer(fd[i], &ok[i], 1, 1) || qr_xfer(fd[i], &ok[i], 1, 0)) {
            die("verdict");
        }
        check(ok[i], "server: the peer's SENDs all completed successfully");
    }
    return failed;
}

/* ---- a peer ---- */

static int peer_run(struct ibv_qp *qp[2], struct ibv_cq *cq, uint8_t *sbuf,
                    struct ibv_mr *smr, uint32_t id)
{
    uint32_t posted[2] = {}, done = 0, outst[2] = {};
    int bad = 0;
    struct ibv_wc wc;

    while (done < 2u * nmsg) {
        int q;

        for (q = 0; q < 2; q++) {
            while (posted[q] < (uint32_t)nmsg && outst[q] < DEPTH) {
                uint8_t *p = sbuf + ((size_t)q * DEPTH +
                                     posted[q] % DEPTH) * MSG_MAX;

                msg_fill(p, id, q, posted[q]);
                if (post_send(qp[q], (uintptr_t)p,
                              msg_len(id, q, posted[q]), smr->lkey, q)) {
                    die("ibv_post_send");
                }
                posted[q]++;
                outst[q]++;
            }
        }
        if (!poll_long(cq, &wc)) {
            printf("  peer %u: no completion after %u SENDs\n", id, done);
            return 1;
        }
        if (wc.status != IBV_WC_SUCCESS && bad++ < 5) {
            printf("  peer %u: SEND: %s\n", id, ibv_wc_status_str(wc.status));
        }
        outst[wc.wr_id & 1]--;
        done++;
    }
    return bad;
}

static int peer(const char *host, int port, uint32_t id)
{
    struct ibv_cq *cq = ibv_create_cq(ctx, 2 * DEPTH + 2, NULL, NULL, 0);
    struct ibv_qp *qp[2];
    struct ibv_mr *smr;
    uint8_t *sbuf, go, ok;
    union ibv_gid gid;
    struct wire me, srv;
    int fd, q, bad;

    if (!cq || ibv_query_gid(ctx, 1, gid_index, &gid)) {
        die("ibv_create_cq/ibv_query_gid");
    }
    smr = big_mr((size_t)2 * DEPTH * MSG_MAX, &sbuf);
    for (q = 0; q < 2; q++) {
        qp[q] = make_qp(cq);
        me.qpn[q] = htonl(qp[q]->qp_num);
    }
    memcpy(me.gid, gid.raw, 16);
    fd = qr_tcp("qroce-srq-share", host, port + id);
    if (qr_xfer(fd, &srv, sizeof(srv), 0) ||
        qr_xfer(fd, &me, sizeof(me), 1)) {
        die("exchange");
    }
    memcpy(gid.raw, srv.gid, 16);
    for (q = 0; q < 2; q++) {
        connect_to(qp[q], ntohl(srv.qpn[q]), &gid, 100, 100);
    }
    if (qr_xfer(fd, &go, 1, 0)) {
        die("go");
    }
    bad = peer_run(qp, cq, sbuf, smr, id);
    ok = !bad;
    check(!bad, "peer: every SEND completed successfully");
    if (qr_xfer(fd, &ok, 1, 0) || qr_xfer(fd, &ok, 1, 1)) {
        die("verdict");
    }
    check(ok, "peer: the server found every message intact");
    return failed;
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    int port = 18530, serve = 0, id = -1, c;

    while ((c = getopt(argc, argv, "d:g:p:n:c:l")) != -1) {
        if (qr_common_opt(c, &dev)) {
            continue;
        }
        if (c == 'p') {
            port = atoi(optarg);
        } else if (c == 'n') {
            nmsg = atoi(optarg);
        } else if (c == 'c') {
            id = atoi(optarg);
        } else if (c == 'l') {
            serve = 1;
        } else {
            goto usage;
        }
    }
    if (port <= 0 || port > 65534 || nmsg <= 0 ||
        (serve ? id != -1 || optind != argc :
                 (id != 0 && id != 1) || argc - optind != 1)) {
        goto usage;
    }
    qp_depth = DEPTH;
    qp_sge = 1;
    open_dev(dev);
    return serve ? server(port) : peer(argv[optind], port, id);

usage:
    fprintf(stderr, "usage: qroce-srq-share [-d DEVICE] [-g GID_INDEX] "
            "[-p PORT] [-n MSGS] (-l | -c PEER SERVER)\n");
    return 2;
}
