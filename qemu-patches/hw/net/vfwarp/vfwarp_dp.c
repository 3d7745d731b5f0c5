/*
 * vfwarp: QEMU glue of the Ethernet data path (adapter/src/dataplane.c):
 * per-function TX/RX rings joined by the embedded switch (vswitch/). The
 * PF owns the switch; its VFs reach it through the PF state. This file
 * supplies DMA (pci_dma_* as the requesting function, so the IOMMU and the
 * function's Bus Master Enable apply), MSI-X, the uplink (the PF's NIC),
 * a virtual clock and per-function shaping timers. Frames the switch
 * delivers to a function are first offered to its RDMA engine (rx_steer,
 * vfwarp_rnic.c); the engine's frames enter here as the function's traffic
 * (vfwarp_dp_fn_inject), and a change of a function's MAC is passed on to
 * the engine (vfwarp_rnic_mac_changed).
 *
 * QoS (hardware interface 2.1, docs/qos.md): the uplink's scheduler runs
 * on a virtual-clock timer (vfw_dp_uplink_timer). Its line rate starts at
 * the PF's `line-rate` property (bits/s; 0, the default, = none: frames
 * leave at once as before 2.1) until the PF driver sets one with
 * QOS_SET_LINE; a PF reset goes back to the property.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie_sriov.h"
#include "hw/pci/msix.h"
#include "system/dma.h"
#include "net/net.h"

#include "vfwarp.h"
#include "vfw_dataplane.h"

/*
 * VF port configuration comes from the PF admin queue (adapter/src/admin.c,
 * struct vfw_vf_cfg, `ip link set PF vf N ...`). The data path picks up a
 * changed config on its next entry and from a 10 ms timer (so a link-state
 * change reaches an idle VF), and reports the VF's counters back for
 * GET_VF_STATS. Built only when the admin queue is part of the device.
 */
#if defined(__has_include)
#if __has_include("vfw_admin.h")
#define VFWARP_DP_ADMIN 1
#include "vfw_admin.h"
#endif
#endif
#define VFWARP_DP_SYNC_NS (10 * SCALE_MS)

struct vfwarp_dp_timer {
    struct vfwarp_dp_glue *g;
    unsigned fn;
    QEMUTimer *t;
};

struct vfwarp_dp_glue {
    VfwarpPFState *s;
    struct vfw_dp *dp;
    struct vfwarp_dp_timer timer[VFW_DP_NUM_FN];
    QEMUTimer *uplink_timer;                  /* the QoS scheduler's */
#ifdef VFWARP_DP_ADMIN
    QEMUTimer *sync_timer;
    struct vfw_vf_cfg seen[VFW_DP_MAX_VFS];   /* last admin config applied */
#endif
};

/* The PCI function behind data-path function `fn`; NULL for a VF that is
 * not enabled. */
static PCIDevice *vfwarp_dp_dev(VfwarpPFState *s, unsigned fn)
{
    PCIDevice *pf = PCI_DEVICE(s);

    if (fn == VFW_DP_FN_PF) {
        return pf;
    }
    if (fn - 1 >= pcie_sriov_num_vfs(pf)) {
        return NULL;
    }
    return pcie_sriov_get_vf_at_index(pf, fn - 1);
}

static int vfwarp_dp_dma_read(void *ctx, unsigned fn, uint64_t addr,
                              void *buf, size_t len)
{
    struct vfwarp_dp_glue *g = ctx;
    PCIDevice *d = vfwarp_dp_dev(g->s, fn);

    return !d || pci_dma_read(d, addr, buf, len) != MEMTX_OK;
}

static int vfwarp_dp_dma_write(void *ctx, unsigned fn, uint64_t addr,
                               const void *buf, size_t len)
{
    struct vfwarp_dp_glue *g = ctx;
    PCIDevice *d = vfwarp_dp_dev(g->s, fn);

    return !d || pci_dma_write(d, addr, buf, len) != MEMTX_OK;
}

static void vfwarp_dp_irq(void *ctx, unsigned fn, unsigned vector)
{
    struct vfwarp_dp_glue *g = ctx;
    PCIDevice *d = vfwarp_dp_dev(g->s, fn);

    if (d && msix_enabled(d) && vector < d->msix_entries_nr) {
        msix_notify(d, vector);
    }
}

static void vfwarp_dp_uplink_tx(void *ctx, const uint8_t *frame, size_t len)
{
    struct vfwarp_dp_glue *g = ctx;

    if (g->s->nic) {
        vfw_func_uplink_tx(&g->s->fn);
        qemu_send_packet(qemu_get_queue(g->s->nic), frame, len);
    }
}

static uint64_t vfwarp_dp_now(void *ctx)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void vfwarp_dp_timer_req(void *ctx, unsigned fn, uint64_t when)
{
    struct vfwarp_dp_glue *g = ctx;

    if (fn < VFW_DP_NUM_FN && g->timer[fn].t) {
        timer_mod(g->timer[fn].t, (int64_t)MIN(when, (uint64_t)INT64_MAX));
    }
}

static void vfwarp_dp_timer_cb(void *opaque)
{
    struct vfwarp_dp_timer *t = opaque;

    vfw_dp_timer(t->g->dp, t->fn);
}

static void vfwarp_dp_uplink_timer_req(void *ctx, uint64_t when)
{
    struct vfwarp_dp_glue *g = ctx;

    if (g->uplink_timer) {
        timer_mod(g->uplink_timer, (int64_t)MIN(when, (uint64_t)INT64_MAX));
    }
}

static void vfwarp_dp_uplink_timer_cb(void *opaque)
{
    struct vfwarp_dp_glue *g = opaque;

    vfw_dp_uplink_timer(g->dp);
}

static bool vfwarp_dp_rx_steer(void *ctx, unsigned fn, const uint8_t *frame,
                               size_t len)
{
    struct vfwarp_dp_glue *g = ctx;

    return vfwarp_rnic_rx_steer(g->s, fn, frame, len);
}

static const struct vfw_dp_ops vfwarp_dp_ops = {
    .dma_read = vfwarp_dp_dma_read,
    .dma_write = vfwarp_dp_dma_write,
    .irq = vfwarp_dp_irq,
    .uplink_tx = vfwarp_dp_uplink_tx,
    .now_ns = vfwarp_dp_now,
    .timer = vfwarp_dp_timer_req,
    .rx_steer = vfwarp_dp_rx_steer,
    .uplink_timer = vfwarp_dp_uplink_timer_req,
};

#ifdef VFWARP_DP_ADMIN
static void vfwarp_dp_sync(struct vfwarp_dp_glue *g, bool stats)
{
    VfwarpPFState *s = g->s;

    for (unsigned vf = 0; vf < s->total_vfs && vf < VFW_DP_MAX_VFS; vf++) {
        const struct vfw_vf_cfg *c = vfw_admin_vf_cfg(&s->admin, vf);
        struct vfw_vf_stats *st = stats ? vfw_admin_vf_stats(&s->admin, vf)
                                        : NULL;
        unsigned fn = VFW_DP_FN_VF(vf);
        struct vfw_dp_vf_cfg d;

        if (st) {
            st->tx_packets = vfw_dp_stat(g->dp, fn, VFW_STAT_TX_PKTS);
            st->tx_bytes = vfw_dp_stat(g->dp, fn, VFW_STAT_TX_BYTES);
            st->rx_packets = vfw_dp_stat(g->dp, fn, VFW_STAT_RX_PKTS);
            st->rx_bytes = vfw_dp_stat(g->dp, fn, VFW_STAT_RX_BYTES);
            st->rx_dropped = vfw_dp_stat(g->dp, fn, VFW_STAT_RX_NO_BUF);
            st->tx_dropped = 0;
            for (unsigned k = VFW_STAT_TX_DROP_SPOOF;
                 k <= VFW_STAT_TX_DROP_OTHER; k++) {
                st->tx_dropped += vfw_dp_stat(g->dp, fn, k);
            }
        }
        if (!c || !memcmp(c, &g->seen[vf], sizeof(*c))) {
            continue;
        }
        g->seen[vf] = *c;
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
        if (vfw_dp_set_vf(g->dp, vf, &d)) {
            qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: VF %u config not "
                          "applied to the switch\n", vf);
        }
        vfwarp_rnic_mac_changed(s, fn);
    }
}

static void vfwarp_dp_sync_cb(void *opaque)
{
    struct vfwarp_dp_glue *g = opaque;

    vfwarp_dp_sync(g, true);
    timer_mod(g->sync_timer,
              qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + VFWARP_DP_SYNC_NS);
}
#define VFWARP_DP_SYNC(g) vfwarp_dp_sync(g, false)
#else
#define VFWARP_DP_SYNC(g) do { } while (0)
#endif

bool vfwarp_dp_init(VfwarpPFState *s, Error **errp)
{
    struct vfwarp_dp_glue *g = g_new0(struct vfwarp_dp_glue, 1);

    g->s = s;
    if (s->line_rate && (s->line_rate < VFW_QOS_LINE_MIN ||
                         s->line_rate > VFW_QOS_LINE_MAX)) {
        g_free(g);
        error_setg(errp, "vfwarp: line-rate must be 0 (none) or %llu..%llu "
                   "bits/s", (unsigned long long)VFW_QOS_LINE_MIN,
                   (unsigned long long)VFW_QOS_LINE_MAX);
        return false;
    }
    /* The uplink timer exists before the data path can ask for it. */
    g->uplink_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                   vfwarp_dp_uplink_timer_cb, g);
    g->dp = vfw_dp_create(&vfwarp_dp_ops, g, s->conf.macaddr.a,
                          s->total_vfs);
    if (!g->dp || vfw_dp_set_line_default(g->dp, s->line_rate)) {
        vfw_dp_destroy(g->dp);
        timer_free(g->uplink_timer);
        g_free(g);
        error_setg(errp, "vfwarp: cannot set up the data path");
        return false;
    }
    for (unsigned fn = 0; fn < 1u + s->total_vfs; fn++) {
        g->timer[fn].g = g;
        g->timer[fn].fn = fn;
        g->timer[fn].t = timer_new_ns(QEMU_CLOCK_VIRTUAL, vfwarp_dp_timer_cb,
                                      &g->timer[fn]);
    }
#ifdef VFWARP_DP_ADMIN
    /* Defaults of both sides agree; anything else is applied on change. */
    for (unsigned vf = 0; vf < s->total_vfs; vf++) {
        const struct vfw_vf_cfg *c = vfw_admin_vf_cfg(&s->admin, vf);

        if (c) {
            g->seen[vf] = *c;
        }
    }
    g->sync_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, vfwarp_dp_sync_cb, g);
    timer_mod(g->sync_timer,
              qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + VFWARP_DP_SYNC_NS);
#endif
    s->dp = g;
    return true;
}

void vfwarp_dp_exit(VfwarpPFState *s)
{
    struct vfwarp_dp_glue *g = s->dp;

    if (!g) {
        return;
    }
    for (unsigned fn = 0; fn < VFW_DP_NUM_FN; fn++) {
        if (g->timer[fn].t) {
            timer_free(g->timer[fn].t);
        }
    }
#ifdef VFWARP_DP_ADMIN
    timer_free(g->sync_timer);
#endif
    vfw_dp_destroy(g->dp);
    timer_free(g->uplink_timer);
    g_free(g);
    s->dp = NULL;
}

void vfwarp_dp_reset(VfwarpPFState *s)
{
    if (s->dp) {
        for (unsigned fn = 0; fn < VFW_DP_NUM_FN; fn++) {
            if (s->dp->timer[fn].t) {
                timer_del(s->dp->timer[fn].t);
            }
        }
        timer_del(s->dp->uplink_timer);
        vfw_dp_reset(s->dp->dp);    /* QoS too: back to the line-rate property */
    }
    /* VF MACs are back to their defaults. */
    for (unsigned fn = 1; fn <= s->total_vfs; fn++) {
        vfwarp_rnic_mac_changed(s, fn);
    }
}

void vfwarp_dp_reset_fn(VfwarpPFState *s, struct vfw_func *f)
{
    if (s->dp && f) {
        unsigned fn = vfwarp_fn_number(f);

        if (s->dp->timer[fn].t) {
            timer_del(s->dp->timer[fn].t);
        }
        vfw_dp_reset_fn(s->dp->dp, fn);
    }
}

void vfwarp_dp_set_uplink(VfwarpPFState *s, bool up)
{
    if (s->dp) {
        vfw_dp_set_uplink(s->dp->dp, up);
    }
}

void vfwarp_dp_uplink_rx(VfwarpPFState *s, const uint8_t *buf, size_t size)
{
    if (s->dp) {
        VFWARP_DP_SYNC(s->dp);
        vfw_dp_uplink_rx(s->dp->dp, buf, size);
    }
}

struct vfw_dp *vfwarp_dp_core(VfwarpPFState *s)
{
    return s->dp ? s->dp->dp : NULL;
}

bool vfwarp_dp_owns(hwaddr addr)
{
    return vfw_dp_owns(addr);
}

uint64_t vfwarp_dp_mmio_read(VfwarpPFState *s, struct vfw_func *f,
                             hwaddr addr, unsigned size)
{
    uint32_t val = 0;

    if (!s->dp || !vfw_dp_read(s->dp->dp, vfwarp_fn_number(f), addr, size,
                               &val)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte ring read at 0x%"
                      HWADDR_PRIx " ignored\n", size, addr);
    }
    return val;
}

void vfwarp_dp_mmio_write(VfwarpPFState *s, struct vfw_func *f, hwaddr addr,
                          uint64_t val, unsigned size)
{
    if (s->dp) {
        VFWARP_DP_SYNC(s->dp);
    }
    if (!s->dp || !vfw_dp_write(s->dp->dp, vfwarp_fn_number(f), addr, val,
                                size)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte ring write at 0x%"
                      HWADDR_PRIx " ignored\n", size, addr);
    }
}

int vfwarp_dp_set_vf(VfwarpPFState *s, unsigned vf,
                     const struct vfw_dp_vf_cfg *cfg)
{
    int ret = s->dp ? vfw_dp_set_vf(s->dp->dp, vf, cfg) : -1;

    vfwarp_rnic_mac_changed(s, VFW_DP_FN_VF(vf));
    return ret;
}

void vfwarp_dp_fn_inject(VfwarpPFState *s, unsigned fn, const uint8_t *frame,
                         size_t len)
{
    if (s->dp) {
        vfw_dp_fn_inject(s->dp->dp, fn, frame, len);
    }
}

bool vfwarp_dp_fn_mac(VfwarpPFState *s, unsigned fn, uint8_t mac[6])
{
    if (fn == VFW_DP_FN_PF) {
        memcpy(mac, s->conf.macaddr.a, 6);
        return true;
    }
    return s->dp && fn - 1 < s->total_vfs &&
           vfw_dp_vf_mac(s->dp->dp, fn - 1, mac) == 0;
}
