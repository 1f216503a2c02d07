/*
 * qroce: wire faults (docs/hw-spec.md §15) -- the knobs that drop,
 * duplicate, reorder and corrupt RoCE frames on their way to and from the
 * wire, drawn from a seeded generator so that a run can be repeated.
 * Below the port, which passes frames through it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/timer.h"
#include "qemu/bswap.h"
#include "net/eth.h"
#include "qroce_wirefault.h"
#include "trace.h"

static const char *const qroce_fault_names[QROCE_FAULT_NUM] = {
    "drop", "dup", "reorder", "corrupt",
};
static const char *const qroce_dir_names[2] = { "tx", "rx" };

/* A seeded xorshift64* draw: is there a fault of @kind on this frame? */
static bool qroce_fault(QRoceState *s, int dir, int kind)
{
    uint32_t ppm = s->params.fault_ppm[dir][kind];
    uint64_t seed = s->params.fault_seed;
    uint64_t x;

    if (!ppm) {
        return false;
    }
    if (s->fault_rng_seed != seed || !s->fault_rng) {
        s->fault_rng_seed = seed;
        s->fault_rng = seed ? seed : 0x9e3779b97f4a7c15ULL;
    }
    x = s->fault_rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->fault_rng = x;
    return (x * 0x2545f4914f6cdd1dULL >> 11) % 1000000 < ppm;
}

bool qroce_faults_on(QRoceState *s, int dir)
{
    int k;

    for (k = 0; k < QROCE_FAULT_NUM; k++) {
        if (s->params.fault_ppm[dir][k]) {
            return true;
        }
    }
    return false;
}

/* Offset of the BTH of a RoCEv2 frame, or 0 if it is not one. */
size_t qroce_roce_bth(const uint8_t *f, size_t len)
{
    size_t l3 = ETH_HLEN, l4;

    if (len < ETH_HLEN + 20) {
        return 0;
    }
    if (lduw_be_p(f + 12) == ETH_P_IP && f[l3] == 0x45 && f[l3 + 9] == 17) {
        l4 = l3 + 20;
    } else if (lduw_be_p(f + 12) == ETH_P_IPV6 && len >= l3 + 40 &&
               f[l3 + 6] == 17) {
        l4 = l3 + 40;
    } else {
        return 0;
    }
    if (len < l4 + 8 + 12 + 4 || lduw_be_p(f + l4 + 2) != 4791) {
        return 0;
    }
    return l4 + 8;
}

static void qroce_fault_count(QRoceState *s, int dir, int kind, size_t len)
{
    qroce_count(s, QROCE_CNT_WIRE_FAULTS);
    trace_qroce_wire_fault(qroce_dir_names[dir], qroce_fault_names[kind],
                           len);
}

/*
 * Pass RoCE frame @buf (ours to change) through the fault knobs of @dir
 * on its way to @out: drop, corrupt one bit after the UDP header (the
 * ICRC catches it), hold it back behind the next frame, or send it twice.
 */
void qroce_fault_stage(QRoceState *s, int dir, uint8_t *buf, size_t len,
                       QRoceFrameFn *out)
{
    QRoceLoFrame *held;
    size_t bth = qroce_roce_bth(buf, len);

    if (qroce_fault(s, dir, QROCE_FAULT_DROP)) {
        qroce_fault_count(s, dir, QROCE_FAULT_DROP, len);
        return;
    }
    if (qroce_fault(s, dir, QROCE_FAULT_CORRUPT)) {
        size_t at = bth + s->fault_rng % (len - bth);

        buf[at] ^= 1u << (s->fault_rng >> 32) % 8;
        qroce_fault_count(s, dir, QROCE_FAULT_CORRUPT, len);
    }
    if (!s->fault_held[dir] && qroce_fault(s, dir, QROCE_FAULT_REORDER)) {
        held = g_malloc(sizeof(*held) + len);
        held->len = len;
        memcpy(held->data, buf, len);
        s->fault_held[dir] = held;
        qroce_fault_count(s, dir, QROCE_FAULT_REORDER, len);
        timer_mod(s->fault_timer,
                  qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) + 1);
        return;
    }
    out(s, buf, len);
    if (qroce_fault(s, dir, QROCE_FAULT_DUP)) {
        qroce_fault_count(s, dir, QROCE_FAULT_DUP, len);
        out(s, buf, len);
    }
    held = s->fault_held[dir];
    if (held) {
        s->fault_held[dir] = NULL;
        out(s, held->data, held->len);
        g_free(held);
    }
}

void qroce_fault_release(QRoceState *s, QRoceFrameFn *tx, QRoceFrameFn *rx)
{
    QRoceLoFrame *f;

    f = s->fault_held[QROCE_DIR_TX];
    s->fault_held[QROCE_DIR_TX] = NULL;
    if (f) {
        tx(s, f->data, f->len);
        g_free(f);
    }
    f = s->fault_held[QROCE_DIR_RX];
    s->fault_held[QROCE_DIR_RX] = NULL;
    if (f) {
        rx(s, f->data, f->len);
        g_free(f);
    }
}
