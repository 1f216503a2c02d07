/*
 * qtests of qroce: the Ethernet function, its rings and its receive
 * filter, with the test as the other end of a -netdev dgram.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/qroce.h"

/* test_ethernet's end of the wire, made before its QEMU starts. */
static char *eth_prepare(QRoce *t)
{
    uint16_t myport;

    t->peer.fd = qroce_udp_socket(&myport);
    return g_strdup_printf("-netdev dgram,id=n0,local.type=inet,"
                           "local.host=127.0.0.1,local.port=0,"
                           "remote.type=inet,remote.host=127.0.0.1,"
                           "remote.port=%u -global qroce.netdev=n0", myport);
}

/* A 1514-byte frame from @src to @dst: (i * 7) & 0xff after the header. */
static void eth_frame(uint8_t *frame, const char *dst_src_type)
{
    int i;

    for (i = 0; i < 1514; i++) {
        frame[i] = i * 7;
    }
    memcpy(frame, dst_src_type, 14);
}

/*
 * The TX and RX rings, 8 descriptors each, on: an RX ring size out of
 * range is ignored, and a ring's geometry is frozen while it is on.
 */
static void eth_rings(QRoce *t, uint64_t txr, uint64_t rxr)
{
    qroce_wr(t, QROCE_REG_TXQ_BASE_LO, txr);
    qroce_wr(t, QROCE_REG_TXQ_BASE_HI, txr >> 32);
    qroce_wr(t, QROCE_REG_TXQ_LOG2, 3);
    qroce_wr(t, QROCE_REG_RXQ_BASE_LO, rxr);
    qroce_wr(t, QROCE_REG_RXQ_BASE_HI, rxr >> 32);
    qroce_wr(t, QROCE_REG_RXQ_LOG2, 20);             /* out of range: ignored */
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_RXQ_LOG2), ==, 0);
    qroce_wr(t, QROCE_REG_RXQ_LOG2, 3);
    qroce_wr(t, QROCE_REG_ETH_CTRL,
             QROCE_ETH_CTRL_TX_EN | QROCE_ETH_CTRL_RX_EN);
    /* ring geometry is frozen while the ring is on */
    qroce_wr(t, QROCE_REG_TXQ_LOG2, 4);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_TXQ_LOG2), ==, 3);
}

/*
 * TX: a good frame reaches the wire (the peer learns QEMU's address in
 * *@qemu), one too long and one shorter than a header are errors; a
 * producer index past the ring is ignored.
 */
static void eth_tx(QRoce *t, uint64_t txr, uint64_t buf,
                   struct sockaddr_in *qemu)
{
    int fd = t->peer.fd;
    uint8_t frame[1514], got[2048];
    socklen_t alen = sizeof(*qemu);
    struct timeval tv = { .tv_sec = 10 };
    ssize_t n;

    eth_frame(frame, "\x52\x54\x00\xaa\xbb\xcc\x52\x54\x00\x12\x34\x56"
              "\x08\x00");
    qtest_memwrite(t->qts, buf, frame, sizeof(frame));
    qroce_eth_put_desc(t, txr, 0, buf, sizeof(frame));
    qroce_eth_put_desc(t, txr, 1, buf, QROCE_ETH_MAX_FRAME + 1);
    qroce_eth_put_desc(t, txr, 2, buf, 10);
    qroce_wr(t, QROCE_REG_TXQ_PI, 9);                /* more than the ring */
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_TXQ_CI), ==, 0);
    qroce_wr(t, QROCE_REG_TXQ_PI, 3);
    qroce_wait_reg(t, QROCE_REG_TXQ_CI, 3);
    g_assert_cmphex(qroce_eth_desc_flags(t, txr, 0), ==, QROCE_ETH_DESC_DONE);
    g_assert_cmphex(qroce_eth_desc_flags(t, txr, 1), ==,
                    QROCE_ETH_DESC_DONE | QROCE_ETH_DESC_ERR);
    g_assert_cmphex(qroce_eth_desc_flags(t, txr, 2), ==,
                    QROCE_ETH_DESC_DONE | QROCE_ETH_DESC_ERR);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_ETH_IRQ) & QROCE_ETH_IRQ_TX, ==,
                    QROCE_ETH_IRQ_TX);
    qroce_wr(t, QROCE_REG_ETH_IRQ, QROCE_ETH_IRQ_TX);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_ETH_IRQ) & QROCE_ETH_IRQ_TX, ==, 0);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ETH_TX_FRAMES), ==, 1);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    n = recvfrom(fd, got, sizeof(got), 0, (struct sockaddr *)qemu, &alen);
    g_assert_cmpint(n, ==, sizeof(frame));
    g_assert_true(!memcmp(got, frame, sizeof(frame)));
}

/*
 * RX: with no buffer a frame is dropped and counted; a 2 KiB buffer
 * takes a whole frame, a frame for another MAC is filtered, a 64-byte
 * buffer takes the next one truncated.
 */
static void eth_rx(QRoce *t, uint64_t rxr, uint64_t buf,
                   const struct sockaddr_in *qemu)
{
    int fd = t->peer.fd;
    uint8_t frame[1514], got[2048];
    socklen_t alen = sizeof(*qemu);
    const struct sockaddr *to = (const struct sockaddr *)qemu;
    struct qroce_eth_desc d;

    eth_frame(frame, "\x52\x54\x00\x12\x34\x56\x52\x54\x00\xaa\xbb\xcc"
              "\x08\x00");
    g_assert_cmpint(sendto(fd, frame, 100, 0, to, alen), ==, 100);
    qroce_wait_reg(t, QROCE_REG_CNT(QROCE_CNT_ETH_RX_DROPS), 1);
    /* post a 2 KiB buffer and a 64-byte one */
    qroce_eth_put_desc(t, rxr, 0, buf, 2048);
    qroce_eth_put_desc(t, rxr, 1, buf + 2048, 64);
    qroce_wr(t, QROCE_REG_RXQ_PI, 2);
    g_assert_cmpint(sendto(fd, frame, sizeof(frame), 0, to, alen), ==,
                    sizeof(frame));
    qroce_wait_reg(t, QROCE_REG_RXQ_CI, 1);
    qtest_memread(t->qts, rxr, &d, sizeof(d));
    g_assert_cmpuint(le16_to_cpu(d.len), ==, sizeof(frame));
    g_assert_cmphex(le16_to_cpu(d.flags), ==, QROCE_ETH_DESC_DONE);
    qtest_memread(t->qts, buf, got, sizeof(frame));
    g_assert_true(!memcmp(got, frame, sizeof(frame)));
    g_assert_cmphex(qroce_rd(t, QROCE_REG_ETH_IRQ) & QROCE_ETH_IRQ_RX, ==,
                    QROCE_ETH_IRQ_RX);
    /* a frame for another MAC is filtered; then truncation into 64 bytes */
    frame[5] = 0x57;
    sendto(fd, frame, 200, 0, to, alen);
    frame[5] = 0x56;
    sendto(fd, frame, 200, 0, to, alen);
    qroce_wait_reg(t, QROCE_REG_RXQ_CI, 2);
    qtest_memread(t->qts, rxr + sizeof(d), &d, sizeof(d));
    g_assert_cmpuint(le16_to_cpu(d.len), ==, 64);
    g_assert_cmphex(le16_to_cpu(d.flags), ==,
                    QROCE_ETH_DESC_DONE | QROCE_ETH_DESC_ERR);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ETH_RX_FRAMES), ==, 2);
}

/*
 * The Ethernet function on a -netdev dgram whose other end is the test:
 * the link is up, frames go out and come in through the rings; RESET
 * turns the rings off.
 */
static void test_ethernet(QRoce *t)
{
    struct sockaddr_in qemu;
    uint64_t txr, rxr, buf;

    /* a netdev: the link is up */
    g_assert_cmphex(qroce_rd(t, QROCE_REG_PORT_STATUS) & QROCE_PORT_LINK_UP,
                    ==, QROCE_PORT_LINK_UP);
    qroce_enable(t);
    txr = qroce_pages(t, 1);
    rxr = qroce_pages(t, 1);
    buf = qroce_pages(t, 1);
    eth_rings(t, txr, rxr);
    eth_tx(t, txr, buf, &qemu);
    eth_rx(t, rxr, buf, &qemu);
    /* RESET turns the rings off */
    qroce_wr(t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_ETH_CTRL), ==, 0);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_RXQ_CI), ==, 0);
}

/* The MC_HASH bin of @mac: CRC-32 LE from ~0, no inversion, top 6 bits. */
static unsigned mc_bin(const uint8_t mac[6])
{
    uint32_t crc = 0xffffffff;
    int i, j;

    for (i = 0; i < 6; i++) {
        for (j = 0; j < 8; j++) {
            crc = (crc >> 1) ^ (((crc ^ (mac[i] >> j)) & 1) ? 0xedb88320 : 0);
        }
    }
    return crc >> QROCE_MC_HASH_SHIFT;
}

/* The peer sends a 100-byte IPv4 frame to @mac. */
static void peer_eth(QRocePeer *pr, const uint8_t mac[6])
{
    uint8_t f[100] = { [12] = 0x08 };

    memcpy(f, mac, 6);
    memcpy(f + 6, pr->mac, 6);
    qroce_peer_send_frame(pr, f, sizeof(f));
}

/*
 * The Ethernet function's receive filter (§11): with MC_FILTER a
 * multicast frame is taken only in a bin set in MC_HASH, or with
 * ALLMULTI or PROMISC; broadcast always; without MC_FILTER every
 * multicast frame, as after reset, which clears MC_HASH.
 */
static void test_eth_mc_filter(QRoce *t)
{
    static const uint8_t m1[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint8_t m2[6] = { 0x33, 0x33, 0xff, 0x00, 0x00, 0x01 }, got[6];
    QRocePeer *pr = &t->peer;
    uint64_t rxr, buf, bit;
    uint32_t ctrl = QROCE_ETH_CTRL_TX_EN | QROCE_ETH_CTRL_RX_EN;
    unsigned i;

    while (mc_bin(m2) == mc_bin(m1)) {
        m2[5]++;
    }
    bit = 1ULL << mc_bin(m1);
    qroce_enable(t);
    rxr = qroce_pages(t, 1);
    buf = qroce_pages(t, 2);
    qroce_wr(t, QROCE_REG_RXQ_BASE_LO, rxr);
    qroce_wr(t, QROCE_REG_RXQ_BASE_HI, rxr >> 32);
    qroce_wr(t, QROCE_REG_RXQ_LOG2, 3);
    for (i = 0; i < 8; i++) {
        qroce_eth_put_desc(t, rxr, i, buf + 512 * i, 512);
    }
    qroce_wr(t, QROCE_REG_RXQ_PI, 8);
    qroce_wr(t, QROCE_REG_MC_HASH_LO, bit);
    qroce_wr(t, QROCE_REG_MC_HASH_HI, bit >> 32);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_MC_HASH_LO) |
                    (uint64_t)qroce_rd(t, QROCE_REG_MC_HASH_HI) << 32, ==, bit);
    qroce_wr(t, QROCE_REG_ETH_CTRL, ctrl | QROCE_ETH_CTRL_MC_FILTER);

    /* m2 is not taken; m1 and broadcast are, in that order */
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ETH_RX_FILTERED), ==, 0);
    peer_eth(pr, m2);
    peer_eth(pr, m1);
    peer_eth(pr, bcast);
    qroce_wait_reg(t, QROCE_REG_RXQ_CI, 2);
    qtest_memread(t->qts, buf, got, 6);
    g_assert_true(!memcmp(got, m1, 6));
    qtest_memread(t->qts, buf + 512, got, 6);
    g_assert_true(!memcmp(got, bcast, 6));

    /* ALLMULTI, PROMISC, and MC_FILTER off each take m2 */
    qroce_wr(t, QROCE_REG_ETH_CTRL,
             ctrl | QROCE_ETH_CTRL_MC_FILTER | QROCE_ETH_CTRL_ALLMULTI);
    peer_eth(pr, m2);
    qroce_wait_reg(t, QROCE_REG_RXQ_CI, 3);
    qroce_wr(t, QROCE_REG_ETH_CTRL,
             ctrl | QROCE_ETH_CTRL_MC_FILTER | QROCE_ETH_CTRL_PROMISC);
    peer_eth(pr, m2);
    qroce_wait_reg(t, QROCE_REG_RXQ_CI, 4);
    qroce_wr(t, QROCE_REG_ETH_CTRL, ctrl);
    peer_eth(pr, m2);
    qroce_wait_reg(t, QROCE_REG_RXQ_CI, 5);
    for (i = 2; i < 5; i++) {
        qtest_memread(t->qts, buf + 512 * i, got, 6);
        g_assert_true(!memcmp(got, m2, 6));
    }
    /*
     * Each of the six frames the peer sent is taken or filtered, and
     * none more comes: once the device has caught up, five are taken.
     */
    qroce_sync(t);
    g_assert_cmpuint(qroce_rd(t, QROCE_REG_RXQ_CI), ==, 5);
    g_assert_cmpuint(qroce_cnt(t, QROCE_CNT_ETH_RX_FILTERED), ==, 1);

    qroce_wr(t, QROCE_REG_CTRL, QROCE_CTRL_RESET);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_MC_HASH_LO), ==, 0);
    g_assert_cmphex(qroce_rd(t, QROCE_REG_MC_HASH_HI), ==, 0);
}

static const QRoceCase cases[] = {
    { "eth/tx-rx-rings-drops-filter-truncation", test_ethernet, NULL,
      eth_prepare },
    { "eth/multicast-hash-filter-allmulti-promisc", test_eth_mc_filter, NULL,
      qroce_peer_prepare },
};

static void register_qroce_eth_tests(void)
{
    qroce_add_tests(cases, ARRAY_SIZE(cases));
}

libqos_init(register_qroce_eth_tests);
