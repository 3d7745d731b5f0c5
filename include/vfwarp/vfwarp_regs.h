/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vfwarp hardware interface: PCI identity and BAR0 register map.
 *
 * This header is the one contract between the emulated adapter (QEMU glue +
 * adapter/ + vswitch/), the PF and VF kernel drivers and the rdma-core
 * provider. It must compile in the kernel, in QEMU and in user space, so it
 * uses only fixed-width types and no libc. docs/hw-interface.md explains it.
 *
 * Status (v2.0): identification block, SR-IOV layout, admin queue
 * (vfwarp_admin.h), VF-to-PF mailbox (vfwarp_mbox.h), Ethernet rings
 * (vfwarp_ring.h), RDMA: verbs command queue, event queue, doorbell BAR,
 * WQE/CQE formats (vfwarp_rdma.h). 2.0 only adds to 1.1; the major number
 * moved because a 1.x driver cannot use the RDMA part.
 */
#ifndef VFWARP_REGS_H
#define VFWARP_REGS_H

/*
 * PCI identity. 0x1234 is the vendor ID QEMU's own emulated devices use
 * (std VGA, edu); the device IDs below are not taken by any QEMU device.
 * A product on silicon would carry its own vendor ID.
 */
#define VFW_PCI_VENDOR_ID     0x1234
#define VFW_PCI_DEVICE_ID_PF  0xf0a0
#define VFW_PCI_DEVICE_ID_VF  0xf0a1

/* Interface version: major changes break drivers, minor ones add. */
#define VFW_HW_VERSION_MAJOR  2
#define VFW_HW_VERSION_MINOR  5

/* BAR0: 64-bit memory BAR with the register file; all registers 32-bit,
 * little endian, naturally aligned. Accesses of other sizes read as 0 and
 * are ignored on write. */
#define VFW_BAR0_SIZE          0x10000

#define VFW_REG_MAGIC          0x0000  /* RO: VFW_MAGIC */
#define VFW_MAGIC              0x56465750u /* "VFWP" */
#define VFW_REG_VERSION        0x0004  /* RO: major << 16 | minor */
#define VFW_REG_FEATURES_LO    0x0008  /* RO: VFW_FEAT_* bits 0..31 */
#define VFW_REG_FEATURES_HI    0x000c  /* RO: bits 32..63 */
#define VFW_REG_SCRATCH        0x0010  /* RW: no effect; driver self-test */
#define VFW_REG_FUNC_INFO      0x0014  /* RO: VFW_FUNC_* */
#define VFW_REG_UPLINK_RX_PKTS 0x0020  /* RO: frames seen on the uplink */
#define VFW_REG_UPLINK_TX_PKTS 0x0024  /* RO: frames sent to the uplink */
#define VFW_REG_MAC_LO         0x0028  /* RO: permanent MAC bytes 0..3 */
#define VFW_REG_MAC_HI         0x002c  /* RO: permanent MAC bytes 4..5 */

#define VFW_FUNC_IS_VF         (1u << 31)
#define VFW_FUNC_INDEX_MASK    0xffu    /* VF index (0 for the PF) */

/* Reserved register windows (filled by later interface revisions). */
#define VFW_REGWIN_ADMINQ      0x0100  /* PF admin queue */
#define VFW_REGWIN_MBOX        0x0200  /* VF->PF mailbox (vfwarp_mbox.h) */
#define VFW_REGWIN_IRQ         0x0400  /* interrupt cause/mask */
#define VFW_REGWIN_RING        0x0800  /* Ethernet rings, link, counters
                                          (0x0800..0x08ff, vfwarp_ring.h;
                                          2.5: TX rings 1..7 at
                                          0x0900..0x09df) */
#define VFW_REGWIN_RDMA_REGS   0x0a00  /* RDMA limits, command/event queues
                                          (0x0a00..0x0aff, vfwarp_rdma.h) */
#define VFW_REGWIN_DOORBELLS   0x1000  /* reserved (doorbells live in BAR4,
                                          VFW_DB_BAR, vfwarp_rdma.h) */

/*
 * SR-IOV layout (PCI config space of the PF; docs/hw-interface.md).
 * The PF sits at function 0 of the bus behind its PCIe port and has the
 * ARI capability, so the VFs fit on that same bus: VF n (0-based) is
 * routing ID PF + VFW_SRIOV_VF_OFFSET + n * VFW_SRIOV_VF_STRIDE. PF and
 * VFs have FLR (Device Capabilities) and MSI-X.
 */
#define VFW_SRIOV_TOTAL_VFS    128     /* TotalVFs = InitialVFs */
#define VFW_SRIOV_VF_OFFSET    1       /* First VF Offset */
#define VFW_SRIOV_VF_STRIDE    1       /* VF Stride */

/* BARs of every function (PF and VF alike): BAR0 is the register file
 * (VFW_BAR0_SIZE), BAR2 holds the MSI-X table and PBA. PF BARs are 64-bit
 * non-prefetchable; VF BARs are 64-bit prefetchable. */
#define VFW_MSIX_BAR           2
#define VFW_MSIX_BAR_SIZE      0x4000
#define VFW_MSIX_TABLE_OFFSET  0x0000
#define VFW_MSIX_PBA_OFFSET    0x2000
#define VFW_PF_MSIX_VECTORS    8
#define VFW_VF_MSIX_VECTORS    8   /* 2.0: 0-3 as 1.1, 4 the RDMA event queue */
#define VFW_MSIX_VEC_RDMA_EQ   4   /* vector a driver should give the EQ */

/* Feature bits. */
#define VFW_FEAT_UPLINK        (1ull << 0)  /* an uplink netdev is attached */

#endif /* VFWARP_REGS_H */
