/*
 * qroce: rings.  Buffer tables (their guest pages reached through
 * qroce_dma.c, an ODP table through qroce_odp.c), the CQ and EQ rings
 * written body first, owner byte last, and MSI-X interrupts.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "hw/pci/msix.h"
#include "system/dma.h"
#include "qemu/main-loop.h"
#include "qroce_ring.h"
#include "qroce_odp.h"
#include "trace.h"

/*
 * MSI-X @vector.  Without the BQL (the engine in an IOThread) it is left
 * in irq_pending for qroce_irq_flush(), in the main loop.
 */
void qroce_irq(QRoceState *s, unsigned vector)
{
    PCIDevice *d = PCI_DEVICE(s);

    if (!bql_locked()) {
        if (!(qatomic_fetch_or(&s->irq_pending, 1u << vector))) {
            qemu_bh_schedule(s->out_bh);
        }
        return;
    }
    if (msix_enabled(d)) {
        trace_qroce_irq(vector);
        msix_notify(d, vector);
    }
}

/*
 * Main loop, BQL and lock held: the interrupts the engine left from its
 * IOThread (see "Threads" in qroce.h); its frames are the port's.
 */
void qroce_irq_flush(QRoceState *s)
{
    uint32_t irqs, v;

    irqs = qatomic_xchg(&s->irq_pending, 0);
    for (v = 0; irqs; v++, irqs >>= 1) {
        if (irqs & 1) {
            qroce_irq(s, v);
        }
    }
}

void qroce_out_bh(void *opaque)
{
    QRoceState *s = opaque;
    QROCE_LOCKED(s);

    qroce_irq_flush(s);
}

/*
 * Bytes @offset.. of a table on device memory: inside its range, and the
 * range inside the device's memory (checked at REG_MR and after a move,
 * and again here).  What the engine writes is marked dirty for migration.
 */
static int qroce_dm_copy(QRoceState *s, const QRoceBT *bt, uint64_t offset,
                         void *buf, uint64_t len, bool to_guest)
{
    uint64_t size = s->params.dm_size;

    if (!s->dm || offset > bt->dm_len || len > bt->dm_len - offset ||
        bt->dm_off > size || bt->dm_len > size - bt->dm_off) {
        return -1;
    }
    offset += bt->dm_off;
    if (to_guest) {
        memcpy(s->dm + offset, buf, len);
        memory_region_set_dirty(&s->dm_mr, offset, len);
    } else {
        memcpy(buf, s->dm + offset, len);
    }
    return 0;
}

static uint64_t qroce_bt_size(const QRoceBT *bt)
{
    return (uint64_t)bt->npages << bt->page_shift;
}

int qroce_bt_rw(QRoceState *s, const QRoceBT *bt, uint64_t offset, void *buf,
                uint64_t len, bool to_guest)
{
    uint8_t *p = buf;

    if (bt->phys) {
        return qroce_dma_copy(s, offset, buf, len, to_guest) ? 0 : -1;
    }
    if (bt->dm) {
        return qroce_dm_copy(s, bt, offset, buf, len, to_guest);
    }
    if (bt->is_odp) {
        return bt->odp ? qroce_odp_rw(s, bt, offset, buf, len, to_guest,
                                         NULL) : -1;
    }
    if (offset > qroce_bt_size(bt) || len > qroce_bt_size(bt) - offset) {
        return -1;
    }
    while (len) {
        uint64_t psize = 1ULL << bt->page_shift;
        uint64_t in = offset & (psize - 1);
        uint64_t n = MIN(len, psize - in);
        uint64_t pg = offset >> bt->page_shift;
        uint64_t addr = bt->pages[pg] + in;

        /* pages that follow each other in guest memory: one copy */
        while (n < len && bt->pages[pg + 1] == bt->pages[pg] + psize) {
            n = MIN(len, n + psize);
            pg++;
        }
        if (!qroce_dma_copy(s, addr, p, n, to_guest)) {
            return -1;
        }
        p += n;
        offset += n;
        len -= n;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Event queues and CQs                                                */
/* ------------------------------------------------------------------ */

static void qroce_eq_post(QRoceState *s, uint32_t eqn, uint8_t type,
                          uint32_t handle, uint32_t data)
{
    QRoceEQ *eq = &s->eq[eqn];
    struct qroce_eqe e = {};
    uint32_t size = 1u << eq->log2;
    uint64_t off;

    if (!eq->valid) {
        trace_qroce_wrn_eq_missing(eqn, type, handle);
        return;
    }
    if (eq->pi - eq->ci >= size) {
        eq->overflowed = true;
        trace_qroce_wrn_eq_overflow(eqn, type, handle);
        return;
    }
    if (eq->overflowed && eq->pi - eq->ci < size - 1) {
        eq->overflowed = false;
        qroce_eq_post(s, eqn, QROCE_EQE_EQ_OVERFLOW, eqn, 0);
    }
    e.type = type;
    e.handle = cpu_to_le32(handle);
    e.data = cpu_to_le32(data);
    off = (uint64_t)(eq->pi & (size - 1)) * sizeof(e);
    if (qroce_bt_rw(s, &eq->bt, off, &e, sizeof(e) - 1, true) < 0) {
        QROCE_GUEST_ERR(qroce_ub_ring, "%s %u: %s", "EQ", eqn,
                        "ring not writable");
        return;
    }
    e.owner = qroce_owner_for(eq->pi, eq->log2);
    smp_wmb(); /* the EQE body is visible before its owner byte */
    if (qroce_bt_rw(s, &eq->bt, off + sizeof(e) - 1, &e.owner, 1, true)) {
        return;
    }
    trace_qroce_eqe(eqn, eq->pi, type, handle);
    eq->pi++;
    qroce_irq(s, qroce_eq_vector(eqn));
}

void qroce_async_event(QRoceState *s, uint8_t type, uint32_t handle,
                       uint32_t data)
{
    qroce_eq_post(s, QROCE_EQN_ASYNC, type, handle, data);
}

void qroce_cq_post(QRoceState *s, QRoceCQ *cq, struct qroce_cqe *cqe,
                   bool solicited)
{
    uint32_t size = 1u << cq->log2;
    uint64_t off;

    if (cq->error) {
        return;
    }
    if (cq->pi - cq->ci_seen >= size) {
        struct qroce_cq_rec rec;

        if (qroce_bt_rw(s, &cq->bt, (uint64_t)size * sizeof(*cqe),
                        &rec, sizeof(rec.ci), false) == 0) {
            cq->ci_seen = le32_to_cpu(rec.ci);
        }
        if (cq->pi - cq->ci_seen >= size) {
            QROCE_GUEST_ERR(qroce_ub_ring, "%s %u: %s", "CQ", cq->cqn,
                            "overrun");
            cq->error = true;
            qroce_async_event(s, QROCE_EQE_CQ_ERR, cq->cqn, 0);
            return;
        }
    }
    if (cqe->status != QROCE_WC_SUCCESS) {
        qroce_count(s, QROCE_CNT_CQE_ERRS);
    }
    off = (uint64_t)(cq->pi & (size - 1)) * sizeof(*cqe);
    cqe->owner = 0;
    if (qroce_bt_rw(s, &cq->bt, off, cqe, sizeof(*cqe) - 1, true) < 0) {
        QROCE_GUEST_ERR(qroce_ub_ring, "%s %u: %s", "CQ", cq->cqn,
                        "ring not writable");
        cq->error = true;
        qroce_async_event(s, QROCE_EQE_CQ_ERR, cq->cqn, 0);
        return;
    }
    cqe->owner = qroce_owner_for(cq->pi, cq->log2);
    smp_wmb(); /* the CQE body is visible before its owner byte */
    if (qroce_bt_rw(s, &cq->bt, off + sizeof(*cqe) - 1, &cqe->owner, 1,
                    true)) {
        cq->error = true;
        qroce_async_event(s, QROCE_EQE_CQ_ERR, cq->cqn, 0);
        return;
    }
    trace_qroce_cqe(cq->cqn, cq->pi, le32_to_cpu(cqe->qpn),
                    le32_to_cpu(cqe->wqe_index), cqe->opcode, cqe->status,
                    le32_to_cpu(cqe->byte_len));
    cq->pi++;

    if ((cq->arm & QROCE_CQ_ARM_NEXT) ||
        ((cq->arm & QROCE_CQ_ARM_SOLICITED) &&
         (solicited || cqe->status != QROCE_WC_SUCCESS))) {
        cq->arm = 0;
        qroce_eq_post(s, cq->eqn, QROCE_EQE_COMP, cq->cqn, 0);
    }
}

bool qroce_inject(QRoceState *s, uint32_t *n, bool match, const char *what,
                  uint32_t obj)
{
    if (!*n || !match) {
        return false;
    }
    (*n)--;
    qroce_count(s, QROCE_CNT_INJECTED_FAULTS);
    trace_qroce_inject(what, obj, *n);
    return true;
}
