/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * admin_esw.c - the admin queue's eswitch commands (hardware interface 2.2,
 * include/vfwarp/vfwarp_admin.h, docs/switchdev.md): the switch's mode,
 * legacy or switchdev. Stateless like admin_qos.c: the mode lives in the
 * data path (vfw_dp_set_switchdev), which re-derives every port's
 * forwarding as a whole or keeps the old mode.
 */
#include <string.h>

#include "admin_internal.h"
#include "vfw_dataplane.h"

bool admin_esw_opcode(uint16_t op)
{
    return op == VFW_AQ_OP_ESW_SET_MODE || op == VFW_AQ_OP_ESW_GET_MODE;
}

uint16_t admin_esw_exec(struct vfw_admin *a, uint16_t op, uint8_t *d)
{
    struct vfw_dp *dp = a->ops.qos_dp;

    if (ld16(d + D_VF) || ld32(d + D_RSVD)) {
        return VFW_AQ_S_INVAL;
    }
    if (!dp) {
        return VFW_AQ_S_UNSUPPORTED;    /* no data path behind the queue */
    }
    if (op == VFW_AQ_OP_ESW_GET_MODE) {
        memset(d + D_U, 0, D_U_LEN);
        d[P(vfw_aq_esw_mode, mode)] = vfw_dp_switchdev(dp) ?
            VFW_ESW_MODE_SWITCHDEV : VFW_ESW_MODE_LEGACY;
        st16(d + P(vfw_aq_esw_mode, num_vfs), (uint16_t)vfw_dp_num_vfs(dp));
        return VFW_AQ_S_OK;
    }
    /* SET: everything but the mode byte must be zero */
    if (!all_zero(d + D_U + 1, D_U_LEN - 1)) {
        return VFW_AQ_S_INVAL;
    }
    switch (d[P(vfw_aq_esw_mode, mode)]) {
    case VFW_ESW_MODE_LEGACY:
        return vfw_dp_set_switchdev(dp, false) ? VFW_AQ_S_RANGE : VFW_AQ_S_OK;
    case VFW_ESW_MODE_SWITCHDEV:
        return vfw_dp_set_switchdev(dp, true) ? VFW_AQ_S_RANGE : VFW_AQ_S_OK;
    default:
        return VFW_AQ_S_RANGE;
    }
}
