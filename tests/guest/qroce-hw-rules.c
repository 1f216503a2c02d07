/*
 * qroce-hw-rules: where the verbs leave a choice, the device does what
 * RDMA hardware does (docs/hw-spec.md; issue 34).  One device, QPs looped
 * back through it; each check prints PASS or FAIL with what it saw:
 *
 *  - mw-key-byte: a type 2 bind (IBV_WR_BIND_MW) whose new rkey has other
 *    upper 24 bits takes only its low 8 (the key byte); a WRITE through
 *    the window's own index with that byte lands;
 *  - mw-zero-based: a type 2 bind with IBV_ACCESS_ZERO_BASED; a WRITE at
 *    address 100 of the window lands 100 bytes into the bound range;
 *  - zero-length-mr: ibv_reg_mr of 0 bytes succeeds; a SEND of 0 bytes
 *    from it and WRITE and READ of 0 bytes to it (one far outside it)
 *    complete successfully;
 *  - local-key-order: a FETCH_ADD with a bad lkey and a good rkey ends in
 *    IBV_WC_LOC_PROT_ERR after it executed at the responder (the target
 *    grew); with the rkey bad too it ends in IBV_WC_REM_ACCESS_ERR;
 *  - arm-any-then-solicited: ibv_req_notify_cq(cq, 0) then (cq, 1): an
 *    unsolicited completion raises the event;
 *  - ud-too-long: a UD message longer than the posted RECV is dropped and
 *    the RECV stays: the next message that fits completes on it;
 *  - retry-timing: a SEND to a QP that never answers, timeout 18 (1.07 s)
 *    and retry_cnt 2, ends in IBV_WC_RETRY_EXC_ERR within about
 *    timeout x (retry_cnt + 1) (3.2 s; at most 6 s is taken).
 *
 *   qroce-hw-rules [-d DEVICE] [-g GID_INDEX] [CHECK...]
 *
 * Without CHECKs every check runs.  Exits 1 if a check failed, 2 on a
 * set-up error.
 */
#include <getopt.h>
#include <poll.h>
#include "qr_verbs.h"

#define KEYB 0xffu      /* the key byte of an rkey */
#define NCHECKS(a) (sizeof(a) / sizeof((a)[0]))

/* One-SGE WR of @op from @laddr/@lkey (@len bytes) to @raddr/@rkey. */
static struct ibv_send_wr rdma_wr(enum ibv_wr_opcode op, struct ibv_sge *sge,
                                  uint64_t raddr, uint32_t rkey)
{
    struct ibv_send_wr wr = { .wr_id = 7, .sg_list = sge, .num_sge = 1,
                              .opcode = op,
                              .send_flags = IBV_SEND_SIGNALED };

    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return wr;
}

/* A page registered for windows, and a type 2 window bound by @p's b. */
static int bind2(struct pair *p, struct ibv_mr *t, struct ibv_mw *mw,
                 uint32_t rkey, uint64_t addr, uint64_t len, int zb)
{
    struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_BIND_MW,
                              .send_flags = IBV_SEND_SIGNALED };

    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = rkey;
    wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
        .mr = t, .addr = addr, .length = len,
        .mw_access_flags = IBV_ACCESS_REMOTE_WRITE | zb,
    };
    return run_wr(p->b, p->cq, &wr, NULL);
}

/*
 * mw-key-byte and mw-zero-based: @zb 0 or IBV_ACCESS_ZERO_BASED; the
 * bind's new rkey has another index in its upper bits.
 */
static void check_mw(int zb)
{
    uint8_t *t = aligned_alloc(4096, 4096);
    struct ibv_mr *tm;
    struct ibv_mw *mw;
    struct ibv_sge sge = { (uintptr_t)buf, 64, 0 };
    struct ibv_send_wr wr;
    struct pair p;
    uint32_t key, nk;
    int st, st2, i;

    tm = t ? ibv_reg_mr(pd, t, 4096, IBV_ACCESS_LOCAL_WRITE |
                        IBV_ACCESS_MW_BIND) : NULL;
    mw = tm ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
    if (!mw) {
        check(0, zb ? "mw-zero-based: no type 2 window" :
                      "mw-key-byte: no type 2 window");
        return;
    }
    memset(t, 0, 4096);
    make_pair(&p);
    sge.lkey = mr->lkey;
    for (i = 0; i < 64; i++) {
        buf[i] = i * 7 + 1;
    }
    nk = (mw->rkey + (5u << 8)) & ~KEYB;
    nk |= (mw->rkey + 1) & KEYB;
    key = (mw->rkey & ~KEYB) | (nk & KEYB);
    st = bind2(&p, tm, mw, nk, (uintptr_t)t + 1024, 512, zb);
    wr = rdma_wr(IBV_WR_RDMA_WRITE, &sge, zb ? 100 : (uintptr_t)t + 1124,
                 key);
    st2 = st ? -1 : (int)run_wr(p.a, p.cq, &wr, NULL);
    printf("# %s: bind %s, write %s\n", zb ? "mw-zero-based" : "mw-key-byte",
           ibv_wc_status_str(st), st2 < 0 ? "-" : ibv_wc_status_str(st2));
    check(!st && !st2 && !memcmp(t + 1124, buf, 64),
          zb ? "mw-zero-based: a WRITE at 100 lands 100 bytes into the range"
             : "mw-key-byte: the bind takes the key byte, the index stays");
    ibv_dealloc_mw(mw);     /* before the QP it is bound to */
    free_pair(&p);
    ibv_dereg_mr(tm);
    free(t);
}

/* zero-length-mr */
static void check_zero_mr(void)
{
    struct ibv_mr *z = ibv_reg_mr(pd, buf + 100, 0, IBV_ACCESS_LOCAL_WRITE |
                                  IBV_ACCESS_REMOTE_WRITE |
                                  IBV_ACCESS_REMOTE_READ);
    struct ibv_sge sge = { (uintptr_t)buf + 100, 0, 0 };
    struct ibv_send_wr wr;
    struct pair p;
    int s1, s2, s3, s4;

    printf("# zero-length-mr: ibv_reg_mr of 0 bytes: %s\n",
           z ? "a key" : strerror(errno));
    if (!z) {
        check(0, "zero-length-mr: ibv_reg_mr of 0 bytes succeeds");
        return;
    }
    qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    make_pair(&p);
    qp_access = IBV_ACCESS_REMOTE_WRITE;
    sge.lkey = z->lkey;
    s1 = post_recv(p.b, (uintptr_t)buf, 64, 1);
    wr = rdma_wr(IBV_WR_SEND, &sge, 0, 0);
    s1 = s1 ? -1 : (int)run_wr(p.a, p.cq, &wr, NULL);
    s2 = poll1(p.cq, &(struct ibv_wc){ 0 }) ? 0 : -1;
    wr = rdma_wr(IBV_WR_RDMA_WRITE, &sge, (uintptr_t)buf + 100, z->rkey);
    s3 = run_wr(p.a, p.cq, &wr, NULL);
    wr = rdma_wr(IBV_WR_RDMA_READ, &sge, (uintptr_t)buf + 100 + (1 << 20),
                 z->rkey);
    s4 = run_wr(p.a, p.cq, &wr, NULL);
    printf("# zero-length-mr: SEND %d, its RECV %d, WRITE %d, READ %d\n",
           s1, s2, s3, s4);
    check(!s1 && !s2 && !s3 && !s4,
          "zero-length-mr: 0-byte SEND, WRITE and READ with it complete");
    free_pair(&p);
    ibv_dereg_mr(z);
}

/* One FETCH_ADD of 5 into @t through @rkey, the answer to @lkey. */
static int fetch_add(struct pair *p, uint64_t *t, uint32_t rkey,
                     uint32_t lkey)
{
    struct ibv_sge sge = { (uintptr_t)buf, 8, lkey };
    struct ibv_send_wr wr = rdma_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, &sge, 0, 0);

    wr.wr.atomic.remote_addr = (uintptr_t)t;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = 5;
    return run_wr(p->a, p->cq, &wr, NULL);
}

/* local-key-order */
static void check_key_order(void)
{
    uint64_t *t = aligned_alloc(4096, 4096);
    struct ibv_mr *tm;
    struct pair p;
    int s1, s2;

    qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
    tm = t ? ibv_reg_mr(pd, t, 4096, IBV_ACCESS_LOCAL_WRITE |
                        IBV_ACCESS_REMOTE_ATOMIC) : NULL;
    if (!tm) {
        die("ibv_reg_mr (atomic)");
    }
    *t = 5;
    make_pair(&p);
    s1 = fetch_add(&p, t, tm->rkey, mr->lkey + 0x100000);
    free_pair(&p);
    make_pair(&p);
    s2 = fetch_add(&p, t, tm->rkey + 0x100000, mr->lkey + 0x100000);
    free_pair(&p);
    qp_access = IBV_ACCESS_REMOTE_WRITE;
    printf("# local-key-order: bad lkey %s (target %llu), both bad %s\n",
           ibv_wc_status_str(s1), (unsigned long long)*t,
           ibv_wc_status_str(s2));
    check(s1 == IBV_WC_LOC_PROT_ERR && *t == 10,
          "local-key-order: a FETCH_ADD with a bad lkey executes, then "
          "LOC_PROT_ERR");
    check(s2 == IBV_WC_REM_ACCESS_ERR,
          "local-key-order: bad lkey and rkey: REM_ACCESS_ERR");
    ibv_dereg_mr(tm);
    free(t);
}

/* arm-any-then-solicited */
static void check_arm(void)
{
    struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
    struct ibv_cq *cq = ch ? ibv_create_cq(ctx, 16, NULL, ch, 0) : NULL;
    struct pollfd pfd;
    struct ibv_cq *ecq;
    struct ibv_wc wc;
    struct ibv_qp *a, *b;
    void *ectx;
    int got;

    if (!cq) {
        die("ibv_create_cq (channel)");
    }
    a = make_qp(cq);
    b = make_qp(cq);
    connect_qp(a, b->qp_num);
    connect_qp(b, a->qp_num);
    if (post_recv(b, (uintptr_t)buf, 64, 1) || ibv_req_notify_cq(cq, 0) ||
        ibv_req_notify_cq(cq, 1) || post_send(a, (uintptr_t)buf, 16,
                                              mr->lkey, 2)) {
        die("arm/post");
    }
    pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
    got = poll(&pfd, 1, 3000) == 1 && !ibv_get_cq_event(ch, &ecq, &ectx);
    printf("# arm-any-then-solicited: event %s\n", got ? "raised" : "none");
    check(got, "arm-any-then-solicited: an unsolicited completion raises "
          "the event");
    if (got) {
        ibv_ack_cq_events(ecq, 1);
    }
    while (ibv_poll_cq(cq, 1, &wc) > 0) {
        ;
    }
    ibv_destroy_qp(a);
    ibv_destroy_qp(b);
    ibv_destroy_cq(cq);
    ibv_destroy_comp_channel(ch);
}

/* A UD SEND of @len bytes from @a to @b through @ah: its status. */
static int ud_send(struct ibv_qp *a, struct ibv_cq *cq, struct ibv_ah *ah,
                   uint32_t qpn, uint32_t len)
{
    struct ibv_sge sge = { (uintptr_t)buf + 4096, len, mr->lkey };
    struct ibv_send_wr wr = rdma_wr(IBV_WR_SEND, &sge, 0, 0);

    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = qpn;
    wr.wr.ud.remote_qkey = 0x1234;
    return run_wr(a, cq, &wr, NULL);
}

/* ud-too-long: A sends on @cq, B receives on @rcq */
static void check_ud_too_long(void)
{
    struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    struct ibv_cq *rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
    struct ibv_qp *a, *b;
    struct ibv_ah *ah;
    struct ibv_wc wc = { 0 };
    int s1, s2, late;

    if (!cq || !rcq || ibv_query_gid(ctx, 1, gid_index, &aa.grh.dgid)) {
        die("UD CQ/GID");
    }
    aa.grh.sgid_index = gid_index;
    aa.grh.hop_limit = 64;
    a = make_ud_qp(cq, 0x1234, 4);
    b = make_ud_qp(rcq, 0x1234, 4);
    ah = ibv_create_ah(pd, &aa);
    if (!ah || post_recv(b, (uintptr_t)buf, 40 + 16, 9)) {
        die("UD AH/RECV");
    }
    s1 = ud_send(a, cq, ah, b->qp_num, 100);
    usleep(300 * 1000);
    late = ibv_poll_cq(rcq, 1, &wc);
    s2 = ud_send(a, cq, ah, b->qp_num, 10);
    s2 = s2 ? s2 : !poll1(rcq, &wc) ? -1 : (int)wc.status;
    printf("# ud-too-long: 100 B %s, then %s; 10 B %d on wr_id %llu, %u "
           "bytes\n", ibv_wc_status_str(s1), late ? "a completion" : "none",
           s2, (unsigned long long)wc.wr_id, wc.byte_len);
    check(!s1 && !late && !s2 && wc.wr_id == 9 && wc.byte_len == 50,
          "ud-too-long: dropped, the RECV kept for the next message");
    ibv_destroy_ah(ah);
    ibv_destroy_qp(a);
    ibv_destroy_qp(b);
    ibv_destroy_cq(cq);
    ibv_destroy_cq(rcq);
}

/* retry-timing */
static void check_retry(void)
{
    struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    struct timespec t0, t1;
    struct ibv_qp *a, *b;
    struct ibv_wc wc;
    double s;
    int got;

    if (!cq) {
        die("ibv_create_cq");
    }
    qp_timeout = 18;
    qp_retry = 2;
    a = make_qp(cq);
    b = make_qp(cq);    /* stays in INIT: it never answers */
    connect_qp(a, b->qp_num);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (post_send(a, (uintptr_t)buf, 16, mr->lkey, 3)) {
        die("post_send");
    }
    do {
        got = ibv_poll_cq(cq, 1, &wc);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    } while (!got && s < 20);
    printf("# retry-timing: %s after %.1f s (timeout x 3 = 3.2 s)\n",
           got ? ibv_wc_status_str(wc.status) : "nothing", s);
    check(got == 1 && wc.status == IBV_WC_RETRY_EXC_ERR && s > 2.5 && s < 6,
          "retry-timing: RETRY_EXC_ERR within timeout x (retry_cnt + 1)");
    qp_timeout = 14;
    qp_retry = 7;
    ibv_destroy_qp(a);
    ibv_destroy_qp(b);
    ibv_destroy_cq(cq);
}

static void check_mw_key(void)
{
    check_mw(0);
}

static void check_mw_zb(void)
{
    check_mw(IBV_ACCESS_ZERO_BASED);
}

static const struct {
    const char *name;
    void (*fn)(void);
} checks[] = {
    { "mw-key-byte", check_mw_key },
    { "mw-zero-based", check_mw_zb },
    { "zero-length-mr", check_zero_mr },
    { "local-key-order", check_key_order },
    { "arm-any-then-solicited", check_arm },
    { "ud-too-long", check_ud_too_long },
    { "retry-timing", check_retry },
};

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    unsigned int i;
    int c, k;

    while ((c = getopt(argc, argv, "d:g:")) != -1) {
        if (!qr_common_opt(c, &dev)) {
            fprintf(stderr, "usage: qroce-hw-rules [-d DEVICE] "
                    "[-g GID_INDEX] [CHECK...]\n");
            return 2;
        }
    }
    open_dev(dev);
    for (k = optind; k < argc; k++) {
        for (i = 0; i < NCHECKS(checks); i++) {
            if (!strcmp(argv[k], checks[i].name)) {
                break;
            }
        }
        if (i == NCHECKS(checks)) {
            fprintf(stderr, "qroce-hw-rules: no check %s\n", argv[k]);
            return 2;
        }
    }
    for (i = 0; i < NCHECKS(checks); i++) {
        for (k = optind; k < argc && strcmp(argv[k], checks[i].name); k++) {
            ;
        }
        if (optind == argc || k < argc) {
            checks[i].fn();
        }
    }
    return failed;
}
