/*
 * vfwarp: state shared by the PF and VF glue (QEMU side only).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_VFWARP_H
#define HW_NET_VFWARP_H

#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "vfw_func.h"
#include "vfw_admin.h"
#include "vfw_mbox.h"

#define TYPE_VFWARP_PF "vfwarp"
#define TYPE_VFWARP_VF "vfwarp-vf"
OBJECT_DECLARE_SIMPLE_TYPE(VfwarpPFState, VFWARP_PF)

struct VfwarpPFState {
    PCIDevice parent_obj;
    MemoryRegion mmio;
    MemoryRegion msix;
    MemoryRegion db;             /* BAR4: RDMA doorbell pages */
    NICState *nic;
    NICConf conf;
    uint16_t total_vfs;          /* property; 0 = no SR-IOV capability */
    uint64_t line_rate;          /* property, bits/s; 0 = no line rate */
    struct vfw_func_dev fn;      /* register files of PF and VFs (adapter/) */
    struct vfwarp_dp_glue *dp;   /* rings + embedded switch (vfwarp_dp.c) */
    struct vfw_admin admin;      /* PF admin queue + VF config (adapter/) */
    struct vfw_mbox mbox;        /* VF-to-PF mailbox (adapter/) */
    struct vfwarp_rnic_glue *rnic; /* RDMA NIC of every function
                                    * (vfwarp_rnic.c over adapter/src/rnic*.c) */
};

/* Function number used by the data path and the mailbox: 0 = PF, 1 + n =
 * VF n. */
static inline unsigned vfwarp_fn_number(const struct vfw_func *f)
{
    return f->is_vf ? 1u + f->index : 0u;
}

/* The PCI function behind function number fn; NULL for a VF that is not
 * enabled (NumVFs with VF Enable) or does not exist. */
PCIDevice *vfwarp_fn_dev(VfwarpPFState *s, unsigned fn);

/* BAR0 access of one function, forwarded to adapter/src/func.c. */
uint64_t vfwarp_func_mmio_read(VfwarpPFState *s, struct vfw_func *f,
                               hwaddr addr, unsigned size);
void vfwarp_func_mmio_write(VfwarpPFState *s, struct vfw_func *f,
                            hwaddr addr, uint64_t val, unsigned size);

/* The data path (vfwarp_dp.c over adapter/src/dataplane.c). */
struct vfw_dp_vf_cfg;
bool vfwarp_dp_init(VfwarpPFState *s, Error **errp);
void vfwarp_dp_exit(VfwarpPFState *s);
void vfwarp_dp_reset(VfwarpPFState *s);
void vfwarp_dp_reset_fn(VfwarpPFState *s, struct vfw_func *f);
void vfwarp_dp_set_uplink(VfwarpPFState *s, bool up);
void vfwarp_dp_uplink_rx(VfwarpPFState *s, const uint8_t *buf, size_t size);
bool vfwarp_dp_owns(hwaddr addr);
/* The device-logic data path (the admin queue's QoS commands use it). */
struct vfw_dp *vfwarp_dp_core(VfwarpPFState *s);
uint64_t vfwarp_dp_mmio_read(VfwarpPFState *s, struct vfw_func *f,
                             hwaddr addr, unsigned size);
void vfwarp_dp_mmio_write(VfwarpPFState *s, struct vfw_func *f, hwaddr addr,
                          uint64_t val, unsigned size);
int vfwarp_dp_set_vf(VfwarpPFState *s, unsigned vf,
                     const struct vfw_dp_vf_cfg *cfg);
/* A frame of function fn's RDMA engine enters the switch as fn's traffic. */
void vfwarp_dp_fn_inject(VfwarpPFState *s, unsigned fn, const uint8_t *frame,
                         size_t len);
/* The MAC the switch uses for function fn; false if there is no such fn. */
bool vfwarp_dp_fn_mac(VfwarpPFState *s, unsigned fn, uint8_t mac[6]);

/* The RDMA NIC (vfwarp_rnic.c over adapter/src/rnic*.c). fn numbers as
 * vfwarp_fn_number. */
bool vfwarp_rnic_init(VfwarpPFState *s, Error **errp);
void vfwarp_rnic_exit(VfwarpPFState *s);
void vfwarp_rnic_reset(VfwarpPFState *s);
void vfwarp_rnic_reset_fn(VfwarpPFState *s, unsigned fn);
uint64_t vfwarp_rnic_mmio_read(VfwarpPFState *s, struct vfw_func *f,
                               hwaddr addr, unsigned size);
void vfwarp_rnic_mmio_write(VfwarpPFState *s, struct vfw_func *f,
                            hwaddr addr, uint64_t val, unsigned size);
/* A write to BAR4 (doorbells) of function fn; reads of BAR4 return 0. */
void vfwarp_rnic_doorbell(VfwarpPFState *s, unsigned fn, hwaddr offset,
                          uint64_t val, unsigned size);
/* The switch delivers a frame to fn: true if fn's engine took it. */
bool vfwarp_rnic_rx_steer(VfwarpPFState *s, unsigned fn, const uint8_t *frame,
                          size_t len);
/* The switch's MAC for fn may have changed (VF config, adapter reset). */
void vfwarp_rnic_mac_changed(VfwarpPFState *s, unsigned fn);
int vfwarp_rnic_quota_set(void *opaque, unsigned vf,
                          const struct vfw_aq_rdma_quota *q);
int vfwarp_rnic_quota_get(void *opaque, unsigned vf,
                          struct vfw_aq_rdma_quota *q,
                          struct vfw_aq_rdma_quota *used);

#endif
