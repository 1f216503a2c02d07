/*
 * qroce: the port -- frames to and from the netdev.  Outgoing RoCE frames
 * pass the TX fault knobs (qroce_wirefault.c) and frames to the device's
 * own MAC loop back through a queue; received frames pass the RX fault
 * knobs and go up through the functions installed with
 * qroce_port_set_*_rx().
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/bswap.h"
#include "net/eth.h"
#include "net/checksum.h"
#include "roce_wire.h"
#include "qroce_port.h"
#include "qroce_wirefault.h"
#include "trace.h"

#define QROCE_LO_MAX_QUEUED 4096
#define QROCE_LO_HIGH       512     /* the engine waits above this */
#define QROCE_LO_BUDGET     256

/* ------------------------------------------------------------------ */
/* Wire faults (docs/hw-spec.md §15)                                   */
/* ------------------------------------------------------------------ */

/*
 * Back-pressure from the wire.  A netdev that cannot take a frame now
 * (its socket is full) queues it and calls qroce_wire_sent() when it went
 * out; frames queued without that callback are dropped once the netdev's
 * queue is full, which would lose UC and UD messages on a wire that loses
 * nothing.  So every frame goes out with the callback, and while any is
 * held the port is busy: the engines stop sending, as a NIC does when its
 * link is slower than its host, and are woken when the last one left.
 */
static void qroce_port_wake(QRoceState *s)
{
    if (qroce_port_busy(s)) {
        return;
    }
    trace_qroce_port_ready();
    qemu_bh_schedule(s->tx_bh);
    if (s->port_tx_ready) {
        s->port_tx_ready(s);
    }
}

static void qroce_wire_sent(NetClientState *nc, ssize_t ret)
{
    QRoceState *s = qemu_get_nic_opaque(nc);
    QROCE_LOCKED(s);

    if (s->wire_queued) {
        s->wire_queued--;
    }
    qroce_port_wake(s);
}

bool qroce_port_busy(QRoceState *s)
{
    return s->wire_queued || s->lo_full ||
           g_queue_get_length(&s->out_q) >= QROCE_OUT_HIGH;
}

void qroce_port_send(QRoceState *s, const uint8_t *buf, size_t len)
{
    if (!qemu_send_packet_async(qemu_get_queue(s->nic), buf, len,
                                qroce_wire_sent)) {
        if (!s->wire_queued++) {
            trace_qroce_port_busy(len);
        }
    }
}

/* A copy of frame @buf for the RoCE engine, in a bottom half. */
static void qroce_lo_queue(QRoceState *s, const uint8_t *buf, size_t len)
{
    QRoceLoFrame *f;

    if (g_queue_get_length(&s->lo_q) >= QROCE_LO_MAX_QUEUED) {
        qroce_count(s, QROCE_CNT_ROCE_RX_DROPS);
        return;
    }
    f = g_malloc(sizeof(*f) + len);
    f->len = len;
    memcpy(f->data, buf, len);
    g_queue_push_tail(&s->lo_q, f);
    if (g_queue_get_length(&s->lo_q) >= QROCE_LO_HIGH) {
        s->lo_full = true;
    }
    qemu_bh_schedule(s->lo_bh);
}

/*
 * Frames to the device's own MAC never reach the wire: queue them.  A
 * multicast RoCE frame goes out and is queued too, for the device's own
 * members of the group, as rxe and mlx5 loop multicast back (§3).
 */
static void qroce_wire_out(QRoceState *s, const uint8_t *buf, size_t len)
{
    if (!memcmp(buf, s->conf.macaddr.a, ETH_ALEN)) {
        qroce_lo_queue(s, buf, len);
        return;
    }
    if ((buf[0] & 1) && qroce_roce_bth(buf, len)) {
        qroce_lo_queue(s, buf, len);
    }
    qroce_port_send(s, buf, len);
}

/* Frame @buf (ours to change) through the TX fault knobs to the wire. */
static void qroce_wire_tx_frame(QRoceState *s, uint8_t *buf, size_t len)
{
    if (qroce_faults_on(s, QROCE_DIR_TX) && qroce_roce_bth(buf, len)) {
        qroce_fault_stage(s, QROCE_DIR_TX, buf, len, qroce_wire_out);
        return;
    }
    qroce_wire_out(s, buf, len);
}

/*
 * A frame of the engine.  Without the BQL (the engine in an IOThread) it
 * waits in out_q for qroce_port_out(), from the main loop: QEMU's netdevs
 * are the main loop's.
 */
void qroce_wire_tx(QRoceState *s, const struct iovec *iov, int iovcnt)
{
    size_t len = iov_size(iov, iovcnt);
    QRoceLoFrame *f;
    g_autofree uint8_t *buf = NULL;

    if (!bql_locked()) {
        f = g_malloc(sizeof(*f) + len);
        f->len = len;
        iov_to_buf(iov, iovcnt, 0, f->data, len);
        g_queue_push_tail(&s->out_q, f);
        if (g_queue_get_length(&s->out_q) == 1) {
            qemu_bh_schedule(s->wire_bh);
        }
        return;
    }
    if (iovcnt == 1 && !qroce_faults_on(s, QROCE_DIR_TX)) {
        /* nothing changes the frame: the netdev copies it if it waits */
        qroce_wire_out(s, iov->iov_base, len);
        return;
    }
    buf = g_malloc(len);
    iov_to_buf(iov, iovcnt, 0, buf, len);
    qroce_wire_tx_frame(s, buf, len);
}

/* Main loop: the frames out_q holds go out, in order. */
void qroce_port_out(QRoceState *s)
{
    bool was_busy = qroce_port_busy(s);
    QRoceLoFrame *f;

    while ((f = g_queue_pop_head(&s->out_q))) {
        qroce_wire_tx_frame(s, f->data, f->len);
        g_free(f);
    }
    if (was_busy) {
        qroce_port_wake(s);
    }
}

static void qroce_wire_bh(void *opaque)
{
    QRoceState *s = opaque;
    QROCE_LOCKED(s);

    qroce_port_out(s);
}

/* A frame from the wire (or from ourselves): RoCE engine or Ethernet. */
static void qroce_rx_frame(QRoceState *s, const uint8_t *buf, size_t size)
{
    if (s->port_roce_rx(s, buf, size, true)) {
        return;
    }
    s->port_eth_rx(s, buf, size);
}

/* Frames held back by the reorder knob go out if nothing overtakes them. */
static void qroce_fault_bh(void *opaque)
{
    QRoceState *s = opaque;
    QROCE_LOCKED(s);

    if (!s->quiesced) {
        qroce_fault_release(s, qroce_wire_out, qroce_rx_frame);
    }
}

static void qroce_fault_timer(void *opaque)
{
    QRoceState *s = opaque;

    qemu_bh_schedule(s->fault_bh);     /* DMA only from a guarded BH */
}

ssize_t qroce_port_receive(NetClientState *nc, const uint8_t *buf,
                           size_t size)
{
    QRoceState *s = qemu_get_nic_opaque(nc);
    QROCE_LOCKED(s);

    if (size < ETH_HLEN || !qroce_ready(s)) {
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
    QROCE_LOCKED(s);

    if (s->quiesced) {
        return;                 /* qroce_port_resume() runs us */
    }
    while (budget-- && (f = g_queue_pop_head(&s->lo_q))) {
        s->port_roce_rx(s, f->data, f->len, false);
        g_free(f);
    }
    if (!g_queue_is_empty(&s->lo_q)) {
        qemu_bh_schedule(s->lo_bh);
    }
    if (s->lo_full && g_queue_get_length(&s->lo_q) < QROCE_LO_HIGH / 2) {
        s->lo_full = false;
        qroce_port_wake(s);
    }
}

void qroce_port_set_roce_rx(QRoceState *s, QRoceRoceRxFn *fn)
{
    s->port_roce_rx = fn;
}

void qroce_port_set_eth_rx(QRoceState *s, QRoceEthRxFn *fn)
{
    s->port_eth_rx = fn;
}

void qroce_port_set_tx_ready(QRoceState *s, QRoceTxReadyFn *fn)
{
    s->port_tx_ready = fn;
}

/*
 * A gratuitous ARP for IPv4 GID @gid: an ARP request from the device's
 * MAC for its own address, to everyone.
 */
static size_t qroce_garp(QRoceState *s, const uint8_t *gid, uint8_t *f)
{
    const uint8_t *mac = s->conf.macaddr.a;
    uint8_t *arp = f + ETH_HLEN;

    memset(f, 0, ETH_ZLEN);
    memset(f, 0xff, ETH_ALEN);
    memcpy(f + ETH_ALEN, mac, ETH_ALEN);
    stw_be_p(f + 12, ETH_P_ARP);
    stw_be_p(arp, 1);                   /* Ethernet */
    stw_be_p(arp + 2, ETH_P_IP);
    arp[4] = ETH_ALEN;
    arp[5] = 4;
    stw_be_p(arp + 6, 1);               /* request */
    memcpy(arp + 8, mac, ETH_ALEN);     /* sender: the device */
    memcpy(arp + 14, gid + 12, 4);
    memcpy(arp + 24, gid + 12, 4);      /* target: its own address */
    return ETH_ZLEN;
}

/*
 * An unsolicited neighbour advertisement for IPv6 GID @gid (RFC 4861
 * 7.2.6): to all nodes, Override set, Solicited clear, with the device's
 * MAC as the target link-layer address option.
 */
static size_t qroce_unsolicited_na(QRoceState *s, const uint8_t *gid,
                                   uint8_t *f)
{
    static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 1 };
    const uint8_t *mac = s->conf.macaddr.a;
    uint8_t *ip6 = f + ETH_HLEN, *na = ip6 + 40;
    uint32_t sum;

    memset(f, 0, ETH_HLEN + 40 + 32);
    f[0] = f[1] = 0x33;                 /* 33:33:00:00:00:01 */
    f[5] = 1;
    memcpy(f + ETH_ALEN, mac, ETH_ALEN);
    stw_be_p(f + 12, ETH_P_IPV6);
    ip6[0] = 0x60;
    stw_be_p(ip6 + 4, 32);              /* NA and one option */
    ip6[6] = IPPROTO_ICMPV6;
    ip6[7] = 255;                       /* hop limit: on-link only */
    memcpy(ip6 + 8, gid, 16);
    memcpy(ip6 + 24, all_nodes, 16);
    na[0] = 136;                        /* neighbour advertisement */
    na[4] = 0x20;                       /* Override */
    memcpy(na + 8, gid, 16);
    na[24] = 2;                         /* target link-layer address */
    na[25] = 1;                         /* 8 bytes */
    memcpy(na + 26, mac, ETH_ALEN);
    sum = net_checksum_add(32, ip6 + 8) + 32 + IPPROTO_ICMPV6 +
          net_checksum_add(32, na);
    stw_be_p(na + 2, net_checksum_finish(sum));
    return ETH_HLEN + 40 + 32;
}

/*
 * NetClientInfo.announce, each round of QEMU's announcements (after a
 * migration, or announce-self), after QEMU's own RARP for the MAC: a
 * gratuitous ARP for each IPv4 GID and an unsolicited neighbour
 * advertisement for each IPv6 GID, so that the segment's switches learn
 * the port the device is on now and its neighbours the MAC (§18).
 */
void qroce_port_announce(NetClientState *nc)
{
    QRoceState *s = qemu_get_nic_opaque(nc);
    uint8_t f[ETH_HLEN + 40 + 32];
    uint32_t i, n4 = 0, n6 = 0;
    QROCE_LOCKED(s);

    if (nc->link_down) {
        return;
    }
    for (i = 0; i < ARRAY_SIZE(s->gid); i++) {
        const uint8_t *gid = s->gid[i].gid;

        if (!s->gid[i].valid) {
            continue;
        }
        if (roce_gid_is_v4(gid)) {
            qroce_port_send(s, f, qroce_garp(s, gid, f));
            n4++;
        } else {
            qroce_port_send(s, f, qroce_unsolicited_na(s, gid, f));
            n6++;
        }
    }
    trace_qroce_port_announce(n4, n6);
}

/*
 * The VM runs again: the loopback queue and held frames move on, and the
 * netdev delivers what it kept while the device took nothing.
 */
void qroce_port_resume(QRoceState *s)
{
    qemu_bh_schedule(s->lo_bh);
    qemu_bh_schedule(s->fault_bh);
    qemu_flush_queued_packets(qemu_get_queue(s->nic));
}

void qroce_port_init(QRoceState *s)
{
    DeviceState *dev = DEVICE(s);

    s->lo_bh = qemu_bh_new_guarded(qroce_lo_bh, s,
                                   &dev->mem_reentrancy_guard);
    g_queue_init(&s->lo_q);
    g_queue_init(&s->out_q);
    s->wire_bh = qemu_bh_new_guarded(qroce_wire_bh, s,
                                     &dev->mem_reentrancy_guard);
    s->fault_bh = qemu_bh_new_guarded(qroce_fault_bh, s,
                                      &dev->mem_reentrancy_guard);
    s->fault_timer = timer_new_ms(QEMU_CLOCK_VIRTUAL, qroce_fault_timer, s);
}

void qroce_port_reset(QRoceState *s)
{
    g_queue_clear_full(&s->lo_q, g_free);
    g_queue_clear_full(&s->out_q, g_free);
    s->lo_full = false;
    g_free(s->fault_held[QROCE_DIR_TX]);
    g_free(s->fault_held[QROCE_DIR_RX]);
    s->fault_held[QROCE_DIR_TX] = s->fault_held[QROCE_DIR_RX] = NULL;
}

void qroce_port_fini(QRoceState *s)
{
    g_queue_clear_full(&s->out_q, g_free);
    qemu_bh_delete(s->wire_bh);
    qemu_bh_delete(s->lo_bh);
    qemu_bh_delete(s->fault_bh);
    timer_free(s->fault_timer);
    g_free(s->fault_held[QROCE_DIR_TX]);
    g_free(s->fault_held[QROCE_DIR_RX]);
}
