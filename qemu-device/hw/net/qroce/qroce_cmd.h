/*
 * qroce: what the command families share (qroce_cmd_*.c, one file per
 * family of objects; the queue and its table of handlers are
 * qroce_ctrl.c's, above them).  The families do not call each other.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_QROCE_CMD_H
#define HW_NET_QROCE_CMD_H

#include "qroce.h"
#include "trace.h"

typedef int (*QRoceCmdFn)(QRoceState *s, const struct qroce_cmd *c,
                          uint32_t *out);

/* The first byte of @p[@n] that is not zero, 0 if all are (MBZ fields). */
static inline uint8_t qroce_nz(const uint8_t *p, size_t n)
{
    while (n--) {
        if (*p++) {
            return p[-1];
        }
    }
    return 0;
}

/* The name of command @opcode, for traces ("?" if there is none). */
static inline const char *qroce_cmd_name(uint8_t opcode)
{
    static const char *const names[QROCE_CMD_MAX] = {
        [QROCE_CMD_NOP] = "NOP",
        [QROCE_CMD_CREATE_EQ] = "CREATE_EQ",
        [QROCE_CMD_DESTROY_EQ] = "DESTROY_EQ",
        [QROCE_CMD_ALLOC_PD] = "ALLOC_PD",
        [QROCE_CMD_DEALLOC_PD] = "DEALLOC_PD",
        [QROCE_CMD_CREATE_CQ] = "CREATE_CQ",
        [QROCE_CMD_DESTROY_CQ] = "DESTROY_CQ",
        [QROCE_CMD_CREATE_QP] = "CREATE_QP",
        [QROCE_CMD_MODIFY_QP] = "MODIFY_QP",
        [QROCE_CMD_QUERY_QP] = "QUERY_QP",
        [QROCE_CMD_DESTROY_QP] = "DESTROY_QP",
        [QROCE_CMD_REG_MR] = "REG_MR",
        [QROCE_CMD_DEREG_MR] = "DEREG_MR",
        [QROCE_CMD_ALLOC_MR] = "ALLOC_MR",
        [QROCE_CMD_CREATE_AH] = "CREATE_AH",
        [QROCE_CMD_DESTROY_AH] = "DESTROY_AH",
        [QROCE_CMD_SET_GID] = "SET_GID",
        [QROCE_CMD_DEL_GID] = "DEL_GID",
        [QROCE_CMD_CREATE_SRQ] = "CREATE_SRQ",
        [QROCE_CMD_MODIFY_SRQ] = "MODIFY_SRQ",
        [QROCE_CMD_QUERY_SRQ] = "QUERY_SRQ",
        [QROCE_CMD_DESTROY_SRQ] = "DESTROY_SRQ",
        [QROCE_CMD_ATTACH_MCAST] = "ATTACH_MCAST",
        [QROCE_CMD_DETACH_MCAST] = "DETACH_MCAST",
        [QROCE_CMD_RESIZE_CQ] = "RESIZE_CQ",
        [QROCE_CMD_REREG_MR] = "REREG_MR",
        [QROCE_CMD_ALLOC_MW] = "ALLOC_MW",
        [QROCE_CMD_DEALLOC_MW] = "DEALLOC_MW",
        [QROCE_CMD_ODP_MAP] = "ODP_MAP",
        [QROCE_CMD_ODP_UNMAP] = "ODP_UNMAP",
        [QROCE_CMD_ODP_QUERY] = "ODP_QUERY",
        [QROCE_CMD_ODP_RESUME] = "ODP_RESUME",
    };

    return opcode < QROCE_CMD_MAX && names[opcode] ? names[opcode] : "?";
}

/*
 * Refuse command @c with status @st: trace the driver's mistake, the
 * field and its value (qroce_ub_cmd_field, docs/hw-spec.md §17).
 */
static inline int qroce_cmd_bad(const struct qroce_cmd *c, const char *field,
                                uint64_t val, const char *why, int st)
{
    trace_qroce_ub_cmd_field(qroce_cmd_name(c->hdr.opcode), field, val, why);
    return st;
}

/* the reasons qroce_cmd_bad() gives most */
#define RANGE "out of range"
#define MBZ "must be zero"
#define NOOBJ "names no object"
#define FULL "object table full"
#define BUDGET "state-budget-mb spent"

/* The commands, by family: the handlers of qroce_ctrl.c's table. */
int qroce_cmd_create_eq(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_destroy_eq(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out);
int qroce_cmd_alloc_pd(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_dealloc_pd(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out);
int qroce_cmd_create_cq(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_destroy_cq(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out);
int qroce_cmd_create_qp(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_modify_qp(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_query_qp(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_destroy_qp(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out);
int qroce_cmd_reg_mr(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_dereg_mr(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_alloc_mr(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_create_ah(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_destroy_ah(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out);
int qroce_cmd_set_gid(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_del_gid(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_create_srq(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out);
int qroce_cmd_modify_srq(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out);
int qroce_cmd_query_srq(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_destroy_srq(QRoceState *s, const struct qroce_cmd *c,
                          uint32_t *out);
int qroce_cmd_mcast(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_resize_cq(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_rereg_mr(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_alloc_mw(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_dealloc_mw(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out);
int qroce_cmd_odp_map(QRoceState *s, const struct qroce_cmd *c, uint32_t *out);
int qroce_cmd_odp_unmap(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_odp_query(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out);
int qroce_cmd_odp_resume(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out);
/* Free QP @qp's resources and its slot (DESTROY_QP, and at reset). */
void qroce_qp_free(QRoceState *s, QRoceQP *qp);

#endif
