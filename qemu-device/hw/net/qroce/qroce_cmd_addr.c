/*
 * qroce: the commands of addresses: CREATE_AH, DESTROY_AH, SET_GID,
 * DEL_GID, ATTACH_MCAST, DETACH_MCAST (docs/hw-spec.md §3).  Each checks
 * every value the guest supplies before use and answers with a status.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "qroce_cmd.h"
#include "qroce_objects.h"
#include "qroce_data.h"
#include "qroce_ring.h"
#include "trace.h"

int qroce_cmd_create_ah(QRoceState *s, const struct qroce_cmd *c,
                        uint32_t *out)
{
    const struct qroce_cmd_create_ah *p = &c->create_ah;
    uint32_t pdn = le32_to_cpu(p->pdn);
    QRocePD *pd = qroce_pd_get(s, pdn);
    uint8_t gid[16];
    uint32_t i;

    if (p->rsvd || p->av.rsvd) {
        return qroce_cmd_bad(c, p->rsvd ? "rsvd" : "av.rsvd",
                             p->rsvd ? p->rsvd : p->av.rsvd, MBZ,
                             QROCE_CMD_ERR_PARAM);
    }
    if (p->av.net_type != QROCE_NET_IPV4 && p->av.net_type != QROCE_NET_IPV6) {
        return qroce_cmd_bad(c, "av.net_type", p->av.net_type, RANGE,
                             QROCE_CMD_ERR_PARAM);
    }
    if (!pd) {
        return qroce_cmd_bad(c, "pdn", pdn, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    if (!qroce_gid_get(s, p->av.sgid_index, gid)) {
        return qroce_cmd_bad(c, "av.sgid_index", p->av.sgid_index,
                             "no such GID", QROCE_CMD_ERR_PARAM);
    }
    if (qroce_gid_is_mcast(p->av.dgid)) {
        uint8_t mac[6];

        qroce_mcast_mac(p->av.dgid, mac);
        if (memcmp(mac, p->av.dmac, 6)) {
            return qroce_cmd_bad(c, "av.dmac", ldl_be_p(p->av.dmac + 2),
                                 "not the multicast GID's MAC",
                                 QROCE_CMD_ERR_PARAM);
        }
    }
    for (i = 1; i < s->params.max_ah; i++) {
        if (!s->ah[i].valid) {
            QRoceAH *ah = &s->ah[i];

            memcpy(ah->av.dgid, p->av.dgid, 16);
            memcpy(ah->av.dmac, p->av.dmac, 6);
            ah->av.sgid_index = p->av.sgid_index;
            ah->av.hop_limit = p->av.hop_limit;
            ah->av.traffic_class = p->av.traffic_class;
            ah->av.net_type = p->av.net_type;
            ah->av.flow_label = le32_to_cpu(p->av.flow_label) & 0xfffff;
            ah->pdn = pdn;
            ah->valid = true;
            pd->refs++;
            out[0] = i;
            return QROCE_CMD_OK;
        }
    }
    return qroce_cmd_bad(c, "ahn", s->params.max_ah, FULL, QROCE_CMD_ERR_NORES);
}

int qroce_cmd_destroy_ah(QRoceState *s, const struct qroce_cmd *c,
                         uint32_t *out)
{
    QRoceAH *ah = qroce_ah_get(s, le32_to_cpu(c->handle.handle));

    if (!ah) {
        return qroce_cmd_bad(c, "ahn", le32_to_cpu(c->handle.handle), NOOBJ,
                             QROCE_CMD_ERR_HANDLE);
    }
    s->pd[ah->pdn].refs--;
    memset(ah, 0, sizeof(*ah));
    return QROCE_CMD_OK;
}

int qroce_cmd_set_gid(QRoceState *s, const struct qroce_cmd *c,
                      uint32_t *out)
{
    const struct qroce_cmd_set_gid *p = &c->set_gid;
    uint32_t idx = le32_to_cpu(p->index);

    if (idx >= QROCE_DEF_MAX_GID) {
        return qroce_cmd_bad(c, "index", idx, RANGE, QROCE_CMD_ERR_PARAM);
    }
    if (p->type != QROCE_GID_ROCE_V2) {
        return qroce_cmd_bad(c, "type", p->type, "not RoCEv2",
                             QROCE_CMD_ERR_PARAM);
    }
    if (qroce_nz(p->rsvd, sizeof(p->rsvd))) {
        return qroce_cmd_bad(c, "rsvd", qroce_nz(p->rsvd, sizeof(p->rsvd)),
                             MBZ, QROCE_CMD_ERR_PARAM);
    }
    s->gid[idx].valid = true;
    s->gid[idx].type = p->type;
    memcpy(s->gid[idx].gid, p->gid, 16);
    return QROCE_CMD_OK;
}

/* ATTACH_MCAST and DETACH_MCAST: the QP (a UD one) and the group's GID. */
static int qroce_cmd_mcast_args(const struct qroce_cmd *c, QRoceQP *qp)
{
    const struct qroce_cmd_mcast *p = &c->mcast;

    if (!qp) {
        return qroce_cmd_bad(c, "qpn", le32_to_cpu(p->qpn), NOOBJ,
                             QROCE_CMD_ERR_HANDLE);
    }
    if (qp->type != QROCE_QPT_UD) {
        return qroce_cmd_bad(c, "qpn", qp->qpn, "not a UD QP",
                             QROCE_CMD_ERR_PARAM);
    }
    if (p->rsvd) {
        return qroce_cmd_bad(c, "rsvd", le32_to_cpu(p->rsvd), MBZ,
                             QROCE_CMD_ERR_PARAM);
    }
    if (!qroce_gid_is_mcast(p->gid)) {
        return qroce_cmd_bad(c, "gid", ldl_be_p(p->gid + 12),
                             "not a multicast GID", QROCE_CMD_ERR_PARAM);
    }
    return QROCE_CMD_OK;
}

/* ATTACH_MCAST and DETACH_MCAST (the opcode tells which). */
int qroce_cmd_mcast(QRoceState *s, const struct qroce_cmd *c,
                    uint32_t *out)
{
    QRoceQP *qp = qroce_qp_get(s, le32_to_cpu(c->mcast.qpn));
    int st = qroce_cmd_mcast_args(c, qp);

    if (st) {
        return st;
    }
    if (c->hdr.opcode == QROCE_CMD_ATTACH_MCAST) {
        st = qroce_mcast_attach(s, c->mcast.gid, qp->qpn);
        return st ? qroce_cmd_bad(c, "gid", ldl_be_p(c->mcast.gid + 12),
                                  "the group table or the group is full", st)
                  : QROCE_CMD_OK;
    }
    if (!qroce_mcast_detach(s, c->mcast.gid, qp->qpn)) {
        return qroce_cmd_bad(c, "qpn", qp->qpn, "not attached to the group",
                             QROCE_CMD_ERR_PARAM);
    }
    return QROCE_CMD_OK;
}

int qroce_cmd_del_gid(QRoceState *s, const struct qroce_cmd *c,
                      uint32_t *out)
{
    uint32_t idx = le32_to_cpu(c->handle.handle);

    if (idx >= QROCE_DEF_MAX_GID) {
        return qroce_cmd_bad(c, "index", idx, RANGE, QROCE_CMD_ERR_PARAM);
    }
    if (!s->gid[idx].valid) {
        return qroce_cmd_bad(c, "index", idx, NOOBJ, QROCE_CMD_ERR_HANDLE);
    }
    memset(&s->gid[idx], 0, sizeof(s->gid[idx]));
    return QROCE_CMD_OK;
}
