/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dataplane.c - Ethernet rings of every function joined by the embedded
 * switch (see vfw_dataplane.h and include/vfwarp/vfwarp_ring.h).
 *
 * TX: a doorbell (TAIL write) makes the device walk [HEAD, TAIL): gather one
 * frame (<= VFW_TX_MAX_FRAGS descriptors up to EOP), check it, optionally
 * insert a VLAN tag, run it through vsw_process() and hand a copy to every
 * egress port: the uplink (ops->uplink_tx) or another function's RX ring.
 * A VF with max_mbps is shaped here: a frame that would exceed its token
 * bucket stays on the ring (back-pressure to the driver's queue) and a timer
 * resumes the ring when enough tokens have accumulated, so TCP sees a clean
 * bottleneck instead of policer drops.
 * QoS (issue 17): with ops->uplink_timer the uplink is a wire with a line
 * rate behind the link QoS scheduler (uplink.c); the hooks here are marked
 * "QoS hook": frames to the uplink go to its queues, a paused function's TX
 * ring waits, the uplink's timer and resumes drive it, and a VF's
 * min/max_mbps are its leaf's tx_share/tx_max.
 * 2.5: every function has VFW_TXQ_MAX TX rings (a driver puts a traffic
 * class on each); a ring whose head frame is of a class paused at the
 * uplink waits, the function's other rings go on (tx_ring_kick).
 * RX: one frame per descriptor; a frame larger than the posted buffer, or a
 * buffer the DMA refuses, consumes the descriptor with VFW_RXD_ERR_BUF.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_dataplane.h"
#include "vfw_uplink.h"
#include "vfwarp/vfwarp_admin.h"
#include "vswitch.h"

#define LINK_STATE_AUTO    0
#define LINK_STATE_ENABLE  1
#define LINK_STATE_DISABLE 2

#define CTRL_MASK (VFW_RING_CTRL_ENABLE | VFW_RING_CTRL_IRQ_EN | \
                   (VFW_RING_CTRL_VEC_MASK << VFW_RING_CTRL_VEC_SHIFT))

struct dp_ring {
    uint64_t base;
    uint32_t len, head, tail, ctrl, status;
    bool irq_pending;
};

struct dp_fn {
    /* 2.5: TX ring n at VFW_REG_TXQ(n); a driver before 2.5 uses tx[0] */
    struct dp_ring tx[VFW_TXQ_MAX], rx;
    uint32_t link_ctrl;
    bool link_pending;
    bool link;                  /* as last reported */
    uint64_t stat[VFW_STAT_COUNT];
    /* TX shaping (max_mbps) */
    int64_t tokens;             /* bytes */
    uint64_t last_ns;
    bool timer_armed;
    /* The RDMA engine's frames over the VF's max_mbps wait here (FIFO)
     * for the shaper instead of being dropped: its TCP sees a slower
     * path, not loss. Allocated on first use; HOLD_N frames at most. */
    uint8_t *hold;
    uint16_t hold_len[16];
    unsigned hold_head, hold_count;
};

#define HOLD_N    16u
#define HOLD_SLOT (VFW_FRAME_MAX + 4)

struct vfw_dp {
    const struct vfw_dp_ops *ops;
    void *ctx;
    vsw_switch *sw;
    unsigned total_vfs;
    bool uplink_up;
    uint8_t pf_mac[6];
    struct dp_fn fn[VFW_DP_NUM_FN];
    struct vfw_dp_vf_cfg cfg[VFW_DP_MAX_VFS];
    /* installed static FDB entries: VF n's fdb_mac in each VID of fdb_vids */
    uint8_t fdb_mac[VFW_DP_MAX_VFS][6];
    uint8_t fdb_vids[VFW_DP_MAX_VFS][512];
    uint8_t buf[VFW_FRAME_MAX + 4];
    uint8_t out[VFW_FRAME_MAX + 8];
    unsigned inject_depth;      /* vfw_dp_fn_inject nesting (bounded) */
    struct vfw_uplink *up;      /* QoS hook: NULL without ops->uplink_timer */
    uint64_t line_bps;          /* QoS: 0 = no line rate (frames go at once) */
    uint64_t line_default;      /* what a reset restores */
    struct vfw_dp_dcb dcb;      /* QoS: priority of a frame, priority -> TC */
    bool switchdev;             /* 2.2: eswitch mode (docs/switchdev.md) */
    /* 2.3: the switch's meters that offloaded rules' police actions use:
     * bit id of meter_used, and the rule's cookie (admin_esw.c) */
    uint8_t meter_used[VSW_MAX_METERS / 8];
    uint64_t meter_owner[VSW_MAX_METERS];
    /* 2.3: FDB entries offloaded from the PF's bridge (switchdev mode) */
    struct dp_fdb_off {
        uint8_t mac[6];
        uint16_t vid;
        bool used;
    } fdb_off[VFW_ESW_FDB_MAX];
    /* 2.3: VLANs of a VLAN-aware bridge per port in switchdev mode, index
     * 0 the uplink, 1 + n VF n (ESW_PORT_VLAN) */
    struct dp_esw_vlan {
        bool aware;
        uint16_t pvid;              /* 0: none */
        uint8_t member[512];        /* bit v: VLAN v */
    } esw_vlan[1 + VFW_DP_MAX_VFS];
};

static void tx_kick(struct vfw_dp *dp, unsigned fn);

static uint64_t now(struct vfw_dp *dp)
{
    return dp->ops->now_ns ? dp->ops->now_ns(dp->ctx) : 0;
}

static unsigned fn_count(const struct vfw_dp *dp)
{
    return 1 + dp->total_vfs;
}

static void default_mac(const struct vfw_dp *dp, unsigned vf, uint8_t mac[6])
{
    mac[0] = 0x02;
    mac[1] = 0x00;
    mac[2] = 0x00;
    mac[3] = dp->pf_mac[4];
    mac[4] = (uint8_t)vf;
    mac[5] = 0x01;
}

static bool mac_zero(const uint8_t m[6])
{
    return !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]);
}

int vfw_dp_vf_mac(const struct vfw_dp *dp, unsigned vf, uint8_t mac[6])
{
    if (!dp || vf >= dp->total_vfs) {
        return -EINVAL;
    }
    if (mac_zero(dp->cfg[vf].mac)) {
        default_mac(dp, vf, mac);
    } else {
        memcpy(mac, dp->cfg[vf].mac, 6);
    }
    return 0;
}

static bool fn_link(const struct vfw_dp *dp, unsigned fn)
{
    if (fn == VFW_DP_FN_PF) {
        return dp->uplink_up;
    }
    switch (dp->cfg[fn - 1].link_state) {
    case LINK_STATE_ENABLE:
        return true;
    case LINK_STATE_DISABLE:
        return false;
    default:
        return dp->uplink_up;
    }
}

bool vfw_dp_link_up(const struct vfw_dp *dp, unsigned fn)
{
    return dp && fn < fn_count(dp) && fn_link(dp, fn);
}

/* --- interrupts -------------------------------------------------------- */

static void fire(struct vfw_dp *dp, unsigned fn, uint32_t ctrl, bool *pending)
{
    if (ctrl & VFW_RING_CTRL_IRQ_EN) {
        *pending = false;
        if (dp->ops->irq) {
            dp->ops->irq(dp->ctx, fn, (ctrl >> VFW_RING_CTRL_VEC_SHIFT) &
                         VFW_RING_CTRL_VEC_MASK);
        }
    } else {
        *pending = true;
    }
}

static void link_update(struct vfw_dp *dp, unsigned fn)
{
    struct dp_fn *f = &dp->fn[fn];
    bool up = fn_link(dp, fn);

    if (up != f->link) {
        f->link = up;
        fire(dp, fn, f->link_ctrl, &f->link_pending);
    }
}

/* --- switch configuration --------------------------------------------- */

static bool bit_on(const uint8_t *map, unsigned v)
{
    return map[v / 8] & (1u << (v % 8));
}

/* The VIDs (bit v % 8 of byte v / 8) at which VF config `c` wants its MAC
 * in the FDB. In switchdev mode none: the representors' slow path (or an
 * offloaded rule) decides. */
static void fdb_want_map(const struct vfw_dp *dp, const struct vfw_dp_vf_cfg *c,
                         uint8_t want[512])
{
    memset(want, 0, 512);
    if (dp->switchdev) {
        return;
    }
    if (c->vlan) {
        want[c->vlan / 8] = (uint8_t)(1u << (c->vlan % 8));
        return;
    }
    memcpy(want, c->vlan_filter, 512);
    want[0] |= 1;                       /* untagged */
}

/* A VLAN bitmap by bytes (bit v % 8 of byte v / 8) as the switch's 64-bit
 * words (bit v % 64 of word v / 64): the same bits, 8 bytes at a time. */
static void vlan_map_words(const uint8_t map[512], uint64_t w[64])
{
    for (unsigned i = 0; i < 64; i++) {
        uint64_t x = 0;

        for (unsigned k = 0; k < 8; k++) {
            x |= (uint64_t)map[8 * i + k] << (8 * k);
        }
        w[i] = x;
    }
}

/*
 * The VF's static FDB entries: its MAC in its port VLAN, or untagged (VID 0)
 * and in every VLAN the PF granted it, so frames to it in those VLANs are
 * forwarded rather than flooded as unknown unicast. Only the difference to
 * what is installed is changed, found a byte (8 VLANs) at a time: every
 * port configuration change of a VF comes here (an eswitch mode change for
 * every VF), and the 2 x 4096 single-VLAN checks were, under the fuzzers'
 * coverage instrumentation, a third of fuzz_esw_rules' time.
 */
static int fdb_sync(struct vfw_dp *dp, unsigned vf, const uint8_t mac[6])
{
    const struct vfw_dp_vf_cfg *c = &dp->cfg[vf];
    uint8_t *have = dp->fdb_vids[vf];
    bool new_mac = memcmp(dp->fdb_mac[vf], mac, 6) != 0;
    uint8_t want[512];

    fdb_want_map(dp, c, want);
    for (unsigned b = 0; b < 512; b++) {
        uint8_t gone = new_mac ? have[b] : (uint8_t)(have[b] & ~want[b]);

        have[b] &= (uint8_t)~gone;
        for (; gone; gone &= (uint8_t)(gone - 1)) {
            unsigned v = 8 * b + (unsigned)__builtin_ctz(gone);

            vsw_fdb_del(dp->sw, dp->fdb_mac[vf], (uint16_t)v, NULL);
        }
    }
    memcpy(dp->fdb_mac[vf], mac, 6);
    for (unsigned b = 0; b < 512; b++) {
        for (uint8_t add = want[b] & (uint8_t)~have[b]; add; add &= (uint8_t)(add - 1)) {
            unsigned bit = (unsigned)__builtin_ctz(add);
            int rc = vsw_fdb_add(dp->sw, mac, (uint16_t)(8 * b + bit), VSW_PORT_VF(vf), NULL);

            if (rc) {
                return rc;
            }
            have[b] |= (uint8_t)(1u << bit);
        }
    }
    return 0;
}

/* QoS: a port's classification from the DCB state: priority by the trust
 * mode (a VF's port VLAN priority stands for the tag its untagged frames
 * get), then class by prio_tc. */
static void apply_classes(const struct vfw_dp *dp, vsw_port_cfg *pc,
                          int port_prio)
{
    const struct vfw_dp_dcb *b = &dp->dcb;
    unsigned def = b->default_prio & 7;

    pc->qos_trust = b->trust == VFW_TRUST_DSCP ? VSW_TRUST_DSCP :
                    b->trust == VFW_TRUST_PCP ? VSW_TRUST_PCP : VSW_TRUST_NONE;
    if (b->trust == VFW_TRUST_PCP && port_prio >= 0) {
        def = (unsigned)port_prio & 7;
    }
    pc->default_tc = b->prio_tc[def] & 7;
    for (unsigned p = 0; p < 8; p++) {
        pc->pcp_to_tc[p] = b->prio_tc[p] & 7;
    }
    for (unsigned d = 0; d < 64; d++) {
        unsigned pr = (b->dscp_mapped >> d) & 1 ? b->dscp_prio[d] & 7 : def;

        pc->dscp_to_tc[d] = b->prio_tc[pr] & 7;
    }
}

/* Switchdev, a VLAN-aware bridge's port: a trunk of its VLANs, the PVID
 * untagged both ways (instead of the port's legacy VLAN settings). */
static void esw_vlan_apply(const struct vfw_dp *dp, const struct dp_esw_vlan *v,
                           vsw_port_cfg *pc)
{
    if (!dp->switchdev || !v->aware) {
        return;
    }
    pc->vlan_mode = VSW_VLAN_TRUNK;
    pc->pvid = 0;
    pc->native_vid = v->pvid;
    vlan_map_words(v->member, pc->allowed);
    pc->allowed[0] &= ~1ull;            /* VLANs 1..4094 only */
    pc->allowed[63] &= ~(1ull << 63);
}

static int apply_vf(struct vfw_dp *dp, unsigned vf)
{
    const struct vfw_dp_vf_cfg *c = &dp->cfg[vf];
    vsw_port_cfg pc;
    uint8_t mac[6];
    int rc;

    vfw_dp_vf_mac(dp, vf, mac);
    vsw_port_cfg_default(&pc);
    memcpy(pc.mac, mac, 6);
    if (c->vlan) {
        pc.vlan_mode = VSW_VLAN_ACCESS;
        pc.pvid = c->vlan;
        pc.pvid_pcp = c->qos;
    } else {
        /* A trunk of untagged frames plus the VLANs the PF granted. */
        vlan_map_words(c->vlan_filter, pc.allowed);
        pc.allowed[0] &= ~1ull;
    }
    esw_vlan_apply(dp, &dp->esw_vlan[1 + vf], &pc);
    pc.spoofchk = c->spoofchk;
    /* Unknown unicast reaches a VF that asked for promiscuous mode and is
     * trusted (both: trust can be revoked after the grant). */
    pc.trust = c->trust && (c->rx_mode & VFW_RXM_PROMISC);
    pc.link_up = fn_link(dp, VFW_DP_FN_VF(vf));
    pc.learn = false;
    /* switchdev: what nothing forwards goes to the VF's representor */
    pc.miss_port = dp->switchdev ? VSW_PORT_PF : VSW_PORT_ANY;
    apply_classes(dp, &pc, c->vlan || c->qos ? c->qos : -1);
    rc = vsw_port_set(dp->sw, VSW_PORT_VF(vf), &pc, NULL);
    if (rc) {
        return rc;
    }
    return fdb_sync(dp, vf, mac);
}

static int apply_ports(struct vfw_dp *dp)
{
    vsw_port_cfg pc;
    int rc;

    vsw_port_cfg_default(&pc);
    pc.learn = !dp->switchdev;
    pc.link_up = dp->uplink_up;
    pc.miss_port = dp->switchdev ? VSW_PORT_PF : VSW_PORT_ANY;
    esw_vlan_apply(dp, &dp->esw_vlan[0], &pc);
    rc = vsw_port_set(dp->sw, VSW_PORT_UPLINK, &pc, NULL);
    if (rc) {
        return rc;
    }
    vsw_port_cfg_default(&pc);
    memcpy(pc.mac, dp->pf_mac, 6);
    pc.link_up = true;
    /* switchdev: the PF netdev is the uplink representor: to the wire */
    pc.fdb_off = dp->switchdev;
    pc.miss_port = dp->switchdev ? VSW_PORT_UPLINK : VSW_PORT_ANY;
    /* ... and a VLAN-aware bridge's port for the uplink: its untagged
     * frames are in the uplink's PVID, and so the wire's untagged frames
     * reach it untagged; every VLAN passes (the slow path carries all) */
    if (dp->switchdev && dp->esw_vlan[0].aware) {
        pc.native_vid = dp->esw_vlan[0].pvid;
    }
    apply_classes(dp, &pc, -1);
    rc = vsw_port_set(dp->sw, VSW_PORT_PF, &pc, NULL);
    if (rc) {
        return rc;
    }
    for (unsigned vf = 0; vf < dp->total_vfs; vf++) {
        rc = apply_vf(dp, vf);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

static void cfg_default(struct vfw_dp_vf_cfg *c)
{
    memset(c, 0, sizeof(*c));
    c->spoofchk = true;
    c->link_state = LINK_STATE_AUTO;
}

/* --- QoS hook: the uplink's callbacks ----------------------------------- */

static void up_tx(void *ctx, const uint8_t *frame, size_t len)
{
    struct vfw_dp *dp = ctx;

    if (dp->uplink_up && dp->ops->uplink_tx) {
        dp->ops->uplink_tx(dp->ctx, frame, len);
    }
}

static void up_timer(void *ctx, uint64_t when)
{
    struct vfw_dp *dp = ctx;

    dp->ops->uplink_timer(dp->ctx, when);
}

static void up_resume(void *ctx, unsigned fn)
{
    struct vfw_dp *dp = ctx;

    if (fn < fn_count(dp)) {
        tx_kick(dp, fn);
    }
}

static const struct vfw_uplink_ops uplink_ops = {
    .tx = up_tx, .timer = up_timer, .resume = up_resume,
};

struct vsw_qos *vfw_dp_qos(struct vfw_dp *dp)
{
    return dp ? vfw_uplink_qos(dp->up) : NULL;
}

void vfw_dp_uplink_timer(struct vfw_dp *dp)
{
    if (dp && dp->up) {
        vfw_uplink_advance(dp->up, now(dp));
    }
}

bool vfw_dp_fn_tx_paused(const struct vfw_dp *dp, unsigned fn)
{
    return dp && fn < fn_count(dp) && vfw_uplink_paused(dp->up, fn);
}

/* --- QoS: line rate and classification (admin commands, 2.1) ----------- */

void vfw_dp_dcb_default(struct vfw_dp_dcb *b)
{
    memset(b, 0, sizeof(*b));
    b->trust = VFW_TRUST_PCP;
    for (unsigned p = 0; p < 8; p++) {
        b->prio_tc[p] = (uint8_t)p;
    }
}

/* The classification of the PF's and VFs' ports, nothing else of them
 * (a DCB change does not touch the FDB). */
static int apply_port_classes(struct vfw_dp *dp)
{
    for (unsigned fn = 0; fn < fn_count(dp); fn++) {
        unsigned port = fn == VFW_DP_FN_PF ? VSW_PORT_PF : VSW_PORT_VF(fn - 1);
        const struct vfw_dp_vf_cfg *c = fn ? &dp->cfg[fn - 1] : NULL;
        vsw_port_cfg pc;
        int rc;

        if (vsw_port_get(dp->sw, port, &pc)) {
            return -EINVAL;
        }
        apply_classes(dp, &pc, c && (c->vlan || c->qos) ? c->qos : -1);
        rc = vsw_port_set(dp->sw, port, &pc, NULL);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* Reset: a fresh scheduler (default tree, classes, counters) at the
 * default line rate, default classification. On OOM the old scheduler
 * stays, emptied. */
static void qos_reset(struct vfw_dp *dp)
{
    struct vfw_uplink *n;

    vfw_dp_dcb_default(&dp->dcb);
    if (!dp->up) {
        return;
    }
    n = vfw_uplink_create(&uplink_ops, dp, fn_count(dp));
    if (n) {
        vfw_uplink_destroy(dp->up);
        dp->up = n;
    }
    dp->line_bps = 0;
    vfw_dp_set_line_rate(dp, dp->line_default, NULL);
}

int vfw_dp_set_line_rate(struct vfw_dp *dp, uint64_t bps, struct vsw_error *err)
{
    vsw_qos *q = dp ? vfw_uplink_qos(dp->up) : NULL;
    uint64_t cur;
    uint32_t overhead;
    int rc;

    if (!q) {
        return -EOPNOTSUPP;
    }
    vsw_qos_get_line(q, &cur, &overhead);
    /* Without a line rate the scheduler keeps the configuration against
     * the largest rate it knows, so guarantees are checked once a real
     * rate is set. */
    rc = vsw_qos_set_line(q, bps ? bps : VSW_QOS_MAX_RATE, overhead, err);
    if (rc) {
        return rc;
    }
    if (!bps && dp->line_bps) {
        vfw_uplink_flush(dp->up);   /* nothing waits for a wire that is gone */
    }
    dp->line_bps = bps;
    return 0;
}

uint64_t vfw_dp_line_rate(const struct vfw_dp *dp)
{
    return dp ? dp->line_bps : 0;
}

int vfw_dp_set_line_default(struct vfw_dp *dp, uint64_t bps)
{
    int rc;

    if (!dp || !dp->up) {
        return -EOPNOTSUPP;
    }
    rc = vfw_dp_set_line_rate(dp, bps, NULL);
    if (!rc) {
        dp->line_default = bps;
    }
    return rc;
}

int vfw_dp_set_dcb(struct vfw_dp *dp, const struct vfw_dp_dcb *b)
{
    struct vfw_dp_dcb old;
    int rc;

    if (!dp || !b || b->trust > VFW_TRUST_DSCP || b->default_prio > 7) {
        return -EINVAL;
    }
    for (unsigned i = 0; i < 64; i++) {
        if (b->dscp_prio[i] > 7 || (i < 8 && b->prio_tc[i] > 7)) {
            return -EINVAL;
        }
    }
    old = dp->dcb;
    if (old.trust == b->trust && old.default_prio == b->default_prio &&
        old.default_set == b->default_set && old.dscp_mapped == b->dscp_mapped &&
        !memcmp(old.prio_tc, b->prio_tc, sizeof(old.prio_tc)) &&
        !memcmp(old.dscp_prio, b->dscp_prio, sizeof(old.dscp_prio))) {
        return 0;       /* reprogramming every port costs ~50 us per VF */
    }
    dp->dcb = *b;
    rc = apply_port_classes(dp);
    if (rc) {
        dp->dcb = old;
        apply_port_classes(dp);
    }
    return rc;
}

void vfw_dp_get_dcb(const struct vfw_dp *dp, struct vfw_dp_dcb *b)
{
    *b = dp->dcb;
}

/* A VF's min/max_mbps are its leaf's tx_share/tx_max (one model for `ip
 * link set ... min_tx_rate/max_tx_rate` and devlink rate); the rest of the
 * leaf (parent, priority, weight) stays as devlink set it. */
static int leaf_rates(struct vfw_dp *dp, unsigned vf, const struct vfw_dp_vf_cfg *c)
{
    vsw_qos *q = vfw_uplink_qos(dp->up);
    vsw_qos_rate r;

    if (!q || vsw_qos_leaf_get(q, VFW_DP_FN_VF(vf), &r)) {
        return 0;
    }
    r.tx_share = (uint64_t)c->min_mbps * 1000000u;
    r.tx_max = (uint64_t)c->max_mbps * 1000000u;
    return vsw_qos_leaf_set(q, VFW_DP_FN_VF(vf), &r, NULL);
}

struct vfw_dp *vfw_dp_create(const struct vfw_dp_ops *ops, void *ctx,
                             const uint8_t pf_mac[6], unsigned total_vfs)
{
    struct vfw_dp *dp;

    if (!ops || !pf_mac || total_vfs > VFW_DP_MAX_VFS) {
        return NULL;
    }
    dp = calloc(1, sizeof(*dp));
    if (!dp) {
        return NULL;
    }
    dp->ops = ops;
    dp->ctx = ctx;
    dp->total_vfs = total_vfs;
    memcpy(dp->pf_mac, pf_mac, 6);
    dp->sw = vsw_create(&(vsw_config){ .num_vfs = total_vfs });
    if (!dp->sw) {
        free(dp);
        return NULL;
    }
    for (unsigned vf = 0; vf < VFW_DP_MAX_VFS; vf++) {
        cfg_default(&dp->cfg[vf]);
    }
    vfw_dp_dcb_default(&dp->dcb);
    if (vsw_fdb_add(dp->sw, pf_mac, 0, VSW_PORT_PF, NULL) ||
        apply_ports(dp)) {
        vfw_dp_destroy(dp);
        return NULL;
    }
    if (ops->uplink_timer) {    /* QoS hook */
        dp->up = vfw_uplink_create(&uplink_ops, dp, fn_count(dp));
        if (!dp->up) {
            vfw_dp_destroy(dp);
            return NULL;
        }
        dp->line_bps = dp->line_default = VFW_DP_LINE_DEFAULT;
    }
    return dp;
}

void vfw_dp_destroy(struct vfw_dp *dp)
{
    if (!dp) {
        return;
    }
    vfw_uplink_destroy(dp->up);
    vsw_destroy(dp->sw);
    for (unsigned fn = 0; fn < VFW_DP_NUM_FN; fn++) {
        free(dp->fn[fn].hold);
    }
    free(dp);
}

int vfw_dp_set_vf(struct vfw_dp *dp, unsigned vf,
                  const struct vfw_dp_vf_cfg *cfg)
{
    struct vfw_dp_vf_cfg old;
    uint8_t old_mac[6], new_mac[6];
    struct dp_fn *f;
    int rc;

    if (!dp || !cfg || vf >= dp->total_vfs) {
        return -EINVAL;
    }
    if ((cfg->mac[0] & 1) || cfg->vlan > 4095 || cfg->qos > 7 ||
        cfg->link_state > LINK_STATE_DISABLE ||
        (cfg->rx_mode & ~(VFW_RXM_ALLMULTI | VFW_RXM_PROMISC)) ||
        cfg->mc_count > VFW_MC_FILTER_MAX) {
        return -EINVAL;
    }
    rc = leaf_rates(dp, vf, cfg);       /* QoS hook: -ERANGE if oversubscribed */
    if (rc) {
        return rc;
    }
    old = dp->cfg[vf];
    vfw_dp_vf_mac(dp, vf, old_mac);
    dp->cfg[vf] = *cfg;
    rc = apply_vf(dp, vf);
    if (rc) {
        dp->cfg[vf] = old;
        apply_vf(dp, vf);
        leaf_rates(dp, vf, &old);
        return rc;
    }
    f = &dp->fn[VFW_DP_FN_VF(vf)];
    if (old.max_mbps != cfg->max_mbps) {
        f->tokens = 0;
        f->last_ns = now(dp);
    }
    link_update(dp, VFW_DP_FN_VF(vf));
    /* A new MAC is news for the VF's driver too (the spoof check now
     * wants it): raise the link vector, whose handler rereads DP_MAC. */
    vfw_dp_vf_mac(dp, vf, new_mac);
    if (memcmp(old_mac, new_mac, 6)) {
        fire(dp, VFW_DP_FN_VF(vf), f->link_ctrl, &f->link_pending);
    }
    return 0;
}

int vfw_dp_get_vf(const struct vfw_dp *dp, unsigned vf,
                  struct vfw_dp_vf_cfg *cfg)
{
    if (!dp || !cfg || vf >= dp->total_vfs) {
        return -EINVAL;
    }
    *cfg = dp->cfg[vf];
    return 0;
}

void vfw_dp_set_uplink(struct vfw_dp *dp, bool up)
{
    vsw_port_cfg pc;

    if (!dp || dp->uplink_up == up) {
        return;
    }
    dp->uplink_up = up;
    if (!vsw_port_get(dp->sw, VSW_PORT_UPLINK, &pc)) {
        pc.link_up = up;
        vsw_port_set(dp->sw, VSW_PORT_UPLINK, &pc, NULL);
    }
    for (unsigned vf = 0; vf < dp->total_vfs; vf++) {
        if (dp->cfg[vf].link_state == LINK_STATE_AUTO) {
            apply_vf(dp, vf);
        }
    }
    for (unsigned fn = 0; fn < fn_count(dp); fn++) {
        link_update(dp, fn);
    }
    if (!up) {
        vfw_uplink_flush(dp->up);   /* QoS hook: nothing leaves a dead wire */
    }
}

/* --- rings --------------------------------------------------------------- */

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--) {
        v = v << 8 | p[i];
    }
    return v;
}

static bool ring_on(const struct dp_ring *r)
{
    return (r->ctrl & VFW_RING_CTRL_ENABLE) &&
           !(r->status & VFW_RING_STS_ERR);
}

/* Fetch descriptor `idx`; a failed fetch stops the ring (its memory is gone). */
static bool fetch(struct vfw_dp *dp, unsigned fn, struct dp_ring *r,
                  uint32_t idx, uint8_t raw[VFW_DESC_SIZE])
{
    if (dp->ops->dma_read(dp->ctx, fn, r->base + (uint64_t)idx * VFW_DESC_SIZE,
                          raw, VFW_DESC_SIZE)) {
        r->status |= VFW_RING_STS_ERR;
        return false;
    }
    return true;
}

/* Write a frame to fn's RX ring. src_vf >= 0 (switchdev, PF only): the
 * frame is VF src_vf's slow path, for its representor: tagged in the
 * descriptor, and never the PF's own RDMA engine's. */
static void rx_frame(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                     size_t len, int src_vf)
{
    struct dp_fn *f = &dp->fn[fn];
    struct dp_ring *r = &f->rx;
    uint8_t raw[VFW_DESC_SIZE];
    uint64_t addr;
    uint16_t buf_len;

    /* 2.0: the function's RDMA engine sees the frame first (its flow
     * table decides); what it takes is fn's RX all the same */
    if (src_vf < 0 && dp->ops->rx_steer &&
        dp->ops->rx_steer(dp->ctx, fn, frame, len)) {
        f->stat[VFW_STAT_RX_PKTS]++;
        f->stat[VFW_STAT_RX_BYTES] += len;
        return;
    }
    if (!ring_on(r) || r->head == r->tail) {
        f->stat[VFW_STAT_RX_NO_BUF]++;
        return;
    }
    if (!fetch(dp, fn, r, r->head, raw)) {
        f->stat[VFW_STAT_RX_NO_BUF]++;
        return;
    }
    addr = le64(raw);
    buf_len = le16(raw + 8);
    memset(raw + 8, 0, 8);
    raw[10] = VFW_RXD_STS_DD;
    if (len > buf_len || dp->ops->dma_write(dp->ctx, fn, addr, frame, len)) {
        raw[11] = VFW_RXD_ERR_BUF;
        f->stat[VFW_STAT_RX_DESC_ERR]++;
    } else {
        raw[8] = (uint8_t)len;
        raw[9] = (uint8_t)(len >> 8);
        raw[10] |= VFW_RXD_STS_EOP;
        if (src_vf >= 0) {
            raw[10] |= VFW_RXD_STS_SRC;
            raw[14] = (uint8_t)src_vf;
            raw[15] = (uint8_t)(src_vf >> 8);
        }
        f->stat[VFW_STAT_RX_PKTS]++;
        f->stat[VFW_STAT_RX_BYTES] += len;
    }
    if (dp->ops->dma_write(dp->ctx, fn, r->base + (uint64_t)r->head *
                           VFW_DESC_SIZE + 8, raw + 8, 8)) {
        r->status |= VFW_RING_STS_ERR;
        return;
    }
    r->head = (r->head + 1) & (r->len - 1);
    fire(dp, fn, r->ctrl, &r->irq_pending);
}

/* The VF's RX filter for multicast (broadcast always passes): the
 * addresses the PF granted, or all of them with allmulti/promiscuous,
 * which count only while the VF is trusted (revoking trust revokes them
 * at once, whatever the PF driver does next). */
static bool vf_rx_accepts(const struct vfw_dp_vf_cfg *c, const uint8_t *frame)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

    if (!(frame[0] & 1) || !memcmp(frame, bcast, 6) ||
        (c->trust && (c->rx_mode & (VFW_RXM_ALLMULTI | VFW_RXM_PROMISC)))) {
        return true;
    }
    for (unsigned i = 0; i < c->mc_count && i < VFW_MC_FILTER_MAX; i++) {
        if (!memcmp(frame, c->mc[i], 6)) {
            return true;
        }
    }
    return false;
}

static void deliver(struct vfw_dp *dp, const vsw_decision *d, unsigned port,
                    const uint8_t *frame, size_t len)
{
    if (port == VSW_PORT_UPLINK && dp->up && dp->line_bps) {
        /* QoS hook: the sender's queue of the frame's class; a full queue
         * pauses the sender (tx_kick checks), a drop is the class's count */
        unsigned fn = d->in_port == VSW_PORT_PF ? VFW_DP_FN_PF : VFW_DP_FN_VF(d->in_port - 2u);

        if (dp->uplink_up && d->in_port != VSW_PORT_UPLINK) {
            vfw_uplink_send(dp->up, fn, d->tc, frame, len, now(dp));
        }
    } else if (port == VSW_PORT_UPLINK) {
        if (dp->uplink_up && dp->ops->uplink_tx) {
            dp->ops->uplink_tx(dp->ctx, frame, len);
        }
    } else if (port == VSW_PORT_PF) {
        /* switchdev: whatever a VF sends the PF is its representor's */
        int src = dp->switchdev && d->in_port >= 2 ? (int)d->in_port - 2 : -1;

        rx_frame(dp, VFW_DP_FN_PF, frame, len, src);
    } else if (port - 2 < dp->total_vfs) {
        if (vf_rx_accepts(&dp->cfg[port - 2], frame)) {
            rx_frame(dp, VFW_DP_FN_VF(port - 2), frame, len, -1);
        } else {
            dp->fn[VFW_DP_FN_VF(port - 2)].stat[VFW_STAT_RX_FILTERED]++;
        }
    }
}

/* Run a frame through the switch from `in_port`; returns the drop reason. */
static unsigned switch_frame(struct vfw_dp *dp, unsigned in_port,
                             const uint8_t *frame, size_t len)
{
    vsw_decision d;

    if (!vsw_process(dp->sw, in_port, frame, len, now(dp), &d)) {
        return d.drop ? d.drop : VSW_DROP_NO_DEST;
    }
    for (unsigned w = 0; w < 3; w++) {
        uint64_t bits = d.egress.w[w];

        while (bits) {
            unsigned p = w * 64 + (unsigned)__builtin_ctzll(bits);
            size_t n;

            bits &= bits - 1;
            n = vsw_egress_frame(dp->sw, &d, p, frame, len, dp->out,
                                 sizeof(dp->out));
            if (n) {
                deliver(dp, &d, p, dp->out, n);
            }
        }
    }
    return VSW_DROP_NONE;
}

/* Representor xmit: straight to VF vf's RX (its multicast filter and link
 * apply, as for any frame the VF receives), not through the switch. */
static void to_vf(struct vfw_dp *dp, unsigned vf, const uint8_t *frame,
                  size_t len)
{
    if (!fn_link(dp, VFW_DP_FN_VF(vf))) {
        return;
    }
    if (vf_rx_accepts(&dp->cfg[vf], frame)) {
        rx_frame(dp, VFW_DP_FN_VF(vf), frame, len, -1);
    } else {
        dp->fn[VFW_DP_FN_VF(vf)].stat[VFW_STAT_RX_FILTERED]++;
    }
}

static void count_drop(struct dp_fn *f, unsigned reason)
{
    switch (reason) {
    case VSW_DROP_SPOOF:
        f->stat[VFW_STAT_TX_DROP_SPOOF]++;
        break;
    case VSW_DROP_VLAN:
        f->stat[VFW_STAT_TX_DROP_VLAN]++;
        break;
    case VSW_DROP_LINK_DOWN:
        f->stat[VFW_STAT_TX_DROP_LINK]++;
        break;
    case VSW_DROP_METER:
        f->stat[VFW_STAT_TX_DROP_METER]++;
        break;
    case VSW_DROP_ACL:
        f->stat[VFW_STAT_TX_DROP_ACL]++;
        break;
    default:
        f->stat[VFW_STAT_TX_DROP_OTHER]++;
        break;
    }
}

/* May function `fn` send `len` bytes now? If not, arm the timer (when
 * `arm`: a ring waits for it; an injected frame has no ring to wait on). */
static bool shaper_take(struct vfw_dp *dp, unsigned fn, size_t len, bool arm)
{
    struct dp_fn *f = &dp->fn[fn];
    uint32_t mbps = fn ? dp->cfg[fn - 1].max_mbps : 0;
    uint64_t rate, t, el;
    int64_t burst;

    if (!mbps) {
        return true;
    }
    rate = (uint64_t)mbps * 125000u;            /* bytes per second */
    burst = (int64_t)(rate / 200);              /* 5 ms */
    if (burst < 2 * (VFW_FRAME_MAX + 4)) {
        burst = 2 * (VFW_FRAME_MAX + 4);
    }
    t = now(dp);
    el = t > f->last_ns ? t - f->last_ns : 0;
    if (el > 1000000000u) {
        el = 1000000000u;
    }
    f->tokens += (int64_t)(el * rate / 1000000000u);
    if (f->tokens > burst) {
        f->tokens = burst;
    }
    f->last_ns = t;
    if (f->tokens >= (int64_t)len) {
        f->tokens -= (int64_t)len;
        return true;
    }
    if (arm && dp->ops->timer) {
        uint64_t need = (uint64_t)((int64_t)len - f->tokens);

        dp->ops->timer(dp->ctx, fn, t + need * 1000000000u / rate + 1);
        f->timer_armed = true;
    }
    return false;
}

/*
 * QoS hook (2.5): may the frame in dp->buf, the head of one of fn's TX
 * rings, be taken now? Not while its class is paused at the uplink: the
 * ring then waits (the uplink resumes the function) and the function's
 * other rings go on. The class is the one the switch will give the frame
 * (vsw_frame_tc changes nothing); asked only while some class of fn is
 * paused, so an unpaused function pays nothing for it. A frame the switch
 * will drop goes (it never reaches the uplink).
 */
static bool tx_class_paused(struct vfw_dp *dp, unsigned fn, unsigned in_port,
                            size_t len)
{
    int tc;

    if (!vfw_uplink_paused(dp->up, fn)) {
        return false;
    }
    tc = vsw_frame_tc(dp->sw, in_port, dp->buf, len, now(dp));
    return tc >= 0 && vfw_uplink_paused_tc(dp->up, fn, (unsigned)tc);
}

/* Walk TX ring q of fn: at most one ring's worth of descriptors. */
static void tx_ring_kick(struct vfw_dp *dp, unsigned fn, unsigned q)
{
    struct dp_fn *f = &dp->fn[fn];
    struct dp_ring *r = &f->tx[q];
    unsigned budget, done = 0;
    unsigned in_port = fn ? VSW_PORT_VF(fn - 1) : VSW_PORT_PF;

    if (!ring_on(r)) {
        return;
    }
    budget = r->len;
    while (r->head != r->tail && budget) {
        uint32_t mask = r->len - 1;
        uint32_t avail = (r->tail - r->head) & mask;
        uint8_t raw[VFW_TX_MAX_FRAGS][VFW_DESC_SIZE];
        unsigned n = 0;
        bool eop = false, bad = false;
        size_t total = 0;
        uint8_t status = VFW_TXD_STS_DD;

        while (n < avail && n < VFW_TX_MAX_FRAGS) {
            uint16_t l;

            if (!fetch(dp, fn, r, (r->head + n) & mask, raw[n])) {
                goto out;
            }
            l = le16(raw[n] + 8);
            n++;
            if (l == 0 || l > VFW_FRAME_MAX || total + l > VFW_FRAME_MAX) {
                bad = true;
            } else {
                total += l;
            }
            if (raw[n - 1][10] & VFW_TXD_EOP) {
                eop = true;
                break;
            }
        }
        if (!eop) {
            if (n < VFW_TX_MAX_FRAGS) {
                break;          /* the rest of the frame is not posted yet */
            }
            bad = true;         /* no EOP within VFW_TX_MAX_FRAGS */
        }
        if (!bad && total < VFW_FRAME_MIN) {
            bad = true;
        }
        /* the frame is read before the shaper and the pause decide, so
         * that its class is known (a frame left on the ring is read again
         * next time: no state changed) */
        if (!bad) {
            size_t off = 0;

            for (unsigned i = 0; i < n && !bad; i++) {
                uint16_t l = le16(raw[i] + 8);

                if (dp->ops->dma_read(dp->ctx, fn, le64(raw[i]),
                                      dp->buf + off, l)) {
                    bad = true;
                }
                off += l;
            }
        }
        if (!bad && (raw[0][10] & VFW_TXD_VLAN)) {
            uint16_t tci = le16(raw[0] + 12);

            memmove(dp->buf + 16, dp->buf + 12, total - 12);
            dp->buf[12] = 0x81;
            dp->buf[13] = 0x00;
            dp->buf[14] = (uint8_t)(tci >> 8);
            dp->buf[15] = (uint8_t)tci;
            total += 4;
        }
        if (!bad && (raw[0][10] & VFW_TXD_TO_PORT)) {
            /* representor xmit: the PF in switchdev mode, an existing VF */
            uint16_t to = le16(raw[0] + 14);

            if (fn != VFW_DP_FN_PF || !dp->switchdev || to >= dp->total_vfs) {
                bad = true;
            }
        }
        if (!bad && !(raw[0][10] & VFW_TXD_TO_PORT) &&
            tx_class_paused(dp, fn, in_port, total)) {
            break;      /* QoS hook: the ring waits; the uplink resumes it */
        }
        if (!bad && !shaper_take(dp, fn, total, true)) {
            break;              /* stays on the ring; the timer resumes */
        }
        if (bad) {
            status |= VFW_TXD_STS_ERR;
            f->stat[VFW_STAT_TX_DESC_ERR]++;
        } else if (raw[0][10] & VFW_TXD_TO_PORT) {
            f->stat[VFW_STAT_TX_PKTS]++;
            f->stat[VFW_STAT_TX_BYTES] += total;
            to_vf(dp, le16(raw[0] + 14), dp->buf, total);
        } else {
            unsigned why;

            f->stat[VFW_STAT_TX_PKTS]++;
            f->stat[VFW_STAT_TX_BYTES] += total;
            why = switch_frame(dp, in_port, dp->buf, total);
            if (why != VSW_DROP_NONE) {
                status |= VFW_TXD_STS_DROP;
                count_drop(f, why);
            }
        }
        for (unsigned i = 0; i < n; i++) {
            uint64_t a = r->base + (uint64_t)((r->head + i) & mask) *
                         VFW_DESC_SIZE + 11;

            if (dp->ops->dma_write(dp->ctx, fn, a, &status, 1)) {
                r->status |= VFW_RING_STS_ERR;
                goto out;
            }
        }
        r->head = (r->head + n) & mask;
        budget = budget > n ? budget - n : 0;
        done += n;
    }
out:
    if (done) {
        fire(dp, fn, r->ctrl, &r->irq_pending);
    }
}

/* Every TX ring of fn, the highest first: with no line rate (frames go
 * out at once) a driver's strict-class ring is not queued behind its bulk
 * ring; with one, the uplink's scheduler orders what the rings gave it. */
static void tx_kick(struct vfw_dp *dp, unsigned fn)
{
    for (unsigned q = VFW_TXQ_MAX; q-- > 0;) {
        tx_ring_kick(dp, fn, q);
    }
}

static void inject_now(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                       size_t len);

/* The held engine frames the shaper lets go now, oldest first. */
static void hold_drain(struct vfw_dp *dp, unsigned fn)
{
    struct dp_fn *f = &dp->fn[fn];

    while (f->hold_count) {
        unsigned i = f->hold_head;

        if (!shaper_take(dp, fn, f->hold_len[i], true)) {
            return;             /* the timer comes back */
        }
        f->hold_head = (i + 1) % HOLD_N;
        f->hold_count--;
        inject_now(dp, fn, f->hold + (size_t)i * HOLD_SLOT, f->hold_len[i]);
    }
}

void vfw_dp_timer(struct vfw_dp *dp, unsigned fn)
{
    if (!dp || fn >= fn_count(dp)) {
        return;
    }
    dp->fn[fn].timer_armed = false;
    hold_drain(dp, fn);
    tx_kick(dp, fn);
}

/*
 * A frame of fn's RDMA engine: the TX ring's path without the ring. Same
 * length bounds, shaping, switch checks and counters (TX_PKTS/TX_BYTES,
 * the TX_DROP_* reasons). A bad length counts TX_DROP_OTHER. A frame over
 * the VF's max_mbps waits in the function's hold queue (behind any frame
 * already waiting) until the shaper's timer lets it go, as a ring's frame
 * waits on its ring: the engine's TCP then sees the cap as a slower path,
 * not as loss (issue 17: dropping held an ib_write_bw -R flow at 15-45%
 * of its cap). Only a full queue drops (TX_DROP_METER). Nesting (rx_steer
 * of a hairpin peer injecting synchronously) is bounded.
 */
void vfw_dp_fn_inject(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                      size_t len)
{
    if (!dp || fn >= fn_count(dp)) {
        return;
    }
    struct dp_fn *f = &dp->fn[fn];

    if (!frame || len < VFW_FRAME_MIN || len > VFW_FRAME_MAX ||
        dp->inject_depth >= 4) {
        f->stat[VFW_STAT_TX_DROP_OTHER]++;
        return;
    }
    if (f->hold_count || !shaper_take(dp, fn, len, true)) {
        unsigned i;

        if (f->hold_count == HOLD_N || !dp->ops->timer ||
            (!f->hold && !(f->hold = malloc((size_t)HOLD_N * HOLD_SLOT)))) {
            f->stat[VFW_STAT_TX_DROP_METER]++;
            return;
        }
        i = (f->hold_head + f->hold_count) % HOLD_N;
        memcpy(f->hold + (size_t)i * HOLD_SLOT, frame, len);
        f->hold_len[i] = (uint16_t)len;
        f->hold_count++;
        hold_drain(dp, fn);     /* what the tokens allow now; else the timer */
        return;
    }
    inject_now(dp, fn, frame, len);
}

/* Past the shaper: counters, the switch. */
static void inject_now(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                       size_t len)
{
    struct dp_fn *f = &dp->fn[fn];
    unsigned why;

    f->stat[VFW_STAT_TX_PKTS]++;
    f->stat[VFW_STAT_TX_BYTES] += len;
    dp->inject_depth++;
    why = switch_frame(dp, fn ? VSW_PORT_VF(fn - 1) : VSW_PORT_PF, frame,
                       len);
    dp->inject_depth--;
    if (why != VSW_DROP_NONE) {
        count_drop(f, why);
    }
}

void vfw_dp_uplink_rx(struct vfw_dp *dp, const uint8_t *frame, size_t len)
{
    if (!dp || !frame || len < VFW_FRAME_MIN || len > VFW_FRAME_MAX + 4) {
        return;
    }
    switch_frame(dp, VSW_PORT_UPLINK, frame, len);
}

/* --- registers ----------------------------------------------------------- */

bool vfw_dp_owns(uint64_t addr)
{
    return addr >= VFW_REGWIN_RING &&
           addr < VFW_REG_TXQ(VFW_TXQ_MAX - 1) + 0x20;
}

/* The ring block addr falls in, or NULL; *reg its offset in the block. */
static struct dp_ring *ring_at(struct dp_fn *f, uint64_t addr, unsigned *reg)
{
    if (addr >= VFW_REG_TXQ0 && addr < VFW_REG_TXQ0 + 0x20) {
        *reg = (unsigned)(addr - VFW_REG_TXQ0);
        return &f->tx[0];
    }
    if (addr >= VFW_REG_TXQ(1) && addr < VFW_REG_TXQ(VFW_TXQ_MAX - 1) + 0x20) {
        unsigned q = 1 + (unsigned)((addr - VFW_REG_TXQ(1)) / 0x20);

        *reg = (unsigned)((addr - VFW_REG_TXQ(1)) % 0x20);
        return &f->tx[q];
    }
    if (addr >= VFW_REG_RXQ0 && addr < VFW_REG_RXQ0 + 0x20) {
        *reg = (unsigned)(addr - VFW_REG_RXQ0);
        return &f->rx;
    }
    return NULL;
}

static bool reg_ok(const struct vfw_dp *dp, unsigned fn, uint64_t addr,
                   unsigned size)
{
    return dp && fn < fn_count(dp) && size == 4 && (addr & 3) == 0 &&
           vfw_dp_owns(addr);
}

bool vfw_dp_read(struct vfw_dp *dp, unsigned fn, uint64_t addr,
                 unsigned size, uint32_t *val)
{
    struct dp_fn *f;
    struct dp_ring *r;
    unsigned reg;
    uint8_t mac[6];

    *val = 0;
    if (!reg_ok(dp, fn, addr, size)) {
        return false;
    }
    f = &dp->fn[fn];
    r = ring_at(f, addr, &reg);
    if (r) {
        switch (reg) {
        case VFW_RING_BASE_LO: *val = (uint32_t)r->base; break;
        case VFW_RING_BASE_HI: *val = (uint32_t)(r->base >> 32); break;
        case VFW_RING_LEN: *val = r->len; break;
        case VFW_RING_HEAD: *val = r->head; break;
        case VFW_RING_TAIL: *val = r->tail; break;
        case VFW_RING_CTRL: *val = r->ctrl; break;
        case VFW_RING_STATUS: *val = r->status; break;
        default: break;
        }
        return true;
    }
    if (fn == VFW_DP_FN_PF) {
        memcpy(mac, dp->pf_mac, 6);
    } else {
        vfw_dp_vf_mac(dp, fn - 1, mac);
    }
    if (addr == VFW_REG_LINK_STATUS) {
        *val = fn_link(dp, fn) ? VFW_LINK_UP : 0;
    } else if (addr == VFW_REG_LINK_CTRL) {
        *val = f->link_ctrl;
    } else if (addr == VFW_REG_DP_MAC_LO) {
        *val = (uint32_t)mac[0] | (uint32_t)mac[1] << 8 |
               (uint32_t)mac[2] << 16 | (uint32_t)mac[3] << 24;
    } else if (addr == VFW_REG_DP_MAC_HI) {
        *val = (uint32_t)mac[4] | (uint32_t)mac[5] << 8;
    } else if (addr == VFW_REG_DP_MTU) {
        *val = VFW_FRAME_MAX;
    } else if (addr == VFW_REG_TXQ_NUM) {
        *val = VFW_TXQ_MAX;
    } else if (addr >= VFW_REG_STAT_BASE &&
               addr < VFW_REG_STAT(VFW_STAT_COUNT)) {
        *val = (uint32_t)f->stat[(addr - VFW_REG_STAT_BASE) / 4];
    }
    return true;
}

static bool ring_enable(struct dp_ring *r)
{
    if ((r->base & (VFW_DESC_SIZE - 1)) || r->len < VFW_RING_MIN_ENTRIES ||
        r->len > VFW_RING_MAX_ENTRIES || (r->len & (r->len - 1)) ||
        r->base + (uint64_t)r->len * VFW_DESC_SIZE < r->base) {
        return false;
    }
    return true;
}

static void ring_write(struct vfw_dp *dp, unsigned fn, struct dp_ring *r,
                       unsigned reg, uint32_t v)
{
    bool on = r->ctrl & VFW_RING_CTRL_ENABLE;

    switch (reg) {
    case VFW_RING_BASE_LO:
        if (!on) {
            r->base = (r->base & ~0xffffffffull) | v;
        }
        break;
    case VFW_RING_BASE_HI:
        if (!on) {
            r->base = (r->base & 0xffffffffull) | (uint64_t)v << 32;
        }
        break;
    case VFW_RING_LEN:
        if (!on) {
            r->len = v;
        }
        break;
    case VFW_RING_TAIL:
        if (on && v < r->len) {
            struct dp_fn *f = &dp->fn[fn];

            r->tail = v;
            if (r >= &f->tx[0] && r < &f->tx[VFW_TXQ_MAX]) {
                tx_ring_kick(dp, fn, (unsigned)(r - f->tx));
            }
        }
        break;
    case VFW_RING_CTRL:
        v &= CTRL_MASK;
        if ((v & VFW_RING_CTRL_ENABLE) && !on) {
            r->head = r->tail = 0;
            r->irq_pending = false;
            if (ring_enable(r)) {
                r->status = VFW_RING_STS_ENABLED;
            } else {
                r->status = VFW_RING_STS_ERR;
                v &= ~VFW_RING_CTRL_ENABLE;
            }
        } else if (!(v & VFW_RING_CTRL_ENABLE) && on) {
            r->status = 0;
            r->head = r->tail = 0;
            r->irq_pending = false;
        }
        r->ctrl = v;
        if ((v & VFW_RING_CTRL_IRQ_EN) && r->irq_pending) {
            fire(dp, fn, r->ctrl, &r->irq_pending);
        }
        break;
    default:
        break;
    }
}

bool vfw_dp_write(struct vfw_dp *dp, unsigned fn, uint64_t addr,
                  uint64_t val, unsigned size)
{
    struct dp_fn *f;
    struct dp_ring *r;
    unsigned reg;

    if (!reg_ok(dp, fn, addr, size)) {
        return false;
    }
    f = &dp->fn[fn];
    r = ring_at(f, addr, &reg);
    if (r) {
        ring_write(dp, fn, r, reg, (uint32_t)val);
    } else if (addr == VFW_REG_LINK_CTRL) {
        f->link_ctrl = (uint32_t)val & (VFW_RING_CTRL_IRQ_EN |
                       (VFW_RING_CTRL_VEC_MASK << VFW_RING_CTRL_VEC_SHIFT));
        if ((f->link_ctrl & VFW_RING_CTRL_IRQ_EN) && f->link_pending) {
            fire(dp, fn, f->link_ctrl, &f->link_pending);
        }
    }
    return true;
}

void vfw_dp_reset_fn(struct vfw_dp *dp, unsigned fn)
{
    struct dp_fn *f;

    if (!dp || fn >= fn_count(dp)) {
        return;
    }
    f = &dp->fn[fn];
    free(f->hold);              /* held engine frames go with the reset */
    memset(f, 0, sizeof(*f));
    f->link = fn_link(dp, fn);
}

void vfw_dp_reset(struct vfw_dp *dp)
{
    if (!dp) {
        return;
    }
    vfw_uplink_flush(dp->up);           /* QoS hook */
    qos_reset(dp);
    if (dp->switchdev) {                /* a reset restores legacy mode */
        vfw_dp_set_switchdev(dp, false);
    }
    for (unsigned vf = 0; vf < dp->total_vfs; vf++) {
        cfg_default(&dp->cfg[vf]);
        apply_vf(dp, vf);
        leaf_rates(dp, vf, &dp->cfg[vf]);   /* QoS hook */
    }
    apply_port_classes(dp);             /* the PF's, back to the defaults */
    for (unsigned fn = 0; fn < fn_count(dp); fn++) {
        vfw_dp_reset_fn(dp, fn);
    }
}

/*
 * 2.2: eswitch mode. Every port's forwarding is re-derived (apply_ports:
 * FDB entries of the VFs, misses, the uplink's learning) and learned
 * entries are flushed, so no frame is forwarded by a learned entry of the
 * other mode. On failure (OOM in the switch) the old mode is put back.
 */
/* 2.3: every offloaded rule and its meter gone (leaving switchdev mode) */
static void rules_clear(struct vfw_dp *dp)
{
    for (unsigned p = 0; p < vsw_num_ports(dp->sw); p++) {
        vsw_rule_flush_scope(dp->sw, (uint16_t)p, NULL);
    }
    vsw_rule_flush_scope(dp->sw, VSW_RULE_GLOBAL, NULL);
    for (unsigned id = 1; id < VSW_MAX_METERS; id++) {
        vfw_dp_meter_free(dp, id);
    }
    memset(dp->esw_vlan, 0, sizeof(dp->esw_vlan));
    for (unsigned i = 0; i < VFW_ESW_FDB_MAX; i++) {
        if (dp->fdb_off[i].used) {
            vsw_fdb_del(dp->sw, dp->fdb_off[i].mac, dp->fdb_off[i].vid, NULL);
            dp->fdb_off[i].used = false;
        }
    }
}

static int fdb_off_find(const struct vfw_dp *dp, const uint8_t mac[6], uint16_t vid)
{
    for (unsigned i = 0; i < VFW_ESW_FDB_MAX; i++) {
        if (dp->fdb_off[i].used && dp->fdb_off[i].vid == vid &&
            !memcmp(dp->fdb_off[i].mac, mac, 6)) {
            return (int)i;
        }
    }
    return -1;
}

/* 2.3: an offloaded FDB entry (switchdev mode only; the caller checks the
 * port). Adding an existing (mac, vid) moves it. */
int vfw_dp_fdb_offload(struct vfw_dp *dp, const uint8_t mac[6], uint16_t vid,
                       int port)
{
    int i = fdb_off_find(dp, mac, vid), rc;

    if (!dp->switchdev) {
        return -EOPNOTSUPP;
    }
    if (port < 0) {                             /* delete */
        if (i < 0) {
            return -ENOENT;
        }
        vsw_fdb_del(dp->sw, mac, vid, NULL);
        dp->fdb_off[i].used = false;
        return 0;
    }
    if (i < 0) {
        for (unsigned k = 0; k < VFW_ESW_FDB_MAX && i < 0; k++) {
            if (!dp->fdb_off[k].used) {
                i = (int)k;
            }
        }
        if (i < 0) {
            return -ENOSPC;
        }
        if (vsw_fdb_lookup_static(dp->sw, mac, vid) >= 0) {
            return -EEXIST;     /* the device's own (the PF's MAC) */
        }
    } else {
        vsw_fdb_del(dp->sw, mac, vid, NULL);    /* moved: add it again */
    }
    rc = vsw_fdb_add(dp->sw, mac, vid, (unsigned)port, NULL);
    if (rc) {
        dp->fdb_off[i].used = false;
        return rc;
    }
    memcpy(dp->fdb_off[i].mac, mac, 6);
    dp->fdb_off[i].vid = vid;
    dp->fdb_off[i].used = true;
    return 0;
}

int vfw_dp_meter_alloc(struct vfw_dp *dp, uint64_t owner)
{
    for (unsigned id = 1; id < VSW_MAX_METERS; id++) {
        if (!bit_on(dp->meter_used, id)) {
            dp->meter_used[id / 8] |= (uint8_t)(1u << (id % 8));
            dp->meter_owner[id] = owner;
            return (int)id;
        }
    }
    return -ENOSPC;
}

void vfw_dp_meter_free(struct vfw_dp *dp, unsigned id)
{
    if (id && id < VSW_MAX_METERS && bit_on(dp->meter_used, id)) {
        vsw_meter_del(dp->sw, id, NULL);
        dp->meter_used[id / 8] &= (uint8_t)~(1u << (id % 8));
        dp->meter_owner[id] = 0;
    }
}

/* Free the meters whose rule is gone (after a flush of a scope). */
void vfw_dp_meter_gc(struct vfw_dp *dp)
{
    for (unsigned id = 1; id < VSW_MAX_METERS; id++) {
        vsw_trule t;

        if (bit_on(dp->meter_used, id) &&
            (vsw_rule_get(dp->sw, dp->meter_owner[id], &t) ||
             !(t.rule.flags & VSW_ACTF_METER) || t.rule.meter != id)) {
            vfw_dp_meter_free(dp, id);
        }
    }
}

bool vfw_dp_meter_owner(const struct vfw_dp *dp, unsigned id, uint64_t *owner)
{
    if (!dp || !id || id >= VSW_MAX_METERS || !bit_on(dp->meter_used, id)) {
        return false;
    }
    *owner = dp->meter_owner[id];
    return true;
}

int vfw_dp_esw_vlan(struct vfw_dp *dp, unsigned idx, unsigned op, uint16_t vid,
                    bool pvid)
{
    struct dp_esw_vlan *v, old;
    int rc;

    if (!dp->switchdev) {
        return -EOPNOTSUPP;
    }
    if (idx > dp->total_vfs) {
        return -EINVAL;
    }
    v = &dp->esw_vlan[idx];
    old = *v;
    switch (op) {
    case VFW_ESW_VLAN_ADD:
        v->member[vid / 8] |= (uint8_t)(1u << (vid % 8));
        if (pvid) {
            v->pvid = vid;
        } else if (v->pvid == vid) {
            v->pvid = 0;        /* re-added without the flag: no PVID now */
        }
        break;
    case VFW_ESW_VLAN_DEL:
        if (!bit_on(v->member, vid)) {
            return -ENOENT;
        }
        v->member[vid / 8] &= (uint8_t)~(1u << (vid % 8));
        if (v->pvid == vid) {
            v->pvid = 0;
        }
        break;
    default:
        v->aware = op == VFW_ESW_VLAN_AWARE_ON;
        break;
    }
    rc = idx ? apply_vf(dp, idx - 1) : apply_ports(dp);
    if (rc) {
        *v = old;
        idx ? apply_vf(dp, idx - 1) : apply_ports(dp);
    }
    return rc;
}

struct vsw_switch *vfw_dp_switch(struct vfw_dp *dp)
{
    return dp ? dp->sw : NULL;
}

int vfw_dp_set_switchdev(struct vfw_dp *dp, bool on)
{
    int rc;

    if (!dp) {
        return -EINVAL;
    }
    if (dp->switchdev == on) {
        return 0;
    }
    if (!on) {
        rules_clear(dp);        /* offloads exist in switchdev mode only */
    }
    dp->switchdev = on;
    rc = apply_ports(dp);
    if (rc) {
        dp->switchdev = !on;
        apply_ports(dp);
        return rc;
    }
    vsw_fdb_flush_learned(dp->sw);
    return 0;
}

bool vfw_dp_switchdev(const struct vfw_dp *dp)
{
    return dp && dp->switchdev;
}

unsigned vfw_dp_num_vfs(const struct vfw_dp *dp)
{
    return dp ? dp->total_vfs : 0;
}

uint64_t vfw_dp_stat(const struct vfw_dp *dp, unsigned fn, unsigned stat)
{
    if (!dp || fn >= fn_count(dp) || stat >= VFW_STAT_COUNT) {
        return 0;
    }
    return dp->fn[fn].stat[stat];
}
