/*
 * qtests of qroce: what a hostile or broken guest or peer must not get
 * from the device -- one test for each hole a read-through of the model
 * found (WQEs re-read after a rewrite, unbounded buffer tables and
 * flushes, producer indices moving backwards, DMA outside the re-entrancy
 * guard or outside RAM, unchecked register values, receive-path lengths,
 * keys and QPNs reused at once), and garbage WQEs on connected QPs of
 * each type.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "standard-headers/linux/pci_regs.h"
#include "libqos/qroce.h"


/* What test_garbage_wqes() posts its garbage with, and its pair of QPs. */
typedef struct Garbage {
    GRand *r;
    uint64_t buf;               /* two pages */
    uint32_t pdn, key, ahn;
    uint32_t keys[3];           /* key, a read-only MR's, one naming nothing */
    uint8_t type;               /* of this round's pair */
    uint32_t cq[2], qp[2];
    uint64_t sq[2], rq[2];
} Garbage;

/*
 * WQE @j (at @w) of QP @i's SQ (@k 0: 128 bytes) or RQ (@k 1: 32 bytes),
 * over random bytes: left so, or made a WQE of random fields with half
 * of the SGEs in the MR; the first four and most others well formed.
 */
static void garbage_wqe(Garbage *g, unsigned i, unsigned k, unsigned j,
                        uint8_t *w)
{
    GRand *r = g->r;
    struct qroce_sge *sge = (struct qroce_sge *)(w + (k ? 16 : 48));
    unsigned nsge = k ? 1 : g_rand_int_range(r, 0, 6), n;
    bool good = j < 4 || g_rand_int_range(r, 0, 4) != 0;

    if (!good && !g_rand_boolean(r)) {
        return;
    }
    if (!k) {
        struct qroce_send_wqe *h = (void *)w;

        w[0] = g_rand_int_range(r, 0, QROCE_WR_MAX + 1);
        /* every flag, INLINE and FENCE included */
        w[1] &= QROCE_WQE_SIGNALED | QROCE_WQE_SOLICITED |
                QROCE_WQE_INLINE | QROCE_WQE_FENCE;
        w[2] = nsge;
        h->inline_len = cpu_to_le32(g_rand_int_range(r, 0, 100));
        if (g->type == QROCE_QPT_UD) {
            h->ud.ahn = cpu_to_le32(g->ahn);
            h->ud.remote_qpn = cpu_to_le32(g->qp[!i]);
            h->ud.remote_qkey = cpu_to_le32(0x1111);
        } else {
            h->rdma.remote_addr = cpu_to_le64(g->buf +
                                              g_rand_int_range(r, 0, 8192));
            h->rdma.rkey = cpu_to_le32(g->keys[g_rand_int_range(r, 0, 3)]);
        }
    } else {
        w[0] = 1;
    }
    if (good && !k) {
        /* well formed: SEND or WRITE, in the MR */
        w[0] = g_rand_boolean(r) ? QROCE_WR_SEND : QROCE_WR_RDMA_WRITE;
        w[2] = nsge = g_rand_int_range(r, 1, 4);
        if ((w[1] & QROCE_WQE_INLINE) && g->type != QROCE_QPT_UD) {
            w[1] &= ~QROCE_WQE_INLINE;
        }
        ((struct qroce_send_wqe *)w)->rdma.rkey = cpu_to_le32(g->key);
    }
    for (n = 0; n < MAX(nsge, 1); n++) {
        sge[n].addr = cpu_to_le64(g->buf +
                                  g_rand_int_range(r, 0, good ? 4096 : 8192));
        sge[n].length = cpu_to_le32(g_rand_int_range(r, 0,
                                                     good ? 1024 : 4096));
        sge[n].lkey = cpu_to_le32(good ? g->key :
                                  g->keys[g_rand_int_range(r, 0, 3)]);
    }
}

/* Both rings of both QPs, 16 WQEs each, filled by garbage_wqe(). */
static void garbage_rings(QRoce *t, Garbage *g)
{
    uint8_t ring[4096];
    unsigned i, j, k;

    for (i = 0; i < 2; i++) {
        uint64_t rings[2] = { g->sq[i], g->rq[i] };

        for (k = 0; k < 2; k++) {
            unsigned stride = k ? 32 : 128;

            for (j = 0; j < sizeof(ring); j++) {
                ring[j] = g_rand_int(g->r);
            }
            for (j = 0; j < 16; j++) {
                garbage_wqe(g, i, k, j, ring + j * stride);
            }
            qtest_memwrite(t->qts, rings[k], ring, 16 * stride);
        }
    }
}

/* Round @round's pair of QPs (RC, UC and UD in turn), CQs of their own. */
static void garbage_pair(QRoce *t, Garbage *g, uint32_t round)
{
    uint64_t cqa_ring, cqb_ring;
    unsigned i;

    g->type = round % 3 == 0 ? QROCE_QPT_RC :
              round % 3 == 1 ? QROCE_QPT_UC : QROCE_QPT_UD;
    g->cq[0] = qroce_mk_cq_ring(t, 1, 2, &cqa_ring);
    g->cq[1] = qroce_mk_cq_ring(t, 1, 6, &cqb_ring);
    for (i = 0; i < 2; i++) {
        g_assert_cmpuint(qroce_mk_qp_rings(t, g->type, g->pdn, g->cq[i],
                                           g->cq[i], 0, &g->qp[i], &g->sq[i],
                                           &g->rq[i]), ==, 0);
    }
    for (i = 0; i < 2; i++) {
        if (g->type == QROCE_QPT_RC) {
            qroce_rc_connect(t, g->qp[i], g->qp[!i], 10 * round, 10 * round);
        } else if (g->type == QROCE_QPT_UC) {
            qroce_uc_connect(t, g->qp[i], g->qp[!i]);
        } else {
            qroce_ud_ready(t, g->qp[i], g->type, 0x1111);
        }
    }
}

/*
 * The pair's doorbells: the four good WQEs of each ring, then random
 * doorbells of random kinds and values, with the engine's timers firing
 * until retries run out; the device still answers.
 */
static void garbage_doorbells(QRoce *t, Garbage *g)
{
    GRand *r = g->r;
    unsigned i, j;

    for (i = 0; i < 2; i++) {
        qroce_db(t, QROCE_DB_RQ, g->qp[i], 4);
        qroce_db(t, QROCE_DB_SQ, g->qp[i], 4);
    }
    qtest_clock_step(t->qts, 1000000000LL);
    for (j = 0; j < 64; j++) {
        unsigned which = g_rand_int_range(r, 0, 6);
        uint32_t obj = g_rand_boolean(r) ? g->qp[j & 1] : g->cq[j & 1];

        /* producer indexes near the ring, or anywhere in 32 bits */
        qroce_db(t, which * 8, obj, g_rand_int_range(r, 0, 8) ?
                 g_rand_int_range(r, 0, 40) : g_rand_int(r));
        if ((j & 15) == 15) {
            qtest_clock_step(t->qts, 2000000000LL);
        }
    }
    /* the engine's timers fire, retries run out */
    for (j = 0; j < 10; j++) {
        qtest_clock_step(t->qts, 5000000000LL);
    }
    g_assert_cmphex(qroce_rd(t, QROCE_REG_MAGIC), ==, QROCE_MAGIC_VALUE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==, 0);
    qroce_qp_state(t, g->qp[0]);
    qroce_qp_state(t, g->qp[1]);
}

/* The pair goes, and its CQs. */
static void garbage_destroy_pair(QRoce *t, Garbage *g)
{
    struct qroce_cmd c;
    unsigned i;

    for (i = 0; i < 2; i++) {
        memset(&c, 0, sizeof(c));
        c.hdr.opcode = QROCE_CMD_DESTROY_QP;
        c.qpn.qpn = cpu_to_le32(g->qp[i]);
        g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
        g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_CQ, g->cq[i],
                                          NULL), ==, 0);
    }
}

/*
 * Random WQEs on a connected pair: random SQ and RQ contents (half of the
 * SGEs pointing into a real MR), random producer indexes, CQ doorbells and
 * timer expiries.  The device must keep answering and tear down cleanly.
 */
static void test_garbage_wqes(QRoce *t)
{
    /* QROCE_FUZZ=SEED:ROUNDS for longer runs by hand */
    const char *env = g_getenv("QROCE_FUZZ");
    unsigned seed = 0x57514553, rounds = 8;
    struct qroce_cmd c;
    Garbage g = {};
    uint32_t round;

    if (env) {
        sscanf(env, "%u:%u", &seed, &rounds);
    }
    g.r = g_rand_new_with_seed(seed);

    qroce_enable(t);
    g.pdn = qroce_alloc_pd(t);
    qroce_mk_eq(t, 0);
    qroce_mk_eq(t, 1);
    qroce_set_gid0(t);
    g.buf = qroce_pages(t, 2);
    g.key = qroce_mk_mr(t, g.pdn, g.buf, 2, QROCE_ACCESS_LOCAL_WRITE |
                        QROCE_ACCESS_REMOTE_WRITE);
    g.ahn = qroce_mk_self_ah(t, g.pdn);
    /* a second MR, read-only, and a key that names nothing */
    g.keys[0] = g.key;
    g.keys[1] = qroce_mk_mr(t, g.pdn, g.buf + 4096, 1, 0);
    g.keys[2] = g.key ^ 0x100;
    t->sq_shift = 7;          /* room for 5 SGEs or 80 inline bytes */
    for (round = 0; round < rounds; round++) {
        garbage_pair(t, &g, round);
        garbage_rings(t, &g);
        garbage_doorbells(t, &g);
        if (round + 1 == rounds) {
            break;      /* the last pair is torn down below */
        }
        garbage_destroy_pair(t, &g);
    }
    g_test_message("RoCE packets sent %u, received %u, CQEs in error %u, "
                   "bad doorbells %u",
                   qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS),
                   qroce_cnt(t, QROCE_CNT_ROCE_RX_PKTS),
                   qroce_cnt(t, QROCE_CNT_CQE_ERRS),
                   qroce_cnt(t, QROCE_CNT_BAD_DOORBELLS));
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS), >, 0);
    t->sq_shift = 0;
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEREG_MR, g.keys[1], NULL),
                     ==, 0);
    garbage_destroy_pair(t, &g);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_DEREG_MR;
    c.key.key = cpu_to_le32(g.key);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_AH, g.ahn, NULL),
                     ==, 0);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEALLOC_PD, g.pdn, NULL),
                     ==, 0);
    g_rand_free(g.r);
}

/*
 * Finding 1: a message is sent from the QP's copy of its WQE.  A 4 KiB
 * WRITE with immediate stops at its last packet (RNR: no RECV yet); the
 * guest rewrites the WQE as 8 bytes of inline data and another QP sends
 * meanwhile.  The message must resume where it stopped, with the bytes of
 * the WQE as it was posted.
 */
static void test_audit_wqe_snapshot(QRoce *t)
{
    struct qroce_send_wqe h = { .opcode = QROCE_WR_RDMA_WRITE_IMM,
                                .flags = QROCE_WQE_SIGNALED };
    struct {
        struct qroce_send_wqe h;
        uint8_t inl[8];
    } evil = {};
    struct qroce_cqe cqe;
    QRoceQP a, b;
    uint64_t cq, buf, tgt;
    uint32_t pdn, cqn, key, rkey, idx = 0, i;
    uint8_t pat[4096], got[4096];

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    tgt = qroce_pages(t, 2);
    rkey = qroce_mk_mr(t, pdn, tgt, 2,
                       QROCE_ACCESS_LOCAL_WRITE | QROCE_ACCESS_REMOTE_WRITE);
    /* B's RNR NAKs ask for 655 ms (timer 0): time to rewrite the WQE */
    qroce_rc_pair(t, pdn, cqn, 0, &a, &b);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 29 + 3;
    }
    qtest_memwrite(t->qts, buf, pat, sizeof(pat));
    h.rdma.remote_addr = cpu_to_le64(tgt);
    h.rdma.rkey = cpu_to_le32(rkey);
    qroce_put_send_wqe(t, a.sq, 0, &h, buf, sizeof(pat), key);
    qroce_db(t, QROCE_DB_SQ, a.qpn, 1);
    qroce_wait_cnt(t, QROCE_CNT_ROCE_RNR_NAKS, 1);

    evil.h = h;
    evil.h.flags |= QROCE_WQE_INLINE;
    evil.h.inline_len = cpu_to_le32(8);
    qtest_memwrite(t->qts, a.sq, &evil, sizeof(evil));
    /* another QP segments a message meanwhile */
    h.opcode = QROCE_WR_RDMA_WRITE;
    h.rdma.remote_addr = cpu_to_le64(tgt + 4096);
    qroce_put_send_wqe(t, b.sq, 0, &h, buf + 4096, 1000, key);
    qroce_db(t, QROCE_DB_SQ, b.qpn, 1);
    qroce_next_send_cqe(t, cq, &idx, b.qpn, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);

    qroce_post_recv(t, b.rq, 0, buf + 4096, 64, key);
    qroce_db(t, QROCE_DB_RQ, b.qpn, 1);
    qtest_clock_step(t->qts, 700 * 1000 * 1000);     /* the RNR timer */
    qroce_next_send_cqe(t, cq, &idx, a.qpn, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, sizeof(pat));
    qtest_memread(t->qts, tgt, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
}

/* Finding 2: buffer tables cover exactly their object; a device-wide cap. */
static void test_audit_bt_limits(QRoce *t)
{
    struct qroce_cmd c;
    uint64_t buf;
    uint32_t pdn;

    qroce_enable(t);
    pdn = qroce_alloc_pd(t);
    qroce_mk_eq(t, 1);
    memset(&c, 0, sizeof(c));
    c.hdr.opcode = QROCE_CMD_CREATE_CQ;
    c.create_cq.eqn = cpu_to_le32(1);
    c.create_cq.log2_entries = 6;
    c.create_cq.ring = qroce_bt(qroce_pages(t, 1), 1u << 20);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    memset(&c, 0, sizeof(c));
    buf = qroce_pages(t, 8);
    c.hdr.opcode = QROCE_CMD_REG_MR;
    c.reg_mr.pdn = cpu_to_le32(pdn);
    c.reg_mr.iova = cpu_to_le64(buf);
    c.reg_mr.length = cpu_to_le64(4096);
    c.reg_mr.pages = qroce_bt(buf, 1u << 20);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_PARAM);
    /* 64 pages in all: the EQ holds one, so 64 more do not fit */
    c.reg_mr.length = cpu_to_le64(64 * 4096);
    c.reg_mr.pages.npages = cpu_to_le32(64);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_ERR_NORES);
    c.reg_mr.length = cpu_to_le64(8 * 4096);
    c.reg_mr.pages.npages = cpu_to_le32(8);
    g_assert_cmpuint(qroce_cmd(t, &c, NULL), ==, QROCE_CMD_OK);
}

/*
 * Finding 3: a doorbell only records.  A 16384-WQE SQ of a QP in ERR is
 * flushed by the engine, not inside the MMIO write: right after the
 * doorbell the last flush CQE is not there yet; later every one is.
 */
static void test_audit_doorbell_budget(QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_QP };
    struct qroce_cqe cqe;
    uint64_t cq, sq;
    uint32_t out[6], pdn, cqn, qpn;

    qroce_enable(t);
    pdn = qroce_alloc_pd(t);
    qroce_mk_eq(t, 1);
    cqn = qroce_mk_cq_ring(t, 1, 15, &cq);
    sq = qroce_pages(t, 256);
    c.create_qp.pdn = cpu_to_le32(pdn);
    c.create_qp.send_cqn = cpu_to_le32(cqn);
    c.create_qp.recv_cqn = cpu_to_le32(cqn);
    c.create_qp.type = QROCE_QPT_RC;
    c.create_qp.sq_log2_entries = 14;
    c.create_qp.sq_wqe_shift = 6;
    c.create_qp.rq_log2_entries = 4;
    c.create_qp.rq_wqe_shift = 5;
    c.create_qp.sq = qroce_bt(sq, 256);
    c.create_qp.rq = qroce_bt(qroce_pages(t, 1), 1);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    qpn = out[0];
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_RC_INIT, QROCE_QPS_INIT, NULL),
                     ==, 0);
    g_assert_cmpuint(qroce_modify(t, qpn, QROCE_QP_ATTR_STATE, QROCE_QPS_ERR,
                                  NULL), ==, 0);
    qroce_db(t, QROCE_DB_SQ, qpn, 16384);
    if (!qroce_iothread()) {
        /* in the main loop, the flush has not even begun by now */
        g_assert_false(qroce_entry_ready(t, cq, sizeof(cqe), 15, 16383));
    }
    qroce_wait_entry(t, cq, sizeof(cqe), 15, 16383, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_WR_FLUSH_ERR);
    g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, 16383);
}

/*
 * Finding 4: an SQ producer index behind the WQEs already sent is a bad
 * doorbell (QP to ERR), not an order to send WQEs never posted.
 */
static void test_audit_sq_pi_back(QRoce *t)
{
    uint64_t cq, buf, sqa, rqa, sqb, rqb;
    uint32_t pdn, cqn, key, a, b, bad, tx;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &a,
                                       &sqa, &rqa), ==, 0);
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, cqn, cqn, 0, &b,
                                       &sqb, &rqb), ==, 0);
    qroce_rc_connect_ex(t, a, b, 100, 200, 1, 14, 7);   /* B stays in RESET */
    qroce_post_send(t, sqa, 0, buf, 10, key, QROCE_WQE_SIGNALED);
    qroce_post_send(t, sqa, 1, buf, 10, key, QROCE_WQE_SIGNALED);
    qroce_post_send(t, sqa, 2, buf, 10, key, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, a, 3);
    qroce_wait_cnt(t, QROCE_CNT_ROCE_TX_PKTS, 3);
    bad = qroce_cnt(t, QROCE_CNT_BAD_DOORBELLS);
    qroce_db(t, QROCE_DB_SQ, a, 1);
    g_assert_cmpuint(qroce_wait_cnt_stable(t, QROCE_CNT_BAD_DOORBELLS), ==,
                     bad + 1);
    g_assert_cmpuint(qroce_wait_qp_state(t, a, QROCE_QPS_ERR), ==,
                     QROCE_QPS_ERR);
    tx = qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS);
    g_assert_cmpuint(tx, <=, 4);
}

/*
 * An SQ producer index lowered after a rewind: three SENDs go out, the
 * peer answers the first with an RNR NAK (the requester goes back to WQE
 * 0 and waits, with the virtual clock standing still), then the guest
 * writes PI 1 -- behind WQEs already sent once.  It is a bad doorbell (the
 * QP to ERR, its three WQEs flushed), not a smaller SQ; an ACK of all
 * three PSNs that arrives afterwards does not carry the engine past the
 * producer index into slots never posted.
 */
static void test_sq_pi_after_rewind(QRoce *t)
{
    QRocePeer *pr = &t->peer;
    RocePktOut o;
    RocePktIn p;
    struct qroce_cqe cqe;
    uint8_t f[2048];
    uint64_t cq, buf, sq, rq;
    uint32_t pdn, cqn, key, qpn, bad, tx, i, ci = 0;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    qpn = qroce_peer_qp(t, pr, pdn, cqn, 0x77, &sq, &rq);
    for (i = 0; i < 3; i++) {
        qroce_post_send(t, sq, i, buf, 10, key, QROCE_WQE_SIGNALED);
    }
    qroce_db(t, QROCE_DB_SQ, qpn, 3);
    for (i = 0; i < 3; i++) {
        qroce_peer_recv(pr, f, &p);
        g_assert_cmpuint(p.psn, ==, 2000 + i);
    }
    qroce_peer_out(pr, &o, qpn, 2000, ROCE_ACK);
    o.aeth_syndrome = ROCE_AETH_RNR | 31;   /* 491 ms: virtual, frozen */
    qroce_peer_send(pr, &o, 0, false);
    qroce_wait_cnt(t, QROCE_CNT_ROCE_RX_PKTS, 1);
    bad = qroce_cnt(t, QROCE_CNT_BAD_DOORBELLS);
    qroce_db(t, QROCE_DB_SQ, qpn, 1);
    g_assert_cmpuint(qroce_wait_cnt_stable(t, QROCE_CNT_BAD_DOORBELLS), ==,
                     bad + 1);
    g_assert_cmpuint(qroce_wait_qp_state(t, qpn, QROCE_QPS_ERR), ==,
                     QROCE_QPS_ERR);
    qroce_peer_out(pr, &o, qpn, 2002, ROCE_ACK);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    qroce_peer_send(pr, &o, 0, false);
    for (i = 0; i < 3; i++) {
        qroce_wait_entry(t, cq, sizeof(cqe), 6, ci++, &cqe);
        g_assert_cmpuint(le32_to_cpu(cqe.qpn), ==, qpn);
        g_assert_cmpuint(le32_to_cpu(cqe.wqe_index), ==, i);
        g_assert_cmpuint(cqe.status, ==, QROCE_WC_WR_FLUSH_ERR);
    }
    tx = qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS);
    qtest_clock_step(t->qts, 2 * 1000 * 1000 * 1000LL);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==, 0);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS), ==, tx);
}

/*
 * Findings 5 and 7: a CQ whose ring is the device's own doorbell BAR.  A
 * QP on it exhausts its retries (the timer path): the error CQE is not
 * written into MMIO (no stray doorbell, no DMA from the timer) and the CQ
 * reports CQ_ERR.
 */
static void test_audit_dma_mmio(QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_CREATE_CQ };
    struct qroce_eqe e;
    uint64_t eq0, buf, sq, rq, bar;
    uint32_t out[6], pdn, cqn, mmio_cqn, key, a, bad, tx;

    qroce_enable(t);
    pdn = qroce_alloc_pd(t);
    eq0 = qroce_mk_eq(t, 0);
    qroce_mk_eq(t, 1);
    qroce_set_gid0(t);
    cqn = qroce_mk_cq(t, 1);
    bar = t->db.addr;
    g_assert_cmphex(bar & 0xfff, ==, 0);
    c.create_cq.eqn = cpu_to_le32(1);
    c.create_cq.log2_entries = 6;
    c.create_cq.ring = qroce_bt(bar, 1);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    mmio_cqn = out[0];
    buf = qroce_pages(t, 1);
    key = qroce_mk_mr(t, pdn, buf, 1, QROCE_ACCESS_LOCAL_WRITE);
    g_assert_cmpuint(qroce_mk_qp_rings(t, QROCE_QPT_RC, pdn, mmio_cqn, cqn, 0,
                                       &a, &sq, &rq), ==, 0);
    /* to a QP that does not exist: every try is lost; no retries */
    qroce_rc_connect_ex(t, a, 999, 100, 200, 1, 1, 0);
    bad = qroce_cnt(t, QROCE_CNT_BAD_DOORBELLS);
    tx = qroce_cnt(t, QROCE_CNT_ROCE_TX_PKTS);
    qroce_post_send(t, sq, 0, buf, 10, key, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, a, 1);
    /* sent, so the retry timer is set (the engine may run in an IOThread) */
    qroce_wait_cnt(t, QROCE_CNT_ROCE_TX_PKTS, tx + 1);
    qtest_clock_step(t->qts, 100 * 1000 * 1000);     /* the retry timer */
    qroce_wait_entry(t, eq0, sizeof(e), 8, 0, &e);
    g_assert_cmpuint(e.type, ==, QROCE_EQE_CQ_ERR);
    g_assert_cmpuint(le32_to_cpu(e.handle), ==, mmio_cqn);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_BAD_DOORBELLS), ==, bad);
}

/* Finding 6: CMDQ_LOG2 out of range is refused when written. */
static void test_audit_cmdq_log2(QRoce *t)
{
    qroce_wr(t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    qroce_wr(t, QROCE_REG_CMDQ_LOG2, 40);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_CMDQ_LOG2), ==, 0);
    qroce_wr(t, QROCE_REG_CMDQ_PI, 1);           /* not enabled: ignored */
    qroce_wr(t, QROCE_REG_CMDQ_BASE_LO, 0x100000);
    qroce_wr(t, QROCE_REG_CMDQ_CQ_LO, 0x101000);
    qroce_wr(t, QROCE_REG_CTRL, QROCE_CTRL_ENABLE);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_STATUS) & QROCE_STATUS_FATAL, ==,
                    QROCE_STATUS_FATAL);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_FATAL_CODE), ==,
                     QROCE_FATAL_CMDQ_CONFIG);
}

/* Finding 7: payload DMA from an address that is not guest RAM fails. */
static void test_audit_dma_hole(QRoce *t)
{
    struct qroce_cmd c = { .hdr.opcode = QROCE_CMD_REG_MR };
    struct qroce_cqe cqe;
    QRoceQP a, b;
    uint64_t cq, buf, hole = 0x4000000000ULL;
    uint32_t out[6], pdn, cqn, key, hkey, idx = 0;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    c.reg_mr.pdn = cpu_to_le32(pdn);
    c.reg_mr.access = cpu_to_le32(QROCE_ACCESS_LOCAL_WRITE);
    c.reg_mr.iova = cpu_to_le64(hole);
    c.reg_mr.length = cpu_to_le64(4096);
    c.reg_mr.pages = (struct qroce_bt){ 0, cpu_to_le32(1), 12,
                                        QROCE_BT_INLINE, 0 };
    c.reg_mr.inline_pages[0] = cpu_to_le64(hole);
    g_assert_cmpuint(qroce_cmd(t, &c, out), ==, QROCE_CMD_OK);
    hkey = out[0];
    qroce_rc_pair(t, pdn, cqn, 1, &a, &b);
    qroce_post_recv(t, b.rq, 0, buf, 4096, key);
    qroce_db(t, QROCE_DB_RQ, b.qpn, 1);
    qroce_post_send(t, a.sq, 0, hole, 100, hkey, QROCE_WQE_SIGNALED);
    qroce_db(t, QROCE_DB_SQ, a.qpn, 1);
    qroce_next_send_cqe(t, cq, &idx, a.qpn, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_LOC_PROT_ERR);
}

/*
 * Finding 9: keys and QPNs come back late.  300 registrations of one MR
 * slot's worth give 300 different keys; three QPs created and destroyed
 * in turn get three QPNs.
 */
static void test_audit_key_reuse(QRoce *t)
{
    g_autoptr(GHashTable) keys = g_hash_table_new(NULL, NULL);
    uint64_t cq, buf;
    uint32_t pdn, cqn, key, k, qpn[3], i;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE, &pdn, &cqn, &cq, &buf, &key);
    for (i = 0; i < 300; i++) {
        k = qroce_mk_mr(t, pdn, buf, 1, QROCE_ACCESS_LOCAL_WRITE);
        g_assert_false(g_hash_table_contains(keys, GUINT_TO_POINTER(k)));
        g_hash_table_add(keys, GUINT_TO_POINTER(k));
        g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DEREG_MR, k, NULL), ==,
                         0);
    }
    for (i = 0; i < 3; i++) {
        g_assert_cmpuint(qroce_mk_qp(t, QROCE_QPT_RC, pdn, cqn, 0, &qpn[i]), ==,
                         0);
        g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_DESTROY_QP, qpn[i],
                                          NULL), ==, 0);
    }
    g_assert_cmpuint(qpn[0], !=, qpn[1]);
    g_assert_cmpuint(qpn[1], !=, qpn[2]);
    g_assert_cmpuint(qpn[0], !=, qpn[2]);
}

/*
 * A frame to another MAC and one with a bad IPv4 checksum (the ICRC does
 * not cover it) are not taken: the next good one of the same PSN gets the
 * RECV WQE.
 */
static void rx_frames_not_ours(QRoce *t, uint64_t cq, uint32_t *idx,
                               uint32_t qpn)
{
    QRocePeer *pr = &t->peer;
    struct qroce_cqe cqe;
    RocePktOut o;
    RocePktIn p;
    uint8_t f[2048];

    /* to another MAC: not ours; then the same PSN to us */
    qroce_peer_out(pr, &o, qpn, 1000, ROCE_SEND_ONLY);
    o.dmac = (const uint8_t *)"\x52\x54\x00\x99\x99\x99";
    qroce_peer_send(pr, &o, 100, false);
    qroce_peer_out(pr, &o, qpn, 1000, ROCE_SEND_ONLY);
    o.ackreq = true;
    qroce_peer_send(pr, &o, 200, false);
    qroce_peer_recv(pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_ACK);
    g_assert_cmphex(p.aeth_syndrome, ==, ROCE_AETH_ACK_NO_CREDIT);
    g_assert_cmpuint(p.psn, ==, 1000);
    qroce_wait_entry(t, cq, sizeof(cqe), 6, (*idx)++, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 200);

    /* a bad IPv4 header checksum (the ICRC does not cover it) */
    qroce_peer_out(pr, &o, qpn, 1001, ROCE_SEND_ONLY);
    qroce_peer_send(pr, &o, 150, true);
    o.ackreq = true;
    qroce_peer_send(pr, &o, 250, false);
    qroce_peer_recv(pr, f, &p);
    g_assert_cmphex(p.aeth_syndrome, ==, ROCE_AETH_ACK_NO_CREDIT);
    g_assert_cmpuint(p.psn, ==, 1001);
    qroce_wait_entry(t, cq, sizeof(cqe), 6, (*idx)++, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 250);
}

/* A WRITE MIDDLE that reaches the RETH length: a NAK (invalid request). */
static void rx_frames_write_middle(QRoce *t, uint32_t qpn, uint64_t buf,
                                   uint32_t key)
{
    QRocePeer *pr = &t->peer;
    RocePktOut o;
    RocePktIn p;
    uint8_t f[2048];

    /* WRITE of 512 bytes: FIRST 256, then a MIDDLE that ends it */
    qroce_peer_out(pr, &o, qpn, 1002, ROCE_WRITE_FIRST);
    o.reth_va = buf + 4096;
    o.reth_rkey = key;
    o.reth_len = 512;
    qroce_peer_send(pr, &o, 256, false);
    qroce_peer_out(pr, &o, qpn, 1003, ROCE_WRITE_MIDDLE);
    o.ackreq = true;
    qroce_peer_send(pr, &o, 256, false);
    qroce_peer_recv(pr, f, &p);
    g_assert_cmphex(p.opcode, ==, ROCE_ACK);
    g_assert_cmphex(p.aeth_syndrome, ==, ROCE_AETH_NAK_INV);
    g_assert_cmpuint(p.psn, ==, 1003);
}

/* A READ of 512 bytes answered by one response of 512 (MTU 256): fails. */
static uint32_t rx_frames_long_read_resp(QRoce *t, uint64_t cq, uint32_t *idx,
                                         uint32_t pdn, uint32_t cqn,
                                         uint64_t buf, uint32_t key)
{
    QRocePeer *pr = &t->peer;
    struct qroce_send_wqe h = { .opcode = QROCE_WR_RDMA_READ,
                                .flags = QROCE_WQE_SIGNALED };
    struct qroce_cqe cqe;
    RocePktOut o;
    RocePktIn p;
    uint8_t f[2048];
    uint64_t sq2, rq2;
    uint32_t qpn2;

    qpn2 = qroce_peer_qp(t, pr, pdn, cqn, 0x78, &sq2, &rq2);
    h.rdma.remote_addr = cpu_to_le64(0x10000);
    h.rdma.rkey = cpu_to_le32(0x1234);
    qroce_put_send_wqe(t, sq2, 0, &h, buf + 2048, 512, key);
    qroce_db(t, QROCE_DB_SQ, qpn2, 1);
    do {
        qroce_peer_recv(pr, f, &p);
    } while (p.opcode != ROCE_READ_REQ);
    g_assert_cmpuint(p.reth_len, ==, 512);
    qroce_peer_out(pr, &o, qpn2, p.psn, ROCE_READ_RESP_ONLY);
    o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
    qroce_peer_send(pr, &o, 512, false);
    qroce_next_send_cqe(t, cq, idx, qpn2, &cqe);
    g_assert_cmpuint(cqe.status, ==, QROCE_WC_BAD_RESP_ERR);
    return qpn2;
}

/*
 * Malformed frames: good frames of every opcode to a fresh QP and to
 * @qpn2, with random bytes changed and random lengths; the device must
 * stay up.
 */
static void rx_frames_malformed(QRoce *t, uint32_t pdn, uint32_t cqn,
                                uint32_t qpn2, uint64_t buf, uint32_t key)
{
    static const uint8_t ops[] = {
        ROCE_SEND_FIRST, ROCE_SEND_MIDDLE, ROCE_SEND_LAST,
        ROCE_SEND_ONLY_IMM, ROCE_WRITE_FIRST, ROCE_WRITE_ONLY,
        ROCE_READ_REQ, ROCE_READ_RESP_FIRST, ROCE_READ_RESP_ONLY,
        ROCE_ACK, ROCE_ATOMIC_ACK, ROCE_CMP_SWAP, ROCE_FETCH_ADD,
        ROCE_UD_SEND_ONLY, ROCE_CNP, ROCE_SEND_LAST_INV,
        ROCE_SEND_ONLY_INV,
    };
    QRocePeer *pr = &t->peer;
    RocePktOut o;
    GRand *r = g_rand_new_with_seed(0x72786672);
    uint32_t qpn3, k, n;
    uint64_t sq3, rq3;

    qpn3 = qroce_peer_qp(t, pr, pdn, cqn, 0x79, &sq3, &rq3);
    for (k = 0; k < 600; k++) {
        uint8_t fr[2048];
        size_t len;

        qroce_peer_out(pr, &o, g_rand_boolean(r) ? qpn3 : qpn2,
                       1000 + g_rand_int_range(r, 0, 8),
                       ops[g_rand_int_range(r, 0, ARRAY_SIZE(ops))]);
        o.ackreq = g_rand_boolean(r);
        o.reth_va = buf + g_rand_int_range(r, 0, 8192);
        o.reth_rkey = g_rand_boolean(r) ? key : g_rand_int(r);
        o.reth_len = g_rand_int_range(r, 0, 2048);
        o.aeth_syndrome = g_rand_int(r);
        len = g_rand_int_range(r, 0, 300);
        memset(fr + roce_hdr_len(o.opcode, false), 0x33, len);
        len = roce_build(fr, &o, len);
        for (n = g_rand_int_range(r, 0, 4); n; n--) {
            fr[g_rand_int_range(r, 0, len)] = g_rand_int(r);
        }
        if (g_rand_int_range(r, 0, 4) == 0) {
            len = g_rand_int_range(r, 1, len + 1);
        }
        sendto(pr->fd, fr, len, 0, (struct sockaddr *)&pr->qemu,
               sizeof(pr->qemu));
    }
    g_rand_free(r);
    qtest_clock_step(t->qts, 10 * 1000 * 1000 * 1000LL);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_MAGIC), ==, QROCE_MAGIC_VALUE);
    g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==, 0);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ROCE_RX_DROPS), >, 0);
}

/*
 * Finding 8, receive-path checks: a frame to another MAC and one with a
 * bad IPv4 checksum are not taken (the next good one gets the RECV WQE);
 * a WRITE MIDDLE that reaches the RETH length is a NAK (invalid request);
 * a READ response longer than the path MTU fails the READ.
 */
static void test_audit_rx_frames(QRoce *t)
{
    QRocePeer *pr = &t->peer;
    uint64_t cq, buf, sq, rq;
    uint32_t pdn, cqn, key, qpn, qpn2, idx = 0;

    qroce_objs_setup(t, QROCE_ACCESS_LOCAL_WRITE | QROCE_ACCESS_REMOTE_WRITE |
                     QROCE_ACCESS_REMOTE_READ, &pdn, &cqn, &cq, &buf, &key);
    qpn = qroce_peer_qp(t, pr, pdn, cqn, 0x77, &sq, &rq);
    qroce_post_recv(t, rq, 0, buf, 1024, key);
    qroce_post_recv(t, rq, 1, buf + 1024, 1024, key);
    qroce_db(t, QROCE_DB_RQ, qpn, 2);
    rx_frames_not_ours(t, cq, &idx, qpn);
    rx_frames_write_middle(t, qpn, buf, key);
    qpn2 = rx_frames_long_read_resp(t, cq, &idx, pdn, cqn, buf, key);
    rx_frames_malformed(t, pdn, cqn, qpn2, buf, key);
}

/*
 * Bus Master Enable turned off and on again and again while the engine
 * moves data (in an IOThread with QROCE_QTEST_IOTHREAD): each DMA either
 * reaches guest RAM or is refused, never bounced or sent to MMIO, so no
 * lock is taken the wrong way round and QEMU answers throughout.  Reset
 * afterwards, the device moves data again, every byte compared.
 */
static void test_bme_toggled(QRoce *t)
{
    uint8_t pat[3000], got[3000];
    uint16_t cmd;
    QRoceEnv e;
    QRoceQP a, b;
    int i, k;

    qroce_env_setup(&e, t);
    qroce_env_pair(&e, &a, &b, 1);
    cmd = qpci_config_readw(t->dev, PCI_COMMAND);
    g_assert_true(cmd & PCI_COMMAND_MASTER);
    for (k = 0; k < 6; k++) {
        for (i = 0; i < 15; i++) {
            qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, e.buf + 8192,
                               e.key, e.buf, 8192);
        }
        qroce_env_ring(&e, &a);
        for (i = 0; i < 40; i++) {
            qpci_config_writew(t->dev, PCI_COMMAND,
                               cmd & ~PCI_COMMAND_MASTER);
            qpci_config_writew(t->dev, PCI_COMMAND, cmd);
        }
        qtest_qmp_assert_success(t->qts, "{'execute': 'query-status'}");
    }
    qroce_wait_cnt_stable(t, QROCE_CNT_ROCE_TX_PKTS);
    g_assert_cmphex(qpci_config_readw(t->dev, PCI_COMMAND), ==, cmd);

    qroce_env_setup(&e, t);             /* reset, new objects */
    qroce_env_pair(&e, &a, &b, 1);
    for (i = 0; i < sizeof(pat); i++) {
        pat[i] = i * 3 + 1;
    }
    qtest_memwrite(t->qts, e.buf, pat, sizeof(pat));
    qroce_env_put_rdma(&e, &a, QROCE_WR_RDMA_WRITE, e.buf + 8192, e.key,
                       e.buf, sizeof(pat));
    qroce_env_ring(&e, &a);
    qroce_env_cqe(&e, &a, QROCE_CQE_RDMA_WRITE, QROCE_WC_SUCCESS, NULL);
    qtest_memread(t->qts, e.buf + 8192, got, sizeof(got));
    g_assert_true(!memcmp(got, pat, sizeof(got)));
}

static const QRoceCase cases[] = {
    { "security/garbage-wqes-leave-device-working", test_garbage_wqes, NULL,
      NULL },
    { "security/bus-master-toggled-while-the-engine-runs", test_bme_toggled },
    { "security/wqe-rewritten-mid-message-not-reread",
      test_audit_wqe_snapshot, NULL, NULL },
    { "security/buffer-tables-capped-per-object-and-device",
      test_audit_bt_limits, "-global qroce.max-bt-pages=64", NULL },
    { "security/doorbell-only-records-engine-flushes",
      test_audit_doorbell_budget, NULL, NULL },
    { "security/sq-pi-behind-sent-is-fatal", test_audit_sq_pi_back, NULL,
      NULL },
    { "security/sq-pi-lowered-after-rewind-is-fatal",
      test_sq_pi_after_rewind, NULL, qroce_peer_prepare },
    { "security/cq-ring-in-mmio-gets-no-dma", test_audit_dma_mmio, NULL,
      NULL },
    { "security/cmdq-log2-checked-when-written", test_audit_cmdq_log2, NULL,
      NULL },
    { "security/dma-from-outside-ram-fails", test_audit_dma_hole, NULL,
      NULL },
    { "security/keys-and-qpns-not-reused-at-once", test_audit_key_reuse,
      NULL, NULL },
    { "security/rx-checks-mac-csum-lengths-mtu", test_audit_rx_frames, NULL,
      qroce_peer_prepare },
};

static void register_qroce_security_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_security_tests);
