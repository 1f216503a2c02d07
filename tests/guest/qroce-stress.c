/*
 * qroce-stress: QPs created and destroyed under a CQ that other threads
 * keep polling.
 *
 *   qroce-stress [-d DEVICE] [-g GID_INDEX] [-p POLLERS] [-w WORKERS]
 *                [-t SECONDS] [-s SEED]
 *
 * All QPs share one CQ (send and receive).  POLLERS threads poll it
 * without pause.  WORKERS threads each loop: create an RC pair, connect
 * it to itself through the device (loopback, GID index -g), post receives
 * on one side and signaled SENDs on the other, then either wait for every
 * completion (even pairs: nothing may be lost) or destroy the pair at a
 * random moment with work still in flight (odd pairs).  QPNs come back
 * fast, so a new pair often reuses the numbers of a destroyed one.
 *
 * A wr_id names its pair (a generation number), its side and its WQE.  A
 * poller fails the run on a completion of a pair whose destroy had
 * returned before the poll began (a stale CQE, perhaps under a reused
 * QPN), a completion reported twice, one with a QPN not its pair's, or
 * one of a pair never created; a worker fails it when a waited-for
 * completion does not come within 10 s.  PASS/FAIL lines; exit 1 on a
 * failure.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include "qr_verbs.h"

#define MAXGEN      (1u << 16)
#define NMSG        8               /* SENDs (and receives) per pair */
#define CQ_DEPTH    4096

struct gen {
    _Atomic uint32_t qpn[2];        /* sender, receiver */
    _Atomic uint64_t dead_at;       /* epoch after its destroy returned */
    _Atomic uint32_t seen[2];       /* bitmap of completed WQEs per side */
    _Atomic uint32_t ncomp;
};

static struct gen *gens;
static _Atomic uint32_t next_gen = 1;
static _Atomic uint64_t epoch = 1;
static _Atomic int stop;
static _Atomic uint64_t n_comp, n_flush, n_pairs, n_waited;
static _Atomic uint64_t n_stale, n_dup, n_badqpn, n_unknown, n_lost;
static struct ibv_cq *cq;
static int seconds = 20;

static uint64_t wrid(uint32_t gen, int side, int i)
{
    return (uint64_t)gen << 16 | (uint64_t)side << 8 | (uint64_t)i;
}

static void *poller(void *arg)
{
    struct ibv_wc wc[16];

    (void)arg;
    while (!atomic_load(&stop)) {
        /* a destroy that returned before this point must show no CQE */
        uint64_t before = atomic_load(&epoch);
        int n = ibv_poll_cq(cq, 16, wc), i;

        if (n < 0) {
            fprintf(stderr, "ibv_poll_cq: %d\n", n);
            atomic_fetch_add(&n_unknown, 1);
            break;
        }
        for (i = 0; i < n; i++) {
            uint32_t g = wc[i].wr_id >> 16;
            int side = (wc[i].wr_id >> 8) & 0xff;
            int k = wc[i].wr_id & 0xff;
            uint64_t dead;
            struct gen *p;

            atomic_fetch_add(&n_comp, 1);
            if (wc[i].status != IBV_WC_SUCCESS) {
                atomic_fetch_add(&n_flush, 1);
            }
            if (!g || g >= atomic_load(&next_gen) || side > 1 ||
                k >= NMSG) {
                printf("completion with unknown wr_id 0x%llx (qpn %u)\n",
                       (unsigned long long)wc[i].wr_id, wc[i].qp_num);
                atomic_fetch_add(&n_unknown, 1);
                continue;
            }
            p = &gens[g];
            dead = atomic_load(&p->dead_at);
            if (dead && dead <= before) {
                printf("completion of pair %u after its destroy (qpn %u, "
                       "status %s)\n", g, wc[i].qp_num,
                       ibv_wc_status_str(wc[i].status));
                atomic_fetch_add(&n_stale, 1);
            }
            if (wc[i].qp_num != atomic_load(&p->qpn[side])) {
                printf("pair %u side %d: completion names QPN %u, not %u\n",
                       g, side, wc[i].qp_num, atomic_load(&p->qpn[side]));
                atomic_fetch_add(&n_badqpn, 1);
            }
            if (atomic_fetch_or(&p->seen[side], 1u << k) & (1u << k)) {
                printf("pair %u side %d WQE %d completed twice\n", g, side,
                       k);
                atomic_fetch_add(&n_dup, 1);
            }
            atomic_fetch_add(&p->ncomp, 1);
        }
    }
    return NULL;
}

static void sleep_us(unsigned int us)
{
    struct timespec ts = { .tv_sec = us / 1000000,
                           .tv_nsec = (us % 1000000) * 1000L };

    nanosleep(&ts, NULL);
}

static void one_pair(unsigned int *seed)
{
    uint32_t g = atomic_fetch_add(&next_gen, 1);
    struct gen *p = &gens[g];
    struct ibv_qp *a, *b;
    struct timespec t0, t;
    int i;

    a = make_qp(cq);
    b = make_qp(cq);
    atomic_store(&p->qpn[0], a->qp_num);
    atomic_store(&p->qpn[1], b->qp_num);
    connect_qp(a, b->qp_num);
    connect_qp(b, a->qp_num);
    for (i = 0; i < NMSG; i++) {
        if (post_recv(b, (uintptr_t)buf + 64 * i, 64, wrid(g, 1, i))) {
            die("post_recv");
        }
    }
    for (i = 0; i < NMSG; i++) {
        if (post_send(a, (uintptr_t)buf + BUF / 2 + 64 * i, 64, mr->lkey,
                      wrid(g, 0, i))) {
            die("post_send");
        }
    }
    if (g % 2 == 0) {
        /* every completion must arrive, exactly once */
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (atomic_load(&p->ncomp) < 2 * NMSG) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if (t.tv_sec - t0.tv_sec > 10) {
                printf("pair %u: %u of %d completions after 10 s\n", g,
                       atomic_load(&p->ncomp), 2 * NMSG);
                atomic_fetch_add(&n_lost, 1);
                break;
            }
            sleep_us(200);
        }
        atomic_fetch_add(&n_waited, 1);
    } else {
        /* destroy with work in flight, at a random moment */
        sleep_us(rand_r(seed) % 3000);
    }
    if (ibv_destroy_qp(a) || ibv_destroy_qp(b)) {
        die("ibv_destroy_qp");
    }
    atomic_store(&p->dead_at, atomic_fetch_add(&epoch, 1) + 1);
    atomic_fetch_add(&n_pairs, 1);
}

static void *worker(void *arg)
{
    unsigned int seed = (unsigned int)(uintptr_t)arg;
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        if (atomic_load(&next_gen) >= MAXGEN - 1) {
            break;
        }
        one_pair(&seed);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < seconds);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *dev = "qroce_0";
    int npoll = 2, nwork = 3, i, o;
    unsigned int seed = 1;
    pthread_t th[64];

    while ((o = getopt(argc, argv, "d:g:p:w:t:s:")) != -1) {
        switch (o) {
        case 'd': dev = optarg; break;
        case 'g': gid_index = atoi(optarg); break;
        case 'p': npoll = atoi(optarg); break;
        case 'w': nwork = atoi(optarg); break;
        case 't': seconds = atoi(optarg); break;
        case 's': seed = strtoul(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: qroce-stress [-d DEV] [-g GID] "
                    "[-p POLLERS] [-w WORKERS] [-t SECONDS] [-s SEED]\n");
            return 2;
        }
    }
    if (npoll < 1 || nwork < 1 || npoll + nwork > 64) {
        fprintf(stderr, "qroce-stress: 1..64 threads\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    open_dev(dev);
    gens = calloc(MAXGEN, sizeof(*gens));
    cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
    if (!gens || !cq) {
        die("ibv_create_cq");
    }
    qp_depth = NMSG;
    qp_sge = 1;
    for (i = 0; i < npoll; i++) {
        pthread_create(&th[i], NULL, poller, NULL);
    }
    for (i = 0; i < nwork; i++) {
        pthread_create(&th[npoll + i], NULL, worker,
                       (void *)(uintptr_t)(seed * 7919u + i));
    }
    for (i = 0; i < nwork; i++) {
        pthread_join(th[npoll + i], NULL);
    }
    atomic_store(&stop, 1);
    for (i = 0; i < npoll; i++) {
        pthread_join(th[i], NULL);
    }
    printf("%llu pairs created and destroyed (%llu waited for), "
           "%llu completions polled (%llu with an error status)\n",
           (unsigned long long)n_pairs, (unsigned long long)n_waited,
           (unsigned long long)n_comp, (unsigned long long)n_flush);
    check(n_pairs >= (uint64_t)nwork && n_waited > 0,
          "QP pairs created, used and destroyed under a polled CQ");
    check(!n_stale, "no completion of a QP after its destroy returned");
    check(!n_dup, "no completion reported twice");
    check(!n_badqpn && !n_unknown, "every completion names its own QP");
    check(!n_lost, "every completion of a waited-for pair arrives");
    if (ibv_destroy_cq(cq) || ibv_dereg_mr(mr) || ibv_dealloc_pd(pd) ||
        ibv_close_device(ctx)) {
        check(0, "tear-down");
    }
    return failed;
}
