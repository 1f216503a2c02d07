/*
 * qroce: rings and DMA.  Every guest memory access of the device goes
 * through here and reaches guest RAM only; the CQ and EQ rings are
 * written body first, owner byte last; interrupts are MSI-X.
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
#include "qroce_port.h"
#include "qroce_odp.h"
#include "trace.h"

/* An IOMMU in front of an IOMMU in front of ... RAM: how deep we follow. */
#define QROCE_DMA_IOMMU_DEPTH 4

/*
 * One piece of a DMA copy at @addr of @as, at most @len bytes: how many
 * bytes were copied (0: refused).  The piece is translated, copied from or
 * to its RAM pointer and marked dirty (for migration and TCG's code cache)
 * from one snapshot of the address space (a MemoryRegionCache).  Behind a
 * vIOMMU, the IOMMU's own translation names the address space and address
 * the piece is then looked up in, with its permission checked.
 */
static uint64_t qroce_dma_piece(AddressSpace *as, hwaddr addr, uint8_t *b,
                                uint64_t len, bool to_guest, int depth)
{
    MemoryRegionCache c = { 0 };
    MemoryRegion *mr;
    uint64_t done = 0;
    int64_t l;

    RCU_READ_LOCK_GUARD();
    l = address_space_cache_init(&c, as, addr, len, to_guest);
    mr = c.mrs.mr;
    if (l > 0 && !c.ptr && memory_region_is_iommu(mr) &&
        depth < QROCE_DMA_IOMMU_DEPTH) {
        IOMMUMemoryRegion *iommu = IOMMU_MEMORY_REGION(mr);
        IOMMUAccessFlags need = to_guest ? IOMMU_WO : IOMMU_RO;
        IOMMUTLBEntry e = memory_region_get_iommu_class_nocheck(iommu)->
            translate(iommu, c.xlat, need,
                      memory_region_iommu_attrs_to_index(
                          iommu, MEMTXATTRS_UNSPECIFIED));

        if ((e.perm & need) == need && e.target_as) {
            hwaddr in = c.xlat & e.addr_mask;

            done = qroce_dma_piece(e.target_as,
                                   (e.translated_addr & ~e.addr_mask) | in, b,
                                   MIN((uint64_t)l, e.addr_mask - in + 1),
                                   to_guest, depth + 1);
        }
    } else if (l > 0 && c.ptr && memory_region_is_ram(mr) &&
               !memory_region_is_ram_device(mr) &&
               !(to_guest && mr->readonly)) {
        done = MIN((uint64_t)l, len);
        if (to_guest) {
            memcpy(c.ptr, b, done);
            address_space_cache_invalidate(&c, 0, done);
        } else {
            memcpy(b, c.ptr, done);
        }
    }
    address_space_cache_destroy(&c);
    return done;
}

/*
 * Payload to or from guest memory, one piece of guest RAM at a time
 * (qroce_dma_piece()): a vCPU that turns Bus Master Enable off or remaps
 * memory meanwhile (the engine may run in an IOThread) changes later
 * pieces, never the one being copied.  Anything but guest RAM -- MMIO (the
 * device's own BARs among it), ROM, unassigned space, a page the vIOMMU
 * does not map for this direction -- fails: nothing is bounced and the
 * engine never makes an MMIO access.  The caller turns a failure into an
 * error CQE, a command error or FATAL.
 */
bool qroce_dma_copy(QRoceState *s, uint64_t addr, void *buf,
                    uint64_t len, bool to_guest)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    uint8_t *b = buf;

    while (len) {
        uint64_t n = addr + len < addr ? 0 :
                     qroce_dma_piece(as, addr, b, len, to_guest, 0);

        if (!n) {
            trace_qroce_ub_dma(to_guest ? "write" : "read", addr, len);
            return false;
        }
        addr += n;
        b += n;
        len -= n;
    }
    return true;
}

/*
 * MSI-X @vector.  Without the BQL (the engine in an IOThread) it is left
 * in irq_pending for qroce_out_flush(), in the main loop.
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
 * Main loop, BQL and lock held: the frames and interrupts the engine left
 * from its IOThread (see "Threads" in qroce.h).
 */
void qroce_out_flush(QRoceState *s)
{
    uint32_t irqs, v;

    qroce_port_out(s);
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

    qroce_out_flush(s);
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
        return bt->odp ? qroce_odp_rw(s, bt, offset, buf, len, to_guest) : -1;
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
/* On-demand paging tables (hw-spec §4b)                               */
/* ------------------------------------------------------------------ */

/*
 * An ODP MR's table is sparse: chunks of 512 entries in a hash table,
 * made when a chunk gets its first entry and dropped when it loses its
 * last, charged to max-bt-pages as other tables are.  An entry is a
 * page's bus address with QROCE_ODP_PRESENT (and QROCE_ODP_WRITE), or 0.
 */
#define ODP_CHUNK_SHIFT 9
#define ODP_CHUNK       (1u << ODP_CHUNK_SHIFT)
#define ODP_PSIZE       (1ull << QROCE_ODP_PAGE_SHIFT)
/* the pages of an implicit MR: the whole 64-bit space */
#define ODP_ALL_PAGES   (1ull << (64 - QROCE_ODP_PAGE_SHIFT))

typedef struct QRoceOdpChunk {
    uint64_t no;            /* first page >> ODP_CHUNK_SHIFT: the hash key */
    uint32_t present;       /* entries that are not 0 */
    uint64_t e[ODP_CHUNK];
} QRoceOdpChunk;

typedef struct QRoceOdp {
    GHashTable *chunks;     /* &chunk->no -> chunk */
} QRoceOdp;

int qroce_odp_init(QRoceState *s, QRoceBT *bt, uint64_t npages)
{
    QRoceOdp *odp = g_new0(QRoceOdp, 1);

    odp->chunks = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL,
                                        g_free);
    memset(bt, 0, sizeof(*bt));
    bt->is_odp = true;
    bt->odp_npages = npages;
    bt->page_shift = QROCE_ODP_PAGE_SHIFT;
    bt->odp = odp;
    return QROCE_CMD_OK;
}

void qroce_odp_clear(QRoceState *s, QRoceBT *bt, bool free)
{
    QRoceOdp *odp = bt->odp;

    if (!odp) {
        return;
    }
    s->bt_pages -= (uint64_t)g_hash_table_size(odp->chunks) * ODP_CHUNK;
    g_hash_table_remove_all(odp->chunks);
    if (free) {
        g_hash_table_destroy(odp->chunks);
        g_free(odp);
        bt->odp = NULL;
    }
}

static QRoceOdpChunk *odp_chunk(const QRoceBT *bt, uint64_t page)
{
    uint64_t no = page >> ODP_CHUNK_SHIFT;

    return g_hash_table_lookup(bt->odp->chunks, &no);
}

/*
 * The entry of @page, 0 if absent; *@c caches the chunk of the last call
 * (NULL at first), so that a walk looks each chunk up once.
 */
static uint64_t odp_entry(const QRoceBT *bt, uint64_t page,
                          QRoceOdpChunk **c)
{
    if (!*c || (*c)->no != page >> ODP_CHUNK_SHIFT) {
        *c = odp_chunk(bt, page);
        if (!*c) {
            return 0;
        }
    }
    return (*c)->e[page & (ODP_CHUNK - 1)];
}

int qroce_odp_rw(QRoceState *s, const QRoceBT *bt, uint64_t off, void *buf,
                 uint64_t len, bool to_guest)
{
    uint64_t need = QROCE_ODP_PRESENT | (to_guest ? QROCE_ODP_WRITE : 0);
    QRoceOdpChunk *c = NULL;
    uint8_t *p = buf;

    /* the last byte inside the table (an implicit one ends at 2^64) */
    if (len && (off + len - 1 < off ||
                (off + len - 1) >> QROCE_ODP_PAGE_SHIFT >= bt->odp_npages)) {
        return -1;
    }
    while (len) {
        uint64_t in = off & (ODP_PSIZE - 1);
        uint64_t n = MIN(len, ODP_PSIZE - in);
        uint64_t e = odp_entry(bt, off >> QROCE_ODP_PAGE_SHIFT, &c);

        if ((e & need) != need) {
            s->odp_miss_off = off;
            s->odp_miss_write = to_guest;
            return QROCE_RW_FAULT;
        }
        if (p && !qroce_dma_copy(s, (e & ~(ODP_PSIZE - 1)) + in, p, n,
                                 to_guest)) {
            return -1;
        }
        if (p) {
            p += n;
        }
        off += n;
        len -= n;
    }
    return 0;
}


int qroce_odp_set(QRoceState *s, QRoceBT *bt, uint64_t page, uint64_t e)
{
    QRoceOdpChunk *ch = odp_chunk(bt, page);
    uint64_t *slot;
    int mapped;

    if (!ch && !e) {
        return 0;
    }
    if (!ch) {
        if (s->bt_pages + ODP_CHUNK > s->params.max_bt_pages) {
            trace_qroce_ub_bt("translation memory full", ODP_CHUNK,
                              s->bt_pages);
            return -1;
        }
        ch = g_new0(QRoceOdpChunk, 1);
        ch->no = page >> ODP_CHUNK_SHIFT;
        g_hash_table_insert(bt->odp->chunks, &ch->no, ch);
        s->bt_pages += ODP_CHUNK;
    }
    slot = &ch->e[page & (ODP_CHUNK - 1)];
    ch->present += (e != 0) - (*slot != 0);
    mapped = e && !*slot;
    *slot = e;
    return mapped;
}

/* Clear pages [@first, @last] of chunk @ch; how many were present. */
static uint32_t odp_chunk_clear(QRoceOdpChunk *ch, uint64_t first,
                                uint64_t last)
{
    uint64_t base = ch->no << ODP_CHUNK_SHIFT;
    uint64_t a = MAX(first, base) - base;
    uint64_t b = MIN(last, base + ODP_CHUNK - 1) - base;
    uint32_t n = 0;

    for (; a <= b; a++) {
        n += ch->e[a] != 0;
        ch->e[a] = 0;
    }
    ch->present -= n;
    return n;
}

uint64_t qroce_odp_clear_range(QRoceState *s, QRoceBT *bt, uint64_t first,
                               uint64_t last)
{
    GHashTable *h = bt->odp->chunks;
    uint64_t no, cleared = 0;
    GHashTableIter it;
    QRoceOdpChunk *ch;

    if ((last >> ODP_CHUNK_SHIFT) - (first >> ODP_CHUNK_SHIFT) <
        g_hash_table_size(h)) {
        /* a range shorter than the table: look its chunks up */
        for (no = first >> ODP_CHUNK_SHIFT; no <= last >> ODP_CHUNK_SHIFT;
             no++) {
            ch = g_hash_table_lookup(h, &no);
            if (ch) {
                cleared += odp_chunk_clear(ch, first, last);
                if (!ch->present) {
                    g_hash_table_remove(h, &no);
                    s->bt_pages -= ODP_CHUNK;
                }
            }
        }
        return cleared;
    }
    g_hash_table_iter_init(&it, h);
    while (g_hash_table_iter_next(&it, NULL, (void **)&ch)) {
        uint64_t base = ch->no << ODP_CHUNK_SHIFT;

        if (base + ODP_CHUNK - 1 < first || base > last) {
            continue;
        }
        cleared += odp_chunk_clear(ch, first, last);
        if (!ch->present) {
            g_hash_table_iter_remove(&it);
            s->bt_pages -= ODP_CHUNK;
        }
    }
    return cleared;
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
