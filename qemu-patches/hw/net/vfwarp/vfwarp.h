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
    NICState *nic;
    NICConf conf;
    uint16_t total_vfs;          /* property; 0 = no SR-IOV capability */
    struct vfw_func_dev fn;      /* register files of PF and VFs (adapter/) */
    struct vfwarp_dp_glue *dp;   /* rings + embedded switch (vfwarp_dp.c) */
    struct vfw_admin admin;      /* PF admin queue + VF config (adapter/) */
    struct vfw_mbox mbox;        /* VF-to-PF mailbox (adapter/) */
};

/* Function number used by the data path and the mailbox: 0 = PF, 1 + n =
 * VF n. */
static inline unsigned vfwarp_fn_number(const struct vfw_func *f)
{
    return f->is_vf ? 1u + f->index : 0u;
}

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
uint64_t vfwarp_dp_mmio_read(VfwarpPFState *s, struct vfw_func *f,
                             hwaddr addr, unsigned size);
void vfwarp_dp_mmio_write(VfwarpPFState *s, struct vfw_func *f, hwaddr addr,
                          uint64_t val, unsigned size);
int vfwarp_dp_set_vf(VfwarpPFState *s, unsigned vf,
                     const struct vfw_dp_vf_cfg *cfg);

#endif
