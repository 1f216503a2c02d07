/*
 * qroce: emulated PCIe RoCEv2 RDMA NIC.
 *
 * This file is the PCI function: register file, reset, MSI-X, the Ethernet
 * function, the command queue and the object tables (PD, CQ, QP, MR, SRQ,
 * AH, EQ, GID).  The RoCE transport engine is qroce_rc.c.  The interface is
 * docs/hw-spec.md and include/qroce_hw.h.
 *
 * Every value the guest supplies is checked before use: bad input ends in
 * a command error status, an error CQE, a QP in ERR or a counted drop,
 * logged with LOG_GUEST_ERROR -- never an abort.
 *
 * The device is not migratable (its objects and transport state have no
 * VMState yet).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/iov.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "net/eth.h"
#include "qemu/bswap.h"
#include "system/dma.h"
#include "qroce.h"
#include "trace.h"

#define QROCE_CMD_BUDGET    64      /* commands per bottom-half run */
#define QROCE_CMD_WORK_BUDGET (1u << 16)    /* table pages per run */
#define QROCE_TX_BUDGET     128     /* Ethernet frames per run */

/*
 * How many bytes from @addr are guest RAM the device may access directly
 * (0 if @addr is not): DMA to MMIO, ROM or unassigned space is refused,
 * never bounced.
 */
static uint64_t qroce_dma_ram(QRoceState *s, uint64_t addr, uint64_t len,
                              bool to_guest)
{
    AddressSpace *as = pci_get_address_space(&s->parent_obj);
    MemoryRegion *mr;
    hwaddr xlat, l = len;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(as, addr, &xlat, &l, to_guest,
                                 MEMTXATTRS_UNSPECIFIED);
    if (!memory_region_is_ram(mr) || memory_region_is_ram_device(mr) ||
        (to_guest && mr->readonly)) {
        return 0;
    }
    return l;
}

/*
 * Payload to or from guest memory: map the range (guest RAM is mapped
 * straight) and copy once.  Anything but guest RAM fails: the caller turns
 * that into an error CQE, a command error or FATAL.
 */
static bool qroce_dma_copy(QRoceState *s, uint64_t addr, void *buf,
                           uint64_t len, bool to_guest)
{
    PCIDevice *d = &s->parent_obj;
    DMADirection dir = to_guest ? DMA_DIRECTION_FROM_DEVICE :
                                  DMA_DIRECTION_TO_DEVICE;
    uint8_t *b = buf;

    while (len) {
        dma_addr_t plen = qroce_dma_ram(s, addr, len, to_guest);
        void *p;

        if (!plen || addr + plen < addr) {
            trace_qroce_ub_dma(to_guest ? "write" : "read", addr, len);
            return false;
        }
        p = pci_dma_map(d, addr, &plen, dir);
        if (!p || !plen) {
            if (p) {
                pci_dma_unmap(d, p, plen, dir, 0);
            }
            trace_qroce_ub_dma(to_guest ? "write" : "read", addr, len);
            return false;
        }
        if (to_guest) {
            memcpy(p, b, plen);
        } else {
            memcpy(b, p, plen);
        }
        pci_dma_unmap(d, p, plen, dir, plen);
        addr += plen;
        b += plen;
        len -= plen;
    }
    return true;
}

static inline bool qroce_dma_read(QRoceState *s, uint64_t addr, void *buf,
                                  uint64_t len)
{
    return qroce_dma_copy(s, addr, buf, len, false);
}

static inline bool qroce_dma_write(QRoceState *s, uint64_t addr,
                                   const void *buf, uint64_t len)
{
    return qroce_dma_copy(s, addr, (void *)buf, len, true);
}

static void qroce_irq(QRoceState *s, unsigned vector)
{
    PCIDevice *d = &s->parent_obj;

    if (msix_enabled(d)) {
        trace_qroce_irq(vector);
        msix_notify(d, vector);
    }
}

void qroce_count(QRoceState *s, enum qroce_counter c)
{
    s->cnt[c]++;
}

const uint8_t *qroce_mac(QRoceState *s)
{
    return s->conf.macaddr.a;
}

bool qroce_link_up(QRoceState *s)
{
    NetClientState *nc = qemu_get_queue(s->nic);

    return nc->peer && !nc->link_down;
}

/* ------------------------------------------------------------------ */
/* Buffer tables                                                       */
/* ------------------------------------------------------------------ */

static void qroce_bt_free(QRoceState *s, QRoceBT *bt)
{
    if (bt->pages) {
        s->bt_pages -= bt->npages;
    }
    g_free(bt->pages);
    memset(bt, 0, sizeof(*bt));
}

/*
 * Copy a guest buffer table into @bt.  @inline_pages holds the page list
 * of an INLINE table (REG_MR only).  Returns a QROCE_CMD_* status.
 */
static int qroce_bt_load(QRoceState *s, const struct qroce_bt *gbt,
                         const __le64 *inline_pages, bool allow_inline,
                         bool allow_phys, QRoceBT *bt)
{
    uint64_t addr = le64_to_cpu(gbt->addr);
    uint32_t npages = le32_to_cpu(gbt->npages);
    uint8_t shift = gbt->page_shift;
    uint64_t mask;
    uint32_t i;

    memset(bt, 0, sizeof(*bt));
    if (gbt->rsvd) {
        return QROCE_CMD_ERR_PARAM;
    }
    if (gbt->level == QROCE_BT_PHYS) {
        if (!allow_phys) {
            return QROCE_CMD_ERR_PARAM;
        }
        bt->phys = true;
        return QROCE_CMD_OK;
    }
    if (shift < QROCE_BT_MIN_PAGE_SHIFT || shift > QROCE_BT_MAX_PAGE_SHIFT ||
        npages == 0 || npages > QROCE_BT_MAX_PAGES) {
        return QROCE_CMD_ERR_PARAM;
    }
    mask = (1ULL << shift) - 1;
    if (s->bt_pages + npages > s->max_bt_pages) {
        /* the device's translation memory is full (max-bt-pages) */
        trace_qroce_ub_bt("translation memory full", npages, s->bt_pages);
        return QROCE_CMD_ERR_NORES;
    }
    bt->pages = g_try_new(uint64_t, npages);
    if (!bt->pages) {
        return QROCE_CMD_ERR_NORES;
    }
    s->bt_pages += npages;
    s->bt_work += npages;
    bt->npages = npages;
    bt->page_shift = shift;

    switch (gbt->level) {
    case QROCE_BT_CONTIG:
        if (addr & mask) {
            goto bad;
        }
        for (i = 0; i < npages; i++) {
            bt->pages[i] = addr + ((uint64_t)i << shift);
        }
        break;
    case QROCE_BT_INLINE:
        if (!allow_inline || npages > QROCE_BT_MAX_INLINE || addr) {
            goto bad;
        }
        for (i = 0; i < npages; i++) {
            bt->pages[i] = le64_to_cpu(inline_pages[i]);
        }
        break;
    case QROCE_BT_LIST1:
        if (addr & 7) {
            goto bad;
        }
        if (!qroce_dma_read(s, addr, bt->pages, (uint64_t)npages * 8)) {
            qroce_bt_free(s, bt);
            return QROCE_CMD_ERR_DMA;
        }
        for (i = 0; i < npages; i++) {
            bt->pages[i] = le64_to_cpu(bt->pages[i]);
        }
        break;
    case QROCE_BT_LIST2: {
        uint32_t nl1 = DIV_ROUND_UP(npages, QROCE_BT_L2_ENTRIES);
        g_autofree uint64_t *l1 = g_new(uint64_t, nl1);

        if (addr & 7) {
            goto bad;
        }
        if (!qroce_dma_read(s, addr, l1, (uint64_t)nl1 * 8)) {
            qroce_bt_free(s, bt);
            return QROCE_CMD_ERR_DMA;
        }
        for (i = 0; i < nl1; i++) {
            uint32_t n = MIN(QROCE_BT_L2_ENTRIES,
                             npages - i * QROCE_BT_L2_ENTRIES);
            uint64_t p = le64_to_cpu(l1[i]);

            if ((p & 0xfff) ||
                !qroce_dma_read(s, p, bt->pages + i * QROCE_BT_L2_ENTRIES,
                                (uint64_t)n * 8)) {
                qroce_bt_free(s, bt);
                return QROCE_CMD_ERR_DMA;
            }
        }
        for (i = 0; i < npages; i++) {
            bt->pages[i] = le64_to_cpu(bt->pages[i]);
        }
        break;
    }
    default:
        goto bad;
    }
    for (i = 0; i < npages; i++) {
        if (bt->pages[i] & mask) {
            goto bad;
        }
    }
    return QROCE_CMD_OK;

bad:
    qroce_bt_free(s, bt);
    return QROCE_CMD_ERR_PARAM;
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
/* Objects                                                             */
/* ------------------------------------------------------------------ */

QRoceQP *qroce_qp_get(QRoceState *s, uint32_t qpn)
{
    if (qpn == 0 || qpn >= s->max_qp || !s->qp[qpn].valid) {
        return NULL;
    }
    return &s->qp[qpn];
}

QRoceCQ *qroce_cq_get(QRoceState *s, uint32_t cqn)
{
    if (cqn >= s->max_cq || !s->cq[cqn].valid) {
        return NULL;
    }
    return &s->cq[cqn];
}

QRoceAH *qroce_ah_get(QRoceState *s, uint32_t ahn)
{
    if (ahn >= s->max_ah || !s->ah[ahn].valid) {
        return NULL;
    }
    return &s->ah[ahn];
}

QRoceSRQ *qroce_srq_get(QRoceState *s, uint32_t srqn)
{
    if (srqn >= s->max_srq || !s->srq[srqn].valid) {
        return NULL;
    }
    return &s->srq[srqn];
}

QRoceWQ *qroce_qp_recv_wq(QRoceState *s, QRoceQP *qp, QRoceSRQ **srq)
{
    QRoceSRQ *q = NULL;

    if (qp->flags & QROCE_CREATE_QP_SRQ) {
        q = qroce_srq_get(s, qp->srqn);
    }
    if (srq) {
        *srq = q;
    }
    return q ? &q->wq : &qp->rq;
}

void qroce_srq_consumed(QRoceState *s, QRoceSRQ *srq)
{
    if (srq->limit && srq->wq.pi - srq->wq.ci < srq->limit) {
        srq->limit = 0;         /* one event per arming (MODIFY_SRQ) */
        qroce_async_event(s, QROCE_EQE_SRQ_LIMIT, srq->srqn, 0);
    }
}

static QRocePD *qroce_pd_get(QRoceState *s, uint32_t pdn)
{
    if (pdn >= s->max_pd || !s->pd[pdn].valid) {
        return NULL;
    }
    return &s->pd[pdn];
}

static QRoceMR *qroce_mr_get(QRoceState *s, uint32_t key)
{
    uint32_t idx = key >> QROCE_MR_KEY_INDEX_SHIFT;

    if (idx >= s->max_mr || !s->mr[idx].valid || s->mr[idx].key != key) {
        return NULL;
    }
    return &s->mr[idx];
}

int qroce_mr_check(QRoceState *s, uint32_t key, uint32_t pdn, uint64_t va,
                   uint64_t len, uint32_t need_access, QRoceMR **out)
{
    QRoceMR *mr = qroce_mr_get(s, key);

    *out = mr;
    if (!mr || mr->pdn != pdn) {
        return QROCE_WC_LOC_PROT_ERR;
    }
    if ((mr->access & need_access) != need_access) {
        return QROCE_WC_LOC_PROT_ERR;
    }
    if (len == 0 || mr->bt.phys) {
        return QROCE_WC_SUCCESS;
    }
    if (va < mr->iova || va - mr->iova > mr->length ||
        len > mr->length - (va - mr->iova)) {
        return QROCE_WC_LOC_PROT_ERR;
    }
    return QROCE_WC_SUCCESS;
}

int qroce_mr_rw(QRoceState *s, QRoceMR *mr, uint64_t va, void *buf,
                uint64_t len, bool to_guest)
{
    if (mr->bt.phys) {
        return qroce_bt_rw(s, &mr->bt, va, buf, len, to_guest);
    }
    return qroce_bt_rw(s, &mr->bt, va - mr->iova + mr->first_page_offset,
                       buf, len, to_guest);
}

bool qroce_gid_get(QRoceState *s, unsigned idx, uint8_t gid[16])
{
    if (idx >= QROCE_DEF_MAX_GID || !s->gid[idx].valid) {
        return false;
    }
    memcpy(gid, s->gid[idx].gid, 16);
    return true;
}

int qroce_gid_find(QRoceState *s, const uint8_t gid[16])
{
    int i;

    for (i = 0; i < QROCE_DEF_MAX_GID; i++) {
        if (s->gid[i].valid && !memcmp(s->gid[i].gid, gid, 16)) {
            return i;
        }
    }
    return -1;
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
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: EQ %u ring not writable\n",
                      eqn);
        return;
    }
    e.owner = qroce_owner_for(eq->pi, eq->log2);
    smp_wmb(); /* the EQE body is visible before its owner byte */
    if (qroce_bt_rw(s, &eq->bt, off + sizeof(e) - 1, &e.owner, 1, true)) {
        return;
    }
    trace_qroce_eqe(eqn, eq->pi, type, handle);
    eq->pi++;
    qroce_irq(s, QROCE_EQ_VECTOR(eqn));
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
            qemu_log_mask(LOG_GUEST_ERROR, "qroce: CQ %u overrun\n", cq->cqn);
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
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: CQ %u ring not writable\n",
                      cq->cqn);
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

/* Move a QP to ERR on the device's own initiative. */
void qroce_qp_set_error(QRoceState *s, QRoceQP *qp, uint8_t event)
{
    uint32_t old = qp->state;

    if (old == QROCE_QPS_ERR || old == QROCE_QPS_RESET) {
        return;
    }
    qp->state = QROCE_QPS_ERR;
    if (event) {
        qroce_async_event(s, event, qp->qpn, 0);
    }
    qroce_rc_qp_modify(s, qp, old, QROCE_QP_ATTR_STATE);
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */
/* ------------------------------------------------------------------ */

typedef int (*QRoceCmdFn)(QRoceState *s, const struct qroce_cmd *c,
                          uint32_t *out);

static bool qroce_mbz(const uint8_t *p, size_t n)
{
    while (n--) {
        if (*p++) {
            return false;
        }
    }
    return true;
}

/* Does table @gbt hold exactly the pages of @bytes from offset @fpo? */
static bool qroce_bt_exact(const struct qroce_bt *gbt, uint64_t fpo,
                           uint64_t bytes)
{
    uint8_t shift = gbt->page_shift;

    if (gbt->level == QROCE_BT_PHYS) {
        return true;
    }
    if (shift < QROCE_BT_MIN_PAGE_SHIFT || shift > QROCE_BT_MAX_PAGE_SHIFT) {
        return false;       /* qroce_bt_load() says why */
    }
    if (bytes > ((uint64_t)QROCE_BT_MAX_PAGES << shift) ||
        fpo >= (1ULL << shift) ||
        le32_to_cpu(gbt->npages) !=
        MAX(1, DIV_ROUND_UP(fpo + bytes, 1ULL << shift))) {
        trace_qroce_ub_bt("table does not match its object",
                          le32_to_cpu(gbt->npages), bytes);
        return false;
    }
    return true;
}

static int qroce_ring_bt(QRoceState *s, const struct qroce_bt *gbt,
                         uint64_t bytes, QRoceBT *bt)
{
    /* exactly the pages the ring needs: no more, no less */
    if (!qroce_bt_exact(gbt, 0, bytes)) {
        memset(bt, 0, sizeof(*bt));
        return QROCE_CMD_ERR_PARAM;
    }
    return qroce_bt_load(s, gbt, NULL, false, false, bt);
}

static int qroce_cmd_nop(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    return QROCE_CMD_OK;
}

static int qroce_cmd_create_eq(QRoceState *s, const struct qroce_cmd *c,
                               uint32_t *out)
{
    const struct qroce_cmd_create_eq *p = &c->create_eq;
    uint32_t eqn = le32_to_cpu(p->eqn);
    QRoceEQ *eq;
    int st;

    if (eqn >= QROCE_NUM_EQS || p->log2_entries < QROCE_EQ_MIN_LOG2 ||
        p->log2_entries > QROCE_EQ_MAX_LOG2 ||
        !qroce_mbz(p->rsvd, sizeof(p->rsvd))) {
        return QROCE_CMD_ERR_PARAM;
    }
    eq = &s->eq[eqn];
    if (eq->valid) {
        return QROCE_CMD_ERR_BUSY;
    }
    st = qroce_ring_bt(s, &p->ring, (uint64_t)sizeof(struct qroce_eqe)
                       << p->log2_entries, &eq->bt);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    eq->log2 = p->log2_entries;
    eq->pi = eq->ci = 0;
    eq->overflowed = false;
    eq->valid = true;
    return QROCE_CMD_OK;
}

static int qroce_cmd_destroy_eq(QRoceState *s, const struct qroce_cmd *c,
                                uint32_t *out)
{
    uint32_t eqn = le32_to_cpu(c->handle.handle);
    uint32_t i;

    if (eqn >= QROCE_NUM_EQS || !s->eq[eqn].valid) {
        return QROCE_CMD_ERR_HANDLE;
    }
    for (i = 0; i < s->max_cq; i++) {
        if (s->cq[i].valid && s->cq[i].eqn == eqn) {
            return QROCE_CMD_ERR_BUSY;
        }
    }
    qroce_bt_free(s, &s->eq[eqn].bt);
    memset(&s->eq[eqn], 0, sizeof(s->eq[eqn]));
    return QROCE_CMD_OK;
}

static int qroce_cmd_alloc_pd(QRoceState *s, const struct qroce_cmd *c,
                              uint32_t *out)
{
    uint32_t i;

    for (i = 1; i < s->max_pd; i++) {
        if (!s->pd[i].valid) {
            s->pd[i].valid = true;
            s->pd[i].refs = 0;
            out[0] = i;
            return QROCE_CMD_OK;
        }
    }
    return QROCE_CMD_ERR_NORES;
}

static int qroce_cmd_dealloc_pd(QRoceState *s, const struct qroce_cmd *c,
                                uint32_t *out)
{
    QRocePD *pd = qroce_pd_get(s, le32_to_cpu(c->handle.handle));

    if (!pd) {
        return QROCE_CMD_ERR_HANDLE;
    }
    if (pd->refs) {
        return QROCE_CMD_ERR_BUSY;
    }
    pd->valid = false;
    return QROCE_CMD_OK;
}

static int qroce_cmd_create_cq(QRoceState *s, const struct qroce_cmd *c,
                               uint32_t *out)
{
    const struct qroce_cmd_create_cq *p = &c->create_cq;
    uint32_t eqn = le32_to_cpu(p->eqn);
    uint32_t uar = le32_to_cpu(p->uar);
    QRoceCQ *cq = NULL;
    uint32_t i;
    int st;

    if (eqn == QROCE_EQN_ASYNC || eqn >= QROCE_NUM_EQS ||
        uar >= QROCE_DB_PAGES || p->log2_entries < 1 ||
        p->log2_entries > QROCE_CQ_MAX_LOG2 ||
        !qroce_mbz(p->rsvd, sizeof(p->rsvd))) {
        return QROCE_CMD_ERR_PARAM;
    }
    if (!s->eq[eqn].valid) {
        return QROCE_CMD_ERR_HANDLE;
    }
    for (i = 1; i < s->max_cq; i++) {
        if (!s->cq[i].valid) {
            cq = &s->cq[i];
            break;
        }
    }
    if (!cq) {
        return QROCE_CMD_ERR_NORES;
    }
    memset(cq, 0, sizeof(*cq));
    st = qroce_ring_bt(s, &p->ring, ((uint64_t)sizeof(struct qroce_cqe)
                       << p->log2_entries) + sizeof(struct qroce_cq_rec),
                       &cq->bt);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    cq->cqn = i;
    cq->uar = uar;
    cq->eqn = eqn;
    cq->log2 = p->log2_entries;
    cq->valid = true;
    out[0] = i;
    return QROCE_CMD_OK;
}

static int qroce_cmd_destroy_cq(QRoceState *s, const struct qroce_cmd *c,
                                uint32_t *out)
{
    QRoceCQ *cq = qroce_cq_get(s, le32_to_cpu(c->handle.handle));

    if (!cq) {
        return QROCE_CMD_ERR_HANDLE;
    }
    if (cq->refs) {
        return QROCE_CMD_ERR_BUSY;
    }
    qroce_bt_free(s, &cq->bt);
    memset(cq, 0, sizeof(*cq));
    return QROCE_CMD_OK;
}

static int qroce_wq_load(QRoceState *s, const struct qroce_bt *gbt,
                         uint8_t log2, uint8_t shift, uint8_t min_shift,
                         uint8_t max_shift, QRoceWQ *wq)
{
    memset(wq, 0, sizeof(*wq));
    if (log2 > QROCE_WQ_MAX_LOG2 || shift < min_shift || shift > max_shift) {
        return QROCE_CMD_ERR_PARAM;
    }
    wq->log2 = log2;
    wq->wqe_shift = shift;
    return qroce_ring_bt(s, gbt, 1ULL << (log2 + shift), &wq->bt);
}

static int qroce_cmd_create_qp(QRoceState *s, const struct qroce_cmd *c,
                               uint32_t *out)
{
    const struct qroce_cmd_create_qp *p = &c->create_qp;
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t uar = le32_to_cpu(p->uar);
    QRoceCQ *scq = qroce_cq_get(s, le32_to_cpu(p->send_cqn));
    QRoceCQ *rcq = qroce_cq_get(s, le32_to_cpu(p->recv_cqn));
    QRocePD *pd = qroce_pd_get(s, pdn);
    bool use_srq = p->flags & QROCE_CREATE_QP_SRQ;
    QRoceSRQ *srq = NULL;
    QRoceQP *qp = NULL;
    uint32_t qpn, i;
    int st;

    if (p->type > QROCE_QPT_GSI || uar >= QROCE_DB_PAGES ||
        (p->flags & ~(QROCE_CREATE_QP_SIG_ALL | QROCE_CREATE_QP_SRQ)) ||
        !qroce_mbz(p->rsvd, sizeof(p->rsvd)) || (!use_srq && p->srqn)) {
        return QROCE_CMD_ERR_PARAM;
    }
    if (use_srq) {
        /* RC/UC/UD only; the QP has no RQ of its own */
        if (p->type == QROCE_QPT_GSI || p->rq_log2_entries ||
            p->rq.addr || p->rq.npages || p->rq.level || p->rq.rsvd) {
            return QROCE_CMD_ERR_PARAM;
        }
        srq = qroce_srq_get(s, le32_to_cpu(p->srqn));
        if (!srq) {
            return QROCE_CMD_ERR_HANDLE;
        }
    }
    if (!pd || !scq || !rcq) {
        return QROCE_CMD_ERR_HANDLE;
    }
    if (p->type == QROCE_QPT_GSI) {
        if (s->qp[1].valid) {
            return QROCE_CMD_ERR_BUSY;
        }
        qpn = 1;
    } else {
        /* the next free QPN after the last one given: reused late */
        for (qpn = 0, i = 0; i < s->max_qp - 2; i++) {
            uint32_t n = 2 + (s->next_qpn - 2 + i) % (s->max_qp - 2);

            if (!s->qp[n].valid) {
                qpn = n;
                break;
            }
        }
        if (!qpn) {
            return QROCE_CMD_ERR_NORES;
        }
        s->next_qpn = qpn + 1 < s->max_qp ? qpn + 1 : 2;
    }
    qp = &s->qp[qpn];
    memset(qp, 0, sizeof(*qp));
    st = qroce_wq_load(s, &p->sq, p->sq_log2_entries, p->sq_wqe_shift,
                       QROCE_SQ_WQE_MIN_SHIFT, QROCE_SQ_WQE_MAX_SHIFT, &qp->sq);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    if (!srq) {
        st = qroce_wq_load(s, &p->rq, p->rq_log2_entries, p->rq_wqe_shift,
                           QROCE_RQ_WQE_MIN_SHIFT, QROCE_RQ_WQE_MAX_SHIFT,
                           &qp->rq);
        if (st != QROCE_CMD_OK) {
            qroce_bt_free(s, &qp->sq.bt);
            return st;
        }
    }
    qp->qpn = qpn;
    qp->pdn = pdn;
    qp->type = p->type;
    qp->uar = uar;
    qp->flags = p->flags;
    qp->scqn = scq->cqn;
    qp->rcqn = rcq->cqn;
    qp->state = QROCE_QPS_RESET;
    qp->valid = true;
    pd->refs++;
    scq->refs++;
    rcq->refs++;
    if (srq) {
        qp->srqn = srq->srqn;
        srq->refs++;
    }
    qroce_rc_qp_create(s, qp);
    out[0] = qpn;
    return QROCE_CMD_OK;
}

#define A(x) QROCE_QP_ATTR_##x
#define T_RC QROCE_QPT_RC
#define T_UC QROCE_QPT_UC
#define T_UD QROCE_QPT_UD
#define T_GSI QROCE_QPT_GSI
typedef struct QRoceQpTrans {
    bool valid;
    uint32_t req[QROCE_QPT_GSI + 1], opt[QROCE_QPT_GSI + 1];  /* by type */
} QRoceQpTrans;

/*
 * The IB QP state machine: the valid transitions and, per QP type, the
 * attributes each one requires and the ones it allows -- the table of the
 * kernel's ib_modify_qp_is_ok() for the types this device has.  Note that
 * RESET -> ERR is not a valid transition; every other state may go to
 * RESET or ERR, with no attribute but the state.
 */
static const QRoceQpTrans
qroce_qp_trans[QROCE_QPS_ERR + 1][QROCE_QPS_ERR + 1] = {
    [QROCE_QPS_RESET] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_INIT] = { .valid = true,
            .req = {
                [T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
                [T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [T_GSI] = A(PKEY_INDEX) | A(QKEY),
            } },
    },
    [QROCE_QPS_INIT] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
        [QROCE_QPS_INIT] = { .valid = true,
            .opt = {
                [T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
                [T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [T_GSI] = A(PKEY_INDEX) | A(QKEY),
            } },
        [QROCE_QPS_RTR] = { .valid = true,
            .req = {
                [T_UC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
                [T_RC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
                       A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
            },
            .opt = {
                [T_UD] = A(PKEY_INDEX) | A(QKEY),
                [T_UC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
                [T_RC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
                [T_GSI] = A(PKEY_INDEX) | A(QKEY),
            } },
    },
    [QROCE_QPS_RTR] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
        [QROCE_QPS_RTS] = { .valid = true,
            .req = {
                [T_UD] = A(SQ_PSN),
                [T_UC] = A(SQ_PSN),
                [T_RC] = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) |
                       A(MAX_QP_RD_ATOMIC),
                [T_GSI] = A(SQ_PSN),
            },
            .opt = {
                [T_UD] = A(CUR_STATE) | A(QKEY),
                [T_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                       A(PATH_MIG_STATE),
                [T_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                       A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
                [T_GSI] = A(CUR_STATE) | A(QKEY),
            } },
    },
    [QROCE_QPS_RTS] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
        [QROCE_QPS_RTS] = { .valid = true,
            .opt = {
                [T_UD] = A(CUR_STATE) | A(QKEY),
                [T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) |
                       A(PATH_MIG_STATE),
                [T_RC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) |
                       A(PATH_MIG_STATE) | A(MIN_RNR_TIMER),
                [T_GSI] = A(CUR_STATE) | A(QKEY),
            } },
        [QROCE_QPS_SQD] = { .valid = true,
            .opt = {
                [T_UD] = A(EN_SQD_ASYNC),
                [T_UC] = A(EN_SQD_ASYNC),
                [T_RC] = A(EN_SQD_ASYNC),
                [T_GSI] = A(EN_SQD_ASYNC),
            } },
    },
    [QROCE_QPS_SQD] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
        [QROCE_QPS_RTS] = { .valid = true,
            .opt = {
                [T_UD] = A(CUR_STATE) | A(QKEY),
                [T_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                       A(PATH_MIG_STATE),
                [T_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                       A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
                [T_GSI] = A(CUR_STATE) | A(QKEY),
            } },
        [QROCE_QPS_SQD] = { .valid = true,
            .opt = {
                [T_UD] = A(PKEY_INDEX) | A(QKEY),
                [T_UC] = A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                       A(PKEY_INDEX) | A(PATH_MIG_STATE),
                [T_RC] = A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) |
                       A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) |
                       A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) |
                       A(ACCESS_FLAGS) | A(PKEY_INDEX) | A(MIN_RNR_TIMER) |
                       A(PATH_MIG_STATE),
                [T_GSI] = A(PKEY_INDEX) | A(QKEY),
            } },
    },
    [QROCE_QPS_SQE] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
        [QROCE_QPS_RTS] = { .valid = true,
            .opt = {
                [T_UD] = A(CUR_STATE) | A(QKEY),
                [T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS),
                [T_GSI] = A(CUR_STATE) | A(QKEY),
            } },
    },
    [QROCE_QPS_ERR] = {
        [QROCE_QPS_RESET] = { .valid = true },
        [QROCE_QPS_ERR] = { .valid = true },
    },
};

static bool qroce_qp_trans_ok(uint32_t type, uint32_t cur, uint32_t next,
                              uint32_t mask)
{
    const QRoceQpTrans *t;
    uint32_t req, opt;

    if (type > QROCE_QPT_GSI || cur > QROCE_QPS_ERR || next > QROCE_QPS_ERR) {
        return false;
    }
    if ((mask & A(CUR_STATE)) && cur != QROCE_QPS_RTR &&
        cur != QROCE_QPS_RTS && cur != QROCE_QPS_SQD &&
        cur != QROCE_QPS_SQE) {
        return false;
    }
    t = &qroce_qp_trans[cur][next];
    if (!t->valid) {
        return false;
    }
    req = t->req[type];
    opt = t->opt[type];
    if ((mask & req) != req) {
        return false;
    }
    return !(mask & ~(req | opt | A(STATE)));
}
#undef T_RC
#undef T_UC
#undef T_UD
#undef T_GSI
#undef A

static int qroce_cmd_modify_qp(QRoceState *s, const struct qroce_cmd *c,
                               uint32_t *out)
{
    const struct qroce_cmd_modify_qp *p = &c->modify_qp;
    QRoceQP *qp = qroce_qp_get(s, le32_to_cpu(p->qpn));
    uint32_t mask = le32_to_cpu(p->attr_mask);
    uint32_t cur, next;
    uint8_t gid[16];

    if (!qp) {
        return QROCE_CMD_ERR_HANDLE;
    }
    if ((mask & ~((QROCE_QP_ATTR_DEST_QPN << 1) - 1)) ||
        !qroce_mbz(p->rsvd0, sizeof(p->rsvd0)) || p->rsvd1) {
        return QROCE_CMD_ERR_PARAM;
    }
    cur = qp->state;
    if (mask & QROCE_QP_ATTR_CUR_STATE) {
        if (p->cur_state > QROCE_QPS_ERR) {
            return QROCE_CMD_ERR_PARAM;
        }
        if (p->cur_state != cur) {
            return QROCE_CMD_ERR_STATE;
        }
    }
    next = (mask & QROCE_QP_ATTR_STATE) ? p->new_state : cur;
    if (next > QROCE_QPS_ERR) {
        return QROCE_CMD_ERR_PARAM;
    }
    if (!qroce_qp_trans_ok(qp->type, cur, next, mask)) {
        return QROCE_CMD_ERR_STATE;
    }
    /* Check every value before changing anything. */
    if (((mask & QROCE_QP_ATTR_PATH_MTU) &&
         (p->path_mtu < QROCE_MTU_256 || p->path_mtu > QROCE_MTU_4096)) ||
        ((mask & QROCE_QP_ATTR_RETRY_CNT) && p->retry_cnt > 7) ||
        ((mask & QROCE_QP_ATTR_RNR_RETRY) && p->rnr_retry > 7) ||
        ((mask & QROCE_QP_ATTR_MIN_RNR_TIMER) && p->min_rnr_timer > 31) ||
        ((mask & QROCE_QP_ATTR_TIMEOUT) && p->timeout > 31) ||
        ((mask & QROCE_QP_ATTR_MAX_QP_RD_ATOMIC) &&
         p->max_rd_atomic > QROCE_DEF_MAX_RD_ATOM) ||
        ((mask & QROCE_QP_ATTR_MAX_DEST_RD_ATOMIC) &&
         p->max_dest_rd_atomic > QROCE_DEF_MAX_RD_ATOM) ||
        ((mask & QROCE_QP_ATTR_ACCESS_FLAGS) &&
         (le32_to_cpu(p->access_flags) & ~QROCE_ACCESS_MASK)) ||
        ((mask & QROCE_QP_ATTR_SQ_PSN) && (le32_to_cpu(p->sq_psn) >> 24)) ||
        ((mask & QROCE_QP_ATTR_RQ_PSN) && (le32_to_cpu(p->rq_psn) >> 24)) ||
        ((mask & QROCE_QP_ATTR_DEST_QPN) &&
         (le32_to_cpu(p->dest_qpn) >> 24))) {
        return QROCE_CMD_ERR_PARAM;
    }
    if (mask & QROCE_QP_ATTR_AV) {
        if ((p->av.net_type != QROCE_NET_IPV4 &&
             p->av.net_type != QROCE_NET_IPV6) || p->av.rsvd ||
            !qroce_gid_get(s, p->av.sgid_index, gid)) {
            return QROCE_CMD_ERR_PARAM;
        }
    }

    if (mask & QROCE_QP_ATTR_PATH_MTU) {
        qp->path_mtu = p->path_mtu;
    }
    if (mask & QROCE_QP_ATTR_TIMEOUT) {
        qp->timeout = p->timeout;
    }
    if (mask & QROCE_QP_ATTR_RETRY_CNT) {
        qp->retry_cnt = p->retry_cnt;
    }
    if (mask & QROCE_QP_ATTR_RNR_RETRY) {
        qp->rnr_retry = p->rnr_retry;
    }
    if (mask & QROCE_QP_ATTR_MIN_RNR_TIMER) {
        qp->min_rnr_timer = p->min_rnr_timer;
    }
    if (mask & QROCE_QP_ATTR_MAX_QP_RD_ATOMIC) {
        qp->max_rd_atomic = p->max_rd_atomic;
    }
    if (mask & QROCE_QP_ATTR_MAX_DEST_RD_ATOMIC) {
        qp->max_dest_rd_atomic = p->max_dest_rd_atomic;
    }
    if (mask & QROCE_QP_ATTR_ACCESS_FLAGS) {
        qp->access_flags = le32_to_cpu(p->access_flags);
    }
    if (mask & QROCE_QP_ATTR_QKEY) {
        qp->qkey = le32_to_cpu(p->qkey);
    }
    if (mask & QROCE_QP_ATTR_SQ_PSN) {
        qp->sq_psn = le32_to_cpu(p->sq_psn);
    }
    if (mask & QROCE_QP_ATTR_RQ_PSN) {
        qp->rq_psn = le32_to_cpu(p->rq_psn);
    }
    if (mask & QROCE_QP_ATTR_DEST_QPN) {
        qp->dest_qpn = le32_to_cpu(p->dest_qpn);
    }
    if (mask & QROCE_QP_ATTR_AV) {
        memcpy(qp->av.dgid, p->av.dgid, 16);
        memcpy(qp->av.dmac, p->av.dmac, 6);
        qp->av.sgid_index = p->av.sgid_index;
        qp->av.hop_limit = p->av.hop_limit;
        qp->av.traffic_class = p->av.traffic_class;
        qp->av.net_type = p->av.net_type;
        qp->av.flow_label = le32_to_cpu(p->av.flow_label) & 0xfffff;
    }
    qp->state = next;
    trace_qroce_qp_state(qp->qpn, cur, next, mask);
    qroce_rc_qp_modify(s, qp, cur, mask);
    return QROCE_CMD_OK;
}

static int qroce_cmd_query_qp(QRoceState *s, const struct qroce_cmd *c,
                              uint32_t *out)
{
    QRoceQP *qp = qroce_qp_get(s, le32_to_cpu(c->qpn.qpn));

    if (!qp) {
        return QROCE_CMD_ERR_HANDLE;
    }
    out[0] = qp->state;
    out[1] = qp->rc.npsn;
    out[2] = qp->rc.epsn;
    out[3] = qp->sq.ci;
    out[4] = qp->rq.ci;
    return QROCE_CMD_OK;
}

static void qroce_qp_free(QRoceState *s, QRoceQP *qp)
{
    qroce_rc_qp_destroy(s, qp);
    qroce_bt_free(s, &qp->sq.bt);
    qroce_bt_free(s, &qp->rq.bt);
    s->pd[qp->pdn].refs--;
    s->cq[qp->scqn].refs--;
    s->cq[qp->rcqn].refs--;
    if (qp->flags & QROCE_CREATE_QP_SRQ) {
        s->srq[qp->srqn].refs--;
    }
    memset(qp, 0, sizeof(*qp));
}

static int qroce_cmd_destroy_qp(QRoceState *s, const struct qroce_cmd *c,
                                uint32_t *out)
{
    QRoceQP *qp = qroce_qp_get(s, le32_to_cpu(c->qpn.qpn));

    if (!qp) {
        return QROCE_CMD_ERR_HANDLE;
    }
    qroce_qp_free(s, qp);
    return QROCE_CMD_OK;
}

static int qroce_cmd_reg_mr(QRoceState *s, const struct qroce_cmd *c,
                            uint32_t *out)
{
    const struct qroce_cmd_reg_mr *p = &c->reg_mr;
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t access = le32_to_cpu(p->access);
    uint64_t iova = le64_to_cpu(p->iova);
    uint64_t length = le64_to_cpu(p->length);
    uint32_t fpo = le32_to_cpu(p->first_page_offset);
    QRocePD *pd = qroce_pd_get(s, pdn);
    QRoceMR *mr = NULL;
    uint32_t i = 0, n;
    int st;

    if ((access & ~QROCE_ACCESS_MASK) || p->rsvd ||
        iova + length < iova) {
        return QROCE_CMD_ERR_PARAM;
    }
    if (!pd) {
        return QROCE_CMD_ERR_HANDLE;
    }
    /* the next free slot after the last one given: a key comes back late */
    for (n = 0; n < s->max_mr - 1; n++) {
        i = 1 + (s->next_mr - 1 + n) % (s->max_mr - 1);
        if (!s->mr[i].valid) {
            mr = &s->mr[i];
            break;
        }
    }
    if (!mr) {
        return QROCE_CMD_ERR_NORES;
    }
    s->next_mr = i + 1 < s->max_mr ? i + 1 : 1;
    if (!qroce_bt_exact(&p->pages, fpo, length)) {
        return QROCE_CMD_ERR_PARAM;     /* the table covers exactly the MR */
    }
    st = qroce_bt_load(s, &p->pages, p->inline_pages, true, true, &mr->bt);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    if (mr->bt.phys) {
        if (access & ~QROCE_ACCESS_LOCAL_WRITE) {
            qroce_bt_free(s, &mr->bt);
            return QROCE_CMD_ERR_PARAM;
        }
    }
    mr->variant++;
    mr->key = (i << QROCE_MR_KEY_INDEX_SHIFT) | mr->variant;
    mr->pdn = pdn;
    mr->access = access;
    mr->iova = iova;
    mr->length = length;
    mr->first_page_offset = fpo;
    mr->valid = true;
    pd->refs++;
    out[0] = mr->key;
    return QROCE_CMD_OK;
}

static int qroce_cmd_dereg_mr(QRoceState *s, const struct qroce_cmd *c,
                              uint32_t *out)
{
    QRoceMR *mr = qroce_mr_get(s, le32_to_cpu(c->key.key));
    uint8_t variant;

    if (!mr) {
        return QROCE_CMD_ERR_HANDLE;
    }
    s->pd[mr->pdn].refs--;
    qroce_bt_free(s, &mr->bt);
    variant = mr->variant;
    memset(mr, 0, sizeof(*mr));
    mr->variant = variant;
    return QROCE_CMD_OK;
}

static int qroce_cmd_create_ah(QRoceState *s, const struct qroce_cmd *c,
                               uint32_t *out)
{
    const struct qroce_cmd_create_ah *p = &c->create_ah;
    uint32_t pdn = le32_to_cpu(p->pdn);
    QRocePD *pd = qroce_pd_get(s, pdn);
    uint8_t gid[16];
    uint32_t i;

    if (p->rsvd || p->av.rsvd ||
        (p->av.net_type != QROCE_NET_IPV4 &&
         p->av.net_type != QROCE_NET_IPV6)) {
        return QROCE_CMD_ERR_PARAM;
    }
    if (!pd) {
        return QROCE_CMD_ERR_HANDLE;
    }
    if (!qroce_gid_get(s, p->av.sgid_index, gid)) {
        return QROCE_CMD_ERR_PARAM;
    }
    for (i = 1; i < s->max_ah; i++) {
        if (!s->ah[i].valid) {
            QRoceAH *ah = &s->ah[i];

            memcpy(ah->av.dgid, p->av.dgid, 16);
            memcpy(ah->av.dmac, p->av.dmac, 6);
            ah->av.sgid_index = p->av.sgid_index;
            ah->av.hop_limit = p->av.hop_limit;
            ah->av.traffic_class = p->av.traffic_class;
            ah->av.net_type = p->av.net_type;
            ah->av.flow_label = le32_to_cpu(p->av.flow_label) & 0xfffff;
            ah->pdn = pdn;
            ah->valid = true;
            pd->refs++;
            out[0] = i;
            return QROCE_CMD_OK;
        }
    }
    return QROCE_CMD_ERR_NORES;
}

static int qroce_cmd_destroy_ah(QRoceState *s, const struct qroce_cmd *c,
                                uint32_t *out)
{
    QRoceAH *ah = qroce_ah_get(s, le32_to_cpu(c->handle.handle));

    if (!ah) {
        return QROCE_CMD_ERR_HANDLE;
    }
    s->pd[ah->pdn].refs--;
    memset(ah, 0, sizeof(*ah));
    return QROCE_CMD_OK;
}

static int qroce_cmd_create_srq(QRoceState *s, const struct qroce_cmd *c,
                                uint32_t *out)
{
    const struct qroce_cmd_create_srq *p = &c->create_srq;
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t uar = le32_to_cpu(p->uar);
    uint32_t limit = le32_to_cpu(p->limit);
    QRocePD *pd = qroce_pd_get(s, pdn);
    QRoceSRQ *srq = NULL;
    uint32_t i;
    int st;

    /* cqn is for XRC SRQs, which this device does not have: MBZ */
    if (uar >= QROCE_DB_PAGES || p->cqn || p->rsvd || p->rsvd1 ||
        p->log2_entries < 1 || p->log2_entries > QROCE_WQ_MAX_LOG2 ||
        limit >= (1u << p->log2_entries)) {
        return QROCE_CMD_ERR_PARAM;
    }
    if (!pd) {
        return QROCE_CMD_ERR_HANDLE;
    }
    for (i = 1; i < s->max_srq; i++) {
        if (!s->srq[i].valid) {
            srq = &s->srq[i];
            break;
        }
    }
    if (!srq) {
        return QROCE_CMD_ERR_NORES;
    }
    memset(srq, 0, sizeof(*srq));
    st = qroce_wq_load(s, &p->ring, p->log2_entries, p->wqe_shift,
                       QROCE_RQ_WQE_MIN_SHIFT, QROCE_RQ_WQE_MAX_SHIFT,
                       &srq->wq);
    if (st != QROCE_CMD_OK) {
        return st;
    }
    srq->srqn = i;
    srq->pdn = pdn;
    srq->uar = uar;
    srq->limit = limit;
    srq->valid = true;
    pd->refs++;
    out[0] = i;
    return QROCE_CMD_OK;
}

static int qroce_cmd_modify_srq(QRoceState *s, const struct qroce_cmd *c,
                                uint32_t *out)
{
    QRoceSRQ *srq = qroce_srq_get(s, le32_to_cpu(c->modify_srq.srqn));
    uint32_t limit = le32_to_cpu(c->modify_srq.limit);

    if (!srq) {
        return QROCE_CMD_ERR_HANDLE;
    }
    if (limit >= (1u << srq->wq.log2)) {
        return QROCE_CMD_ERR_PARAM;
    }
    srq->limit = limit;     /* (re)arms the limit event; 0 disarms */
    return QROCE_CMD_OK;
}

static int qroce_cmd_query_srq(QRoceState *s, const struct qroce_cmd *c,
                               uint32_t *out)
{
    QRoceSRQ *srq = qroce_srq_get(s, le32_to_cpu(c->handle.handle));

    if (!srq) {
        return QROCE_CMD_ERR_HANDLE;
    }
    out[0] = srq->limit;
    out[1] = srq->wq.ci;
    return QROCE_CMD_OK;
}

static int qroce_cmd_destroy_srq(QRoceState *s, const struct qroce_cmd *c,
                                 uint32_t *out)
{
    QRoceSRQ *srq = qroce_srq_get(s, le32_to_cpu(c->handle.handle));

    if (!srq) {
        return QROCE_CMD_ERR_HANDLE;
    }
    if (srq->refs) {
        return QROCE_CMD_ERR_BUSY;
    }
    s->pd[srq->pdn].refs--;
    qroce_bt_free(s, &srq->wq.bt);
    memset(srq, 0, sizeof(*srq));
    return QROCE_CMD_OK;
}

static int qroce_cmd_set_gid(QRoceState *s, const struct qroce_cmd *c,
                             uint32_t *out)
{
    const struct qroce_cmd_set_gid *p = &c->set_gid;
    uint32_t idx = le32_to_cpu(p->index);

    if (idx >= QROCE_DEF_MAX_GID || p->type != QROCE_GID_ROCE_V2 ||
        !qroce_mbz(p->rsvd, sizeof(p->rsvd))) {
        return QROCE_CMD_ERR_PARAM;
    }
    s->gid[idx].valid = true;
    s->gid[idx].type = p->type;
    memcpy(s->gid[idx].gid, p->gid, 16);
    return QROCE_CMD_OK;
}

static int qroce_cmd_del_gid(QRoceState *s, const struct qroce_cmd *c,
                             uint32_t *out)
{
    uint32_t idx = le32_to_cpu(c->handle.handle);

    if (idx >= QROCE_DEF_MAX_GID) {
        return QROCE_CMD_ERR_PARAM;
    }
    if (!s->gid[idx].valid) {
        return QROCE_CMD_ERR_HANDLE;
    }
    memset(&s->gid[idx], 0, sizeof(s->gid[idx]));
    return QROCE_CMD_OK;
}

typedef struct QRoceCmdDesc {
    const char *name;
    QRoceCmdFn fn;
} QRoceCmdDesc;

static const QRoceCmdDesc qroce_cmds[QROCE_CMD_MAX] = {
    [QROCE_CMD_NOP] = { "NOP", qroce_cmd_nop },
    [QROCE_CMD_CREATE_EQ] = { "CREATE_EQ", qroce_cmd_create_eq },
    [QROCE_CMD_DESTROY_EQ] = { "DESTROY_EQ", qroce_cmd_destroy_eq },
    [QROCE_CMD_ALLOC_PD] = { "ALLOC_PD", qroce_cmd_alloc_pd },
    [QROCE_CMD_DEALLOC_PD] = { "DEALLOC_PD", qroce_cmd_dealloc_pd },
    [QROCE_CMD_CREATE_CQ] = { "CREATE_CQ", qroce_cmd_create_cq },
    [QROCE_CMD_DESTROY_CQ] = { "DESTROY_CQ", qroce_cmd_destroy_cq },
    [QROCE_CMD_CREATE_QP] = { "CREATE_QP", qroce_cmd_create_qp },
    [QROCE_CMD_MODIFY_QP] = { "MODIFY_QP", qroce_cmd_modify_qp },
    [QROCE_CMD_QUERY_QP] = { "QUERY_QP", qroce_cmd_query_qp },
    [QROCE_CMD_DESTROY_QP] = { "DESTROY_QP", qroce_cmd_destroy_qp },
    [QROCE_CMD_REG_MR] = { "REG_MR", qroce_cmd_reg_mr },
    [QROCE_CMD_DEREG_MR] = { "DEREG_MR", qroce_cmd_dereg_mr },
    [QROCE_CMD_CREATE_AH] = { "CREATE_AH", qroce_cmd_create_ah },
    [QROCE_CMD_DESTROY_AH] = { "DESTROY_AH", qroce_cmd_destroy_ah },
    [QROCE_CMD_SET_GID] = { "SET_GID", qroce_cmd_set_gid },
    [QROCE_CMD_DEL_GID] = { "DEL_GID", qroce_cmd_del_gid },
    [QROCE_CMD_CREATE_SRQ] = { "CREATE_SRQ", qroce_cmd_create_srq },
    [QROCE_CMD_MODIFY_SRQ] = { "MODIFY_SRQ", qroce_cmd_modify_srq },
    [QROCE_CMD_QUERY_SRQ] = { "QUERY_SRQ", qroce_cmd_query_srq },
    [QROCE_CMD_DESTROY_SRQ] = { "DESTROY_SRQ", qroce_cmd_destroy_srq },
};

static void qroce_fatal(QRoceState *s, uint32_t code)
{
    qemu_log_mask(LOG_GUEST_ERROR, "qroce: fatal error %u\n", code);
    s->status = (s->status & ~QROCE_STATUS_READY) | QROCE_STATUS_FATAL;
    s->fatal_code = code;
}

static void qroce_cmd_bh(void *opaque)
{
    QRoceState *s = opaque;
    uint32_t size = 1u << s->cmdq_log2;
    int budget = QROCE_CMD_BUDGET;
    bool done = false;

    s->bt_work = 0;
    while ((s->status & QROCE_STATUS_READY) && s->cmdq_ci != s->cmdq_pi) {
        uint32_t slot = s->cmdq_ci & (size - 1);
        struct qroce_cmd cmd;
        struct qroce_cmd_comp comp = {};
        uint32_t out[6] = {};
        const QRoceCmdDesc *d = NULL;
        uint64_t caddr = s->cmdq_cq + (uint64_t)slot * sizeof(comp);
        int st, i;

        if (budget-- == 0) {
            qemu_bh_schedule(s->cmd_bh);
            break;
        }
        if (!qroce_dma_read(s, s->cmdq_base + (uint64_t)slot * sizeof(cmd),
                            &cmd, sizeof(cmd))) {
            qroce_fatal(s, QROCE_FATAL_CMDQ_DMA);
            break;
        }
        if (cmd.hdr.opcode < QROCE_CMD_MAX) {
            d = &qroce_cmds[cmd.hdr.opcode];
        }
        if (!d || !d->fn) {
            st = QROCE_CMD_ERR_OPCODE;
        } else if (cmd.hdr.flags || cmd.hdr.rsvd) {
            st = QROCE_CMD_ERR_PARAM;
        } else {
            st = d->fn(s, &cmd, out);
        }
        if (st != QROCE_CMD_OK) {
            qroce_count(s, QROCE_CNT_CMD_ERRS);
            qemu_log_mask(LOG_GUEST_ERROR, "qroce: command %s (0x%x) failed: "
                          "status %d\n", d && d->name ? d->name : "?",
                          cmd.hdr.opcode, st);
        }
        qroce_count(s, QROCE_CNT_CMDS);
        trace_qroce_cmd(s->cmdq_ci, cmd.hdr.opcode,
                        le32_to_cpu(cmd.hdr.cookie), st, out[0]);
        comp.cookie = cmd.hdr.cookie;
        comp.status = st;
        comp.opcode = cmd.hdr.opcode;
        for (i = 0; i < 6; i++) {
            comp.out[i] = cpu_to_le32(out[i]);
        }
        /* body first (everything but the owner byte), then the owner */
        if (!qroce_dma_write(s, caddr + 8, comp.out, sizeof(comp.out)) ||
            !qroce_dma_write(s, caddr, &comp, 7)) {
            qroce_fatal(s, QROCE_FATAL_CMDQ_DMA);
            break;
        }
        comp.owner = qroce_owner_for(s->cmdq_ci, s->cmdq_log2);
        smp_wmb(); /* the completion is visible before its owner byte */
        if (!qroce_dma_write(s, caddr + 7, &comp.owner, 1)) {
            qroce_fatal(s, QROCE_FATAL_CMDQ_DMA);
            break;
        }
        s->cmdq_ci++;
        done = true;
        if (s->bt_work >= QROCE_CMD_WORK_BUDGET) {
            /* long commands: yield to the guest, go on next time */
            qemu_bh_schedule(s->cmd_bh);
            break;
        }
    }
    if (done) {
        qroce_irq(s, QROCE_MSIX_VEC_CMD);
    }
}

/* ------------------------------------------------------------------ */
/* Ethernet function                                                   */
/* ------------------------------------------------------------------ */

#define QROCE_LO_MAX_QUEUED 4096
#define QROCE_LO_BUDGET     256

static void qroce_eth_irq(QRoceState *s, uint32_t cause)
{
    s->eth_irq |= cause;
    qroce_irq(s, QROCE_MSIX_VEC_ETH);
}

static void qroce_tx_bh(void *opaque)
{
    QRoceState *s = opaque;
    uint32_t size = 1u << s->txq_log2;
    int budget = QROCE_TX_BUDGET;
    bool done = false;
    uint8_t *buf = NULL;

    while ((s->eth_ctrl & QROCE_ETH_CTRL_TX_EN) && s->txq_log2 &&
           s->txq_ci != s->txq_pi) {
        uint64_t daddr = s->txq_base +
                         (uint64_t)(s->txq_ci & (size - 1)) * 16;
        struct qroce_eth_desc d;
        uint16_t len, flags = QROCE_ETH_DESC_DONE;

        if (budget-- == 0) {
            qemu_bh_schedule(s->tx_bh);
            break;
        }
        if (!qroce_dma_read(s, daddr, &d, sizeof(d))) {
            qemu_log_mask(LOG_GUEST_ERROR, "qroce: TX ring unreadable\n");
            s->eth_ctrl &= ~QROCE_ETH_CTRL_TX_EN;
            break;
        }
        len = le16_to_cpu(d.len);
        if (!buf) {
            buf = g_malloc(QROCE_ETH_MAX_FRAME);
        }
        if (len < ETH_HLEN || len > QROCE_ETH_MAX_FRAME ||
            !qroce_dma_read(s, le64_to_cpu(d.addr), buf, len)) {
            qemu_log_mask(LOG_GUEST_ERROR, "qroce: bad TX descriptor "
                          "(len %u)\n", len);
            flags |= QROCE_ETH_DESC_ERR;
        } else {
            trace_qroce_eth_tx(s->txq_ci, len);
            qroce_count(s, QROCE_CNT_ETH_TX_FRAMES);
            qemu_send_packet(qemu_get_queue(s->nic), buf, len);
        }
        d.flags = cpu_to_le16(flags);
        if (!qroce_dma_write(s, daddr + 10, &d.flags, 2)) {
            qemu_log_mask(LOG_GUEST_ERROR, "qroce: TX ring not writable\n");
            s->eth_ctrl &= ~QROCE_ETH_CTRL_TX_EN;
            break;
        }
        s->txq_ci++;
        done = true;
    }
    g_free(buf);
    if (done) {
        qroce_eth_irq(s, QROCE_ETH_IRQ_TX);
    }
}

static bool qroce_rx_ready(QRoceState *s)
{
    return (s->status & QROCE_STATUS_READY) &&
           (s->eth_ctrl & QROCE_ETH_CTRL_RX_EN) && s->rxq_log2 &&
           s->rxq_pi != s->rxq_ci &&
           s->rxq_pi - s->rxq_ci <= (1u << s->rxq_log2);
}

static bool qroce_can_receive(NetClientState *nc)
{
    /* RoCE frames never wait for Ethernet buffers; others are dropped. */
    return true;
}

static bool qroce_eth_accept(QRoceState *s, const uint8_t *buf)
{
    if (s->eth_ctrl & QROCE_ETH_CTRL_PROMISC) {
        return true;
    }
    if (buf[0] & 1) {
        return true;    /* broadcast and multicast: the driver filters */
    }
    return !memcmp(buf, s->conf.macaddr.a, ETH_ALEN);
}

static void qroce_eth_rx(QRoceState *s, const uint8_t *buf, size_t size)
{
    uint64_t daddr;
    struct qroce_eth_desc d;
    uint16_t flags = QROCE_ETH_DESC_DONE;
    size_t n;

    if (!qroce_rx_ready(s)) {
        qroce_count(s, QROCE_CNT_ETH_RX_DROPS);
        trace_qroce_wrn_eth_rx_drop(size);
        return;
    }
    daddr = s->rxq_base +
            (uint64_t)(s->rxq_ci & ((1u << s->rxq_log2) - 1)) * 16;
    if (!qroce_dma_read(s, daddr, &d, sizeof(d))) {
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: RX ring unreadable\n");
        s->eth_ctrl &= ~QROCE_ETH_CTRL_RX_EN;
        return;
    }
    n = MIN(size, le16_to_cpu(d.len));
    if (n < size) {
        flags |= QROCE_ETH_DESC_ERR;
    }
    if (!qroce_dma_write(s, le64_to_cpu(d.addr), buf, n)) {
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: RX buffer not writable\n");
        flags |= QROCE_ETH_DESC_ERR;
        n = 0;
    }
    d.len = cpu_to_le16(n);
    d.flags = cpu_to_le16(flags);
    if (!qroce_dma_write(s, daddr + 8, &d.len, 4)) {
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: RX ring not writable\n");
        s->eth_ctrl &= ~QROCE_ETH_CTRL_RX_EN;
        return;
    }
    trace_qroce_eth_rx(s->rxq_ci, size);
    qroce_count(s, QROCE_CNT_ETH_RX_FRAMES);
    s->rxq_ci++;
    qroce_eth_irq(s, QROCE_ETH_IRQ_RX);
}



/* ------------------------------------------------------------------ */
/* Wire faults (docs/hw-spec.md §15)                                   */
/* ------------------------------------------------------------------ */

typedef void QRoceFrameFn(QRoceState *s, const uint8_t *buf, size_t len);

static const char *const qroce_fault_names[QROCE_FAULT_NUM] = {
    "drop", "dup", "reorder", "corrupt",
};
static const char *const qroce_dir_names[2] = { "tx", "rx" };

/* A seeded xorshift64* draw: is there a fault of @kind on this frame? */
bool qroce_fault(QRoceState *s, int dir, int kind)
{
    uint32_t ppm = s->fault_ppm[dir][kind];
    uint64_t x;

    if (!ppm) {
        return false;
    }
    if (s->fault_rng_seed != s->fault_seed || !s->fault_rng) {
        s->fault_rng_seed = s->fault_seed;
        s->fault_rng = s->fault_seed ? s->fault_seed : 0x9e3779b97f4a7c15ULL;
    }
    x = s->fault_rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->fault_rng = x;
    return (x * 0x2545f4914f6cdd1dULL >> 11) % 1000000 < ppm;
}

static bool qroce_faults_on(QRoceState *s, int dir)
{
    int k;

    for (k = 0; k < QROCE_FAULT_NUM; k++) {
        if (s->fault_ppm[dir][k]) {
            return true;
        }
    }
    return false;
}

/* Offset of the BTH of a RoCEv2 frame, or 0 if it is not one. */
static size_t qroce_roce_bth(const uint8_t *f, size_t len)
{
    size_t l3 = ETH_HLEN, l4;

    if (len < ETH_HLEN + 20) {
        return 0;
    }
    if (lduw_be_p(f + 12) == ETH_P_IP && f[l3] == 0x45 && f[l3 + 9] == 17) {
        l4 = l3 + 20;
    } else if (lduw_be_p(f + 12) == ETH_P_IPV6 && len >= l3 + 40 &&
               f[l3 + 6] == 17) {
        l4 = l3 + 40;
    } else {
        return 0;
    }
    if (len < l4 + 8 + 12 + 4 || lduw_be_p(f + l4 + 2) != 4791) {
        return 0;
    }
    return l4 + 8;
}

static void qroce_fault_count(QRoceState *s, int dir, int kind, size_t len)
{
    qroce_count(s, QROCE_CNT_WIRE_FAULTS);
    trace_qroce_wire_fault(qroce_dir_names[dir], qroce_fault_names[kind],
                           len);
}

/*
 * Pass RoCE frame @buf (ours to change) through the fault knobs of @dir
 * on its way to @out: drop, corrupt one bit after the UDP header (the
 * ICRC catches it), hold it back behind the next frame, or send it twice.
 */
static void qroce_fault_stage(QRoceState *s, int dir, uint8_t *buf,
                              size_t len, QRoceFrameFn *out)
{
    QRoceLoFrame *held;
    size_t bth = qroce_roce_bth(buf, len);

    if (qroce_fault(s, dir, QROCE_FAULT_DROP)) {
        qroce_fault_count(s, dir, QROCE_FAULT_DROP, len);
        return;
    }
    if (qroce_fault(s, dir, QROCE_FAULT_CORRUPT)) {
        size_t at = bth + s->fault_rng % (len - bth);

        buf[at] ^= 1u << (s->fault_rng >> 32) % 8;
        qroce_fault_count(s, dir, QROCE_FAULT_CORRUPT, len);
    }
    if (!s->fault_held[dir] && qroce_fault(s, dir, QROCE_FAULT_REORDER)) {
        held = g_malloc(sizeof(*held) + len);
        held->len = len;
        memcpy(held->data, buf, len);
        s->fault_held[dir] = held;
        qroce_fault_count(s, dir, QROCE_FAULT_REORDER, len);
        timer_mod(s->fault_timer,
                  qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) + 1);
        return;
    }
    out(s, buf, len);
    if (qroce_fault(s, dir, QROCE_FAULT_DUP)) {
        qroce_fault_count(s, dir, QROCE_FAULT_DUP, len);
        out(s, buf, len);
    }
    held = s->fault_held[dir];
    if (held) {
        s->fault_held[dir] = NULL;
        out(s, held->data, held->len);
        g_free(held);
    }
}

/* Frames to the device's own MAC never reach the wire: queue them. */
static void qroce_wire_out(QRoceState *s, const uint8_t *buf, size_t len)
{
    QRoceLoFrame *f;

    if (!memcmp(buf, s->conf.macaddr.a, ETH_ALEN)) {
        if (g_queue_get_length(&s->lo_q) >= QROCE_LO_MAX_QUEUED) {
            qroce_count(s, QROCE_CNT_ROCE_RX_DROPS);
            return;
        }
        f = g_malloc(sizeof(*f) + len);
        f->len = len;
        memcpy(f->data, buf, len);
        g_queue_push_tail(&s->lo_q, f);
        qemu_bh_schedule(s->lo_bh);
        return;
    }
    qemu_send_packet(qemu_get_queue(s->nic), buf, len);
}

void qroce_wire_tx(QRoceState *s, const struct iovec *iov, int iovcnt)
{
    size_t len = iov_size(iov, iovcnt);
    g_autofree uint8_t *buf = g_malloc(len);

    iov_to_buf(iov, iovcnt, 0, buf, len);
    if (qroce_faults_on(s, QROCE_DIR_TX) && qroce_roce_bth(buf, len)) {
        qroce_fault_stage(s, QROCE_DIR_TX, buf, len, qroce_wire_out);
        return;
    }
    qroce_wire_out(s, buf, len);
}

/* A frame from the wire (or from ourselves): RoCE engine or Ethernet. */
static void qroce_rx_frame(QRoceState *s, const uint8_t *buf, size_t size)
{
    if (qroce_rc_rx(s, buf, size, true)) {
        return;
    }
    if (qroce_eth_accept(s, buf)) {
        qroce_eth_rx(s, buf, size);
    }
}

/* Frames held back by the reorder knob go out if nothing overtakes them. */
static void qroce_fault_bh(void *opaque)
{
    QRoceState *s = opaque;
    QRoceLoFrame *f;

    f = s->fault_held[QROCE_DIR_TX];
    s->fault_held[QROCE_DIR_TX] = NULL;
    if (f) {
        qroce_wire_out(s, f->data, f->len);
        g_free(f);
    }
    f = s->fault_held[QROCE_DIR_RX];
    s->fault_held[QROCE_DIR_RX] = NULL;
    if (f) {
        qroce_rx_frame(s, f->data, f->len);
        g_free(f);
    }
}

static void qroce_fault_timer(void *opaque)
{
    QRoceState *s = opaque;

    qemu_bh_schedule(s->fault_bh);     /* DMA only from a guarded BH */
}

static ssize_t qroce_receive(NetClientState *nc, const uint8_t *buf,
                             size_t size)
{
    QRoceState *s = qemu_get_nic_opaque(nc);

    if (size < ETH_HLEN || !(s->status & QROCE_STATUS_READY)) {
        qroce_count(s, QROCE_CNT_ETH_RX_DROPS);
        trace_qroce_wrn_eth_rx_drop(size);
        return size;
    }
    if (qroce_faults_on(s, QROCE_DIR_RX) && qroce_roce_bth(buf, size)) {
        g_autofree uint8_t *copy = g_memdup2(buf, size);

        qroce_fault_stage(s, QROCE_DIR_RX, copy, size, qroce_rx_frame);
        return size;
    }
    qroce_rx_frame(s, buf, size);
    return size;
}

static void qroce_lo_bh(void *opaque)
{
    QRoceState *s = opaque;
    int budget = QROCE_LO_BUDGET;
    QRoceLoFrame *f;

    while (budget-- && (f = g_queue_pop_head(&s->lo_q))) {
        qroce_rc_rx(s, f->data, f->len, false);
        g_free(f);
    }
    if (!g_queue_is_empty(&s->lo_q)) {
        qemu_bh_schedule(s->lo_bh);
    }
}

static void qroce_set_link_status(NetClientState *nc)
{
    QRoceState *s = qemu_get_nic_opaque(nc);
    bool up = qroce_link_up(s);

    trace_qroce_link(up);
    if (s->status & QROCE_STATUS_READY) {
        qroce_async_event(s, up ? QROCE_EQE_PORT_ACTIVE : QROCE_EQE_PORT_DOWN,
                          1, 0);
        qroce_eth_irq(s, QROCE_ETH_IRQ_LINK);
    }
}

static NetClientInfo qroce_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = qroce_can_receive,
    .receive = qroce_receive,
    .link_status_changed = qroce_set_link_status,
};

/* ------------------------------------------------------------------ */
/* Reset                                                               */
/* ------------------------------------------------------------------ */

static void qroce_reset_state(QRoceState *s)
{
    uint32_t i;

    qroce_rc_reset(s);
    g_queue_clear_full(&s->lo_q, g_free);
    g_free(s->fault_held[QROCE_DIR_TX]);
    g_free(s->fault_held[QROCE_DIR_RX]);
    s->fault_held[QROCE_DIR_TX] = s->fault_held[QROCE_DIR_RX] = NULL;
    for (i = 0; i < s->max_qp; i++) {
        if (s->qp[i].valid) {
            qroce_qp_free(s, &s->qp[i]);
        }
    }
    for (i = 0; i < s->max_cq; i++) {
        qroce_bt_free(s, &s->cq[i].bt);
    }
    for (i = 0; i < s->max_mr; i++) {
        uint8_t v = s->mr[i].variant;

        qroce_bt_free(s, &s->mr[i].bt);
        memset(&s->mr[i], 0, sizeof(s->mr[i]));
        s->mr[i].variant = v;   /* keys stay unique across resets */
    }
    for (i = 0; i < s->max_srq; i++) {
        qroce_bt_free(s, &s->srq[i].wq.bt);
    }
    memset(s->srq, 0, sizeof(*s->srq) * s->max_srq);
    for (i = 0; i < QROCE_NUM_EQS; i++) {
        qroce_bt_free(s, &s->eq[i].bt);
    }
    memset(s->eq, 0, sizeof(s->eq));
    memset(s->cq, 0, sizeof(*s->cq) * s->max_cq);
    memset(s->pd, 0, sizeof(*s->pd) * s->max_pd);
    memset(s->ah, 0, sizeof(*s->ah) * s->max_ah);
    memset(s->gid, 0, sizeof(s->gid));

    s->ctrl = s->status = s->fatal_code = 0;
    s->eth_mtu = 1500;
    s->cmdq_base = s->cmdq_cq = 0;
    s->cmdq_log2 = s->cmdq_pi = s->cmdq_ci = 0;
    s->eth_ctrl = s->eth_irq = 0;
    s->txq_base = s->rxq_base = 0;
    s->txq_log2 = s->rxq_log2 = 0;
    s->txq_pi = s->txq_ci = s->rxq_pi = s->rxq_ci = 0;
}

static void qroce_enable(QRoceState *s)
{
    if (s->status & QROCE_STATUS_FATAL) {
        return;
    }
    if (!s->cmdq_base || !s->cmdq_cq || (s->cmdq_base & 0xfff) ||
        (s->cmdq_cq & 0xfff) || s->cmdq_log2 < 1 ||
        s->cmdq_log2 > QROCE_CMDQ_MAX_LOG2) {
        qroce_fatal(s, QROCE_FATAL_CMDQ_CONFIG);
        return;
    }
    s->status |= QROCE_STATUS_READY;
    qemu_bh_schedule(s->cmd_bh);
}

/* ------------------------------------------------------------------ */
/* Register file                                                       */
/* ------------------------------------------------------------------ */

typedef uint32_t (*QRoceRegRead)(QRoceState *s, hwaddr addr);
typedef void (*QRoceRegWrite)(QRoceState *s, hwaddr addr, uint32_t val);

static uint32_t qroce_rd_const(QRoceState *s, hwaddr addr)
{
    switch (addr) {
    case QROCE_REG_MAGIC:
        return QROCE_MAGIC_VALUE;
    case QROCE_REG_VERSION:
        return QROCE_SPEC_VERSION;
    case QROCE_REG_FEATURES:
        return QROCE_FEAT_RC | QROCE_FEAT_UD | QROCE_FEAT_UC |
               QROCE_FEAT_IPV6 | QROCE_FEAT_ATOMIC | QROCE_FEAT_SRQ;
    case QROCE_REG_CAP_MAX_QP:
        return s->max_qp;
    case QROCE_REG_CAP_MAX_CQ:
        return s->max_cq;
    case QROCE_REG_CAP_MAX_MR:
        return s->max_mr;
    case QROCE_REG_CAP_MAX_PD:
        return s->max_pd;
    case QROCE_REG_CAP_MAX_SRQ:
        return s->max_srq;
    case QROCE_REG_CAP_MAX_AH:
        return s->max_ah;
    case QROCE_REG_CAP_MAX_QP_WR:
        return 1u << QROCE_WQ_MAX_LOG2;
    case QROCE_REG_CAP_MAX_CQE:
        return (1u << QROCE_CQ_MAX_LOG2) - 1;
    case QROCE_REG_CAP_MAX_SGE:
        return QROCE_MAX_SGE;
    case QROCE_REG_CAP_MAX_INLINE:
        return QROCE_MAX_INLINE;
    case QROCE_REG_CAP_MAX_RD_ATOM:
        return QROCE_DEF_MAX_RD_ATOM;
    case QROCE_REG_CAP_MAX_MR_SIZE_LO:
        return 0;
    case QROCE_REG_CAP_MAX_MR_SIZE_HI:
        return 1u << 8;             /* 2^40 bytes */
    case QROCE_REG_CAP_PAGE_SIZES:
        return ((1u << (QROCE_BT_MAX_PAGE_SHIFT + 1)) - 1) &
               ~((1u << QROCE_BT_MIN_PAGE_SHIFT) - 1);
    case QROCE_REG_CAP_MAX_GID:
        return QROCE_DEF_MAX_GID;
    case QROCE_REG_CAP_MAX_MSG:
        return QROCE_DEF_MAX_MSG;
    case QROCE_REG_CAP_MAX_MTU:
        return 4096;
    case QROCE_REG_MAC_LO:
        return ldl_le_p(s->conf.macaddr.a);
    case QROCE_REG_MAC_HI:
        return lduw_le_p(s->conf.macaddr.a + 4);
    }
    return 0;
}

static uint32_t qroce_rd_state(QRoceState *s, hwaddr addr)
{
    switch (addr) {
    case QROCE_REG_STATUS:
        return s->status;
    case QROCE_REG_CTRL:
        return s->ctrl;
    case QROCE_REG_PORT_STATUS:
        return qroce_link_up(s) ? QROCE_PORT_LINK_UP | (100 << 8) : 0;
    case QROCE_REG_ETH_MTU:
        return s->eth_mtu;
    case QROCE_REG_FATAL_CODE:
        return s->fatal_code;
    case QROCE_REG_CMDQ_BASE_LO:
        return s->cmdq_base;
    case QROCE_REG_CMDQ_BASE_HI:
        return s->cmdq_base >> 32;
    case QROCE_REG_CMDQ_LOG2:
        return s->cmdq_log2;
    case QROCE_REG_CMDQ_CI:
        return s->cmdq_ci;
    case QROCE_REG_CMDQ_CQ_LO:
        return s->cmdq_cq;
    case QROCE_REG_CMDQ_CQ_HI:
        return s->cmdq_cq >> 32;
    case QROCE_REG_ETH_CTRL:
        return s->eth_ctrl;
    case QROCE_REG_TXQ_BASE_LO:
        return s->txq_base;
    case QROCE_REG_TXQ_BASE_HI:
        return s->txq_base >> 32;
    case QROCE_REG_TXQ_LOG2:
        return s->txq_log2;
    case QROCE_REG_TXQ_CI:
        return s->txq_ci;
    case QROCE_REG_RXQ_BASE_LO:
        return s->rxq_base;
    case QROCE_REG_RXQ_BASE_HI:
        return s->rxq_base >> 32;
    case QROCE_REG_RXQ_LOG2:
        return s->rxq_log2;
    case QROCE_REG_RXQ_CI:
        return s->rxq_ci;
    case QROCE_REG_ETH_IRQ:
        return s->eth_irq;
    }
    return 0;
}

static uint32_t qroce_rd_cnt(QRoceState *s, hwaddr addr)
{
    return s->cnt[(addr - QROCE_REG_CNT_BASE) / 4];
}

static void qroce_set_lo(uint64_t *r, uint32_t v)
{
    *r = (*r & ~0xffffffffULL) | v;
}

static void qroce_set_hi(uint64_t *r, uint32_t v)
{
    *r = (*r & 0xffffffffULL) | ((uint64_t)v << 32);
}

static void qroce_wr_ctrl(QRoceState *s, hwaddr addr, uint32_t val)
{
    if (val & QROCE_CTRL_RESET) {
        trace_qroce_reset();
        qroce_reset_state(s);
        return;
    }
    if ((val & QROCE_CTRL_ENABLE) && !(s->ctrl & QROCE_CTRL_ENABLE)) {
        s->ctrl = QROCE_CTRL_ENABLE;
        qroce_enable(s);
    } else if (!(val & QROCE_CTRL_ENABLE)) {
        s->ctrl = 0;
        s->status &= ~QROCE_STATUS_READY;
    }
}

static void qroce_wr_mtu(QRoceState *s, hwaddr addr, uint32_t val)
{
    if (val < QROCE_ETH_MIN_MTU || val > QROCE_ETH_MAX_MTU) {
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: MTU %u out of range\n", val);
        return;
    }
    s->eth_mtu = val;
}

static void qroce_wr_cmdq(QRoceState *s, hwaddr addr, uint32_t val)
{
    if (addr == QROCE_REG_CMDQ_PI) {
        trace_qroce_cmdq_doorbell(val);
        if (!(s->status & QROCE_STATUS_READY)) {
            trace_qroce_ub_reg("CMDQ_PI", val, "device not enabled");
            return;
        }
        s->cmdq_pi = val;
        if (s->cmdq_pi - s->cmdq_ci > (1u << s->cmdq_log2)) {
            trace_qroce_ub_reg("CMDQ_PI", val, "overruns the ring");
            qemu_log_mask(LOG_GUEST_ERROR, "qroce: CMDQ_PI %u overruns the "
                          "ring\n", val);
            qroce_fatal(s, QROCE_FATAL_CMDQ_CONFIG);
            return;
        }
        qemu_bh_schedule(s->cmd_bh);
        return;
    }
    if (s->status & QROCE_STATUS_READY) {
        trace_qroce_ub_reg("CMDQ", val, "reconfigured while enabled");
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: CMDQ reconfigured while "
                      "enabled\n");
        return;
    }
    switch (addr) {
    case QROCE_REG_CMDQ_BASE_LO:
        qroce_set_lo(&s->cmdq_base, val);
        break;
    case QROCE_REG_CMDQ_BASE_HI:
        qroce_set_hi(&s->cmdq_base, val);
        break;
    case QROCE_REG_CMDQ_LOG2:
        if (val < 1 || val > QROCE_CMDQ_MAX_LOG2) {
            trace_qroce_ub_reg("CMDQ_LOG2", val, "out of range");
            qemu_log_mask(LOG_GUEST_ERROR, "qroce: CMDQ_LOG2 %u out of "
                          "range\n", val);
            val = 0;            /* enabling now fails with CMDQ_CONFIG */
        }
        s->cmdq_log2 = val;
        break;
    case QROCE_REG_CMDQ_CQ_LO:
        qroce_set_lo(&s->cmdq_cq, val);
        break;
    case QROCE_REG_CMDQ_CQ_HI:
        qroce_set_hi(&s->cmdq_cq, val);
        break;
    }
}

static void qroce_wr_eth(QRoceState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case QROCE_REG_ETH_CTRL:
        s->eth_ctrl = val & (QROCE_ETH_CTRL_TX_EN | QROCE_ETH_CTRL_RX_EN |
                             QROCE_ETH_CTRL_PROMISC | QROCE_ETH_CTRL_ALLMULTI);
        if (!(s->eth_ctrl & QROCE_ETH_CTRL_TX_EN)) {
            s->txq_ci = s->txq_pi = 0;
        }
        if (!(s->eth_ctrl & QROCE_ETH_CTRL_RX_EN)) {
            s->rxq_ci = s->rxq_pi = 0;
        }
        qemu_bh_schedule(s->tx_bh);
        return;
    case QROCE_REG_ETH_IRQ:
        s->eth_irq &= ~val;
        return;
    case QROCE_REG_TXQ_PI:
        if (val - s->txq_ci > (1u << s->txq_log2)) {
            qemu_log_mask(LOG_GUEST_ERROR, "qroce: TXQ_PI overruns\n");
            return;
        }
        s->txq_pi = val;
        qemu_bh_schedule(s->tx_bh);
        return;
    case QROCE_REG_RXQ_PI:
        if (val - s->rxq_ci > (1u << s->rxq_log2)) {
            qemu_log_mask(LOG_GUEST_ERROR, "qroce: RXQ_PI overruns\n");
            return;
        }
        s->rxq_pi = val;
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
        return;
    }
    /* Ring geometry may change only while the ring is disabled. */
    if (addr >= QROCE_REG_TXQ_BASE_LO && addr <= QROCE_REG_TXQ_LOG2 &&
        (s->eth_ctrl & QROCE_ETH_CTRL_TX_EN)) {
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: TX ring changed while on\n");
        return;
    }
    if (addr >= QROCE_REG_RXQ_BASE_LO && addr <= QROCE_REG_RXQ_LOG2 &&
        (s->eth_ctrl & QROCE_ETH_CTRL_RX_EN)) {
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: RX ring changed while on\n");
        return;
    }
    switch (addr) {
    case QROCE_REG_TXQ_BASE_LO:
        qroce_set_lo(&s->txq_base, val);
        break;
    case QROCE_REG_TXQ_BASE_HI:
        qroce_set_hi(&s->txq_base, val);
        break;
    case QROCE_REG_RXQ_BASE_LO:
        qroce_set_lo(&s->rxq_base, val);
        break;
    case QROCE_REG_RXQ_BASE_HI:
        qroce_set_hi(&s->rxq_base, val);
        break;
    case QROCE_REG_TXQ_LOG2:
    case QROCE_REG_RXQ_LOG2:
        if (val < QROCE_ETH_RING_MIN_LOG2 || val > QROCE_ETH_RING_MAX_LOG2) {
            qemu_log_mask(LOG_GUEST_ERROR, "qroce: ring size 2^%u out of "
                          "range\n", val);
            val = 0;
        }
        if (addr == QROCE_REG_TXQ_LOG2) {
            s->txq_log2 = val;
        } else {
            s->rxq_log2 = val;
        }
        break;
    }
}

static void qroce_wr_eq_ci(QRoceState *s, hwaddr addr, uint32_t val)
{
    unsigned eqn = (addr - QROCE_REG_EQ_CI_BASE) / 4;
    QRoceEQ *eq = &s->eq[eqn];

    if (!eq->valid || eq->pi - val > (1u << eq->log2)) {
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: bad EQ_CI %u for EQ %u\n",
                      val, eqn);
        return;
    }
    eq->ci = val;
}

#define QROCE_NREGS (QROCE_REGS_SIZE / 4)
static QRoceRegRead qroce_readops[QROCE_NREGS];
static QRoceRegWrite qroce_writeops[QROCE_NREGS];

static void qroce_init_regops(void)
{
    static const hwaddr consts[] = {
        QROCE_REG_MAGIC, QROCE_REG_VERSION, QROCE_REG_FEATURES,
        QROCE_REG_MAC_LO, QROCE_REG_MAC_HI,
    };
    static const hwaddr states[] = {
        QROCE_REG_STATUS, QROCE_REG_CTRL, QROCE_REG_PORT_STATUS,
        QROCE_REG_ETH_MTU, QROCE_REG_FATAL_CODE, QROCE_REG_CMDQ_BASE_LO,
        QROCE_REG_CMDQ_BASE_HI, QROCE_REG_CMDQ_LOG2, QROCE_REG_CMDQ_CI,
        QROCE_REG_CMDQ_CQ_LO, QROCE_REG_CMDQ_CQ_HI, QROCE_REG_ETH_CTRL,
        QROCE_REG_TXQ_BASE_LO, QROCE_REG_TXQ_BASE_HI, QROCE_REG_TXQ_LOG2,
        QROCE_REG_TXQ_CI, QROCE_REG_RXQ_BASE_LO, QROCE_REG_RXQ_BASE_HI,
        QROCE_REG_RXQ_LOG2, QROCE_REG_RXQ_CI, QROCE_REG_ETH_IRQ,
    };
    static const hwaddr cmdq[] = {
        QROCE_REG_CMDQ_BASE_LO, QROCE_REG_CMDQ_BASE_HI, QROCE_REG_CMDQ_LOG2,
        QROCE_REG_CMDQ_PI, QROCE_REG_CMDQ_CQ_LO, QROCE_REG_CMDQ_CQ_HI,
    };
    static const hwaddr eth[] = {
        QROCE_REG_ETH_CTRL, QROCE_REG_TXQ_BASE_LO, QROCE_REG_TXQ_BASE_HI,
        QROCE_REG_TXQ_LOG2, QROCE_REG_TXQ_PI, QROCE_REG_RXQ_BASE_LO,
        QROCE_REG_RXQ_BASE_HI, QROCE_REG_RXQ_LOG2, QROCE_REG_RXQ_PI,
        QROCE_REG_ETH_IRQ,
    };
    hwaddr a;
    int i;

    for (i = 0; i < ARRAY_SIZE(consts); i++) {
        qroce_readops[consts[i] / 4] = qroce_rd_const;
    }
    for (a = QROCE_REG_CAP_MAX_QP; a <= QROCE_REG_CAP_MAX_MTU; a += 4) {
        qroce_readops[a / 4] = qroce_rd_const;
    }
    for (i = 0; i < ARRAY_SIZE(states); i++) {
        qroce_readops[states[i] / 4] = qroce_rd_state;
    }
    for (i = 0; i < QROCE_CNT_NUM; i++) {
        qroce_readops[QROCE_REG_CNT(i) / 4] = qroce_rd_cnt;
    }
    qroce_writeops[QROCE_REG_CTRL / 4] = qroce_wr_ctrl;
    qroce_writeops[QROCE_REG_ETH_MTU / 4] = qroce_wr_mtu;
    for (i = 0; i < ARRAY_SIZE(cmdq); i++) {
        qroce_writeops[cmdq[i] / 4] = qroce_wr_cmdq;
    }
    for (i = 0; i < ARRAY_SIZE(eth); i++) {
        qroce_writeops[eth[i] / 4] = qroce_wr_eth;
    }
    for (i = 0; i < QROCE_NUM_EQS; i++) {
        qroce_writeops[QROCE_REG_EQ_CI(i) / 4] = qroce_wr_eq_ci;
    }
}

static uint64_t qroce_reg_read(void *opaque, hwaddr addr, unsigned size)
{
    QRoceState *s = opaque;
    QRoceRegRead fn = qroce_readops[addr / 4];
    uint32_t val;

    if (!fn) {
        trace_qroce_wrn_reg_read_unknown(addr);
        return 0;
    }
    val = fn(s, addr);
    trace_qroce_reg_read(addr, val);
    return val;
}

static void qroce_reg_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    QRoceState *s = opaque;
    QRoceRegWrite fn = qroce_writeops[addr / 4];

    if (!fn) {
        if (qroce_readops[addr / 4]) {
            trace_qroce_wrn_reg_write_ro(addr, val);
        } else {
            trace_qroce_wrn_reg_write_unknown(addr, val);
        }
        return;
    }
    trace_qroce_reg_write(addr, val);
    fn(s, addr, val);
}

static const MemoryRegionOps qroce_reg_ops = {
    .read = qroce_reg_read,
    .write = qroce_reg_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* ------------------------------------------------------------------ */
/* Doorbells (BAR2)                                                    */
/* ------------------------------------------------------------------ */

static void qroce_db_bad(QRoceState *s, unsigned page, hwaddr off,
                         uint64_t val, const char *why)
{
    qroce_count(s, QROCE_CNT_BAD_DOORBELLS);
    trace_qroce_wrn_doorbell(page, off, val, why);
    trace_qroce_ub_doorbell(page, "object", (uint32_t)val, val >> 32, why);
    qemu_log_mask(LOG_GUEST_ERROR, "qroce: doorbell page %u offset 0x%x "
                  "value 0x%" PRIx64 " ignored: %s\n", page, (unsigned)off,
                  val, why);
}

static void qroce_db_wq(QRoceState *s, unsigned page, QRoceQP *qp,
                        QRoceWQ *wq, bool sq, uint32_t pi)
{
    const char *why = NULL;

    if (pi - wq->ci > (1u << wq->log2)) {
        why = "producer index overruns the ring";
    } else if (sq && pi - wq->ci < qp->rc.sq_sent - wq->ci) {
        why = "producer index behind WQEs already sent";
    }
    if (why) {
        qroce_count(s, QROCE_CNT_BAD_DOORBELLS);
        trace_qroce_ub_doorbell(page, sq ? "SQ of QP" : "RQ of QP", qp->qpn,
                                pi, why);
        qemu_log_mask(LOG_GUEST_ERROR, "qroce: QP %u %s: %s (%u)\n",
                      qp->qpn, sq ? "SQ" : "RQ", why, pi);
        qroce_qp_set_error(s, qp, QROCE_EQE_QP_FATAL);
        return;
    }
    wq->pi = pi;
    if (sq) {
        qroce_rc_sq_doorbell(s, qp);
    } else {
        qroce_rc_rq_doorbell(s, qp);
    }
}

static void qroce_db_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    QRoceState *s = opaque;
    unsigned page = addr >> QROCE_DB_PAGE_SHIFT;
    hwaddr off = addr & (QROCE_DB_PAGE_SIZE - 1);
    uint32_t obj = val, v = val >> 32;
    QRoceQP *qp;
    QRoceCQ *cq;
    QRoceSRQ *srq;

    trace_qroce_doorbell(page, off, obj, v);
    if (size != 8) {
        qroce_db_bad(s, page, off, val, "not a 64-bit write");
        return;
    }
    switch (off) {
    case QROCE_DB_SQ:
    case QROCE_DB_RQ:
        qp = qroce_qp_get(s, obj);
        if (!qp || qp->uar != page) {
            qroce_db_bad(s, page, off, val, "no such QP on this page");
            return;
        }
        if (off == QROCE_DB_RQ && (qp->flags & QROCE_CREATE_QP_SRQ)) {
            qroce_db_bad(s, page, off, val, "the QP receives from an SRQ");
            return;
        }
        qroce_db_wq(s, page, qp, off == QROCE_DB_SQ ? &qp->sq : &qp->rq,
                    off == QROCE_DB_SQ, v);
        return;
    case QROCE_DB_SRQ:
        srq = qroce_srq_get(s, obj);
        if (!srq || srq->uar != page) {
            qroce_db_bad(s, page, off, val, "no such SRQ on this page");
        } else if (v - srq->wq.ci > (1u << srq->wq.log2)) {
            qroce_db_bad(s, page, off, val, "SRQ producer index overruns "
                         "the ring");
        } else {
            srq->wq.pi = v;
        }
        return;
    case QROCE_DB_CQ_ARM:
    case QROCE_DB_CQ_CI:
        cq = qroce_cq_get(s, obj);
        if (!cq || cq->uar != page) {
            qroce_db_bad(s, page, off, val, "no such CQ on this page");
            return;
        }
        if (off == QROCE_DB_CQ_ARM) {
            cq->arm = v & (QROCE_CQ_ARM_NEXT | QROCE_CQ_ARM_SOLICITED);
            /* the consumer index travels as its 24 low bits */
            cq->ci_seen = cq->pi - ((cq->pi - v) & QROCE_CQ_ARM_CI_MASK);
        } else if (cq->pi - v > (1u << cq->log2)) {
            qroce_db_bad(s, page, off, val, "CQ consumer index beyond the "
                         "producer");
        } else {
            cq->ci_seen = v;
        }
        return;
    default:
        qroce_db_bad(s, page, off, val, "unknown doorbell");
    }
}

static uint64_t qroce_db_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static const MemoryRegionOps qroce_db_ops = {
    .read = qroce_db_read,
    .write = qroce_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

/* ------------------------------------------------------------------ */
/* Device                                                              */
/* ------------------------------------------------------------------ */

static void qroce_realize(PCIDevice *pdev, Error **errp)
{
    QRoceState *s = QROCE(pdev);
    DeviceState *dev = DEVICE(pdev);
    int i;

    if (s->max_qp < 16 || s->max_qp > (1u << 24) ||
        s->max_cq < 16 || s->max_cq > (1u << 24) ||
        s->max_mr < 16 || s->max_mr > (1u << 24) ||
        s->max_pd < 16 || s->max_pd > (1u << 24) ||
        s->max_ah < 16 || s->max_ah > (1u << 24) ||
        s->max_srq < 16 || s->max_srq > (1u << 24)) {
        error_setg(errp, "qroce: max-qp, max-cq, max-mr, max-pd, max-ah and "
                   "max-srq must be between 16 and 16777216");
        return;
    }

    pci_set_word(pdev->config + PCI_SUBSYSTEM_VENDOR_ID,
                 QROCE_PCI_SUBSYS_VENDOR_ID);
    pci_set_word(pdev->config + PCI_SUBSYSTEM_ID, QROCE_PCI_SUBSYS_ID);
    pdev->config[PCI_INTERRUPT_PIN] = 1;

    memory_region_init_io(&s->regs, OBJECT(s), &qroce_reg_ops, s,
                          "qroce-regs", QROCE_REGS_SIZE);
    pci_register_bar(pdev, QROCE_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->regs);
    memory_region_init_io(&s->db, OBJECT(s), &qroce_db_ops, s,
                          "qroce-doorbells", QROCE_DB_BAR_SIZE);
    pci_register_bar(pdev, QROCE_BAR_DB, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->db);
    memory_region_init(&s->msix, OBJECT(s), "qroce-msix", 0x2000);
    pci_register_bar(pdev, QROCE_BAR_MSIX, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->msix);

    if (pcie_endpoint_cap_init(pdev, 0xa0) < 0) {
        error_setg(errp, "qroce: cannot add the PCIe capability");
        return;
    }
    if (msix_init(pdev, QROCE_MSIX_VECTORS, &s->msix, QROCE_BAR_MSIX, 0,
                  &s->msix, QROCE_BAR_MSIX, 0x1000, 0x70, errp) < 0) {
        return;
    }
    for (i = 0; i < QROCE_MSIX_VECTORS; i++) {
        msix_vector_use(pdev, i);
    }

    s->pd = g_new0(QRocePD, s->max_pd);
    s->cq = g_new0(QRoceCQ, s->max_cq);
    s->qp = g_new0(QRoceQP, s->max_qp);
    s->mr = g_new0(QRoceMR, s->max_mr);
    s->ah = g_new0(QRoceAH, s->max_ah);
    s->srq = g_new0(QRoceSRQ, s->max_srq);

    s->cmd_bh = qemu_bh_new_guarded(qroce_cmd_bh, s,
                                    &dev->mem_reentrancy_guard);
    s->tx_bh = qemu_bh_new_guarded(qroce_tx_bh, s,
                                   &dev->mem_reentrancy_guard);
    s->lo_bh = qemu_bh_new_guarded(qroce_lo_bh, s,
                                   &dev->mem_reentrancy_guard);
    g_queue_init(&s->lo_q);
    s->fault_bh = qemu_bh_new_guarded(qroce_fault_bh, s,
                                      &dev->mem_reentrancy_guard);
    s->fault_timer = timer_new_ms(QEMU_CLOCK_VIRTUAL, qroce_fault_timer, s);
    s->next_qpn = 2;
    s->next_mr = 1;

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&qroce_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);

    qroce_rc_init(s);
    qroce_reset_state(s);
}

static void qroce_exit(PCIDevice *pdev)
{
    QRoceState *s = QROCE(pdev);
    int i;

    qroce_reset_state(s);
    qroce_rc_fini(s);
    qemu_del_nic(s->nic);
    qemu_bh_delete(s->cmd_bh);
    qemu_bh_delete(s->tx_bh);
    qemu_bh_delete(s->lo_bh);
    qemu_bh_delete(s->fault_bh);
    timer_free(s->fault_timer);
    g_free(s->fault_held[QROCE_DIR_TX]);
    g_free(s->fault_held[QROCE_DIR_RX]);
    for (i = 0; i < QROCE_MSIX_VECTORS; i++) {
        msix_vector_unuse(pdev, i);
    }
    msix_uninit(pdev, &s->msix, &s->msix);
    g_free(s->pd);
    g_free(s->cq);
    g_free(s->qp);
    g_free(s->mr);
    g_free(s->ah);
    g_free(s->srq);
}

static void qroce_reset(DeviceState *dev)
{
    qroce_reset_state(QROCE(dev));
}

static const VMStateDescription qroce_vmstate = {
    .name = "qroce",
    .unmigratable = 1,
};

static const Property qroce_properties[] = {
    DEFINE_NIC_PROPERTIES(QRoceState, conf),
    DEFINE_PROP_UINT32("max-bt-pages", QRoceState, max_bt_pages,
                       QROCE_DEF_MAX_BT_PAGES),
    DEFINE_PROP_UINT32("max-qp", QRoceState, max_qp, QROCE_DEF_MAX_QP),
    DEFINE_PROP_UINT32("max-cq", QRoceState, max_cq, QROCE_DEF_MAX_CQ),
    DEFINE_PROP_UINT32("max-mr", QRoceState, max_mr, QROCE_DEF_MAX_MR),
    DEFINE_PROP_UINT32("max-pd", QRoceState, max_pd, QROCE_DEF_MAX_PD),
    DEFINE_PROP_UINT32("max-ah", QRoceState, max_ah, QROCE_DEF_MAX_AH),
    DEFINE_PROP_UINT32("max-srq", QRoceState, max_srq, QROCE_DEF_MAX_SRQ),
};

static bool qroce_get_ecn(Object *obj, Error **errp)
{
    return QROCE(obj)->ecn;
}

static void qroce_set_ecn(Object *obj, bool value, Error **errp)
{
    QROCE(obj)->ecn = value;
}

static bool qroce_get_dcqcn(Object *obj, Error **errp)
{
    return QROCE(obj)->dcqcn;
}

static void qroce_set_dcqcn(Object *obj, bool value, Error **errp)
{
    QROCE(obj)->dcqcn = value;
}

/*
 * The knobs a test or a developer turns while the guest runs (qom-set),
 * or sets at start (-device qroce,NAME=VALUE): congestion control, the
 * ACK timeout floor, wire faults.  docs/hw-spec.md §14 and §15.
 */
typedef struct QRoceKnob {
    const char *name;
    size_t off;
    uint32_t def;
} QRoceKnob;

#define KNOB(n, f, d) { n, offsetof(QRoceState, f), d }
static const QRoceKnob qroce_knobs[] = {
    KNOB("min-ack-timeout-us", min_ack_timeout_us, 4000),
    KNOB("ecn-threshold", ecn_threshold, 16),
    KNOB("cnp-interval-us", cnp_interval_us, 50),
    KNOB("dcqcn-line-mbps", dcqcn_line_mbps, 100000),
    KNOB("dcqcn-min-mbps", dcqcn_min_mbps, 10),
    KNOB("dcqcn-ai-mbps", dcqcn_ai_mbps, 5),
    KNOB("dcqcn-hai-mbps", dcqcn_hai_mbps, 50),
    KNOB("dcqcn-g", dcqcn_g, 4),
    KNOB("dcqcn-alpha-us", dcqcn_alpha_us, 55),
    KNOB("dcqcn-timer-us", dcqcn_timer_us, 55),
    KNOB("dcqcn-byte-kb", dcqcn_byte_kb, 1024),
    KNOB("dcqcn-f", dcqcn_f, 5),
    KNOB("tx-drop-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_DROP], 0),
    KNOB("tx-dup-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_DUP], 0),
    KNOB("tx-reorder-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_REORDER], 0),
    KNOB("tx-corrupt-ppm", fault_ppm[QROCE_DIR_TX][QROCE_FAULT_CORRUPT], 0),
    KNOB("rx-drop-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_DROP], 0),
    KNOB("rx-dup-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_DUP], 0),
    KNOB("rx-reorder-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_REORDER], 0),
    KNOB("rx-corrupt-ppm", fault_ppm[QROCE_DIR_RX][QROCE_FAULT_CORRUPT], 0),
};
#undef KNOB

static void qroce_instance_init(Object *obj)
{
    QRoceState *s = QROCE(obj);
    size_t i;

    for (i = 0; i < ARRAY_SIZE(qroce_knobs); i++) {
        uint32_t *v = (uint32_t *)((uint8_t *)s + qroce_knobs[i].off);

        *v = qroce_knobs[i].def;
        object_property_add_uint32_ptr(obj, qroce_knobs[i].name, v,
                                       OBJ_PROP_FLAG_READWRITE);
    }
    s->ecn = true;
    s->dcqcn = true;
    object_property_add_bool(obj, "ecn", qroce_get_ecn, qroce_set_ecn);
    object_property_add_bool(obj, "dcqcn", qroce_get_dcqcn, qroce_set_dcqcn);
    object_property_add_uint64_ptr(obj, "fault-seed", &s->fault_seed,
                                   OBJ_PROP_FLAG_READWRITE);
}

static void qroce_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = qroce_realize;
    k->exit = qroce_exit;
    k->vendor_id = QROCE_PCI_VENDOR_ID;
    k->device_id = QROCE_PCI_DEVICE_ID;
    k->revision = QROCE_PCI_REVISION;
    k->class_id = QROCE_PCI_CLASS;
    dc->desc = "qroce RoCEv2 RDMA NIC";
    dc->vmsd = &qroce_vmstate;
    device_class_set_legacy_reset(dc, qroce_reset);
    device_class_set_props(dc, qroce_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
    qroce_init_regops();
}

static const TypeInfo qroce_info = {
    .name = TYPE_QROCE,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(QRoceState),
    .instance_init = qroce_instance_init,
    .class_init = qroce_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { },
    },
};

static void qroce_register_types(void)
{
    type_register_static(&qroce_info);
}

type_init(qroce_register_types)
