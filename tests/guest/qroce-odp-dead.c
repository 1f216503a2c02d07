/*
 * qroce-odp-dead: ODP memory freed while the device is dead.
 *
 *   qroce-odp-dead [-d DEV] [-g GID_INDEX] -f GOFILE
 *
 * An RC pair on one device (loopback) and an untouched 4 MiB anonymous
 * region registered with IBV_ACCESS_ON_DEMAND: RDMA WRITEs into it fault
 * its pages in (bytes compared).  Then, at SCHED_FIFO, so that on the
 * one-CPU guest no other task runs unless this one sleeps, it prints
 * READY and waits for GOFILE: meanwhile the harness makes the device
 * swallow the next command (and perhaps raises a device-fatal event).
 * It munmaps the region: the MMU notifier's ODP_UNMAP gets no answer,
 * the driver declares the device dead (the command timed out, or
 * STATUS.FATAL), and must not let the pages' DMA mappings go, and the
 * pages be reused, before the device can no longer DMA: munmap may return
 * only once the device has been reset.  The kernel log tells: the
 * driver's work that resets the device logs "fatal code N: resetting"
 * first; not logged when munmap starts, it must be when munmap returns.
 * Then IBV_EVENT_DEVICE_FATAL arrives, and everything is destroyed (the
 * driver's recovery takes the device away meanwhile: errors allowed).
 *
 * Prints PASS/FAIL lines; exits 1 if anything failed, 2 on a set-up error.
 */
#include <poll.h>
#include <sched.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include "qr_verbs.h"

#define MIB (1ul << 20)
#define REGION (4 * MIB)
#define RESET_LINE "fatal code"         /* qroce_en's resetting work logs it */

/* How many lines of the kernel log hold RESET_LINE; -1 if unreadable. */
static int reset_lines(void)
{
    int len = klogctl(10, NULL, 0);     /* SYSLOG_ACTION_SIZE_BUFFER */
    char *log, *p;
    int n = 0;

    if (len <= 0 || !(log = calloc(1, len + 1))) {
        return -1;
    }
    len = klogctl(3, log, len);         /* SYSLOG_ACTION_READ_ALL */
    for (p = log; len > 0 && (p = strstr(p, RESET_LINE)); p++) {
        n++;
    }
    free(log);
    return len < 0 ? -1 : n;
}

/* An RDMA WRITE of 8 KiB from buf into @dst: true if it completed. */
static int write8k(struct pair *p, uint8_t *dst, uint32_t rkey)
{
    struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = BUF,
                           .lkey = mr->lkey };
    struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
                              .opcode = IBV_WR_RDMA_WRITE,
                              .send_flags = IBV_SEND_SIGNALED }, *bad;
    struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
    int i, n = 0;

    wr.wr.rdma.remote_addr = (uintptr_t)dst;
    wr.wr.rdma.rkey = rkey;
    if (ibv_post_send(p->a, &wr, &bad)) {
        return 0;
    }
    for (i = 0; i < 12 && !n; i++) {    /* faults are slow under TCG */
        n = poll1(p->cq, &wc);
    }
    return n == 1 && wc.status == IBV_WC_SUCCESS;
}

/* Wait (60 s at most) for IBV_EVENT_DEVICE_FATAL; true if it came. */
static int device_fatal(void)
{
    struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
    struct ibv_async_event ev;
    int i;

    for (i = 0; i < 60; i++) {
        if (poll(&pfd, 1, 1000) != 1 || ibv_get_async_event(ctx, &ev)) {
            continue;
        }
        printf("async event: %s\n", ibv_event_type_str(ev.event_type));
        ibv_ack_async_event(&ev);
        if (ev.event_type == IBV_EVENT_DEVICE_FATAL) {
            return 1;
        }
    }
    return 0;
}

/* Wait for @go to exist, 1 ms apart (sleeping, so others run). */
static int wait_go(const char *go)
{
    int i;

    for (i = 0; i < 300000; i++) {
        if (!access(go, F_OK)) {
            return 1;
        }
        usleep(1000);
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct sched_param sp = { .sched_priority = 10 };
    const char *dev = "qroce_0", *go = NULL;
    struct timespec t0, t1;
    struct ibv_mr *omr;
    struct pair p;
    uint8_t *region;
    int c, k, ok, before, after;

    while ((c = getopt(argc, argv, "d:g:f:")) != -1) {
        if (c == 'f') {
            go = optarg;
        } else if (!qr_common_opt(c, &dev)) {
            go = NULL;
            break;
        }
    }
    if (!go) {
        fprintf(stderr, "usage: qroce-odp-dead [-d DEV] [-g GID_INDEX] "
                "-f GOFILE\n");
        return 2;
    }
    open_dev(dev);
    make_pair(&p);
    region = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) {
        die("mmap");
    }
    omr = ibv_reg_mr(pd, region, REGION, IBV_ACCESS_ON_DEMAND |
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    check(omr != NULL, "ibv_reg_mr of an untouched 4 MiB region, "
          "IBV_ACCESS_ON_DEMAND");
    if (!omr) {
        return 1;
    }
    ok = 1;
    for (k = 0; k < 4 && ok; k++) {
        memset(buf, 0x11 * (k + 1), BUF);
        ok = write8k(&p, region + k * MIB + 4096 * k, omr->rkey) &&
             !memcmp(region + k * MIB + 4096 * k, buf, BUF);
    }
    check(ok, "RDMA WRITEs into the untouched ODP region (page faults), "
          "bytes compared");
    if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
        die("sched_setscheduler");
    }
    printf("READY\n");
    fflush(stdout);
    if (!wait_go(go)) {
        die(go);
    }

    before = reset_lines();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    k = munmap(region, REGION);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    after = reset_lines();
    printf("munmap: %d in %ld ms; \"" RESET_LINE "\" lines in the kernel "
           "log: %d before, %d after\n", k,
           (long)((t1.tv_sec - t0.tv_sec) * 1000 +
                  (t1.tv_nsec - t0.tv_nsec) / 1000000), before, after);
    check(k == 0 && before >= 0, "munmap of the ODP region completed");
    check(after == before + 1,
          "munmap returned only after the dead device had been reset "
          "(the driver's reset logged in between)");
    check(device_fatal(), "IBV_EVENT_DEVICE_FATAL reached the application");

    /* the device is being recovered: these may fail, none may hang */
    printf("teardown: dereg_mr %d", ibv_dereg_mr(omr));
    printf(", destroy_qp %d", ibv_destroy_qp(p.a));
    printf(" %d", ibv_destroy_qp(p.b));
    printf(", destroy_cq %d", ibv_destroy_cq(p.cq));
    printf(", dereg_mr %d", ibv_dereg_mr(mr));
    printf(", dealloc_pd %d", ibv_dealloc_pd(pd));
    printf(", close_device %d\n", ibv_close_device(ctx));
    return failed;
}
