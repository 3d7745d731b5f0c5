/*
 * vfwarp: state shared by the PF and VF glue (QEMU side only).
 *
 * The adapter itself (every function's registers, the admin queue, the
 * mailbox, the data path with its switch, the RDMA NIC) is one object of
 * adapter/ (vfw_adapter.h) that knows nothing of QEMU; this glue gives it
 * PCI, BARs, MSI-X, DMA, the uplink netdev, a clock, one timer and a
 * bottom half, as igb.c/igbvf.c do for igb_core.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_VFWARP_H
#define HW_NET_VFWARP_H

#include "hw/pci/pci_device.h"
#include "net/net.h"
#include "qemu/timer.h"
#include "vfw_adapter.h"

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
    struct vfw_adapter *adapter; /* the device (adapter/) */
    QEMUBH *bh;                  /* vfw_adapter_run, guarded by the PF */
    QEMUTimer *timer;            /* vfw_adapter_timer */
};

/* BAR0 and BAR4 of function fn (0 = PF, 1 + n = VF n), with a guest error
 * logged for an access the adapter ignores. */
uint64_t vfwarp_bar0_read(VfwarpPFState *s, unsigned fn, hwaddr addr,
                          unsigned size);
void vfwarp_bar0_write(VfwarpPFState *s, unsigned fn, hwaddr addr,
                       uint64_t val, unsigned size);
void vfwarp_doorbell(VfwarpPFState *s, unsigned fn, hwaddr addr,
                     uint64_t val, unsigned size);

#endif
