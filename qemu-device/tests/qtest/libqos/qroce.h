/*
 * libqos driver for qroce: its node in the libqos graph (the PCI function
 * the qroce-*-test.c files drive) and what a test needs to drive it as a
 * driver would, without a guest OS: the registers and doorbells, the
 * command queue, objects, work requests on rings, completions and events
 * in guest memory, a raw RoCEv2 peer on a socket at the other end of a
 * -netdev, and the run of each test in a QEMU of its own.
 *
 * A test is a QRoceCase in its file's table; qroce_add_tests() puts the
 * table in the graph, and each test gets the device started (BARs
 * mapped, MSI-X on) in a QRoce:
 *
 *     static void test_nop(QRoce *t)
 *     {
 *         qroce_enable(t);
 *         g_assert_cmpuint(qroce_cmd_simple(t, QROCE_CMD_NOP, 0, NULL), ==,
 *                          QROCE_CMD_OK);
 *     }
 *
 *     static const QRoceCase cases[] = {
 *         { "cmd/nop-completes", test_nop, NULL, NULL },
 *     };
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef QTEST_LIBQOS_QROCE_H
#define QTEST_LIBQOS_QROCE_H

#include "qgraph.h"
#include "pci.h"
#include "qobject/qobject.h"
#include "qroce_hw.h"
#include "hw/net/qroce/roce_wire.h"

typedef struct QRocePCI {
    QOSGraphObject obj;
    QPCIDevice dev;
} QRocePCI;

/*
 * A raw RoCEv2 peer: the test's end of the device's -netdev, at 10.0.0.2
 * (52:54:00:aa:bb:cc); the device's GID 0 is 10.0.0.1.
 */
typedef struct QRocePeer {
    int fd;                     /* the test's socket, -1 if none */
    int qemu_fd;                /* QEMU's end of a socket pair, -1 if none */
    struct sockaddr_in qemu;    /* QEMU's end of a -netdev dgram */
    uint8_t mac[6], gid[16], dev_gid[16];
} QRocePeer;

typedef struct QRoce QRoce;

/*
 * A QP a test drives: its rings (16 WQEs each), the next SQ slot to fill
 * (qroce_env_put()), and its CQ with the next CQE to look at.
 */
typedef struct QRoceQP {
    uint32_t qpn, cqn, ci, sqi;
    uint64_t sq, rq, cq;
} QRoceQP;

/*
 * One test: its name under .../qroce/qroce-tests/, its function, and the
 * extra arguments of its QEMU: fixed (@args), or made by @prepare just
 * before QEMU starts, with what the test will use (a socket, a file).
 */
typedef struct QRoceCase {
    const char *name;
    void (*fn)(QRoce *t);
    const char *args;
    char *(*prepare)(QRoce *t);
} QRoceCase;

/* The device as a test drives it: qroce_start() takes it over. */
struct QRoce {
    QTestState *qts;
    QGuestAllocator *alloc;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar regs, db;
    bool mapped;
    uint64_t cmdq, comp;        /* command queue and its completions */
    uint32_t pi;                /* commands posted */
    uint64_t msi;               /* where MSI-X vector 0 writes its message */
    /* what the QPs qroce_mk_qp_rings() creates get */
    uint8_t sq_shift;           /* SQ WQE stride 2^sq_shift; 0: 2^6 */
    uint8_t qp_flags;           /* QROCE_CREATE_QP_* */
    /* the test, and what its case's prepare made for it */
    const QRoceCase *c;
    char *args;
    char *cmdline;              /* the whole QEMU command line */
    QRocePeer peer;
    void *data;                 /* the test's own; g_free()d after it */
};

/* The message of MSI-X vector 0 (command completions, async events). */
#define QROCE_MSI_DATA      0x51c0
#define QROCE_CMDQ_LOG2     4
#define QROCE_PATH          "/machine/peripheral/qroce0"

/* How long a wait for the device may take, and how often it looks. */
#define QROCE_TIMEOUT_US    (10 * 1000 * 1000)
#define QROCE_POLL_US       100

/* The attributes each RC transition requires (UC's to INIT too). */
#define QROCE_RC_INIT   (QROCE_QP_ATTR_STATE | QROCE_QP_ATTR_PKEY_INDEX | \
                         QROCE_QP_ATTR_PORT | QROCE_QP_ATTR_ACCESS_FLAGS)
#define QROCE_RC_RTR    (QROCE_QP_ATTR_STATE | QROCE_QP_ATTR_AV | \
                         QROCE_QP_ATTR_PATH_MTU | QROCE_QP_ATTR_DEST_QPN | \
                         QROCE_QP_ATTR_RQ_PSN | \
                         QROCE_QP_ATTR_MAX_DEST_RD_ATOMIC | \
                         QROCE_QP_ATTR_MIN_RNR_TIMER)
#define QROCE_RC_RTS    (QROCE_QP_ATTR_STATE | QROCE_QP_ATTR_TIMEOUT | \
                         QROCE_QP_ATTR_RETRY_CNT | QROCE_QP_ATTR_RNR_RETRY | \
                         QROCE_QP_ATTR_SQ_PSN | QROCE_QP_ATTR_MAX_QP_RD_ATOMIC)

extern const uint8_t qroce_dev_mac[6];

/* ---- the tests in the graph ---- */

void qroce_add_tests(const QRoceCase *cases, size_t n);

/* ---- device, registers, doorbells ---- */

void qroce_start(QRoce *t, QRocePCI *node, QGuestAllocator *alloc);
void qroce_stop(QRoce *t);
uint32_t qroce_rd(QRoce *t, uint32_t reg);
void qroce_wr(QRoce *t, uint32_t reg, uint32_t val);
uint32_t qroce_cnt(QRoce *t, int n);
void qroce_db(QRoce *t, uint64_t off, uint32_t obj, uint32_t val);
void qroce_enable(QRoce *t);
bool qroce_msix_wait(QRoce *t);
uint64_t qroce_pages(QRoce *t, unsigned n);
struct qroce_bt qroce_bt(uint64_t addr, uint32_t npages);

/* ---- waiting on the device ---- */

bool qroce_iothread(void);
int64_t qroce_deadline(void);
bool qroce_wait_more(int64_t deadline);
void qroce_wait_cnt(QRoce *t, int n, uint32_t v);
uint32_t qroce_wait_cnt_stable(QRoce *t, int n);
void qroce_wait_reg(QRoce *t, uint32_t reg, uint32_t val);
bool qroce_entry_ready(QRoce *t, uint64_t ring, unsigned size, uint8_t log2,
                       uint32_t idx);
void qroce_wait_entry(QRoce *t, uint64_t ring, unsigned size, uint8_t log2,
                      uint32_t idx, void *e);
void qroce_wait_cqe(QRoce *t, uint64_t ring, uint32_t idx,
                    struct qroce_cqe *cqe);
void qroce_next_send_cqe(QRoce *t, uint64_t ring, uint32_t *idx,
                         uint32_t qpn, struct qroce_cqe *cqe);

/* ---- commands and objects ---- */

void qroce_cmd_post(QRoce *t, const struct qroce_cmd *c);
int qroce_cmd(QRoce *t, struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_simple(QRoce *t, uint8_t op, uint32_t handle, uint32_t *out);
void qroce_sync(QRoce *t);
bool qroce_cmds_split(QRoce *t, struct qroce_cmd *c, unsigned n, int *st);
uint32_t qroce_alloc_pd(QRoce *t);
uint64_t qroce_mk_eq(QRoce *t, uint32_t eqn);
uint32_t qroce_mk_cq(QRoce *t, uint32_t eqn);
uint32_t qroce_mk_cq_ring(QRoce *t, uint32_t eqn, uint8_t log2,
                          uint64_t *ring);
int qroce_mk_qp_rings(QRoce *t, uint8_t type, uint32_t pdn, uint32_t scqn,
                      uint32_t rcqn, uint32_t uar, uint32_t *qpn,
                      uint64_t *sq, uint64_t *rq);
int qroce_mk_qp(QRoce *t, uint8_t type, uint32_t pdn, uint32_t cqn,
                uint32_t uar, uint32_t *qpn);
uint32_t qroce_mk_mr(QRoce *t, uint32_t pdn, uint64_t buf, uint32_t npages,
                     uint32_t access);
uint32_t qroce_alloc_mr(QRoce *t, uint32_t pdn, uint32_t max_pages,
                        int status);
uint64_t qroce_pbl(QRoce *t, const uint64_t *pages, unsigned n);
int qroce_modify(QRoce *t, uint32_t qpn, uint32_t mask, uint8_t state,
                 struct qroce_cmd *tweak);
uint32_t qroce_qp_state(QRoce *t, uint32_t qpn);
uint32_t qroce_wait_qp_state(QRoce *t, uint32_t qpn, uint32_t want);
void qroce_set_gid0(QRoce *t);
void qroce_self_av(struct qroce_av *av);
uint32_t qroce_mk_self_ah(QRoce *t, uint32_t pdn);
uint32_t qroce_base_setup(QRoce *t);
void qroce_objs_setup(QRoce *t, uint32_t access, uint32_t *pdn,
                      uint32_t *cqn, uint64_t *cq_ring, uint64_t *buf,
                      uint32_t *key);

/* ---- connecting QPs ---- */

void qroce_rc_connect(QRoce *t, uint32_t qpn, uint32_t dest,
                      uint32_t my_psn, uint32_t dest_psn);
void qroce_rc_connect_ex(QRoce *t, uint32_t qpn, uint32_t dest,
                         uint32_t my_psn, uint32_t dest_psn,
                         uint8_t rnr_timer, uint8_t timeout, uint8_t retry);
void qroce_rc_pair(QRoce *t, uint32_t pdn, uint32_t cqn, uint8_t b_rnr_timer,
                   QRoceQP *a, QRoceQP *b);
void qroce_uc_connect_av(QRoce *t, uint32_t qpn, uint32_t dest,
                         const struct qroce_av *av, uint32_t psn);
void qroce_uc_connect(QRoce *t, uint32_t qpn, uint32_t dest);
void qroce_ud_ready(QRoce *t, uint32_t qpn, uint8_t type, uint32_t qkey);
void qroce_ud_qp(QRoce *t, uint8_t type, uint32_t pdn, uint32_t cqn,
                 uint32_t qkey, uint32_t *qpn, uint64_t *sq, uint64_t *rq);

/* ---- work requests ---- */

void qroce_put_send_wqe(QRoce *t, uint64_t sq, uint32_t idx,
                        const struct qroce_send_wqe *h, uint64_t addr,
                        uint32_t len, uint32_t lkey);
void qroce_post_send(QRoce *t, uint64_t sq, uint32_t idx, uint64_t addr,
                     uint32_t len, uint32_t lkey, uint8_t flags);
void qroce_put_recv(QRoce *t, uint64_t ring, uint8_t log2, uint32_t idx,
                    uint64_t addr, uint32_t len, uint32_t lkey);
void qroce_post_recv(QRoce *t, uint64_t rq, uint32_t idx, uint64_t addr,
                     uint32_t len, uint32_t lkey);
void qroce_post_ud(QRoce *t, uint64_t sq, uint32_t idx, uint32_t ahn,
                   uint32_t dqpn, uint32_t qkey, uint64_t addr, uint32_t len,
                   uint32_t lkey);

/*
 * ---- an environment of QPs with CQs of their own ----
 *
 * A PD, EQs 0 and 1, GID 0 and a 4-page MR (local write, remote write and
 * read) at buf; QPs (QRoceQP) with a CQ each, that count the WQEs they
 * post and the CQEs they see.
 */
typedef struct QRoceEnv {
    QRoce *t;
    uint32_t pdn, key;
    uint64_t buf;
} QRoceEnv;

void qroce_env_setup(QRoceEnv *e, QRoce *t);
void qroce_env_qp(QRoceEnv *e, uint8_t type, uint32_t pdn, QRoceQP *q);
void qroce_env_pair(QRoceEnv *e, QRoceQP *a, QRoceQP *b,
                    uint8_t b_rnr_timer);
void qroce_env_lone(QRoceEnv *e, uint32_t pdn, QRoceQP *q);
void qroce_env_ring(QRoceEnv *e, QRoceQP *q);
void qroce_env_put(QRoceEnv *e, QRoceQP *q, const struct qroce_send_wqe *h,
                   uint64_t addr, uint32_t len, uint32_t lkey);
void qroce_env_put_reg(QRoceEnv *e, QRoceQP *q, uint32_t key, uint64_t iova,
                       uint64_t pbl, uint32_t len, uint16_t npages,
                       uint8_t shift, uint32_t access);
void qroce_env_put_inv(QRoceEnv *e, QRoceQP *q, uint8_t opcode, uint32_t key,
                       uint32_t len);
void qroce_env_put_rdma(QRoceEnv *e, QRoceQP *q, uint8_t opcode,
                        uint64_t raddr, uint32_t rkey, uint64_t laddr,
                        uint32_t len);
void qroce_env_cqe(QRoceEnv *e, QRoceQP *q, uint8_t opcode, uint8_t status,
                   struct qroce_cqe *cqe);
void qroce_env_expect_err(QRoceEnv *e, QRoceQP *q, uint8_t status);
void qroce_env_send(QRoceEnv *e, QRoceQP *q, uint32_t len);
void qroce_env_recv(QRoceEnv *e, QRoceQP *q, uint32_t idx);

/* ---- the peer on the wire ---- */

int qroce_udp_socket(uint16_t *port);
char *qroce_peer_prepare(QRoce *t);
void qroce_peer_out(QRocePeer *pr, RocePktOut *o, uint32_t dqpn,
                    uint32_t psn, uint8_t opcode);
void qroce_peer_send_frame(QRocePeer *pr, const void *f, size_t n);
void qroce_peer_send(QRocePeer *pr, RocePktOut *o, uint32_t len,
                     bool bad_csum);
void qroce_peer_recv(QRocePeer *pr, uint8_t *f, RocePktIn *p);
void qroce_peer_av(QRocePeer *pr, struct qroce_av *av);
void qroce_peer_connect(QRoce *t, QRocePeer *pr, uint32_t qpn,
                        uint32_t dqpn);
uint32_t qroce_peer_qp(QRoce *t, QRocePeer *pr, uint32_t pdn, uint32_t cqn,
                       uint32_t dqpn, uint64_t *sq, uint64_t *rq);

/* ---- the Ethernet function's rings ---- */

uint16_t qroce_eth_desc_flags(QRoce *t, uint64_t ring, unsigned i);
void qroce_eth_put_desc(QRoce *t, uint64_t ring, unsigned i, uint64_t addr,
                        uint16_t len);

/* ---- the device's properties (qom-set, qom-get) ---- */

bool qroce_qom_set(QRoce *t, const char *prop, QObject *val);
QObject *qroce_qom_get(QRoce *t, const char *prop);
void qroce_qom_set_int(QRoce *t, const char *prop, int64_t val);
void qroce_qom_set_bool(QRoce *t, const char *prop, bool val);
bool qroce_qom_set_str(QRoce *t, const char *prop, const char *val);
int64_t qroce_qom_get_int(QRoce *t, const char *prop);
bool qroce_qom_get_bool(QRoce *t, const char *prop);
char *qroce_qom_get_str(QRoce *t, const char *prop);

#endif
