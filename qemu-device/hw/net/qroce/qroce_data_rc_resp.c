/*
 * qroce: the RC transport's responder.
 *
 * Packets are checked as rxe checks them (destination is a local GID, QP
 * exists and is RC and ready, addresses match the QP's AV, P_Key, ICRC)
 * and dropped silently otherwise; in-sequence SENDs are scattered into
 * the RECV WQE, duplicates are ACKed again, a gap gets one sequence NAK, a
 * missing RECV WQE gets an RNR NAK.
 *
 * READs and atomics are executed when they arrive in sequence; the
 * answers (READ response streams, atomic ACKs, and the ACKs that must not
 * overtake them) wait on a per-QP queue of max_dest_rd_atomic resources
 * that the bottom half drains with the same packet budget as the send
 * queues.  Atomics run in the device's one thread, so they are atomic
 * against every other QP of the device (IBV_ATOMIC_HCA); a duplicate
 * atomic is answered from a history of the last results, never executed
 * twice; a duplicate READ is read again.  A FLUSH or an ATOMIC WRITE is
 * answered with an empty READ response, and a duplicate is answered
 * again, not executed again.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qroce_data_xport.h"
#include "qroce_data_rc.h"
#include "qroce_data_common.h"
#include "qroce_data_cc.h"
#include "qroce_objects.h"
#include "qroce_ring.h"
#include "qroce_odp.h"
#include "trace.h"

enum {
    RC_RSP_ACK,
    RC_RSP_READ,
    RC_RSP_ATOMIC,
};

static void rc_send_ack(QRoceState *s, QRoceQP *qp, uint8_t syndrome,
                        uint32_t psn)
{
    RocePktOut o = {};
    uint8_t sgid[16];

    if (!qroce_dp_addr(s, qp, &o, sgid)) {
        return;
    }
    o.opcode = ROCE_ACK;
    o.psn = psn;
    o.aeth_syndrome = syndrome;
    o.aeth_msn = qp->xp.msn & 0xffffff;
    trace_qroce_rc_ack_tx(qp->qpn, syndrome, psn);
    if (syndrome == ROCE_AETH_NAK_SEQ) {
        qroce_count(s, QROCE_CNT_ROCE_SEQ_NAKS);
    } else if (ROCE_AETH_TYPE(syndrome) == 1) {
        qroce_count(s, QROCE_CNT_ROCE_RNR_NAKS);
    }
    qroce_dp_tx(s, qp, &o, 0);
}


/* Refuse a request: NAK it and move the QP to ERR. */
static void rc_resp_fatal(QRoceState *s, QRoceQP *qp, uint8_t syndrome,
                          uint32_t psn, uint8_t event)
{
    qp->xp.rsp_count = 0;
    rc_send_ack(s, qp, syndrome, psn);
    qp->xp.in_msg = false;
    qroce_qp_set_error(s, qp, event);
}

/*
 * Send the next packet of the oldest queued response; false when it had
 * to give up (the QP went to ERR) or waits for a page fault.
 */
static bool rc_rsp_one(QRoceState *s, QRoceQP *qp, QRoceRcRsp *e)
{
    QRoceQPXport *r = &qp->xp;
    uint32_t mtu = qp_mtu(qp);
    RocePktOut o = {};
    uint8_t sgid[16];
    uint32_t n;

    switch (e->kind) {
    case RC_RSP_ACK:
        rc_send_ack(s, qp, e->syndrome, e->psn);
        e->off = e->len = 0;
        return true;
    case RC_RSP_ATOMIC:
        if (!qroce_dp_addr(s, qp, &o, sgid)) {
            break;
        }
        o.opcode = ROCE_ATOMIC_ACK;
        o.psn = e->psn;
        o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
        o.aeth_msn = r->msn & 0xffffff;
        o.atomic_orig = e->orig;
        qroce_dp_tx(s, qp, &o, 0);
        e->off = e->len = 0;
        return true;
    case RC_RSP_READ:
        if (!qroce_dp_addr(s, qp, &o, sgid)) {
            break;
        }
        n = MIN(mtu, e->len - e->off);
        if (e->len <= mtu) {
            o.opcode = ROCE_READ_RESP_ONLY;
        } else if (e->off == 0) {
            o.opcode = ROCE_READ_RESP_FIRST;
        } else if (e->off + n == e->len) {
            o.opcode = ROCE_READ_RESP_LAST;
        } else {
            o.opcode = ROCE_READ_RESP_MIDDLE;
        }
        o.psn = e->psn;
        o.aeth_syndrome = ROCE_AETH_ACK_NO_CREDIT;
        o.aeth_msn = r->msn & 0xffffff;
        if (n) {
            QRoceMR *mr;
            uint8_t *payload = s->eng->pkt +
                               roce_hdr_len(o.opcode, !roce_gid_is_v4(o.dgid));
            uint64_t va = e->va + e->off;

            QRoceOdpMiss miss;
            /* the MR may have gone since the request was checked */
            int ret = qroce_rkey_check(s, qp, e->rkey, &va, n,
                                       QROCE_ACCESS_REMOTE_READ, &mr) ? -1 :
                      qroce_mr_rw(s, mr, va, payload, n, false, &miss);

            miss.end = va + e->len - e->off;
            if (ret == QROCE_RW_FAULT &&
                qroce_dp_odp_fault(s, qp, QROCE_PF_RESP, &miss)) {
                return false;   /* ODP page gone since: wait for it here */
            }
            if (ret) {
                rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, e->psn,
                              QROCE_EQE_QP_ACCESS_ERR);
                return false;
            }
        }
        qroce_dp_tx(s, qp, &o, n);
        e->off += n;
        e->psn = psn_add(e->psn, 1);
        return true;
    }
    rc_resp_fatal(s, qp, ROCE_AETH_NAK_OP, e->psn, QROCE_EQE_QP_FATAL);
    return false;
}

/* Drain the response queue; returns true if it stopped for the budget. */
bool qroce_rc_rsp_process(QRoceState *s, QRoceQP *qp, int *budget)
{
    QRoceQPXport *r = &qp->xp;

    while (r->rsp_count) {
        QRoceRcRsp *e = &r->rspq[r->rsp_head];

        if (qp->state < QROCE_QPS_RTR || qp->state == QROCE_QPS_ERR) {
            r->rsp_count = 0;
            break;
        }
        if (*budget <= 0) {
            return true;
        }
        if (e->kind == RC_RSP_READ && !qroce_dc_may_send(s, qp)) {
            return false;       /* paced: the timer runs it again */
        }
        (*budget)--;
        if (!rc_rsp_one(s, qp, e)) {
            break;
        }
        if (e->off >= e->len) {
            r->rsp_head = (r->rsp_head + 1) % QROCE_RC_RSPQ;
            r->rsp_count--;
        }
    }
    return false;
}

/*
 * Queue a response behind the ones still being sent.  With nothing queued
 * an ACK goes out at once, and a READ starts at once (the rest of a long
 * one follows from the bottom half).
 */
static void rc_rsp_push(QRoceState *s, QRoceQP *qp, const QRoceRcRsp *e)
{
    QRoceQPXport *r = &qp->xp;
    int budget = 4;

    if (e->kind == RC_RSP_ACK && r->rsp_count) {
        QRoceRcRsp *t = &r->rspq[(r->rsp_head + r->rsp_count - 1) %
                                 QROCE_RC_RSPQ];

        if (t->kind == RC_RSP_ACK && t->syndrome == e->syndrome &&
            e->syndrome == ROCE_AETH_ACK_NO_CREDIT) {
            t->psn = e->psn;            /* one ACK covers both */
            return;
        }
    }
    if (r->rsp_count == QROCE_RC_RSPQ) {
        qroce_dp_drop(s, "response queue full");  /* the requester retries */
        return;
    }
    r->rspq[(r->rsp_head + r->rsp_count) % QROCE_RC_RSPQ] = *e;
    r->rsp_count++;
    if (r->rsp_count == 1 && !qroce_rc_rsp_process(s, qp, &budget)) {
        return;
    }
    qroce_dp_schedule(s, qp);
}

static void rc_push_ack(QRoceState *s, QRoceQP *qp, uint8_t syndrome,
                        uint32_t psn)
{
    QRoceRcRsp e = { .kind = RC_RSP_ACK, .syndrome = syndrome,
                     .first_psn = psn, .psn = psn, .len = 1 };

    rc_rsp_push(s, qp, &e);
}

/*
 * Forget queued responses to requests from @psn on: they are asked again.
 * A READ still streaming whose responses reach @psn stops too: the
 * request asked again restarts it there (after a lost response).
 */
/*
 * An ODP page request @psn needs is absent (@miss): an RNR NAK while the
 * page fault is outstanding, the requester asks again (true).  If the
 * driver could not resolve it: an access NAK, the QP to ERR (false).
 */
static bool rc_resp_fault(QRoceState *s, QRoceQP *qp, uint32_t psn,
                          const QRoceOdpMiss *miss)
{
    if (qroce_dp_odp_fault(s, qp, QROCE_PF_RESP, miss)) {
        rc_push_ack(s, qp, ROCE_AETH_RNR | qp->min_rnr_timer, psn);
        return true;
    }
    rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, psn, QROCE_EQE_QP_ACCESS_ERR);
    return false;
}

static void rc_rsp_trim(QRoceQP *qp, uint32_t psn)
{
    QRoceQPXport *r = &qp->xp;

    while (r->rsp_count) {
        QRoceRcRsp *t = &r->rspq[(r->rsp_head + r->rsp_count - 1) %
                                 QROCE_RC_RSPQ];

        if (psn_cmp(t->first_psn, psn) < 0 &&
            (t->kind != RC_RSP_READ ||
             psn_cmp(psn, psn_add(t->first_psn,
                                  rc_read_pkts(qp, t->len))) >= 0)) {
            break;
        }
        r->rsp_count--;
    }
}

static uint32_t rc_rd_atomic_queued(QRoceQP *qp)
{
    QRoceQPXport *r = &qp->xp;
    uint32_t i, n = 0;

    for (i = 0; i < r->rsp_count; i++) {
        if (r->rspq[(r->rsp_head + i) % QROCE_RC_RSPQ].kind != RC_RSP_ACK) {
            n++;
        }
    }
    return n;
}

/*
 * A new FLUSH at level RANGE or MR: the MR needs ACCESS_FLUSH_GLOBAL and,
 * at level RANGE, must hold the range (a memory window cannot give the
 * flush right, so its key is refused).  Persistent placement is a right
 * no MR of this device has (guest RAM is not persistent memory): an
 * access NAK, as for an MR without the flag.  Data is placed as it
 * arrives, so there is nothing more to do.  0, or the syndrome of the
 * NAK that refuses it.
 */
static uint8_t rc_flush_exec(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    bool range = ROCE_FETH_LEVEL(p->feth) == QROCE_FLUSH_RANGE;
    uint8_t type = ROCE_FETH_TYPE(p->feth);
    QRoceMR *mr;

    if (!type || (type & ~(QROCE_FLUSH_GLOBAL | QROCE_FLUSH_PERSISTENT)) ||
        ROCE_FETH_LEVEL(p->feth) > QROCE_FLUSH_MR || p->paylen) {
        return ROCE_AETH_NAK_INV;
    }
    if ((type & QROCE_FLUSH_PERSISTENT) ||
        qroce_mr_check(s, p->reth_rkey, qp->pdn, range ? p->reth_va : 0,
                       range ? p->reth_len : 0, QROCE_ACCESS_FLUSH_GLOBAL,
                       &mr)) {
        return ROCE_AETH_NAK_ACCESS;
    }
    return 0;
}

/*
 * A new ATOMIC WRITE: 8 bytes at an aligned address, written with one
 * access.  0, or the syndrome of the NAK that refuses it.
 */
static uint8_t rc_atomic_write_exec(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    uint64_t va = p->reth_va;
    QRoceOdpMiss miss;
    QRoceMR *mr;
    int ret;

    if (!(qp->access_flags & QROCE_ACCESS_REMOTE_WRITE) ||
        p->reth_len != 8 || p->paylen != 8 || (p->reth_va & 7)) {
        return ROCE_AETH_NAK_INV;
    }
    ret = qroce_rkey_check(s, qp, p->reth_rkey, &va, 8,
                           QROCE_ACCESS_REMOTE_WRITE, &mr) ? -1 :
          qroce_mr_rw(s, mr, va, (void *)p->payload, 8, true, &miss);
    if (ret == QROCE_RW_FAULT &&
        qroce_dp_odp_fault(s, qp, QROCE_PF_RESP, &miss)) {
        return ROCE_AETH_RNR | qp->min_rnr_timer;
    }
    return ret ? ROCE_AETH_NAK_ACCESS : 0;
}

/*
 * A FLUSH or an ATOMIC WRITE, new (@dup false) or asked again: answered
 * with a READ response of no payload, like a READ of 0 bytes.  One asked
 * again is answered again, not executed again.  Returns false if it was
 * refused and the QP moved to ERR.
 */
static bool rc_empty_read_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                             bool dup)
{
    QRoceQPXport *r = &qp->xp;
    QRoceRcRsp e = { .kind = RC_RSP_READ, .first_psn = p->psn,
                     .psn = p->psn };
    uint8_t syn;

    if (dup) {
        rc_rsp_trim(qp, p->psn);
        rc_rsp_push(s, qp, &e);
        return true;
    }
    if (rc_rd_atomic_queued(qp) >= MAX(qp->max_dest_rd_atomic, 1)) {
        syn = ROCE_AETH_NAK_INV;
    } else if (p->opcode == ROCE_FLUSH) {
        syn = rc_flush_exec(s, qp, p);
    } else {
        syn = rc_atomic_write_exec(s, qp, p);
    }
    trace_qroce_rc_empty_read(qp->qpn, p->opcode, p->psn, p->reth_va,
                              p->reth_len, p->feth, syn);
    if (ROCE_AETH_TYPE(syn) == 1) {
        rc_push_ack(s, qp, syn, p->psn);    /* an ODP page fault: RNR */
        return true;
    }
    if (syn) {
        rc_resp_fatal(s, qp, syn, p->psn, syn == ROCE_AETH_NAK_INV ?
                      QROCE_EQE_QP_REQ_ERR : QROCE_EQE_QP_ACCESS_ERR);
        return false;
    }
    r->epsn = psn_add(r->epsn, 1);
    r->msn++;
    rc_rsp_push(s, qp, &e);
    return true;
}

/*
 * A READ request or an atomic, new (@dup false) or asked again.  Returns
 * false if it was refused and the QP moved to ERR.
 */
static bool rc_rd_atomic_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                            bool dup)
{
    QRoceQPXport *r = &qp->xp;
    bool read = p->opcode == ROCE_READ_REQ;
    uint32_t need = read ? QROCE_ACCESS_REMOTE_READ :
                           QROCE_ACCESS_REMOTE_ATOMIC;
    QRoceRcRsp e = { .kind = read ? RC_RSP_READ : RC_RSP_ATOMIC,
                     .first_psn = p->psn, .psn = p->psn, .va = p->reth_va,
                     .rkey = p->reth_rkey, .len = read ? p->reth_len : 1 };
    uint64_t va = p->reth_va;
    QRoceOdpMiss miss;
    QRoceMR *mr;
    uint8_t v[8];
    uint64_t orig;
    uint32_t i;
    int ret;

    if (p->opcode == ROCE_FLUSH || p->opcode == ROCE_ATOMIC_WRITE) {
        return rc_empty_read_rx(s, qp, p, dup);
    }
    if (dup) {
        rc_rsp_trim(qp, p->psn);
        if (!read) {
            for (i = 0; i < QROCE_DEF_MAX_RD_ATOM; i++) {
                if (r->ahist[i].valid && r->ahist[i].psn == p->psn) {
                    e.orig = r->ahist[i].orig;
                    rc_rsp_push(s, qp, &e);
                    return true;
                }
            }
            qroce_dp_drop(s, "duplicate atomic without a recorded result");
            return true;
        }
        /* a READ asked again is read again, if it still may be */
        if (!(qp->access_flags & need) || p->paylen ||
            p->reth_len > QROCE_DEF_MAX_MSG ||
            psn_cmp(psn_add(p->psn, rc_read_pkts(qp, p->reth_len)),
                    r->epsn) > 0 ||
            (p->reth_len && qroce_rkey_check(s, qp, p->reth_rkey, &va,
                                             p->reth_len, need, &mr))) {
            qroce_dp_drop(s, "duplicate READ out of range");
            return true;
        }
        rc_rsp_push(s, qp, &e);
        return true;
    }
    if (!(qp->access_flags & need) || p->paylen ||
        rc_rd_atomic_queued(qp) >= MAX(qp->max_dest_rd_atomic, 1) ||
        (read && p->reth_len > QROCE_DEF_MAX_MSG) ||
        (!read && (p->reth_va & 7))) {
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
        return false;
    }
    if (e.len && qroce_rkey_check(s, qp, p->reth_rkey, &va,
                                  read ? p->reth_len : 8, need, &mr)) {
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                      QROCE_EQE_QP_ACCESS_ERR);
        return false;
    }
    /* ODP: every page it reads (or the atomic writes) there first */
    ret = e.len ? qroce_mr_rw(s, mr, va, NULL, read ? p->reth_len : 8,
                              !read, &miss) : 0;
    if (ret == QROCE_RW_FAULT) {
        return rc_resp_fault(s, qp, p->psn, &miss);
    }
    if (!read) {
        if (qroce_mr_rw(s, mr, va, v, 8, false, NULL)) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                          QROCE_EQE_QP_ACCESS_ERR);
            return false;
        }
        orig = ldq_le_p(v);
        if (p->opcode == ROCE_FETCH_ADD) {
            stq_le_p(v, orig + p->atomic_swap_add);
        } else if (orig == p->atomic_compare) {
            stq_le_p(v, p->atomic_swap_add);
        }
        if (ldq_le_p(v) != orig &&
            qroce_mr_rw(s, mr, va, v, 8, true, NULL)) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                          QROCE_EQE_QP_ACCESS_ERR);
            return false;
        }
        e.orig = orig;
        r->ahist[r->ahist_next] = (QRoceRcAtomicHist) {
            .valid = true, .psn = p->psn, .orig = orig,
        };
        r->ahist_next = (r->ahist_next + 1) % QROCE_DEF_MAX_RD_ATOM;
    }
    r->epsn = psn_add(r->epsn, read ? rc_read_pkts(qp, p->reth_len) : 1);
    r->msn++;
    rc_rsp_push(s, qp, &e);
    return true;
}

/*
 * A request out of sequence: a gap gets one sequence NAK, a duplicate
 * READ or atomic is answered again, another duplicate gets an ACK if it
 * asks for one.
 */
static void rc_responder_oos(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                             bool rd_atomic)
{
    QRoceQPXport *r = &qp->xp;

    if (psn_cmp(p->psn, r->epsn) > 0) {
        if (!r->nak_sent) {
            r->nak_sent = true;
            rc_push_ack(s, qp, ROCE_AETH_NAK_SEQ, r->epsn);
        }
    } else if (rd_atomic) {
        qroce_count(s, QROCE_CNT_ROCE_DUP_REQS);
        rc_rd_atomic_rx(s, qp, p, true);
    } else {
        /* the ACK was lost: answer the packets that ask for one */
        qroce_count(s, QROCE_CNT_ROCE_DUP_REQS);
        if (p->ackreq) {
            rc_push_ack(s, qp, ROCE_AETH_ACK_NO_CREDIT,
                        psn_add(r->epsn, 0xffffff));
        }
    }
}

/*
 * Check an in-sequence SEND or WRITE packet against the message in
 * progress and, for the first packet of a WRITE, its RETH (which is then
 * recorded).  False if it was refused: NAKed, the QP in ERR.
 */
static bool rc_responder_check(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                               bool write, bool first, bool last)
{
    QRoceQPXport *r = &qp->xp;
    uint8_t op = p->opcode;

    if ((op > ROCE_WRITE_ONLY_IMM && op != ROCE_SEND_LAST_INV &&
         op != ROCE_SEND_ONLY_INV) ||
        (write && !(qp->access_flags & QROCE_ACCESS_REMOTE_WRITE))) {
        /* not a request opcode; WRITE needs the access */
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
        return false;
    }
    if (first == r->in_msg || (!first && write != r->in_write) ||
        (!last && p->paylen != qp_mtu(qp)) || p->paylen > qp_mtu(qp)) {
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
        return false;
    }
    if (first && write) {
        uint64_t va = p->reth_va;
        QRoceMR *mr;

        if (p->reth_len > QROCE_DEF_MAX_MSG ||
            (last && p->paylen != p->reth_len) ||
            (!last && p->reth_len <= p->paylen)) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn,
                          QROCE_EQE_QP_REQ_ERR);
            return false;
        }
        /* a WRITE of 0 bytes needs no valid rkey (IBA C9-88) */
        if (p->reth_len &&
            qroce_rkey_check(s, qp, p->reth_rkey, &va, p->reth_len,
                             QROCE_ACCESS_REMOTE_WRITE, &mr)) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                          QROCE_EQE_QP_ACCESS_ERR);
            return false;
        }
        r->wr_va = p->reth_va;
        r->wr_rkey = p->reth_rkey;
        r->wr_len = p->reth_len;
    }
    if (write && !first &&
        (last ? r->recv_off + p->paylen != r->wr_len :
                r->recv_off + p->paylen >= r->wr_len)) {
        /* the message is longer or shorter than its RETH said */
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
        return false;
    }
    return true;
}

/*
 * Place the payload of a checked SEND or WRITE packet: into the WRITE's
 * MR or the RECV WQE.  False if that failed: the QP went to ERR.
 */
static bool rc_responder_place(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                               bool write)
{
    QRoceQPXport *r = &qp->xp;
    int st;

    if (write) {
        QRoceOdpMiss miss;

        st = qroce_dp_write_place(s, qp, p, &miss);
        if (st == QROCE_RW_FAULT) {
            rc_resp_fault(s, qp, p->psn, &miss);
            return false;
        }
        if (st) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                          QROCE_EQE_QP_ACCESS_ERR);
            return false;
        }
    } else {
        st = qroce_dp_scatter(s, qp, r->recv_off, p->payload, p->paylen);
        if (st == QROCE_RW_FAULT) {
            /* an ODP page of the RECV WQE is absent: RNR NAK, asked again */
            rc_push_ack(s, qp, ROCE_AETH_RNR | qp->min_rnr_timer, p->psn);
            return false;
        }
    }
    if (st != QROCE_WC_SUCCESS) {
        qroce_dp_recv_cqe(s, qp, QROCE_CQE_RECV, st, r->recv_off, false, 0,
                          false);
        rc_resp_fatal(s, qp, st == QROCE_WC_LOC_LEN_ERR ? ROCE_AETH_NAK_INV :
                      ROCE_AETH_NAK_OP, p->psn, QROCE_EQE_QP_FATAL);
        return false;
    }
    return true;
}

/*
 * The whole of a SEND with Invalidate is placed: invalidate its rkey (a
 * VALID fast-registration MR of the QP's PD, or a type 2 window bound to
 * the QP).  False if that failed: the
 * RECV WQE completed with REM_INV_REQ_ERR, the request NAKed (invalid
 * request), the QP in ERR.
 */
static bool rc_responder_inv(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    const char *why = NULL;
    int st = qroce_key_inv(s, qp, p->ieth, &why);

    trace_qroce_remote_inv(qp->qpn, p->ieth, st);
    if (st == QROCE_WC_SUCCESS) {
        return true;
    }
    trace_qroce_ub_remote_inv(qp->qpn, p->ieth, why ? why : "?");
    qroce_dp_recv_cqe(s, qp, QROCE_CQE_RECV, QROCE_WC_REM_INV_REQ_ERR,
                      qp->xp.recv_off, false, 0, false);
    rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn, QROCE_EQE_QP_REQ_ERR);
    return false;
}

/*
 * x-inject-rnr-nak, x-inject-access-nak: answer the first packet of a new
 * request with an RNR NAK (SEND only) or a remote access NAK.  True if
 * it was answered so.
 */
static bool rc_inject_nak(QRoceState *s, QRoceQP *qp, RocePktIn *p,
                          bool send)
{
    QRoceParams *pa = &s->params;
    bool match = !pa->inj_nak_qpn || pa->inj_nak_qpn == qp->qpn;

    if (send && qroce_inject(s, &pa->inj_rnr_nak, match, "rnr-nak",
                             qp->qpn)) {
        rc_push_ack(s, qp, ROCE_AETH_RNR | qp->min_rnr_timer, p->psn);
        return true;
    }
    if (qroce_inject(s, &pa->inj_access_nak, match, "access-nak",
                     qp->qpn)) {
        rc_resp_fatal(s, qp, ROCE_AETH_NAK_ACCESS, p->psn,
                      QROCE_EQE_QP_ACCESS_ERR);
        return true;
    }
    return false;
}

void qroce_rc_responder_rx(QRoceState *s, QRoceQP *qp, RocePktIn *p)
{
    QRoceQPXport *r = &qp->xp;
    uint8_t op = p->opcode;
    bool rd_atomic = op == ROCE_READ_REQ || op == ROCE_CMP_SWAP ||
                     op == ROCE_FETCH_ADD || op == ROCE_FLUSH ||
                     op == ROCE_ATOMIC_WRITE;
    bool write = op >= ROCE_WRITE_FIRST && op <= ROCE_WRITE_ONLY_IMM;
    bool first = qroce_dp_op_first(op), last = qroce_dp_op_last(op);
    bool needs_wqe = !write || p->has_imm;

    if (p->psn != r->epsn) {
        rc_responder_oos(s, qp, p, rd_atomic);
        return;
    }
    r->nak_sent = false;
    if ((first || rd_atomic) && !r->in_msg &&
        rc_inject_nak(s, qp, p, first && !write && !rd_atomic)) {
        return;
    }
    if (rd_atomic) {
        if (r->in_msg) {
            rc_resp_fatal(s, qp, ROCE_AETH_NAK_INV, p->psn,
                          QROCE_EQE_QP_REQ_ERR);
            return;
        }
        rc_rd_atomic_rx(s, qp, p, false);
        return;
    }
    if (!rc_responder_check(s, qp, p, write, first, last)) {
        return;
    }
    /* a SEND takes its RECV WQE at its first packet, WRITE_IMM at its last */
    if (((first && !write) || (last && needs_wqe)) &&
        !qroce_dp_recv_take(s, qp)) {
        rc_push_ack(s, qp, ROCE_AETH_RNR | qp->min_rnr_timer, p->psn);
        return;
    }
    if (first) {
        r->recv_off = 0;
        r->in_msg = true;
        r->in_write = write;
    }
    if (!rc_responder_place(s, qp, p, write)) {
        if (first) {
            r->in_msg = false;  /* an RNR NAK: the message starts again */
        }
        return;
    }
    r->recv_off += p->paylen;
    r->epsn = psn_add(r->epsn, 1);
    if (last) {
        if (p->has_ieth && !rc_responder_inv(s, qp, p)) {
            return;
        }
        qroce_dp_msg_received(s, qp, p, write);
        r->msn++;
        r->in_msg = false;
    }
    if (p->ackreq) {
        rc_push_ack(s, qp, ROCE_AETH_ACK_NO_CREDIT, p->psn);
    }
}
