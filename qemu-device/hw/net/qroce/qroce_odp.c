/*
 * qroce: on-demand paging (docs/hw-spec.md §4b), in one room below the
 * rings.  An ODP MR's table starts empty; an access that meets an absent
 * entry stops where it is and says where (a QRoceOdpMiss); the QP's page
 * fault state is kept here and the data path raises the fault for the
 * driver, which fills the table (ODP_MAP, qroce_cmd_odp.c) and lets the
 * QP go on (ODP_RESUME).  Guest pages are reached through qroce_dma.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qroce_dma.h"
#include "qroce_odp.h"
#include "trace.h"

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
                 uint64_t len, bool to_guest, uint64_t *miss_off)
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
            if (miss_off) {
                *miss_off = off;
            }
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
/* ODP page faults (hw-spec §4b)                                       */
/* ------------------------------------------------------------------ */

int qroce_odp_fault(QRoceState *s, QRoceQP *qp, int side,
                    const QRoceOdpMiss *m)
{
    QRocePF *f = &qp->pf[side];

    if (f->state == QROCE_PF_PENDING) {
        return QROCE_ODP_WAIT;
    }
    if (f->state == QROCE_PF_FAILED && f->key == m->key &&
        m->va >= f->va && m->va - f->va < f->len) {
        f->state = QROCE_PF_NONE;
        trace_qroce_odp_fail(qp->qpn, side, f->key, m->va);
        return QROCE_ODP_FAILED;
    }
    f->state = QROCE_PF_PENDING;
    f->key = m->key;
    f->va = m->va;
    f->len = m->end > m->va ? MIN(m->end - m->va, UINT32_MAX) : 1;
    f->write = m->write;
    s->pf_token = (s->pf_token + 1) & QROCE_PF_TOKEN_MASK;
    f->token = s->pf_token;
    qroce_count(s, QROCE_CNT_ODP_FAULTS);
    trace_qroce_odp_fault(qp->qpn, side, f->key, f->va, f->len, f->write);
    return QROCE_ODP_RAISE;
}

void qroce_odp_qp_reset(QRoceQP *qp)
{
    memset(qp->pf, 0, sizeof(qp->pf));
}
