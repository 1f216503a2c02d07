/*
 * qtests of qroce: the port towards a wire that is slower than the device
 * (back-pressure through the netdev) or congested (DCQCN's window and
 * CNPs), with the test as the peer at the other end.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/qroce.h"

#define BP_WQES     16
#define BP_MSG      (256 * 1024)                    /* 1024 frames at 256 */
#define BP_FRAMES   (BP_WQES * BP_MSG / 256)        /* > QEMU's 10000 */

/*
 * The device on a stream socket (a socketpair) the test reads only when
 * it chooses: while it does not, the socket fills and the netdev must
 * hold frames back.  The peer's addresses are qroce_peer_prepare()'s, its
 * socket the pair's other end.
 */
static char *bp_prepare(QRoce *t)
{
    int sv[2];

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    g_free(qroce_peer_prepare(t));  /* addresses only: no UDP socket */
    close(t->peer.fd);
    t->peer.fd = sv[0];
    t->peer.qemu_fd = sv[1];
    return g_strdup_printf("-netdev socket,id=n0,fd=%d "
                           "-global qroce.netdev=n0", sv[1]);
}

/* Exactly @len bytes from stream socket @fd. */
static void read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = recv(fd, (uint8_t *)buf + got, len - got, 0);

        g_assert_cmpint(n, >, 0);
        got += n;
    }
}

/* The next RoCE frame from the stream socket (4-byte length, then it). */
static void bp_recv(QRocePeer *pr, uint8_t *f, RocePktIn *p)
{
    uint32_t len;

    for (;;) {
        read_full(pr->fd, &len, 4);
        len = be32_to_cpu(len);
        g_assert_cmpuint(len, <=, 2048);
        read_full(pr->fd, f, len);
        if (roce_parse(f, len, p) == 0) {
            return;
        }
    }
}

/* A UC QP to RTS towards the peer's QP 0x77, PSNs 2000. */
static void uc_peer_connect(QRoce *t, QRocePeer *pr, uint32_t qpn)
{
    struct qroce_av av;

    qroce_peer_av(pr, &av);
    qroce_uc_connect_av(t, qpn, 0x77, &av, 2000);
}

/*
 * UC SENDs of more frames than QEMU's netdev queue holds, to a peer that
 * does not read yet: the device stops sending (the WQEs stay incomplete,
 * fewer frames built) instead of having the netdev drop them; when the
 * peer reads, every frame arrives, in PSN order, and every WQE completes.
 */
static void test_wire_backpressure(QRoce *t)
{
    struct timeval tv = { .tv_sec = 10 };
    QRocePeer *pr = &t->peer;
    struct qroce_cqe cqe;
    RocePktIn p;
    uint8_t f[2048];
    uint64_t cq, buf, big, sq, rq;
    uint32_t pdn, cqn, key, bkey, qpn, sent, i;

    setsockopt(pr->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    big = qroce_pages(t, BP_MSG / 4096);
    bkey = qroce_mk_mr(t, pdn, big, BP_MSG / 4096, QROCE_ACCESS_LOCAL_WRITE);
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_UC, pdn, cqn, cqn, 0, &qpn,
                                       &sq, &rq), ==, 0);
    uc_peer_connect(t, pr, qpn);
    for (i = 0; i < BP_WQES; i++) {
        qroce_post_send(t, sq, i, big, BP_MSG, bkey, QROCE_WQE_SIGNALED);
    }
    qroce_db(t, QROCE_DB_SQ, qpn, BP_WQES);

    /* nobody reads: the device stops well short of the last frame */
    sent = qroce_wait_cnt_stable(t, QROCE_CNT_ROCE_TX_PKTS);
    g_assert_cmpuint(sent, >, 0);
    g_assert_cmpuint(sent, <, BP_FRAMES / 2);
    g_assert_false(qroce_entry_ready(t, cq, sizeof(cqe), 6, BP_WQES - 1));

    /* the peer reads: all of them arrive, in order, none lost */
    for (i = 0; i < BP_FRAMES; i++) {
        bp_recv(pr, f, &p);
        g_assert_cmpuint(p.psn, ==, (2000 + i) & 0xffffff);
        g_assert_cmphex(p.opcode, ==,
                        ROCE_UC |
                            (i % 1024 == 0          ? ROCE_SEND_FIRST
                                 : i % 1024 == 1023 ? ROCE_SEND_LAST
                                                    : ROCE_SEND_MIDDLE));
    }
    for (i = 0; i < BP_WQES; i++) {
        qroce_wait_entry(t, cq, sizeof(cqe), 6, i, &cqe);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, BP_MSG);
    }
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS), ==,
                     BP_FRAMES);
}

/*
 * The device's next @n request packets, PSNs @psn on, and then nothing:
 * its congestion window is full.
 */
static void cw_window(QRoce *t, QRocePeer *pr, uint32_t psn, uint32_t n)
{
    uint8_t f[2048];
    RocePktIn p;
    uint32_t i;

    for (i = 0; i < n; i++) {
        qroce_peer_recv(pr, f, &p);
        g_assert_cmpuint(p.psn, ==, psn + i);
        g_assert_true(p.opcode == ROCE_SEND_FIRST ||
                      p.opcode == ROCE_SEND_MIDDLE);
    }
    /*
     * The device has stopped sending (its frames reach the peer's socket
     * before they are counted as sent): none more is on its way.
     */
    qroce_wait_cnt_stable(t, QROCE_CNT_ROCE_TX_PKTS);
    g_assert_cmpint(recv(pr->fd, f, sizeof(f), MSG_DONTWAIT), <, 0);
}

/* An ACK of @psn, or a CNP, from the peer to QP @qpn. */
static void cw_send(QRocePeer *pr, uint32_t qpn, uint32_t psn, uint8_t opcode)
{
    RocePktOut o;

    qroce_peer_out(pr, &o, qpn, psn, opcode);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    qroce_peer_send(pr, &o, 0, false);
}

/* A fresh RC QP to the peer, streaming a 256 KiB SEND: its first window. */
static uint32_t cw_qp(QRoce *t, QRocePeer *pr, uint32_t pdn, uint32_t cqn,
                      uint64_t big, uint32_t bkey)
{
    uint64_t sq, rq;
    uint32_t qpn;

    qpn = qroce_peer_qp(t, pr, pdn, cqn, 0x77, &sq, &rq);
    qroce_post_send(t, sq, 0, big, BP_MSG, bkey, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, qpn, 1);
    cw_window(t, pr, 2000, 16);            /* the initial window */
    return qpn;
}

/*
 * DCQCN's window (docs/hw-spec.md section 14), against a peer that ACKs
 * whole windows by hand, with QEMU's virtual clock (and so the rate
 * timers) standing still: two CNPs in one window cut the window of a new
 * QP once, by half (16 -> 8, then +2 for the 16 PSNs acknowledged); each
 * window acknowledged without a CNP grows it by one PSN and decays the
 * window's alpha by 1/16, so that after eight quiet windows a CNP cuts
 * 18 PSNs by alpha / 2 = 608 / 2048 to 12.66, not to 9, and the 18 PSNs
 * acknowledged then open 14.  With dcqcn off, the CNP is counted and the
 * window keeps growing (16 -> 32).
 */
static void test_cnp_window(QRoce *t)
{
    QRocePeer *pr = &t->peer;
    uint64_t cq, buf, big;
    uint32_t pdn, cqn, key, bkey, qpn, psn = 2016, w = 10, k;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    big = qroce_pages(t, BP_MSG / 4096);
    bkey = qroce_mk_mr(t, pdn, big, BP_MSG / 4096, QROCE_ACCESS_LOCAL_WRITE);
    qpn = cw_qp(t, pr, pdn, cqn, big, bkey);
    cw_send(pr, qpn, 0, ROCE_CNP);
    cw_send(pr, qpn, 0, ROCE_CNP);
    cw_send(pr, qpn, 2015, ROCE_ACK);
    cw_window(t, pr, psn, w);
    for (k = 0; k < 8; k++) {
        cw_send(pr, qpn, psn + w - 1, ROCE_ACK);
        psn += w++;
        cw_window(t, pr, psn, w);
    }
    g_assert_cmpuint(w, ==, 18);
    cw_send(pr, qpn, 0, ROCE_CNP);
    cw_send(pr, qpn, 0, ROCE_CNP);
    cw_send(pr, qpn, psn + w - 1, ROCE_ACK);
    cw_window(t, pr, psn + w, 14);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_CNP_HANDLED), ==, 4);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_RATE_CUTS), ==, 4);

    qroce_qom_set_bool(t, "dcqcn", false);
    qpn = cw_qp(t, pr, pdn, cqn, big, bkey);
    cw_send(pr, qpn, 0, ROCE_CNP);
    cw_send(pr, qpn, 2015, ROCE_ACK);
    cw_window(t, pr, 2016, 32);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_CNP_HANDLED), ==, 5);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_RATE_CUTS), ==, 4);
}

static const QRoceCase cases[] = {
    { "wire/slow-peer-holds-frames-back-none-lost", test_wire_backpressure,
      NULL, bp_prepare },
    { "wire/dcqcn-cnps-cut-window-alpha-decays", test_cnp_window, NULL,
      qroce_peer_prepare },
};

static void register_qroce_wire_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_wire_tests);
