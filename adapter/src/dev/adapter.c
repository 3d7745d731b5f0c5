/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * adapter.c - the adapter object (vfw_adapter.h): owns the function
 * register files, the admin queue, the mailbox, the Ethernet data path with
 * the switch, and the RDMA NIC, and wires them to each other and to the
 * host's one ops table.
 *
 * What is wired here, and nowhere else:
 * - BAR0 decode: the PF's admin window, then the data path's rings, the
 *   RDMA registers, the mailbox, and the identification block (func.c).
 * - Every part's DMA, MSI-X and clock go to the host ops; the admin queue
 *   DMAs as the PF.
 * - The admin queue's VF config reaches the data path when a command
 *   commits it (vf_cfg_changed), and GET_VF_STATS reads the data path's
 *   counters when it answers (vf_stats): no polling, no copies kept.
 * - The RNIC's quota commands and MAC: a VF's MAC is the switch's; it is
 *   given to that function's engine whenever it may have changed.
 * - Frames: the switch offers a function's frames to its engine first
 *   (rx_steer); the engine's frames enter the switch as the function's
 *   traffic (frame_out -> vfw_dp_fn_inject); frames for the wire go to the
 *   host after the uplink counter.
 * - Timers: the data path's per-function shaping timers, the uplink
 *   scheduler's and the RNIC's are multiplexed onto the host's one timer.
 * - Resets fan out to every part in one order.
 *
 * Re-entrancy (issue 33): one entry guard for every call that does the
 * device's work (a run, the timer, a BAR write, a doorbell, a frame from
 * the wire, a reset, NumVFs, the uplink's carrier). Work calls the host's
 * ops, and an op may call back: a DMA write or an MSI-X is a memory write
 * to an address the guest chose, and aimed at config space (the FLR bit,
 * VF Enable) or at a BAR it makes QEMU call the adapter synchronously,
 * where no QEMU re-entrancy guard is engaged (a VF's BAR, the timer).
 * So, while inside (depth > 0):
 * - a reset, an FLR, NumVFs, the uplink's carrier and a VF's MAC reaching
 *   its engine are recorded, and applied in one place (apply_deferred)
 *   when the outermost call ends: the work in progress never sees its
 *   engine, QPs, CQs, rings or held frames freed under it;
 * - a function whose reset is recorded gets no more DMA or MSI-X from
 *   the rest of that work (it is being reset);
 * - BAR writes and doorbells are refused and frames from the wire dropped:
 *   the CPUs are serialised (QEMU's BQL), so they can only be the device's
 *   own DMA or MSI-X looping back;
 * - a run or a timer asked for is done after, through the host.
 * TX of the Ethernet rings is the run's work (vfw_dp_run), never done
 * inside a TAIL write, like the RNIC's doorbells.
 */
#include <stdlib.h>
#include <string.h>

#include "vfw_adapter.h"
#include "vfw_admin.h"
#include "vfw_dataplane.h"
#include "vfw_func.h"
#include "vfw_mbox.h"
#include "vfw_rnic.h"
#include "vfw_uplink.h"

/* The adapter's timers, each a deadline; the host is asked for the
 * earliest. Ids: a data-path shaping timer per function, then these. */
enum {
    TIMER_UPLINK = VFW_DP_NUM_FN,   /* the uplink scheduler's */
    TIMER_RNIC,                     /* the RNIC's: schedules a run */
    TIMER_COUNT
};
#define TIMER_NONE UINT64_MAX

struct vfw_adapter {
    struct vfw_adapter_ops ops;
    void *ctx;
    unsigned total_vfs;
    uint8_t mac[6];                     /* the PF's */

    struct vfw_func_dev fn;             /* register files, counters */
    struct vfw_admin admin;             /* PF admin queue, VF configs */
    struct vfw_mbox mbox;               /* VF-to-PF mailbox */
    struct vfw_dp *dp;                  /* rings, switch, uplink scheduler */
    struct vfw_rnic *rnic;              /* verbs queues, iWARP, TCP */

    uint64_t deadline[TIMER_COUNT];
    uint64_t host_deadline;             /* what the host was asked for */

    bool uplink;                        /* a wire is attached (kept over resets) */
    /* The MAC each function's engine has, and changes not given yet. */
    uint8_t engine_mac[1 + VFW_FUNC_MAX_VFS][6];
    bool engine_mac_valid[1 + VFW_FUNC_MAX_VFS];
    bool mac_pending[1 + VFW_FUNC_MAX_VFS];

    /* The entry guard (see the top): calls in progress, and what they
     * recorded for apply_deferred. */
    unsigned depth;
    bool deferred;                      /* anything below (or a MAC) */
    bool reset_pending;                 /* the PF's: the whole adapter */
    bool reset_fn_pending[1 + VFW_FUNC_MAX_VFS];
    int resetting;                      /* being reset now: fn, RESETTING_ALL,
                                           or RESETTING_NONE */
    bool num_vfs_pending;
    unsigned num_vfs;
    bool uplink_pending;
    bool run_again, timer_again;        /* asked for from inside */
};

#define RESETTING_NONE (-1)
#define RESETTING_ALL  (-2)
/* Rounds of apply_deferred per outermost call: applying calls the host
 * (a reset sends RSTs, whose delivery DMAs), which may record more; what
 * is left after them waits for the next call's end (a run is kicked). */
#define APPLY_ROUNDS 4

static bool fn_ok(const struct vfw_adapter *a, unsigned fn)
{
    return fn <= a->total_vfs;
}

/* Is function fn's reset recorded or in progress? Then nothing more is
 * DMA'd or signalled as it: the guest is resetting it. */
static bool fn_gone(const struct vfw_adapter *a, unsigned fn)
{
    return a->reset_pending || a->resetting == RESETTING_ALL ||
           (fn_ok(a, fn) && (a->reset_fn_pending[fn] ||
                             a->resetting == (int)fn));
}

/* ---- the entry guard -------------------------------------------------- */

static void apply_deferred(struct vfw_adapter *a);

/* A host op called back into the adapter from inside its work? */
static bool inside(const struct vfw_adapter *a)
{
    return a->depth > 0;
}

static void enter(struct vfw_adapter *a)
{
    a->depth++;
}

/* The end of a call: the outermost applies what was recorded, still
 * inside the guard (applying calls the host too). */
static void leave(struct vfw_adapter *a)
{
    if (a->depth > 1) {
        a->depth--;
        return;
    }
    for (unsigned round = 0; round < APPLY_ROUNDS && a->deferred; round++) {
        apply_deferred(a);
    }
    a->depth = 0;
    if (a->deferred) {
        a->run_again = true;    /* that run's end applies the rest */
    }
    if (a->run_again) {
        a->run_again = false;
        a->ops.kick(a->ctx);
    }
    if (a->timer_again) {
        a->timer_again = false;
        a->host_deadline = a->ops.now_ns(a->ctx);
        a->ops.timer(a->ctx, a->host_deadline);
    }
}

/* ---- timers ------------------------------------------------------------- */

static void timer_arm(struct vfw_adapter *a, unsigned id, uint64_t when)
{
    a->deadline[id] = when;
    if (when < a->host_deadline) {
        a->host_deadline = when;
        a->ops.timer(a->ctx, when);
    }
}

static void timer_cancel(struct vfw_adapter *a, unsigned id)
{
    a->deadline[id] = TIMER_NONE;   /* the host's timer may fire for nothing */
}

void vfw_adapter_timer(struct vfw_adapter *a)
{
    uint64_t now, next = TIMER_NONE;

    if (inside(a)) {
        a->timer_again = true;
        return;
    }
    enter(a);
    now = a->ops.now_ns(a->ctx);
    a->host_deadline = TIMER_NONE;
    for (unsigned id = 0; id < TIMER_COUNT; id++) {
        if (a->deadline[id] > now) {
            continue;
        }
        a->deadline[id] = TIMER_NONE;
        if (id == TIMER_UPLINK) {
            vfw_dp_uplink_timer(a->dp);
        } else if (id == TIMER_RNIC) {
            a->ops.kick(a->ctx);    /* runs only from the guarded run */
        } else {
            vfw_dp_timer(a->dp, id);
        }
    }
    /* Callbacks may have armed timers (and asked the host already). */
    for (unsigned id = 0; id < TIMER_COUNT; id++) {
        if (a->deadline[id] < next) {
            next = a->deadline[id];
        }
    }
    if (next < a->host_deadline) {
        a->host_deadline = next;
        a->ops.timer(a->ctx, next);
    }
    leave(a);
}

/* ---- the RDMA engine's MAC ------------------------------------------------ */

/* The MAC the switch uses for function fn. */
static bool fn_mac(struct vfw_adapter *a, unsigned fn, uint8_t mac[6])
{
    if (fn == VFW_DP_FN_PF) {
        memcpy(mac, a->mac, 6);
        return true;
    }
    return fn_ok(a, fn) && vfw_dp_vf_mac(a->dp, fn - 1, mac) == 0;
}

/* Give fn's engine its MAC if it differs from what it has (or always). */
static void engine_mac_push(struct vfw_adapter *a, unsigned fn, bool force)
{
    uint8_t mac[6];

    if (!fn_mac(a, fn, mac)) {
        return;
    }
    a->mac_pending[fn] = false;
    if (!force && a->engine_mac_valid[fn] &&
        !memcmp(mac, a->engine_mac[fn], 6)) {
        return;
    }
    memcpy(a->engine_mac[fn], mac, 6);
    a->engine_mac_valid[fn] = true;
    vfw_rnic_set_mac(a->rnic, fn, mac);
}

/* Only ever inside a call (an admin command, NumVFs): the engine gets it
 * when the call ends, not under a run or a command in progress. */
static void mac_changed(struct vfw_adapter *a, unsigned fn)
{
    if (!fn_ok(a, fn)) {
        return;
    }
    a->mac_pending[fn] = true;
    a->deferred = true;
}

/* ---- data path ops -------------------------------------------------------- */

/* Every part's DMA and MSI-X pass here: none for a function being reset
 * (a failed DMA, as the IOMMU would refuse it; the parts handle that). */
static int dp_dma_read(void *ctx, unsigned fn, uint64_t addr, void *buf,
                       size_t len)
{
    struct vfw_adapter *a = ctx;

    return fn_gone(a, fn) ? -1 : a->ops.dma_read(a->ctx, fn, addr, buf, len);
}

static int dp_dma_write(void *ctx, unsigned fn, uint64_t addr,
                        const void *buf, size_t len)
{
    struct vfw_adapter *a = ctx;

    return fn_gone(a, fn) ? -1 : a->ops.dma_write(a->ctx, fn, addr, buf, len);
}

static void any_irq(void *ctx, unsigned fn, unsigned vector)
{
    struct vfw_adapter *a = ctx;

    if (!fn_gone(a, fn)) {
        a->ops.irq(a->ctx, fn, vector);
    }
}

static void dp_uplink_tx(void *ctx, const uint8_t *frame, size_t len)
{
    struct vfw_adapter *a = ctx;

    vfw_func_uplink_tx(&a->fn);
    a->ops.uplink_tx(a->ctx, frame, len);
}

static uint64_t any_now(void *ctx)
{
    struct vfw_adapter *a = ctx;

    return a->ops.now_ns(a->ctx);
}

static void dp_timer(void *ctx, unsigned fn, uint64_t when)
{
    struct vfw_adapter *a = ctx;

    if (fn < VFW_DP_NUM_FN) {
        timer_arm(a, fn, when);
    }
}

static void dp_uplink_timer(void *ctx, uint64_t when)
{
    timer_arm(ctx, TIMER_UPLINK, when);
}

/* A frame the switch delivers to fn goes to fn's engine if it wants it.
 * vfw_rnic_rx_frame only queues (and kicks), so this is safe when the
 * frame is the engine's own, sent during a run. */
static bool dp_rx_steer(void *ctx, unsigned fn, const uint8_t *frame,
                        size_t len)
{
    struct vfw_adapter *a = ctx;

    return a->rnic && fn_ok(a, fn) &&
           vfw_rnic_rx_frame(a->rnic, fn, frame, len);
}

static void any_kick(void *ctx)
{
    struct vfw_adapter *a = ctx;

    a->ops.kick(a->ctx);
}

static const struct vfw_dp_ops dp_ops = {
    .kick = any_kick,
    .dma_read = dp_dma_read,
    .dma_write = dp_dma_write,
    .irq = any_irq,
    .uplink_tx = dp_uplink_tx,
    .now_ns = any_now,
    .timer = dp_timer,
    .rx_steer = dp_rx_steer,
    .uplink_timer = dp_uplink_timer,
};

/* ---- RNIC ops ------------------------------------------------------------- */

/* The engine's frames enter the switch as fn's traffic: spoof check, VLAN,
 * ACL, meters and classes bind RDMA exactly like the netdev. */
static void rnic_frame_out(void *ctx, unsigned fn, const uint8_t *frame,
                           size_t len)
{
    struct vfw_adapter *a = ctx;

    vfw_dp_fn_inject(a->dp, fn, frame, len);
}

static void rnic_timer(void *ctx, uint64_t when)
{
    timer_arm(ctx, TIMER_RNIC, when);
}

static const struct vfw_rnic_ops rnic_ops = {
    .dma_read = dp_dma_read,
    .dma_write = dp_dma_write,
    .irq = any_irq,
    .frame_out = rnic_frame_out,
    .now_ns = any_now,
    .kick = any_kick,
    .timer = rnic_timer,
};

/* ---- admin queue ops ------------------------------------------------------ */

static int admin_dma_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
    return dp_dma_read(opaque, VFW_DP_FN_PF, addr, buf, len);
}

static int admin_dma_write(void *opaque, uint64_t addr, const void *buf,
                           size_t len)
{
    return dp_dma_write(opaque, VFW_DP_FN_PF, addr, buf, len);
}

/* Admin commands run only in a BAR write from outside the adapter's work
 * (one from inside is refused), so no run is using the RNIC's state. */
static int admin_quota_set(void *opaque, unsigned vf,
                           const struct vfw_aq_rdma_quota *q)
{
    struct vfw_adapter *a = opaque;

    return vfw_rnic_set_quota(a->rnic, vf, q);
}

static int admin_quota_get(void *opaque, unsigned vf,
                           struct vfw_aq_rdma_quota *q,
                           struct vfw_aq_rdma_quota *used)
{
    struct vfw_adapter *a = opaque;

    return vfw_rnic_get_quota(a->rnic, vf, q, used);
}

/* `ip link set PF vf N ...` committed: the switch port follows at once. */
static void admin_vf_cfg_changed(void *opaque, unsigned vf,
                                 const struct vfw_vf_cfg *c)
{
    struct vfw_adapter *a = opaque;
    struct vfw_dp_vf_cfg d;

    if (vf >= a->total_vfs) {
        return;
    }
    memset(&d, 0, sizeof(d));
    memcpy(d.mac, c->mac, sizeof(d.mac));
    d.vlan = c->vlan;
    d.qos = c->qos;
    d.spoofchk = c->spoofchk;
    d.trust = c->trust;
    d.link_state = c->link_state;
    d.min_mbps = c->min_rate;
    d.max_mbps = c->max_rate;
    memcpy(d.vlan_filter, c->vlan_filter, sizeof(d.vlan_filter));
    d.rx_mode = c->rx_mode;
    d.mc_count = c->mc_count;
    memcpy(d.mc, c->mc, sizeof(d.mc));
    /* The admin queue validated the config before committing it, rates
     * against the QoS tree too (SET_VF_RATE answers OVERSUB), so the
     * data path has nothing left to refuse here. */
    (void)vfw_dp_set_vf(a->dp, vf, &d);
    mac_changed(a, VFW_DP_FN_VF(vf));
}

static void admin_vf_stats(void *opaque, unsigned vf, struct vfw_vf_stats *st)
{
    struct vfw_adapter *a = opaque;
    unsigned fn = VFW_DP_FN_VF(vf);

    st->tx_packets = vfw_dp_stat(a->dp, fn, VFW_STAT_TX_PKTS);
    st->tx_bytes = vfw_dp_stat(a->dp, fn, VFW_STAT_TX_BYTES);
    st->rx_packets = vfw_dp_stat(a->dp, fn, VFW_STAT_RX_PKTS);
    st->rx_bytes = vfw_dp_stat(a->dp, fn, VFW_STAT_RX_BYTES);
    st->rx_dropped = vfw_dp_stat(a->dp, fn, VFW_STAT_RX_NO_BUF);
    st->tx_dropped = 0;
    for (unsigned k = VFW_STAT_TX_DROP_SPOOF; k <= VFW_STAT_TX_DROP_OTHER;
         k++) {
        st->tx_dropped += vfw_dp_stat(a->dp, fn, k);
    }
}

/* ---- life ----------------------------------------------------------------- */

static void timers_clear(struct vfw_adapter *a)
{
    for (unsigned id = 0; id < TIMER_COUNT; id++) {
        a->deadline[id] = TIMER_NONE;
    }
}

struct vfw_adapter *vfw_adapter_create(const struct vfw_adapter_ops *ops,
                                       void *ctx, const uint8_t mac[6],
                                       unsigned total_vfs, uint64_t line_rate,
                                       const char **why)
{
    struct vfw_adapter *a;
    const char *dummy;

    why = why ? why : &dummy;
    if (!ops || !ops->dma_read || !ops->dma_write || !ops->irq ||
        !ops->uplink_tx || !ops->now_ns || !ops->timer || !ops->kick) {
        *why = "every host op is needed";
        return NULL;
    }
    if (total_vfs > VFW_FUNC_MAX_VFS || total_vfs > VFW_DP_MAX_VFS) {
        *why = "too many VFs";
        return NULL;
    }
    if (line_rate && (line_rate < VFW_QOS_LINE_MIN ||
                      line_rate > VFW_QOS_LINE_MAX)) {
        *why = "line rate out of range";
        return NULL;
    }
    a = calloc(1, sizeof(*a));
    if (!a) {
        *why = "no memory";
        return NULL;
    }
    a->ops = *ops;
    a->ctx = ctx;
    a->total_vfs = total_vfs;
    a->resetting = RESETTING_NONE;
    memcpy(a->mac, mac, 6);
    timers_clear(a);
    a->host_deadline = TIMER_NONE;
    *why = "cannot set up the function table";
    if (vfw_func_dev_init(&a->fn, mac, (uint16_t)total_vfs)) {
        goto fail;
    }
    *why = "cannot set up the data path";
    a->dp = vfw_dp_create(&dp_ops, a, mac, total_vfs);
    if (!a->dp || vfw_dp_set_line_default(a->dp, line_rate)) {
        goto fail;
    }
    *why = "cannot set up the RDMA NIC";
    a->rnic = vfw_rnic_create(&rnic_ops, a, total_vfs);
    if (!a->rnic) {
        goto fail;
    }
    *why = "cannot set up the admin queue";
    if (vfw_admin_init(&a->admin, &(struct vfw_admin_ops) {
                           .dma_read = admin_dma_read,
                           .dma_write = admin_dma_write,
                           .rdma_quota_set = admin_quota_set,
                           .rdma_quota_get = admin_quota_get,
                           .qos_dp = a->dp,
                           .vf_cfg_changed = admin_vf_cfg_changed,
                           .vf_stats = admin_vf_stats,
                           .opaque = a }, (uint16_t)total_vfs)) {
        goto fail;
    }
    *why = "cannot set up the mailbox";
    if (vfw_mbox_init(&a->mbox, &(struct vfw_mbox_ops) {
                          .irq = any_irq, .opaque = a },
                      (uint16_t)total_vfs)) {
        goto fail;
    }
    for (unsigned fn = 0; fn <= total_vfs; fn++) {
        engine_mac_push(a, fn, true);
    }
    *why = NULL;
    return a;
fail:
    vfw_adapter_destroy(a);
    return NULL;
}

void vfw_adapter_destroy(struct vfw_adapter *a)
{
    if (!a) {
        return;
    }
    /* The RNIC first: it may still send frames into the data path, which
     * must not steer them back into it (a->rnic is NULL meanwhile). */
    struct vfw_rnic *r = a->rnic;

    a->rnic = NULL;
    vfw_rnic_destroy(r);
    vfw_dp_destroy(a->dp);
    free(a);
}

/* What the host asked for, done: only from apply_deferred. */
static void reset_all(struct vfw_adapter *a)
{
    timers_clear(a);
    vfw_func_dev_reset(&a->fn);
    vfw_dp_reset(a->dp);        /* QoS too: back to the create line rate */
    vfw_rnic_reset(a->rnic);    /* quotas back to their defaults */
    vfw_admin_reset(&a->admin);
    vfw_mbox_reset(&a->mbox);
    vfw_func_set_uplink(&a->fn, a->uplink);
    vfw_dp_set_uplink(a->dp, a->uplink);
    /* The data path put the VF MACs back to their defaults. */
    for (unsigned fn = 0; fn <= a->total_vfs; fn++) {
        a->mac_pending[fn] = false;
        engine_mac_push(a, fn, true);
    }
}

static void reset_one(struct vfw_adapter *a, unsigned fn)
{
    struct vfw_func *f = vfw_func_vf(&a->fn, fn - 1);

    if (!f) {
        return;
    }
    vfw_func_reset(f);
    timer_cancel(a, fn);
    vfw_dp_reset_fn(a->dp, fn);
    vfw_rnic_reset_fn(a->rnic, fn);
    engine_mac_push(a, fn, true);
    vfw_mbox_reset_vf(&a->mbox, fn - 1);
}

/*
 * The one place where what was recorded inside is applied, in the order
 * QEMU would have called it: resets (the PF's covers the VFs'), NumVFs,
 * the carrier, then the engines' MACs. A function stays "gone" (no DMA,
 * no MSI-X) while its reset runs: its teardown's RSTs still go out as
 * frames. What the host's ops record meanwhile sets a->deferred again.
 */
static void apply_deferred(struct vfw_adapter *a)
{
    a->deferred = false;
    if (a->reset_pending) {
        a->reset_pending = false;
        memset(a->reset_fn_pending, 0, sizeof(a->reset_fn_pending));
        a->resetting = RESETTING_ALL;
        reset_all(a);
        a->resetting = RESETTING_NONE;
    }
    for (unsigned fn = 1; fn <= a->total_vfs; fn++) {
        if (a->reset_fn_pending[fn]) {
            a->reset_fn_pending[fn] = false;
            a->resetting = (int)fn;
            reset_one(a, fn);
            a->resetting = RESETTING_NONE;
        }
    }
    if (a->num_vfs_pending) {
        a->num_vfs_pending = false;
        vfw_admin_set_num_vfs(&a->admin, (uint16_t)a->num_vfs);
    }
    if (a->uplink_pending) {
        a->uplink_pending = false;
        vfw_func_set_uplink(&a->fn, a->uplink);
        vfw_dp_set_uplink(a->dp, a->uplink);
    }
    for (unsigned fn = 0; fn <= a->total_vfs; fn++) {
        if (a->mac_pending[fn]) {
            engine_mac_push(a, fn, false);
        }
    }
}

/* Resets, NumVFs and the carrier come from PCI config writes and resets,
 * which the device cannot refuse: each is recorded and applied when the
 * outermost call ends (at once when the host calls from outside). */
void vfw_adapter_reset(struct vfw_adapter *a)
{
    enter(a);
    a->reset_pending = a->deferred = true;
    leave(a);
}

void vfw_adapter_reset_fn(struct vfw_adapter *a, unsigned fn)
{
    if (fn == VFW_DP_FN_PF || !fn_ok(a, fn)) {
        return;
    }
    enter(a);
    a->reset_fn_pending[fn] = a->deferred = true;
    leave(a);
}

void vfw_adapter_set_num_vfs(struct vfw_adapter *a, unsigned num_vfs)
{
    enter(a);
    a->num_vfs = num_vfs < a->total_vfs ? num_vfs : a->total_vfs;
    a->num_vfs_pending = a->deferred = true;
    leave(a);
}

void vfw_adapter_set_uplink(struct vfw_adapter *a, bool attached)
{
    enter(a);
    a->uplink = attached;
    a->uplink_pending = a->deferred = true;
    leave(a);
}

/* From inside, a frame from the wire can only be the device's own frame
 * looping back through the host synchronously: dropped (the wire may). */
void vfw_adapter_uplink_rx(struct vfw_adapter *a, const uint8_t *frame,
                           size_t len)
{
    if (inside(a)) {
        return;
    }
    enter(a);
    vfw_func_uplink_rx(&a->fn);
    vfw_dp_uplink_rx(a->dp, frame, len);
    leave(a);
}

/* The Ethernet rings' TX, then the RNIC's run; from inside, another run
 * is asked for instead. */
void vfw_adapter_run(struct vfw_adapter *a)
{
    if (inside(a)) {
        a->run_again = true;
        return;
    }
    enter(a);
    vfw_dp_run(a->dp);
    vfw_rnic_run(a->rnic);
    leave(a);
}

/* ---- BARs ----------------------------------------------------------------- */

static struct vfw_func *func_of(struct vfw_adapter *a, unsigned fn)
{
    if (fn == VFW_DP_FN_PF) {
        return vfw_func_pf(&a->fn);
    }
    return fn_ok(a, fn) ? vfw_func_vf(&a->fn, fn - 1) : NULL;
}

bool vfw_adapter_bar0_read(struct vfw_adapter *a, unsigned fn, uint64_t addr,
                           unsigned size, uint32_t *val)
{
    struct vfw_func *f = func_of(a, fn);

    *val = 0;
    if (!f) {
        return false;
    }
    if (fn == VFW_DP_FN_PF && vfw_admin_owns(addr)) {
        return vfw_admin_read(&a->admin, addr, size, val);
    }
    if (vfw_dp_owns(addr)) {
        return vfw_dp_read(a->dp, fn, addr, size, val);
    }
    if (vfw_rnic_owns(addr)) {
        /* not while the RNIC's work may be in progress */
        if (inside(a) || !vfw_rnic_read(a->rnic, fn, addr, size, val)) {
            *val = 0;
            return false;
        }
        return true;
    }
    if (vfw_mbox_owns(addr)) {
        return vfw_mbox_read(&a->mbox, fn, addr, size, val);
    }
    return vfw_func_read(&a->fn, f, addr, size, val);
}

static bool bar0_write(struct vfw_adapter *a, struct vfw_func *f,
                       unsigned fn, uint64_t addr, uint64_t val,
                       unsigned size)
{
    if (fn == VFW_DP_FN_PF && vfw_admin_owns(addr)) {
        return vfw_admin_write(&a->admin, addr, val, size);
    }
    if (vfw_dp_owns(addr)) {
        return vfw_dp_write(a->dp, fn, addr, val, size);
    }
    if (vfw_rnic_owns(addr)) {
        return vfw_rnic_write(a->rnic, fn, addr, val, size);
    }
    if (vfw_mbox_owns(addr)) {
        return vfw_mbox_write(&a->mbox, fn, addr, val, size);
    }
    return vfw_func_write(&a->fn, f, addr, val, size);
}

/* From inside, a BAR write or a doorbell is the device's own DMA or MSI-X
 * looping back: refused (see the top). */
bool vfw_adapter_bar0_write(struct vfw_adapter *a, unsigned fn,
                            uint64_t addr, uint64_t val, unsigned size)
{
    struct vfw_func *f = func_of(a, fn);
    bool ok;

    if (!f || inside(a)) {
        return false;
    }
    enter(a);
    ok = bar0_write(a, f, fn, addr, val, size);
    leave(a);
    return ok;
}

bool vfw_adapter_doorbell(struct vfw_adapter *a, unsigned fn,
                          uint64_t offset, uint64_t val, unsigned size)
{
    if (inside(a) || !fn_ok(a, fn)) {
        return false;
    }
    enter(a);
    vfw_rnic_doorbell(a->rnic, fn, offset, val, size);
    leave(a);
    return true;
}

/* ---- views ---------------------------------------------------------------- */

const struct vfw_func_dev *vfw_adapter_funcs(const struct vfw_adapter *a)
{
    return a ? &a->fn : NULL;
}

struct vfw_dp *vfw_adapter_dp(struct vfw_adapter *a)
{
    return a ? a->dp : NULL;
}

const struct vfw_admin *vfw_adapter_admin(const struct vfw_adapter *a)
{
    return a ? &a->admin : NULL;
}
