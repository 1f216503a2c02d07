/*
 * What qroce's fuzz targets (qroce_frames_fuzz.c, qroce_migstream_fuzz.c)
 * share: the device found on the PCI bus with its BARs mapped, its
 * registers and doorbells, the command queue, the peer on the wire and
 * its addresses, QPs brought to RTS, and frames delivered from the wire.
 *
 * The machine is q35 with 512 MiB; the device's netdev is n0, a hub port
 * the device is the only other member of: what a target delivers with
 * qroce_fuzz_deliver() arrives as from a backend, and what the device
 * sends is dropped by qroce_fuzz_flush(), which runs what is pending.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef QROCE_FUZZ_H
#define QROCE_FUZZ_H

#include "tests/qtest/libqtest.h"
#include "tests/qtest/libqos/pci-pc.h"
#include "net/net.h"
#include "qroce_hw.h"

/* The command queue: 16 commands at 0x01000000, completions after it. */
#define QROCE_FUZZ_CMDQ         0x01000000ULL
#define QROCE_FUZZ_COMP         0x01001000ULL
#define QROCE_FUZZ_CMDQ_LOG2    4

/* The peer's QPs, PSNs and Q_Key the set-up QPs are connected with. */
#define QROCE_FUZZ_SQ_PSN       0x100
#define QROCE_FUZZ_RQ_PSN       0x200
#define QROCE_FUZZ_QKEY         0x1111
#define QROCE_FUZZ_GSI_QKEY     0x80010000u

typedef struct QRoceFuzz {
    const char *name;           /* the target's, for messages */
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar regs, db;
    NetClientState *wire;       /* the backend side of the device's netdev */
    uint32_t pi;                /* commands posted */
    bool log;                   /* print the frames delivered */
} QRoceFuzz;

/* GIDs 0 (10.0.0.1) and 1 (fd00::1) of the device, and the peer's. */
extern const uint8_t qroce_fuzz_dev_mac[6];
extern const uint8_t qroce_fuzz_peer_mac[6];
extern const uint8_t qroce_fuzz_gid_v4[16];
extern const uint8_t qroce_fuzz_peer_v4[16];
extern const uint8_t qroce_fuzz_gid_v6[16];
extern const uint8_t qroce_fuzz_peer_v6[16];

/* ---- the device ---- */

GString *qroce_fuzz_cmdline(const char *props, const char *env);

void qroce_fuzz_open(QRoceFuzz *f, QTestState *s);
void qroce_fuzz_close(QRoceFuzz *f);
void qroce_fuzz_flush(QRoceFuzz *f);
void qroce_fuzz_zero(QRoceFuzz *f, uint64_t addr, size_t len);
uint32_t qroce_fuzz_rd(QRoceFuzz *f, uint32_t reg);
void qroce_fuzz_wr(QRoceFuzz *f, uint32_t reg, uint32_t val);
void qroce_fuzz_ring(QRoceFuzz *f, uint32_t off, uint32_t obj, uint32_t val);
void qroce_fuzz_enable(QRoceFuzz *f);

/* ---- commands ---- */

int qroce_fuzz_cmd(QRoceFuzz *f, struct qroce_cmd *c, uint32_t *out);
void qroce_fuzz_must(QRoceFuzz *f, int st, const char *what);
struct qroce_bt qroce_fuzz_bt(uint64_t addr, uint32_t npages);
void qroce_fuzz_peer_av(struct qroce_av *av, bool v6);
void qroce_fuzz_modify(QRoceFuzz *f, uint32_t qpn, uint32_t mask,
                       uint8_t state, struct qroce_cmd *c);
void qroce_fuzz_connect(QRoceFuzz *f, uint32_t qpn, uint8_t type, bool v6,
                        uint32_t dest_qpn);
uint32_t qroce_fuzz_mk_qp(QRoceFuzz *f, uint8_t type, uint32_t pdn,
                          uint32_t cqn, uint32_t srqn, uint64_t rings);

/* ---- work requests in guest memory ---- */

void qroce_fuzz_put_recvs(QRoceFuzz *f, uint64_t ring, uint64_t buf,
                          uint32_t key);
unsigned qroce_fuzz_put_requests(QRoceFuzz *f, uint64_t sq, unsigned slot,
                                 uint64_t buf, uint32_t key);

/* ---- the wire ---- */

void qroce_fuzz_deliver(QRoceFuzz *f, const uint8_t *buf, size_t len);

#endif
