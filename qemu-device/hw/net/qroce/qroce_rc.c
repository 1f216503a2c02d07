/*
 * qroce: RoCEv2 transport engine.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qroce.h"

void qroce_rc_init(QRoceState *s)
{
}

void qroce_rc_reset(QRoceState *s)
{
}

void qroce_rc_fini(QRoceState *s)
{
}

void qroce_rc_qp_create(QRoceState *s, QRoceQP *qp)
{
}

/* Complete every posted, unconsumed WQE of @wq with WR_FLUSH_ERR. */
static void qroce_rc_flush_wq(QRoceState *s, QRoceQP *qp, QRoceWQ *wq,
                              bool sq)
{
    QRoceCQ *cq = qroce_cq_get(s, sq ? qp->scqn : qp->rcqn);

    while (wq->ci != wq->pi) {
        struct qroce_cqe cqe = {
            .wqe_index = cpu_to_le32(wq->ci),
            .qpn = cpu_to_le32(qp->qpn),
            .status = QROCE_WC_WR_FLUSH_ERR,
            .flags = sq ? QROCE_CQE_F_SQ : 0,
            .opcode = sq ? QROCE_CQE_SEND : QROCE_CQE_RECV,
        };

        if (cq) {
            qroce_cq_post(s, cq, &cqe, false);
        }
        wq->ci++;
    }
}

void qroce_rc_qp_modify(QRoceState *s, QRoceQP *qp, uint32_t old_state,
                        uint32_t attr_mask)
{
    if (qp->state == QROCE_QPS_ERR) {
        qroce_rc_flush_wq(s, qp, &qp->sq, true);
        qroce_rc_flush_wq(s, qp, &qp->rq, false);
    } else if (qp->state == QROCE_QPS_RESET) {
        qp->sq.pi = qp->sq.ci = 0;
        qp->rq.pi = qp->rq.ci = 0;
        memset(&qp->rc, 0, sizeof(qp->rc));
    }
}

void qroce_rc_qp_destroy(QRoceState *s, QRoceQP *qp)
{
}

void qroce_rc_sq_doorbell(QRoceState *s, QRoceQP *qp)
{
    if (qp->state == QROCE_QPS_ERR) {
        qroce_rc_flush_wq(s, qp, &qp->sq, true);
    }
}

void qroce_rc_rq_doorbell(QRoceState *s, QRoceQP *qp)
{
    if (qp->state == QROCE_QPS_ERR) {
        qroce_rc_flush_wq(s, qp, &qp->rq, false);
    }
}

bool qroce_rc_rx(QRoceState *s, const uint8_t *frame, size_t len)
{
    return false;
}
