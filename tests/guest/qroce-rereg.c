/*
 * qroce-rereg: ibv_rereg_mr changes an MR in place, as the device sees it.
 *
 *   qroce-rereg [-d DEVICE] [-g GID_INDEX]
 *
 * An MR with remote write over buffer X; RC pairs looped back through the
 * device write into it (a fresh pair for each write: a refused one puts
 * its QP in error).  Then:
 *  - CHANGE_TRANSLATION to buffer Y: a write lands in Y, X is untouched,
 *    and a write to X's range through the same key is refused;
 *  - CHANGE_ACCESS to local write only: a write is refused, Y untouched;
 *  - CHANGE_ACCESS back and CHANGE_PD to another PD: a write from a QP of
 *    the first PD is refused, one from a QP of the new PD lands;
 *  - the key never changes; flags 0 are refused.
 * Prints PASS/FAIL lines; exits 1 if a check failed, 2 on a set-up error.
 */
#include <getopt.h>
#include "qr_verbs.h"

#define SZ 4096

static uint8_t *xbuf, *ybuf;

/*
 * RDMA WRITE @len bytes of @fill from a new pair on PD @p to @raddr with
 * @rkey; the status of its completion.
 */
static enum ibv_wc_status write_to(struct ibv_pd *p, uint64_t raddr,
                                   uint32_t rkey, uint8_t fill, uint32_t len)
{
    struct ibv_pd *saved = pd;
    struct ibv_mr *src;
    struct pair pr;
    struct ibv_wc wc;
    struct ibv_sge sge;
    struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
                              .opcode = IBV_WR_RDMA_WRITE,
                              .send_flags = IBV_SEND_SIGNALED }, *bad;
    enum ibv_wc_status st = IBV_WC_GENERAL_ERR;

    pd = p;                     /* make_pair creates its QPs on pd */
    make_pair(&pr);
    pd = saved;
    src = ibv_reg_mr(p, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
    if (!src) {
        die("ibv_reg_mr (source)");
    }
    memset(buf, fill, len);
    sge = (struct ibv_sge){ (uintptr_t)buf, len, src->lkey };
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    if (!ibv_post_send(pr.a, &wr, &bad) && poll1(pr.cq, &wc)) {
        st = wc.status;
    }
    ibv_destroy_qp(pr.a);
    ibv_destroy_qp(pr.b);
    ibv_destroy_cq(pr.cq);
    ibv_dereg_mr(src);
    return st;
}

static int all(const uint8_t *p, uint8_t v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != v) {
            return 0;
        }
    }
    return 1;
}

static void expect(const char *what, enum ibv_wc_status got,
                   enum ibv_wc_status want, int data_ok)
{
    char msg[200];

    snprintf(msg, sizeof(msg), "%s: %s (want %s), memory %s", what,
             ibv_wc_status_str(got), ibv_wc_status_str(want),
             data_ok ? "as expected" : "WRONG");
    check(got == want && data_ok, msg);
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    struct ibv_pd *pd2;
    struct ibv_mr *m;
    enum ibv_wc_status st;
    uint32_t key;
    int c, rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

    while ((c = getopt(argc, argv, "d:g:")) != -1) {
        switch (c) {
        case 'd': dev = optarg; break;
        case 'g': gid_index = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: qroce-rereg [-d DEVICE] [-g GID_INDEX]\n");
            return 2;
        }
    }
    open_dev(dev);
    if (posix_memalign((void **)&xbuf, SZ, SZ) ||
        posix_memalign((void **)&ybuf, SZ, SZ)) {
        die("posix_memalign");
    }
    memset(xbuf, 0, SZ);
    memset(ybuf, 0, SZ);
    pd2 = ibv_alloc_pd(ctx);
    m = ibv_reg_mr(pd, xbuf, SZ, rw);
    if (!pd2 || !m) {
        die("set-up");
    }
    key = m->rkey;
    st = write_to(pd, (uintptr_t)xbuf, key, 0x11, 256);
    expect("write into X", st, IBV_WC_SUCCESS, all(xbuf, 0x11, 256));

    check(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, ybuf, SZ,
                       0) == 0 && m->rkey == key,
          "rereg to Y (CHANGE_TRANSLATION) succeeds, the key stays");
    st = write_to(pd, (uintptr_t)ybuf, key, 0x22, 512);
    expect("write into Y through the same key", st, IBV_WC_SUCCESS,
           all(ybuf, 0x22, 512) && all(xbuf, 0x11, 256) &&
           all(xbuf + 256, 0, SZ - 256));
    st = write_to(pd, (uintptr_t)xbuf, key, 0x33, 64);
    expect("write to X's range, no longer the MR's", st,
           IBV_WC_REM_ACCESS_ERR, all(xbuf, 0x11, 256));

    check(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
                       IBV_ACCESS_LOCAL_WRITE) == 0,
          "rereg to local write only (CHANGE_ACCESS) succeeds");
    st = write_to(pd, (uintptr_t)ybuf, key, 0x44, 64);
    expect("write without remote write access", st, IBV_WC_REM_ACCESS_ERR,
           all(ybuf, 0x22, 512));

    check(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS | IBV_REREG_MR_CHANGE_PD,
                       pd2, NULL, 0, rw) == 0 && m->pd == pd2,
          "rereg to another PD with remote write back succeeds");
    st = write_to(pd, (uintptr_t)ybuf, key, 0x55, 64);
    expect("write from a QP of the old PD", st, IBV_WC_REM_ACCESS_ERR,
           all(ybuf, 0x22, 512));
    st = write_to(pd2, (uintptr_t)ybuf, key, 0x66, 128);
    expect("write from a QP of the new PD", st, IBV_WC_SUCCESS,
           all(ybuf, 0x66, 128) && all(ybuf + 128, 0x22, 384));

    check(ibv_rereg_mr(m, 0, NULL, NULL, 0, 0) != 0,
          "rereg with no flag is refused");
    check(ibv_dereg_mr(m) == 0, "the MR deregisters");
    return failed;
}
