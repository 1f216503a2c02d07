/*
 * fuzz-seeds: write the seed corpus of qroce's two fuzz targets
 * (tests/fuzz-corpus/), one file per seed.
 *
 *   fuzz-seeds OUTDIR        (make tools builds it as build/tools/fuzz-seeds)
 *
 * The seeds replay what the qtests (qemu-device/tests/qtest/qroce-*-test.c)
 * do, in the input formats of the two targets:
 *
 * generic-fuzz-qroce  QEMU's generic-fuzz: operations separated by "FUZZ"
 *     (tests/qtest/fuzz/generic_fuzz.c).  Commands and WQEs reach the
 *     device as DMA patterns: every DMA read the device makes is filled
 *     with the next pattern.  MMIO region 0 is BAR0 (registers), 1 is
 *     BAR2 (doorbells).
 * qroce-frames        qemu-device/tests/qtest/fuzz/qroce_frames_fuzz.c:
 *     operations separated by "FUZZ" against a device set up with QPs of
 *     every type in RTS.
 *
 * Every number goes out little-endian, packed, as the targets read it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ */
/* Byte buffers                                                        */
/* ------------------------------------------------------------------ */

typedef struct Buf {
    uint8_t *p;
    size_t n, cap;
} Buf;

static void put(Buf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) {
            perror("fuzz-seeds");
            exit(2);
        }
    }
    if (src) {
        memcpy(b->p + b->n, src, n);
    } else {
        memset(b->p + b->n, 0, n);
    }
    b->n += n;
}

/* Little-endian integer of @size bytes. */
static void le(Buf *b, uint64_t v, int size)
{
    uint8_t x[8];
    int i;

    for (i = 0; i < size; i++) {
        x[i] = v >> (8 * i);
    }
    put(b, x, size);
}

static void u8(Buf *b, uint64_t v) { le(b, v, 1); }
static void u16(Buf *b, uint64_t v) { le(b, v, 2); }
static void u32(Buf *b, uint64_t v) { le(b, v, 4); }
static void u64(Buf *b, uint64_t v) { le(b, v, 8); }
static void zero(Buf *b, size_t n) { put(b, NULL, n); }
static void cat(Buf *b, const Buf *c) { put(b, c->p, c->n); }

/*
 * A seed: operations joined by "FUZZ".  op() starts the next operation
 * (with the separator when one came before) and returns the seed to
 * append it to.
 */
static Buf *op(Buf *seed)
{
    if (seed->n) {
        put(seed, "FUZZ", 4);
    }
    return seed;
}

static void write_seed(const char *dir, const char *name, Buf *seed)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
    f = fopen(path, "wb");
    if (!f || fwrite(seed->p, 1, seed->n, f) != seed->n || fclose(f)) {
        perror(path);
        exit(2);
    }
    free(seed->p);
    memset(seed, 0, sizeof(*seed));
}

/* ------------------------------------------------------------------ */
/* generic-fuzz-qroce                                                  */
/* ------------------------------------------------------------------ */

enum { OP_READ = 2, OP_WRITE, OP_PCI_READ, OP_PCI_WRITE, OP_ADD_DMA = 7,
       OP_CLEAR_DMA, OP_STEP };
enum { REGS, DB };
enum {
    CTRL = 0x10, CMDQ_BASE_LO = 0x40, CMDQ_BASE_HI = 0x44, CMDQ_LOG2 = 0x48,
    CMDQ_PI = 0x4c, CMDQ_CQ_LO = 0x54, CMDQ_CQ_HI = 0x58,
    ETH_CTRL = 0x80, TXQ_LO = 0x84, TXQ_HI = 0x88, TXQ_LOG2 = 0x8c,
    TXQ_PI = 0x90, RXQ_LO = 0x98, RXQ_HI = 0x9c, RXQ_LOG2 = 0xa0,
    RXQ_PI = 0xa4,
};
enum { DB_SQ = 0x0, DB_RQ = 0x8, DB_SRQ = 0x10, DB_CQ_ARM = 0x18 };
enum {
    CMD_NOP, CMD_CREATE_EQ, CMD_DESTROY_EQ, CMD_ALLOC_PD, CMD_DEALLOC_PD,
    CMD_CREATE_CQ, CMD_DESTROY_CQ, CMD_CREATE_QP, CMD_MODIFY_QP,
    CMD_QUERY_QP, CMD_DESTROY_QP, CMD_REG_MR, CMD_DEREG_MR, CMD_CREATE_SRQ,
    CMD_MODIFY_SRQ, CMD_DESTROY_SRQ, CMD_CREATE_AH, CMD_DESTROY_AH,
    CMD_SET_GID,
};

#define CMDQ    0x100000
#define COMP    0x101000
#define MR      0x300000

static const uint8_t own_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t v4_gid[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 };

/*
 * The QPNs and keys the qtests see on a fresh device: PD 1, CQ 1, QPs 2
 * and 3, MR key 0x101 (index 1, variant 1).  The fuzzer mutates them.
 */
enum { PDN = 1, CQN = 1, QA = 2, QB = 3, KEY = 0x101 };

enum {
    M_STATE = 1, M_ACCESS = 8, M_PKEY = 16, M_PORT = 32, M_QKEY = 64,
    M_AV = 128, M_MTU = 256, M_TIMEOUT = 512, M_RETRY = 1024,
    M_RNR_RETRY = 2048, M_RQ_PSN = 4096, M_MAX_RD = 8192,
    M_MIN_RNR = 1 << 15, M_SQ_PSN = 1 << 16, M_MAX_DEST_RD = 1 << 17,
    M_DEST_QPN = 1 << 20,
};
#define RC_INIT (M_STATE | M_PKEY | M_PORT | M_ACCESS)
#define RC_RTR  (M_STATE | M_AV | M_MTU | M_DEST_QPN | M_RQ_PSN | \
                 M_MAX_DEST_RD | M_MIN_RNR)
#define RC_RTS  (M_STATE | M_TIMEOUT | M_RETRY | M_RNR_RETRY | M_SQ_PSN | \
                 M_MAX_RD)
#define UC_RTR  (M_STATE | M_AV | M_MTU | M_DEST_QPN | M_RQ_PSN)

/* MMIO write of @size (log2 bytes) to region @base at @off. */
static void w(Buf *s, int base, uint32_t off, uint64_t val, int size)
{
    Buf *b = op(s);

    u8(b, OP_WRITE);
    u8(b, size);
    u8(b, base);
    zero(b, 2);
    u32(b, off);
    u64(b, val);
}

static void wr(Buf *s, uint32_t off, uint64_t val)
{
    w(s, REGS, off, val, 2);
}

static void rd(Buf *s, int base, uint32_t off)
{
    Buf *b = op(s);

    u8(b, OP_READ);
    u8(b, 2);
    u8(b, base);
    zero(b, 2);
    u32(b, off);
}

static void dma(Buf *s, const void *data, size_t n)
{
    Buf *b = op(s);

    u8(b, OP_ADD_DMA);
    u8(b, 0);
    u8(b, 0);
    put(b, data, n);
}

static void dmab(Buf *s, const Buf *data)
{
    dma(s, data->p, data->n);
}

static void clear(Buf *s)
{
    u8(op(s), OP_CLEAR_DMA);
}

static void step(Buf *s)
{
    u8(op(s), OP_STEP);
}

static void db(Buf *s, uint32_t off, uint32_t obj, uint32_t val)
{
    w(s, DB, off, ((uint64_t)val << 32) | obj, 3);
}

static void bt(Buf *b, uint64_t addr, uint32_t npages, int level)
{
    u64(b, addr);
    u32(b, npages);
    u8(b, 12);
    u8(b, level);
    u16(b, 0);
}

/* A 128-byte command: @op's header, then @body. */
static void cmd(Buf *c, int opcode, const Buf *body)
{
    memset(c, 0, sizeof(*c));
    u8(c, opcode);
    zero(c, 7);
    if (body) {
        cat(c, body);
    }
    zero(c, 128 - c->n);
}

static void create_eq(Buf *c, uint32_t eqn, uint64_t addr)
{
    Buf body = {};

    u32(&body, eqn);
    u8(&body, 8);
    zero(&body, 3);
    bt(&body, addr, 1, 0);
    cmd(c, CMD_CREATE_EQ, &body);
    free(body.p);
}

static void create_cq(Buf *c, uint32_t eqn, uint64_t addr)
{
    Buf body = {};

    u32(&body, eqn);
    u32(&body, 0);
    u8(&body, 6);
    zero(&body, 7);
    bt(&body, addr, 1, 0);
    cmd(c, CMD_CREATE_CQ, &body);
    free(body.p);
}

static void set_gid(Buf *c, uint32_t idx)
{
    Buf body = {};

    u32(&body, idx);
    u8(&body, 1);
    zero(&body, 3);
    put(&body, v4_gid, 16);
    cmd(c, CMD_SET_GID, &body);
    free(body.p);
}

/* REG_MR's fields, then the page table @level at @table. */
static void reg_mr(Buf *c, uint32_t access, uint32_t npages, uint64_t table,
                   int level)
{
    Buf body = {};

    u32(&body, PDN);
    u32(&body, access);
    u64(&body, MR);
    u64(&body, (uint64_t)npages * 4096);
    u32(&body, 0);
    u32(&body, 0);
    bt(&body, table, npages, level);
    cmd(c, CMD_REG_MR, &body);
    free(body.p);
}

static void create_qp(Buf *c, int qtype, uint64_t sq, uint64_t rq)
{
    Buf body = {};

    u32(&body, PDN);
    u32(&body, CQN);
    u32(&body, CQN);
    u32(&body, 0);          /* srqn */
    u32(&body, 0);          /* uar */
    u8(&body, qtype);
    u8(&body, 0);           /* flags */
    u8(&body, 4);
    u8(&body, 4);
    u8(&body, 6);
    u8(&body, 5);
    zero(&body, 6);
    bt(&body, sq, 1, 0);
    bt(&body, rq, 1, 0);
    cmd(c, CMD_CREATE_QP, &body);
    free(body.p);
}

/* An address vector to the device itself (IPv4 GID 0). */
static void av(Buf *b)
{
    put(b, v4_gid, 16);
    put(b, own_mac, 6);
    u8(b, 0);
    u8(b, 64);
    u8(b, 0);
    u8(b, 1);
    u16(b, 0);
    u32(b, 0);
}

static void modify(Buf *c, uint32_t qpn, uint32_t mask, int state,
                   uint32_t dest, uint32_t qkey, uint32_t sq_psn,
                   uint32_t rq_psn)
{
    static const uint8_t attrs[] = { 0, 0, 1, 14, 7, 7, 1, 1, 1 };
    Buf body = {};

    u32(&body, qpn);
    u32(&body, mask);
    put(&body, attrs, sizeof(attrs));
    body.p[9] = state;
    zero(&body, 3);
    u32(&body, 0xf);        /* access */
    u32(&body, qkey);
    u32(&body, sq_psn);
    u32(&body, rq_psn);
    u32(&body, dest);
    u32(&body, 0);
    av(&body);
    cmd(c, CMD_MODIFY_QP, &body);
    free(body.p);
}

/* A send WQE of one SGE, or with @inl inline bytes when @inl_len > 0. */
static void send_wqe(Buf *b, int opcode, uint64_t addr, uint32_t length,
                     uint32_t raddr, uint64_t cmp, const uint8_t *inl,
                     uint32_t inl_len)
{
    memset(b, 0, sizeof(*b));
    u8(b, opcode);
    u8(b, inl_len ? 1 | 4 : 1);
    u8(b, inl_len ? 0 : 1);
    u8(b, 0);
    u32(b, 0);
    u32(b, inl_len);
    u32(b, 0);
    u64(b, raddr);
    u32(b, raddr ? KEY : 0);
    u32(b, 0);
    u64(b, cmp);
    u64(b, 0);
    if (inl_len) {
        put(b, inl, inl_len);
        return;
    }
    u64(b, addr);
    u32(b, length);
    u32(b, KEY);
}

static void recv_wqe(Buf *b, uint64_t addr, uint32_t length)
{
    memset(b, 0, sizeof(*b));
    u8(b, 1);
    zero(b, 15);
    u64(b, addr);
    u32(b, length);
    u32(b, KEY);
}

static void enable(Buf *s)
{
    wr(s, CTRL, 2);
    wr(s, CMDQ_BASE_LO, CMDQ);
    wr(s, CMDQ_BASE_HI, 0);
    wr(s, CMDQ_CQ_LO, COMP);
    wr(s, CMDQ_CQ_HI, 0);
    wr(s, CMDQ_LOG2, 4);
    wr(s, CTRL, 1);
    rd(s, REGS, 0xc);
}

/*
 * Post @n commands as DMA patterns and ring the command doorbell at @n.
 * Each command takes four patterns: the device reads the command, then
 * maps its completion three times (out[], the first bytes, the owner
 * byte), and generic-fuzz fills every mapping with the next pattern.
 */
static void commands(Buf *s, Buf *cmds, int n)
{
    int i, k;

    clear(s);
    for (i = 0; i < n; i++) {
        for (k = 0; k < 4; k++) {
            dmab(s, &cmds[i]);
        }
    }
    wr(s, CMDQ_PI, n);
}

/* PD, two EQs, a CQ, GID 0 and a 4-page MR: 6 commands at @c. */
static int base_objects(Buf *c)
{
    cmd(&c[0], CMD_ALLOC_PD, NULL);
    create_eq(&c[1], 0, 0x102000);
    create_eq(&c[2], 1, 0x103000);
    create_cq(&c[3], 1, 0x104000);
    set_gid(&c[4], 0);
    reg_mr(&c[5], 0xf, 4, MR, 0);
    return 6;
}

/* @qpn to RTS towards @dest (RC, or UC if @uc): 3 commands at @c. */
static int connect(Buf *c, uint32_t qpn, uint32_t dest, int uc)
{
    modify(&c[0], qpn, RC_INIT, 1, 0, 0, 0, 0);
    if (uc) {
        modify(&c[1], qpn, UC_RTR, 2, dest, 0, 0, 100);
        modify(&c[2], qpn, M_STATE | M_SQ_PSN, 3, 0, 0, 100, 0);
    } else {
        modify(&c[1], qpn, RC_RTR, 2, dest, 0, 0, 100);
        modify(&c[2], qpn, RC_RTS, 3, 0, 0, 100, 0);
    }
    return 3;
}

static void free_cmds(Buf *c, int n)
{
    while (n--) {
        free(c[n].p);
    }
}

/* The objects and a connected pair of @qtype (0 RC, 1 UC): in @c. */
static int pair(Buf *c, int qtype)
{
    int n = base_objects(c);

    create_qp(&c[n++], qtype, 0x110000, 0x111000);
    create_qp(&c[n++], qtype, 0x112000, 0x113000);
    n += connect(&c[n], QA, QB, qtype);
    n += connect(&c[n], QB, QA, qtype);
    return n;
}

/*
 * The start of a seed with a connected pair of @qtype: B has a RECV WQE
 * posted, and the DMA patterns are cleared for the send WQE.
 */
static void start_pair(Buf *s, int qtype)
{
    Buf c[20], r;
    int n = pair(c, qtype);

    enable(s);
    commands(s, c, n);
    free_cmds(c, n);
    clear(s);
    recv_wqe(&r, MR + 0x1000, 4096);
    dmab(s, &r);
    free(r.p);
    db(s, DB_RQ, QB, 1);
    clear(s);
}

static void rc_seed(const char *dir, const char *name, const Buf *wqe)
{
    Buf s = {}, tail = {};
    int i;

    start_pair(&s, 0);
    dmab(&s, wqe);
    for (i = 0; i < 4; i++) {
        put(&tail, wqe->p + 48, wqe->n - 48);
    }
    dmab(&s, &tail);
    db(&s, DB_SQ, QA, 1);
    step(&s);
    db(&s, DB_CQ_ARM, CQN, 0x80000000u);
    write_seed(dir, name, &s);
    free(tail.p);
}

static void generic_rc(const char *dir)
{
    uint8_t inl[64];
    Buf wqe;
    int i;

    send_wqe(&wqe, 0, MR, 1000, 0, 0, NULL, 0);
    rc_seed(dir, "rc-send", &wqe);
    free(wqe.p);
    send_wqe(&wqe, 3, MR, 3000, MR + 0x2000, 0, NULL, 0);
    rc_seed(dir, "rc-write", &wqe);
    free(wqe.p);
    send_wqe(&wqe, 5, MR, 2000, MR + 0x2000, 0, NULL, 0);
    rc_seed(dir, "rc-read", &wqe);
    free(wqe.p);
    send_wqe(&wqe, 7, MR + 8, 8, MR + 0x2000, 5, NULL, 0);
    rc_seed(dir, "rc-atomic", &wqe);
    free(wqe.p);
    for (i = 0; i < 64; i++) {
        inl[i] = i;
    }
    send_wqe(&wqe, 0, 0, 0, 0, 0, inl, sizeof(inl));
    rc_seed(dir, "rc-inline", &wqe);
    free(wqe.p);
}

static void generic_uc_ud(const char *dir)
{
    Buf s = {}, c[20], r, x = {}, body = {};
    int n;

    start_pair(&s, 1);
    send_wqe(&x, 0, MR, 1500, 0, 0, NULL, 0);
    dmab(&s, &x);
    db(&s, DB_SQ, QA, 1);
    write_seed(dir, "uc-send", &s);
    free(x.p);

    /* UD: an AH to ourselves, a UD QP */
    n = base_objects(c);
    u32(&body, PDN);
    u32(&body, 0);
    av(&body);
    cmd(&c[n++], CMD_CREATE_AH, &body);
    create_qp(&c[n++], 2, 0x110000, 0x111000);
    modify(&c[n++], QA, M_STATE | M_PKEY | M_QKEY | M_PORT, 1, 0, 0x1111,
           0, 0);
    modify(&c[n++], QA, M_STATE, 2, 0, 0, 0, 0);
    modify(&c[n++], QA, M_STATE | M_SQ_PSN, 3, 0, 0, 7, 0);
    enable(&s);
    commands(&s, c, n);
    clear(&s);
    recv_wqe(&r, MR + 0x1000, 4096);
    dmab(&s, &r);
    db(&s, DB_RQ, QA, 1);
    clear(&s);
    x = (Buf){};
    u8(&x, 1);
    u8(&x, 1);
    u8(&x, 1);
    u8(&x, 0);
    u32(&x, 0x1234);
    u32(&x, 0);
    u32(&x, 0);
    u32(&x, 1);
    u32(&x, QA);
    u32(&x, 0x1111);
    zero(&x, 20);
    u64(&x, MR);
    u32(&x, 100);
    u32(&x, KEY);
    dmab(&s, &x);
    db(&s, DB_SQ, QA, 1);
    write_seed(dir, "ud-send", &s);
    free_cmds(c, n);
    free(x.p);
    free(r.p);
    free(body.p);
}

static void generic_srq_eth(const char *dir)
{
    Buf s = {}, c[8], r, body = {}, x = {};
    int n = base_objects(c);

    u32(&body, PDN);
    u32(&body, 0);
    u32(&body, 0);
    u8(&body, 6);
    u8(&body, 5);
    u16(&body, 0);
    u32(&body, 8);
    u32(&body, 0);
    bt(&body, 0x120000, 1, 0);
    cmd(&c[n++], CMD_CREATE_SRQ, &body);
    enable(&s);
    commands(&s, c, n);
    clear(&s);
    recv_wqe(&r, MR, 64);
    dmab(&s, &r);
    db(&s, DB_SRQ, 1, 4);
    write_seed(dir, "srq", &s);
    free_cmds(c, n);
    free(r.p);
    free(body.p);

    enable(&s);
    wr(&s, TXQ_LO, 0x200000);
    wr(&s, TXQ_HI, 0);
    wr(&s, TXQ_LOG2, 3);
    wr(&s, RXQ_LO, 0x201000);
    wr(&s, RXQ_HI, 0);
    wr(&s, RXQ_LOG2, 3);
    wr(&s, ETH_CTRL, 3);
    clear(&s);
    u64(&x, 0x202000);
    u16(&x, 60);
    u16(&x, 0);
    u32(&x, 0);
    dmab(&s, &x);
    x.n = 0;
    put(&x, own_mac, 6);
    put(&x, own_mac, 6);
    put(&x, "\x08\x06", 2);
    zero(&x, 46);
    dmab(&s, &x);
    wr(&s, TXQ_PI, 1);
    wr(&s, RXQ_PI, 4);
    write_seed(dir, "ethernet", &s);
    free(x.p);
}

static void generic_misc(const char *dir)
{
    Buf s = {}, c[6], x = {};
    int n, i;

    enable(&s);
    cmd(&c[0], CMD_NOP, NULL);
    commands(&s, c, 1);
    write_seed(dir, "enable", &s);
    free_cmds(c, 1);

    n = base_objects(c);
    enable(&s);
    commands(&s, c, n);
    write_seed(dir, "objects", &s);
    free_cmds(c, n);

    /* buffer tables through page lists (LIST1, LIST2) */
    cmd(&c[0], CMD_ALLOC_PD, NULL);
    reg_mr(&c[1], 1, 8, 0x130000, 2);
    reg_mr(&c[2], 1, 8, 0x131000, 3);
    enable(&s);
    clear(&s);
    for (i = 0; i < 3; i++) {
        dmab(&s, &c[i]);
    }
    for (i = 0; i < 8; i++) {
        u64(&x, MR + i * 4096);
    }
    dmab(&s, &x);
    x.n = 0;
    u64(&x, 0x132000);
    dmab(&s, &x);
    x.n = 0;
    for (i = 0; i < 8; i++) {
        u64(&x, MR + i * 4096);
    }
    dmab(&s, &x);
    wr(&s, CMDQ_PI, 3);
    write_seed(dir, "page-lists", &s);
    free_cmds(c, 3);
    free(x.p);

    /* PCI config space and MSI-X */
    u8(op(&s), OP_PCI_READ);
    u8(&s, 2);
    u8(&s, 0);
    u8(&s, 0);
    u8(op(&s), OP_PCI_WRITE);
    u8(&s, 1);
    u8(&s, 0);
    u8(&s, 4);
    u8(&s, 0);
    u32(&s, 6);
    enable(&s);
    write_seed(dir, "pci", &s);
}

/* ------------------------------------------------------------------ */
/* qroce-frames                                                        */
/* ------------------------------------------------------------------ */

enum { F_OP_RAW, F_OP_ROCE, F_OP_STEP, F_OP_DB, F_OP_ETH };
enum { F_V6 = 1, F_RAW_QPN = 2, F_RAW_RKEY = 8, F_RAW_VA = 16,
       F_CORRUPT = 32, F_TRUNC = 64, F_OTHER_MAC = 128 };
enum { Q_RC4, Q_RC6, Q_UC, Q_UD, Q_GSI, Q_SRQ };

/* One frame operation of qroce_frames_fuzz.c; unset fields are 0. */
typedef struct Roce {
    int qp, opcode, flags, bits;
    uint32_t dqpn;
    int32_t psn;
    uint64_t va;
    uint32_t rkey, length;
    int syndrome, corrupt_xor, corrupt_off;
    uint32_t msn, imm;
    uint64_t swap_add, compare, orig;
    uint32_t qkey, sqp;
    int trunc;
    int paylen, payk;       /* payload: pay(paylen, payk) */
} Roce;

static void roce(Buf *s, Roce f)
{
    Buf *b = op(s);
    int i;

    u8(b, F_OP_ROCE);
    u8(b, f.flags);
    u8(b, f.qp);
    u8(b, f.opcode);
    u8(b, f.bits);
    u32(b, f.dqpn);
    u32(b, (uint32_t)f.psn);
    u64(b, f.va);
    u32(b, f.rkey);
    u32(b, f.length);
    u8(b, f.syndrome);
    u8(b, f.corrupt_xor);
    u16(b, f.corrupt_off);
    u32(b, f.msn);
    u32(b, f.imm);
    u64(b, f.swap_add);
    u64(b, f.compare);
    u64(b, f.orig);
    u32(b, f.qkey);
    u32(b, f.sqp);
    u16(b, f.trunc);
    for (i = 0; i < f.paylen; i++) {
        u8(b, (i * (f.payk ? f.payk : 1) + 7) & 0xff);
    }
}

/*
 * The defaults of a frame, BTH bits 2 (AckReq) and source QP 0x33, which a
 * seed may override: a later designated initializer wins, as C says.
 */
#pragma GCC diagnostic ignored "-Woverride-init"
#define R(...) ((Roce){ .bits = 2, .sqp = 0x33, __VA_ARGS__ })

static void fdb(Buf *s, int which, int qp, uint32_t val)
{
    Buf *b = op(s);

    u8(b, F_OP_DB);
    u8(b, which);
    u8(b, qp);
    u32(b, val);
}

static void fstep(Buf *s)
{
    u8(op(s), F_OP_STEP);
}

static void frames_rc(const char *dir)
{
    Buf s = {};
    int i;

    /*
     * responses to QP 0's requests: SEND (PSN 0..2), WRITE (3..4), READ
     * (5..6), FETCH_ADD (7), CMP_SWAP (8)
     */
    roce(&s, R(.qp = Q_RC4, .opcode = 0x11, .psn = 2, .msn = 1));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x11, .psn = 4, .msn = 2));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x0d, .psn = 5, .msn = 2,
               .paylen = 1024));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x0f, .psn = 6, .msn = 3,
               .paylen = 976));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x12, .psn = 7, .msn = 4,
               .orig = 0x1122334455667788ULL));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x12, .psn = 8, .msn = 5, .orig = 1));
    write_seed(dir, "acks", &s);

    roce(&s, R(.qp = Q_RC4, .opcode = 0x11, .psn = 0, .syndrome = 0x60));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x11, .psn = 1, .syndrome = 0x21));
    fstep(&s);
    roce(&s, R(.qp = Q_RC4, .opcode = 0x11, .psn = 2, .syndrome = 0x62));
    fstep(&s);
    write_seed(dir, "naks", &s);

    for (i = 0; i < 8; i++) {
        fstep(&s);
    }
    write_seed(dir, "retransmit", &s);

    roce(&s, R(.qp = Q_RC4, .opcode = 0x11, .psn = 4, .msn = 2));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x10, .psn = 5, .msn = 3,
               .paylen = 2000));
    write_seed(dir, "read-resp-only", &s);

    roce(&s, R(.qp = Q_RC4, .opcode = 0x00, .psn = 0, .paylen = 1024));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x01, .psn = 1, .paylen = 1024,
               .payk = 3));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x03, .psn = 2, .imm = 0xdeadbeef,
               .paylen = 100));
    write_seed(dir, "send-rc", &s);

    roce(&s, R(.qp = Q_RC6, .opcode = 0x04, .psn = 0, .paylen = 200));
    roce(&s, R(.qp = Q_RC6, .opcode = 0x05, .psn = 1, .bits = 3, .imm = 7,
               .paylen = 10));
    write_seed(dir, "send-rc6", &s);
}

static void frames_rdma(const char *dir)
{
    Buf s = {};

    roce(&s, R(.qp = Q_RC4, .opcode = 0x0a, .psn = 0, .length = 200,
               .paylen = 200));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x06, .psn = 1, .va = 0x1000,
               .length = 2100, .paylen = 1024));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x07, .psn = 2, .paylen = 1024));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x09, .psn = 3, .imm = 5,
               .paylen = 52));
    write_seed(dir, "write", &s);

    roce(&s, R(.qp = Q_RC4, .opcode = 0x0b, .psn = 0, .va = 0x100,
               .length = 16, .imm = 9, .paylen = 16));
    write_seed(dir, "write-imm", &s);

    roce(&s, R(.qp = Q_RC4, .opcode = 0x0c, .psn = 0, .va = 0x2000,
               .length = 3000));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x0c, .psn = 0, .va = 0x2000,
               .length = 3000));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x0c, .psn = 3, .va = 0,
               .length = 0x80000000u));
    write_seed(dir, "read-req", &s);

    roce(&s, R(.qp = Q_RC4, .opcode = 0x13, .psn = 0, .va = 0x40,
               .swap_add = 5));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x14, .psn = 1, .va = 0x48,
               .swap_add = 1));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x14, .psn = 1, .va = 0x48,
               .swap_add = 1));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x14, .psn = 2, .va = 0x43,
               .swap_add = 1));
    write_seed(dir, "atomics", &s);
}

static void frames_other_qps(const char *dir)
{
    Buf s = {};

    roce(&s, R(.qp = Q_UC, .opcode = 0x24, .psn = 0, .paylen = 300));
    roce(&s, R(.qp = Q_UC, .opcode = 0x2a, .psn = 1, .va = 0x800,
               .length = 64, .paylen = 64));
    roce(&s, R(.qp = Q_UC, .opcode = 0x20, .psn = 2, .paylen = 1024));
    roce(&s, R(.qp = Q_UC, .opcode = 0x22, .psn = 4, .paylen = 10));
    write_seed(dir, "uc", &s);

    roce(&s, R(.qp = Q_UD, .opcode = 0x64, .psn = 0, .qkey = 0x1111,
               .paylen = 256));
    roce(&s, R(.qp = Q_UD, .opcode = 0x65, .psn = 1, .imm = 3,
               .paylen = 1000));
    roce(&s, R(.qp = Q_UD, .opcode = 0x64, .psn = 2, .flags = F_V6,
               .paylen = 100));
    write_seed(dir, "ud", &s);

    roce(&s, R(.qp = Q_GSI, .opcode = 0x64, .psn = 0, .bits = 4,
               .paylen = 256));
    write_seed(dir, "gsi", &s);

    roce(&s, R(.qp = Q_SRQ, .opcode = 0x04, .psn = 0, .paylen = 500));
    roce(&s, R(.qp = Q_SRQ, .opcode = 0x04, .psn = 1, .paylen = 2048));
    fdb(&s, 2, 0, 20);
    write_seed(dir, "srq", &s);

    roce(&s, R(.qp = Q_RC4, .opcode = 0x81, .psn = 0, .bits = 0));
    write_seed(dir, "cnp", &s);
}

static void frames_bad(const char *dir)
{
    static const uint8_t arp[] = {
        0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01,
        0x52, 0x54, 0x00, 0xaa, 0xbb, 0x01, 10, 0, 0, 2,
        0, 0, 0, 0, 0, 0, 10, 0, 0, 1,
    };
    static const uint8_t ipv4_short[] = {
        0x08, 0x00, 0x45, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x40, 0x00,
        0x40, 0x11, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
    };
    static const uint8_t v6_hdr[] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0x52, 0x54, 0x00, 0xaa, 0xbb, 0x01, 0x86, 0xdd,
    };
    Buf s = {};

    roce(&s, R(.qp = Q_RC4, .opcode = 0x04, .flags = F_CORRUPT,
               .corrupt_off = 24, .corrupt_xor = 1, .paylen = 64));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x04, .flags = F_CORRUPT,
               .corrupt_off = 50, .corrupt_xor = 0x80, .paylen = 64));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x04, .flags = F_TRUNC, .trunc = 20,
               .paylen = 64));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x0a, .flags = F_RAW_RKEY,
               .rkey = 0x4242, .length = 8, .paylen = 8));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x0a, .flags = F_RAW_VA,
               .va = 0xffffffffffff0000ULL, .length = 64, .paylen = 64));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x04, .flags = F_RAW_QPN,
               .dqpn = 0xffffff, .paylen = 8));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x04, .flags = F_OTHER_MAC,
               .paylen = 8));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x1f, .paylen = 8));
    roce(&s, R(.qp = Q_RC4, .opcode = 0x04, .psn = 0x7fffff, .paylen = 8));
    write_seed(dir, "malformed", &s);

    u8(op(&s), F_OP_ETH);
    put(&s, arp, sizeof(arp));
    u8(op(&s), F_OP_ETH);
    put(&s, ipv4_short, sizeof(ipv4_short));
    u8(op(&s), F_OP_RAW);
    put(&s, v6_hdr, sizeof(v6_hdr));
    zero(&s, 60);
    u8(op(&s), F_OP_RAW);
    zero(&s, 13);
    write_seed(dir, "ethernet", &s);

    fdb(&s, 0, 0, 6);
    fdb(&s, 1, 0, 17);
    fdb(&s, 3, 0, 0x80000001u);
    fdb(&s, 4, 0, 1000);
    fdb(&s, 2, 0, 65);
    fdb(&s, 1, 3, 0xffffffffu);
    write_seed(dir, "doorbells", &s);
}

/* ------------------------------------------------------------------ */

static char *subdir(const char *out, const char *name)
{
    static char path[4096];

    snprintf(path, sizeof(path), "%s/%s", out, name);
    if ((mkdir(out, 0777) && errno != EEXIST) ||
        (mkdir(path, 0777) && errno != EEXIST)) {
        perror(path);
        exit(2);
    }
    return path;
}

int main(int argc, char **argv)
{
    char *dir;

    if (argc != 2) {
        fprintf(stderr, "usage: fuzz-seeds OUTDIR   (e.g. tests/fuzz-corpus)\n");
        return 2;
    }
    dir = subdir(argv[1], "generic-fuzz-qroce");
    generic_misc(dir);
    generic_rc(dir);
    generic_uc_ud(dir);
    generic_srq_eth(dir);
    printf("%s: 13 seeds\n", dir);
    dir = subdir(argv[1], "qroce-frames");
    frames_rc(dir);
    frames_rdma(dir);
    frames_other_qps(dir);
    frames_bad(dir);
    printf("%s: 18 seeds\n", dir);
    return 0;
}
