/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_admin_qos.c - the 2.1 QoS admin commands (src/dev/admin_qos.c) and the
 * 2.2 eswitch mode commands (src/dev/admin_esw.c) under PF driver control,
 * against the real data path and its uplink scheduler.
 * The input is a script of 64-byte steps: a descriptor (the opcode picked
 * from the QoS commands, SET_VF_RATE, GET_VF_CONFIG or taken raw; every
 * other byte as given), or an event (NumVFs change, a frame injected as a
 * function's traffic, time passing).
 *
 * Invariants checked (abort on violation):
 *   - the descriptor comes back DONE, with ERR exactly when status != OK;
 *   - a failing command changes nothing: line rate, every node, every
 *     leaf, classes, classification and VF configs compared before/after;
 *   - one model: an enabled VF's leaf tx_share/tx_max equal its
 *     min/max_tx_rate (Mbit/s) after every step;
 *   - NODE_ADD returns an id 1..63 that then exists.
 * Between inputs the QoS state is put back to the defaults through the
 * scheduler's API (a full data-path rebuild per input would cost more
 * than the commands).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_admin.h"
#include "vfw_dataplane.h"
#include "fuzz_dp_null.h"
#include "vswitch.h"

/* VFs: 2 keep enabled, disabled and absent VFs reachable; every VF
 * multiplies the cost of a DCB change (each port is reprogrammed). */
#define NVF 2
#define STEP 64
#define MAX_STEPS 64

static const struct vfw_dp_ops *dp_ops(void)
{
    static struct vfw_dp_ops o;

    o = fz_dp_ops(1);
    return &o;
}

static int a_rd(void *o, uint64_t a, void *b, size_t n) { (void)o; (void)a; (void)b; (void)n; return -1; }

static const uint8_t PF_MAC[6] = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 };
static struct vfw_dp *dp;
static struct vfw_admin adm;

static const uint16_t OPS[] = {
    VFW_AQ_OP_QOS_SET_LINE, VFW_AQ_OP_QOS_NODE_ADD, VFW_AQ_OP_QOS_NODE_DEL,
    VFW_AQ_OP_QOS_NODE_SET, VFW_AQ_OP_QOS_LEAF_SET, VFW_AQ_OP_DCB_SET_ETS,
    VFW_AQ_OP_DCB_SET_MAXRATE, VFW_AQ_OP_DCB_SET_APP, VFW_AQ_OP_DCB_DEL_APP,
    VFW_AQ_OP_DCB_SET_TRUST, VFW_AQ_OP_QOS_GET_LINE, VFW_AQ_OP_QOS_NODE_GET,
    VFW_AQ_OP_QOS_NODES_GET, VFW_AQ_OP_QOS_LEAF_GET, VFW_AQ_OP_DCB_GET_ETS,
    VFW_AQ_OP_DCB_GET_MAXRATE, VFW_AQ_OP_DCB_GET_APP, VFW_AQ_OP_QOS_GET_TC_STATS,
    VFW_AQ_OP_SET_VF_RATE, VFW_AQ_OP_GET_VF_CONFIG,
    VFW_AQ_OP_ESW_SET_MODE, VFW_AQ_OP_ESW_GET_MODE,
};
#define NOPS (sizeof(OPS) / sizeof(OPS[0]))

/* ---- the state, serialised field by field (no padding bytes) ----------- */

struct ser {
    uint8_t b[8192];
    size_t n;
};

static void put(struct ser *s, uint64_t v)
{
    if (s->n + 8 <= sizeof(s->b)) {
        memcpy(s->b + s->n, &v, 8);
        s->n += 8;
    }
}

static void put_rate(struct ser *s, int rc, const vsw_qos_rate *r)
{
    put(s, (uint64_t)rc);
    if (!rc) {
        put(s, r->tx_share);
        put(s, r->tx_max);
        put(s, r->tx_priority);
        put(s, r->tx_weight);
        put(s, r->parent);
    }
}

static void state(struct ser *s)
{
    vsw_qos *q = vfw_dp_qos(dp);
    struct vfw_dp_dcb b;
    vsw_qos_rate r;
    vsw_qos_ets e;
    uint64_t line;
    uint32_t ovh;

    s->n = 0;
    vsw_qos_get_line(q, &line, &ovh);
    put(s, line);
    put(s, ovh);
    put(s, vfw_dp_line_rate(dp));
    for (unsigned id = 0; id <= VSW_QOS_MAX_NODES + 1; id++) {
        int rc = vsw_qos_node_get(q, id, &r);

        put_rate(s, rc, &r);
    }
    for (unsigned fn = 0; fn <= NVF; fn++) {
        int rc = vsw_qos_leaf_get(q, fn, &r);

        put_rate(s, rc, &r);
    }
    vsw_qos_ets_get(q, &e);
    for (unsigned t = 0; t < VSW_NUM_TC; t++) {
        put(s, e.tsa[t]);
        put(s, e.bw[t]);
        put(s, e.maxrate[t]);
    }
    vfw_dp_get_dcb(dp, &b);
    put(s, b.trust);
    put(s, b.default_prio);
    put(s, b.default_set);
    put(s, b.dscp_mapped);
    for (unsigned i = 0; i < 8; i++) {
        put(s, b.prio_tc[i]);
    }
    for (unsigned i = 0; i < 64; i++) {
        put(s, b.dscp_prio[i]);
    }
    for (unsigned vf = 0; vf < NVF; vf++) {
        const struct vfw_vf_cfg *c = vfw_admin_vf_cfg(&adm, vf);

        put(s, c->min_rate);
        put(s, c->max_rate);
        put(s, c->gen);
        put(s, c->vlan);
        put(s, c->qos);
    }
    put(s, adm.num_vfs);
    put(s, vfw_dp_switchdev(dp));
}

/* One model: an enabled VF's leaf is its ip link rate. */
static void check_vf_leaves(void)
{
    vsw_qos *q = vfw_dp_qos(dp);
    vsw_qos_rate r;

    for (unsigned vf = 0; vf < adm.num_vfs; vf++) {
        const struct vfw_vf_cfg *c = vfw_admin_vf_cfg(&adm, vf);

        if (vsw_qos_leaf_get(q, 1 + vf, &r) ||
            r.tx_share != (uint64_t)c->min_rate * 1000000u ||
            r.tx_max != (uint64_t)c->max_rate * 1000000u ||
            (c->max_rate && c->min_rate > c->max_rate)) {
            abort();
        }
    }
}

/* Back to the defaults through the API: leaves first (no shares, under
 * the root), then nodes from the leaves up (a node is deleted once it has
 * no children: VSW_QOS_MAX_DEPTH + 1 passes), then the rest. */
static void restore(void)
{
    vsw_qos *q = vfw_dp_qos(dp);
    static const vsw_qos_ets ets0 = {
        .tsa = { 1, 1, 1, 1, 1, 1, 1, 1 },
        .bw = { 12, 12, 12, 12, 13, 13, 13, 13 },
    };
    struct vfw_dp_dcb b, b0;
    vsw_qos_rate r;

    vsw_qos_rate_default(&r);
    for (unsigned fn = 0; fn <= NVF; fn++) {
        vsw_qos_leaf_set(q, fn, &r, NULL);
    }
    for (unsigned pass = 0; pass <= VSW_QOS_MAX_DEPTH + 1; pass++) {
        for (unsigned id = 1; id <= VSW_QOS_MAX_NODES; id++) {
            vsw_qos_node_del(q, id, NULL);
        }
    }
    for (unsigned id = 1; id <= VSW_QOS_MAX_NODES; id++) {
        if (!vsw_qos_node_get(q, id, &r)) {
            abort();                    /* a node that cannot be deleted */
        }
    }
    vsw_qos_ets_set(q, &ets0, NULL);
    vfw_dp_dcb_default(&b0);
    vfw_dp_get_dcb(dp, &b);
    if (memcmp(&b, &b0, sizeof(b))) {   /* reprograms every port: slow */
        vfw_dp_set_dcb(dp, &b0);
    }
    vfw_dp_set_line_rate(dp, VFW_DP_LINE_DEFAULT, NULL);
    if (vfw_dp_set_switchdev(dp, false)) {
        abort();
    }
    vfw_admin_reset(&adm);
    vfw_admin_set_num_vfs(&adm, 1);
}

static void inject(const uint8_t *in)
{
    uint8_t f[128];
    unsigned fn = in[1] % (1 + NVF);
    size_t o = 12;

    memset(f, 0, sizeof(f));
    memcpy(f, (const uint8_t[6]){ 0x02, 0, 0, 9, 9, 9 }, 6);
    if (fn == 0) {
        memcpy(f + 6, PF_MAC, 6);
    } else {
        vfw_dp_vf_mac(dp, fn - 1, f + 6);
    }
    if (in[2] & 1) {
        f[o++] = 0x81;
        f[o++] = 0;
        f[o++] = in[3];
        f[o++] = in[4];
    }
    f[o++] = 0x08;
    f[o++] = 0;
    f[o] = 0x45;
    f[o + 1] = in[5];
    f[o + 3] = 80;
    f[o + 8] = 64;
    f[o + 9] = 17;
    vfw_dp_fn_inject(dp, fn, f, o + 80);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ser before, after;

    if (!dp) {
        dp = vfw_dp_create(dp_ops(), NULL, PF_MAC, NVF);
        if (!dp || vfw_admin_init(&adm, &(struct vfw_admin_ops){
                                      .dma_read = a_rd, .dma_write = fz_a_wr,
                                      .qos_dp = dp }, NVF)) {
            abort();
        }
        vfw_dp_set_uplink(dp, true);
    }
    restore();
    fz_clock = 1000;
    for (size_t k = 0; k < MAX_STEPS && (k + 1) * STEP <= size; k++) {
        const uint8_t *in = data + k * STEP;
        uint8_t d[VFW_AQ_DESC_SIZE];
        uint16_t op, st;

        if (in[0] >= 0xf0) {            /* events */
            /* (a PF reset costs a thousand commands; test_admin_qos
             * covers it, and restore() gives the same state) */
            switch (in[0] % 3) {
            case 0:
                vfw_admin_set_num_vfs(&adm, in[1] % (NVF + 1));
                break;
            case 1:
                inject(in);
                break;
            default:
                fz_clock += (uint64_t)in[1] << (in[2] % 24);
                vfw_dp_uplink_timer(dp);
                break;
            }
            check_vf_leaves();
            continue;
        }
        memcpy(d, in, sizeof(d));
        if (in[0] < 0xe0) {
            op = OPS[in[0] % NOPS];
            d[0] = (uint8_t)op;
            d[1] = (uint8_t)(op >> 8);
        }
        op = (uint16_t)(d[0] | d[1] << 8);
        state(&before);
        st = fz_aq_exec_checked(&adm, d);
        if (st != VFW_AQ_S_OK) {
            state(&after);
            if (before.n != after.n || memcmp(before.b, after.b, before.n)) {
                abort();                /* a failing command changed state */
            }
        } else if (op == VFW_AQ_OP_QOS_NODE_ADD) {
            vsw_qos_rate r;
            uint16_t id = (uint16_t)(d[6] | d[7] << 8);

            if (id < 1 || id > VSW_QOS_MAX_NODES ||
                vsw_qos_node_get(vfw_dp_qos(dp), id, &r)) {
                abort();
            }
        } else if (op == VFW_AQ_OP_QOS_SET_LINE) {
            uint64_t want = 0;

            memcpy(&want, in + 16, 8);  /* u.line.rate_bps, LE host */
            if (vfw_dp_line_rate(dp) != want) {
                abort();
            }
        }
        check_vf_leaves();
    }
    return 0;
}
