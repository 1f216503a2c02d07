/*
 * qroce: the control path -- the command ring (docs/hw-spec.md §3) and
 * its table of handlers indexed by opcode.  The handlers, which create,
 * change and destroy the objects of qroce_objects.c and tell the data
 * path about QPs, are in qroce_cmd_*.c, one file per family of objects.
 *
 * Every value the guest supplies is checked before use: bad input ends in
 * a command error status or FATAL, logged with LOG_GUEST_ERROR -- never
 * an abort.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/bswap.h"
#include "qroce_ctrl.h"
#include "qroce_cmd.h"
#include "qroce_objects.h"
#include "qroce_data.h"
#include "qroce_ring.h"
#include "trace.h"

#define QROCE_CMD_BUDGET    64      /* commands per bottom-half run */
#define QROCE_CMD_WORK_BUDGET (1u << 16)    /* table pages per run */

/* ------------------------------------------------------------------ */
/* Commands                                                            */
/* ------------------------------------------------------------------ */

static int qroce_cmd_nop(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    return QROCE_CMD_OK;
}

static const QRoceCmdFn qroce_cmds[QROCE_CMD_MAX] = {
    [QROCE_CMD_NOP] = qroce_cmd_nop,
    [QROCE_CMD_CREATE_EQ] = qroce_cmd_create_eq,
    [QROCE_CMD_DESTROY_EQ] = qroce_cmd_destroy_eq,
    [QROCE_CMD_ALLOC_PD] = qroce_cmd_alloc_pd,
    [QROCE_CMD_DEALLOC_PD] = qroce_cmd_dealloc_pd,
    [QROCE_CMD_CREATE_CQ] = qroce_cmd_create_cq,
    [QROCE_CMD_DESTROY_CQ] = qroce_cmd_destroy_cq,
    [QROCE_CMD_CREATE_QP] = qroce_cmd_create_qp,
    [QROCE_CMD_MODIFY_QP] = qroce_cmd_modify_qp,
    [QROCE_CMD_QUERY_QP] = qroce_cmd_query_qp,
    [QROCE_CMD_DESTROY_QP] = qroce_cmd_destroy_qp,
    [QROCE_CMD_REG_MR] = qroce_cmd_reg_mr,
    [QROCE_CMD_DEREG_MR] = qroce_cmd_dereg_mr,
    [QROCE_CMD_ALLOC_MR] = qroce_cmd_alloc_mr,
    [QROCE_CMD_CREATE_AH] = qroce_cmd_create_ah,
    [QROCE_CMD_DESTROY_AH] = qroce_cmd_destroy_ah,
    [QROCE_CMD_SET_GID] = qroce_cmd_set_gid,
    [QROCE_CMD_DEL_GID] = qroce_cmd_del_gid,
    [QROCE_CMD_CREATE_SRQ] = qroce_cmd_create_srq,
    [QROCE_CMD_MODIFY_SRQ] = qroce_cmd_modify_srq,
    [QROCE_CMD_QUERY_SRQ] = qroce_cmd_query_srq,
    [QROCE_CMD_DESTROY_SRQ] = qroce_cmd_destroy_srq,
    [QROCE_CMD_ATTACH_MCAST] = qroce_cmd_mcast,
    [QROCE_CMD_DETACH_MCAST] = qroce_cmd_mcast,
    [QROCE_CMD_RESIZE_CQ] = qroce_cmd_resize_cq,
    [QROCE_CMD_REREG_MR] = qroce_cmd_rereg_mr,
    [QROCE_CMD_ALLOC_MW] = qroce_cmd_alloc_mw,
    [QROCE_CMD_DEALLOC_MW] = qroce_cmd_dealloc_mw,
    [QROCE_CMD_ODP_MAP] = qroce_cmd_odp_map,
    [QROCE_CMD_ODP_UNMAP] = qroce_cmd_odp_unmap,
    [QROCE_CMD_ODP_QUERY] = qroce_cmd_odp_query,
    [QROCE_CMD_ODP_RESUME] = qroce_cmd_odp_resume,
};

/* Run one command (or fail it as x-inject-cmd-fail asks): its status. */
static int qroce_cmd_exec(QRoceState *s, const struct qroce_cmd *cmd,
                          uint32_t *out)
{
    QRoceParams *p = &s->params;
    uint8_t op = cmd->hdr.opcode;
    QRoceCmdFn fn = op < QROCE_CMD_MAX ? qroce_cmds[op] : NULL;

    if (qroce_inject(s, &p->inj_cmd_fail,
                     p->inj_cmd_opcode > 0xff || p->inj_cmd_opcode == op,
                     "cmd-fail", op)) {
        return p->inj_cmd_status ? p->inj_cmd_status : QROCE_CMD_ERR_INTERNAL;
    }
    if (!fn) {
        return qroce_cmd_bad(cmd, "opcode", op, "unknown opcode",
                             QROCE_CMD_ERR_OPCODE);
    }
    if (cmd->hdr.flags || cmd->hdr.rsvd) {
        return qroce_cmd_bad(cmd, cmd->hdr.flags ? "flags" : "rsvd",
                             cmd->hdr.flags ? cmd->hdr.flags : cmd->hdr.rsvd,
                             "must be zero", QROCE_CMD_ERR_PARAM);
    }
    return fn(s, cmd, out);
}

void qroce_fatal(QRoceState *s, uint32_t code)
{
    QROCE_GUEST_ERR(qroce_fatal, "device fatal, code %u", code);
    qroce_reg_mask(s, QROCE_REG_STATUS, QROCE_STATUS_READY,
                   QROCE_STATUS_FATAL);
    qroce_reg_set(s, QROCE_REG_FATAL_CODE, code);
}

void qroce_cmd_bh(void *opaque)
{
    QRoceState *s = opaque;
    QROCE_LOCKED(s);
    uint32_t log2 = qroce_reg(s, QROCE_REG_CMDQ_LOG2);
    uint32_t size = 1u << log2;
    int budget = QROCE_CMD_BUDGET;
    bool done = false;
    uint32_t ci;

    if (s->quiesced) {
        return;                 /* the VM is stopped: it waits (§18) */
    }
    s->bt_work = 0;
    while (qroce_ready(s) &&
           (ci = qroce_reg(s, QROCE_REG_CMDQ_CI)) !=
           qroce_reg(s, QROCE_REG_CMDQ_PI)) {
        uint32_t slot = ci & (size - 1);
        struct qroce_cmd cmd;
        struct qroce_cmd_comp comp = {};
        uint32_t out[6] = {};
        uint64_t caddr = qroce_reg64(s, QROCE_REG_CMDQ_CQ_LO) +
                         (uint64_t)slot * sizeof(comp);
        int st, i;

        if (budget-- == 0) {
            qemu_bh_schedule(s->cmd_bh);
            break;
        }
        if (!qroce_dma_read(s, qroce_reg64(s, QROCE_REG_CMDQ_BASE_LO) +
                            (uint64_t)slot * sizeof(cmd), &cmd, sizeof(cmd))) {
            qroce_fatal(s, QROCE_FATAL_CMDQ_DMA);
            break;
        }
        if (qroce_inject(s, &s->params.inj_cmd_swallow, true, "cmd-swallow",
                         cmd.hdr.opcode)) {
            /* consumed, never completed */
            qroce_reg_set(s, QROCE_REG_CMDQ_CI, ci + 1);
            continue;
        }
        st = qroce_cmd_exec(s, &cmd, out);
        if (st != QROCE_CMD_OK) {
            qroce_count(s, QROCE_CNT_CMD_ERRS);
            QROCE_GUEST_ERR(qroce_ub_cmd, "command %s (0x%x) failed with "
                            "status %d", qroce_cmd_name(cmd.hdr.opcode),
                            cmd.hdr.opcode, st);
        }
        qroce_count(s, QROCE_CNT_CMDS);
        trace_qroce_cmd(ci, cmd.hdr.opcode,
                        le32_to_cpu(cmd.hdr.cookie), st, out[0]);
        comp.cookie = cmd.hdr.cookie;
        comp.status = st;
        comp.opcode = cmd.hdr.opcode;
        for (i = 0; i < 6; i++) {
            comp.out[i] = cpu_to_le32(out[i]);
        }
        /* body first (everything but the owner byte), then the owner */
        if (!qroce_dma_write(s, caddr + 8, comp.out, sizeof(comp.out)) ||
            !qroce_dma_write(s, caddr, &comp, 7)) {
            qroce_fatal(s, QROCE_FATAL_CMDQ_DMA);
            break;
        }
        comp.owner = qroce_owner_for(ci, log2);
        smp_wmb(); /* the completion is visible before its owner byte */
        if (!qroce_dma_write(s, caddr + 7, &comp.owner, 1)) {
            qroce_fatal(s, QROCE_FATAL_CMDQ_DMA);
            break;
        }
        qroce_reg_set(s, QROCE_REG_CMDQ_CI, ci + 1);
        done = true;
        if (s->bt_work >= QROCE_CMD_WORK_BUDGET) {
            /* long commands: yield to the guest, go on next time */
            qemu_bh_schedule(s->cmd_bh);
            break;
        }
    }
    if (done) {
        qroce_irq(s, QROCE_MSIX_VEC_CMD);
    }
}

void qroce_ctrl_reset(QRoceState *s)
{
    uint32_t i;

    QROCE_TBL_FOREACH(&s->qps, i) {
        qroce_qp_free(s, qroce_tbl_get(&s->qps, i));
    }
    QROCE_TBL_FOREACH(&s->cqs, i) {
        qroce_bt_free(s, &((QRoceCQ *)qroce_tbl_get(&s->cqs, i))->bt);
        qroce_tbl_free(s, &s->cqs, i);
    }
    QROCE_TBL_FOREACH(&s->mrs, i) {
        /* keys stay unique across resets: the stamps stay */
        qroce_mr_free(s, qroce_tbl_get(&s->mrs, i));
    }
    QROCE_TBL_FOREACH(&s->srqs, i) {
        qroce_bt_free(s, &((QRoceSRQ *)qroce_tbl_get(&s->srqs, i))->wq.bt);
        qroce_tbl_free(s, &s->srqs, i);
    }
    for (i = 0; i < QROCE_NUM_EQS; i++) {
        qroce_bt_free(s, &s->eq[i].bt);
    }
    memset(s->eq, 0, sizeof(s->eq));
    memset(s->pd, 0, sizeof(*s->pd) * s->params.max_pd);
    memset(s->ah, 0, sizeof(*s->ah) * s->params.max_ah);
    memset(s->gid, 0, sizeof(s->gid));
    for (i = 0; i < s->params.mcast_max_groups; i++) {
        s->mcast[i].nqp = 0;
    }
    /*
     * Nothing holds translation memory now.  A migration stream cut short
     * may have left rings it loaded uncounted: the count starts over.
     */
    s->bt_pages = 0;
}
