/*
 * vfwarp: QEMU glue of the RDMA NIC (adapter/src/rnic*.c): the verbs
 * command queue, event queue, doorbells and iWARP engine of the PF and of
 * every VF. The device logic lives in adapter/; this file supplies DMA
 * (pci_dma_* as the requesting function, so the IOMMU and the function's
 * Bus Master Enable apply), MSI-X, the virtual clock, a bottom half and a
 * timer for vfw_rnic_run, and joins the engine to the embedded switch
 * (frames out through vfw_dp_fn_inject, frames in through the data path's
 * rx_steer op).
 *
 * Re-entrancy: vfw_rnic_run only runs from the bottom half, which is
 * guarded by the PF's mem_reentrancy_guard, so a DMA the engine aims at
 * the PF's own BARs is refused by the memory core. The VFs' BARs have
 * their own guards; a DMA from the engine into a VF's RDMA window or
 * doorbell BAR would re-enter the RNIC in the middle of a run, so those
 * accesses are refused here while a run is in progress (`in_run`).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie_sriov.h"
#include "hw/pci/msix.h"
#include "system/dma.h"

#include "vfwarp/vfwarp_regs.h"
#include "vfwarp.h"
#include "vfw_rnic.h"

struct vfwarp_rnic_glue {
    VfwarpPFState *s;
    struct vfw_rnic *r;
    QEMUBH *bh;                 /* runs vfw_rnic_run */
    QEMUTimer *timer;           /* the RNIC's timer request: kicks bh */
    bool in_run;
    /* MAC changes seen while a run was in progress, applied after it. */
    bool mac_pending[1 + VFW_SRIOV_TOTAL_VFS];
    uint8_t mac[1 + VFW_SRIOV_TOTAL_VFS][6];    /* last given to the RNIC */
    bool mac_valid[1 + VFW_SRIOV_TOTAL_VFS];
};

PCIDevice *vfwarp_fn_dev(VfwarpPFState *s, unsigned fn)
{
    PCIDevice *pf = PCI_DEVICE(s);

    if (fn == 0) {
        return pf;
    }
    if (fn - 1 >= pcie_sriov_num_vfs(pf)) {
        return NULL;
    }
    return pcie_sriov_get_vf_at_index(pf, fn - 1);
}

static int vfwarp_rnic_dma_read(void *ctx, unsigned fn, uint64_t addr,
                                void *buf, size_t len)
{
    struct vfwarp_rnic_glue *g = ctx;
    PCIDevice *d = vfwarp_fn_dev(g->s, fn);

    return !d || pci_dma_read(d, addr, buf, len) != MEMTX_OK;
}

static int vfwarp_rnic_dma_write(void *ctx, unsigned fn, uint64_t addr,
                                 const void *buf, size_t len)
{
    struct vfwarp_rnic_glue *g = ctx;
    PCIDevice *d = vfwarp_fn_dev(g->s, fn);

    return !d || pci_dma_write(d, addr, buf, len) != MEMTX_OK;
}

static void vfwarp_rnic_irq(void *ctx, unsigned fn, unsigned vector)
{
    struct vfwarp_rnic_glue *g = ctx;
    PCIDevice *d = vfwarp_fn_dev(g->s, fn);

    /* The vector comes from a guest-written register: check it against
     * this function's table. */
    if (d && msix_enabled(d) && vector < d->msix_entries_nr) {
        msix_notify(d, vector);
    }
}

static void vfwarp_rnic_frame_out(void *ctx, unsigned fn, const uint8_t *frame,
                                  size_t len)
{
    struct vfwarp_rnic_glue *g = ctx;

    vfwarp_dp_fn_inject(g->s, fn, frame, len);
}

static uint64_t vfwarp_rnic_now(void *ctx)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void vfwarp_rnic_kick(void *ctx)
{
    struct vfwarp_rnic_glue *g = ctx;

    qemu_bh_schedule(g->bh);
}

static void vfwarp_rnic_timer_req(void *ctx, uint64_t when_ns)
{
    struct vfwarp_rnic_glue *g = ctx;

    timer_mod(g->timer, (int64_t)MIN(when_ns, (uint64_t)INT64_MAX));
}

static const struct vfw_rnic_ops vfwarp_rnic_ops = {
    .dma_read = vfwarp_rnic_dma_read,
    .dma_write = vfwarp_rnic_dma_write,
    .irq = vfwarp_rnic_irq,
    .frame_out = vfwarp_rnic_frame_out,
    .now_ns = vfwarp_rnic_now,
    .kick = vfwarp_rnic_kick,
    .timer = vfwarp_rnic_timer_req,
};

/* Give the RNIC fn's MAC if it differs from what it has (or always). */
static void vfwarp_rnic_push_mac(struct vfwarp_rnic_glue *g, unsigned fn,
                                 bool force)
{
    uint8_t mac[6];

    if (fn > g->s->total_vfs || !vfwarp_dp_fn_mac(g->s, fn, mac)) {
        return;
    }
    g->mac_pending[fn] = false;
    if (!force && g->mac_valid[fn] && !memcmp(mac, g->mac[fn], 6)) {
        return;
    }
    memcpy(g->mac[fn], mac, 6);
    g->mac_valid[fn] = true;
    vfw_rnic_set_mac(g->r, fn, mac);
}

static void vfwarp_rnic_bh(void *opaque)
{
    struct vfwarp_rnic_glue *g = opaque;

    g->in_run = true;
    vfw_rnic_run(g->r);
    g->in_run = false;
    for (unsigned fn = 0; fn <= g->s->total_vfs; fn++) {
        if (g->mac_pending[fn]) {
            vfwarp_rnic_push_mac(g, fn, false);
        }
    }
}

/* The timer only schedules the (guarded) bottom half, so every run has the
 * same re-entrancy protection. */
static void vfwarp_rnic_timer_cb(void *opaque)
{
    struct vfwarp_rnic_glue *g = opaque;

    qemu_bh_schedule(g->bh);
}

bool vfwarp_rnic_init(VfwarpPFState *s, Error **errp)
{
    struct vfwarp_rnic_glue *g = g_new0(struct vfwarp_rnic_glue, 1);

    g->s = s;
    g->r = vfw_rnic_create(&vfwarp_rnic_ops, g, s->total_vfs);
    if (!g->r) {
        g_free(g);
        error_setg(errp, "vfwarp: cannot set up the RDMA NIC");
        return false;
    }
    g->bh = qemu_bh_new_guarded(vfwarp_rnic_bh, g,
                                &DEVICE(s)->mem_reentrancy_guard);
    g->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, vfwarp_rnic_timer_cb, g);
    s->rnic = g;
    for (unsigned fn = 0; fn <= s->total_vfs; fn++) {
        vfwarp_rnic_push_mac(g, fn, true);
    }
    return true;
}

void vfwarp_rnic_exit(VfwarpPFState *s)
{
    struct vfwarp_rnic_glue *g = s->rnic;

    if (!g) {
        return;
    }
    /* Destroy first: it may still call ops (kick, frame_out). Frames it
     * sends can no longer be steered back (s->rnic is NULL). */
    s->rnic = NULL;
    vfw_rnic_destroy(g->r);
    timer_free(g->timer);
    qemu_bh_delete(g->bh);
    g_free(g);
}

/* Power-on, PCI reset or FLR of the PF: every function's RDMA state, and
 * VF quotas back to their defaults. The data path has reset the VF MACs
 * to their defaults too (vfw_dp_reset), so every MAC is given again. */
void vfwarp_rnic_reset(VfwarpPFState *s)
{
    struct vfwarp_rnic_glue *g = s->rnic;

    if (!g) {
        return;
    }
    timer_del(g->timer);
    qemu_bh_cancel(g->bh);
    vfw_rnic_reset(g->r);
    for (unsigned fn = 0; fn <= s->total_vfs; fn++) {
        vfwarp_rnic_push_mac(g, fn, true);
    }
}

/* FLR, VF enable/disable of function fn. */
void vfwarp_rnic_reset_fn(VfwarpPFState *s, unsigned fn)
{
    struct vfwarp_rnic_glue *g = s->rnic;

    if (!g || fn > s->total_vfs) {
        return;
    }
    vfw_rnic_reset_fn(g->r, fn);
    vfwarp_rnic_push_mac(g, fn, true);
}

uint64_t vfwarp_rnic_mmio_read(VfwarpPFState *s, struct vfw_func *f,
                               hwaddr addr, unsigned size)
{
    struct vfwarp_rnic_glue *g = s->rnic;
    uint32_t val = 0;

    if (!g || g->in_run ||
        !vfw_rnic_read(g->r, vfwarp_fn_number(f), addr, size, &val)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte RDMA register read "
                      "at 0x%" HWADDR_PRIx " ignored\n", size, addr);
        return 0;
    }
    return val;
}

void vfwarp_rnic_mmio_write(VfwarpPFState *s, struct vfw_func *f,
                            hwaddr addr, uint64_t val, unsigned size)
{
    struct vfwarp_rnic_glue *g = s->rnic;

    if (!g || g->in_run ||
        !vfw_rnic_write(g->r, vfwarp_fn_number(f), addr, val, size)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte RDMA register write "
                      "at 0x%" HWADDR_PRIx " ignored\n", size, addr);
    }
}

void vfwarp_rnic_doorbell(VfwarpPFState *s, unsigned fn, hwaddr offset,
                          uint64_t val, unsigned size)
{
    struct vfwarp_rnic_glue *g = s->rnic;

    if (!g || g->in_run || fn > s->total_vfs) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: doorbell write at 0x%"
                      HWADDR_PRIx " of function %u ignored\n", offset, fn);
        return;
    }
    vfw_rnic_doorbell(g->r, fn, offset, val, size);
}

bool vfwarp_rnic_rx_steer(VfwarpPFState *s, unsigned fn, const uint8_t *frame,
                          size_t len)
{
    struct vfwarp_rnic_glue *g = s->rnic;

    /* vfw_rnic_rx_frame only queues (and kicks), so it is safe even when
     * the frame comes from this RNIC's own frame_out during a run. */
    return g && fn <= s->total_vfs && vfw_rnic_rx_frame(g->r, fn, frame, len);
}

void vfwarp_rnic_mac_changed(VfwarpPFState *s, unsigned fn)
{
    struct vfwarp_rnic_glue *g = s->rnic;

    if (!g || fn > s->total_vfs) {
        return;
    }
    if (g->in_run) {
        g->mac_pending[fn] = true;
        return;
    }
    vfwarp_rnic_push_mac(g, fn, false);
}

/* PF admin queue: SET_VF_RDMA_QUOTA / GET_VF_RDMA (opaque is the PF). The
 * RNIC checks vf against total_vfs; the admin queue checks NumVFs. */
int vfwarp_rnic_quota_set(void *opaque, unsigned vf,
                          const struct vfw_aq_rdma_quota *q)
{
    VfwarpPFState *s = opaque;

    if (!s->rnic || s->rnic->in_run) {
        return VFW_AQ_S_UNSUPPORTED;
    }
    return vfw_rnic_set_quota(s->rnic->r, vf, q);
}

int vfwarp_rnic_quota_get(void *opaque, unsigned vf,
                          struct vfw_aq_rdma_quota *q,
                          struct vfw_aq_rdma_quota *used)
{
    VfwarpPFState *s = opaque;

    if (!s->rnic || s->rnic->in_run) {
        return VFW_AQ_S_UNSUPPORTED;
    }
    return vfw_rnic_get_quota(s->rnic->r, vf, q, used);
}
