/*
 * vfwarp PF: QEMU glue for the emulated SR-IOV iWARP adapter.
 *
 * This file is only the QEMU side (PCI config, BARs, MSI-X, SR-IOV, the
 * uplink netdev); device behaviour belongs in adapter/ and vswitch/, which
 * know nothing of QEMU (the igb.c vs igb_core.c split): the register files
 * of the PF and its VFs live in adapter/src/func.c. The PF has BAR0 (the
 * identification block of include/vfwarp/vfwarp_regs.h), BAR2 (MSI-X),
 * BAR4 (RDMA doorbells, include/vfwarp/vfwarp_rdma.h; every VF has one too),
 * FLR, ARI and the SR-IOV capability for up to VFW_SRIOV_TOTAL_VFS VFs
 * (vfwarp_vf.c) on its own bus; the uplink only counts frames so far.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/module.h"
#include "qemu/log.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/pci/pcie_sriov.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "system/dma.h"
#include "net/net.h"
#include "migration/vmstate.h"

#include "vfwarp/vfwarp_regs.h"
#include "vfwarp/vfwarp_rdma.h"
#include "vfwarp.h"
#include "vfw_rnic.h"

/* Extended capabilities: ARI first (0x100), then SR-IOV. */
#define VFWARP_ARI_OFFSET    0x100
#define VFWARP_SRIOV_OFFSET  0x160

uint64_t vfwarp_func_mmio_read(VfwarpPFState *s, struct vfw_func *f,
                               hwaddr addr, unsigned size)
{
    uint32_t val;

    if (vfwarp_dp_owns(addr)) {
        return vfwarp_dp_mmio_read(s, f, addr, size);
    }
    if (vfw_rnic_owns(addr)) {
        return vfwarp_rnic_mmio_read(s, f, addr, size);
    }
    if (vfw_mbox_owns(addr)) {
        if (!vfw_mbox_read(&s->mbox, vfwarp_fn_number(f), addr, size, &val)) {
            qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte mailbox read at "
                          "0x%" HWADDR_PRIx " ignored\n", size, addr);
        }
        return val;
    }
    if (!vfw_func_read(&s->fn, f, addr, size, &val)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte read at 0x%"
                      HWADDR_PRIx " ignored\n", size, addr);
    }
    return val;
}

void vfwarp_func_mmio_write(VfwarpPFState *s, struct vfw_func *f,
                            hwaddr addr, uint64_t val, unsigned size)
{
    if (vfwarp_dp_owns(addr)) {
        vfwarp_dp_mmio_write(s, f, addr, val, size);
        return;
    }
    if (vfw_rnic_owns(addr)) {
        vfwarp_rnic_mmio_write(s, f, addr, val, size);
        return;
    }
    if (vfw_mbox_owns(addr)) {
        if (!vfw_mbox_write(&s->mbox, vfwarp_fn_number(f), addr, val, size)) {
            qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte mailbox write at "
                          "0x%" HWADDR_PRIx " ignored\n", size, addr);
        }
        return;
    }
    if (!vfw_func_write(&s->fn, f, addr, val, size)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte write at 0x%"
                      HWADDR_PRIx " ignored\n", size, addr);
    }
}

static uint64_t vfwarp_pf_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    VfwarpPFState *s = opaque;
    uint32_t val;

    if (vfw_admin_owns(addr)) {
        if (!vfw_admin_read(&s->admin, addr, size, &val)) {
            qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte admin read at 0x%"
                          HWADDR_PRIx " ignored\n", size, addr);
        }
        return val;
    }
    return vfwarp_func_mmio_read(s, vfw_func_pf(&s->fn), addr, size);
}

static void vfwarp_pf_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    VfwarpPFState *s = opaque;

    if (vfw_admin_owns(addr)) {
        /* The device checks VF indices against NumVFs as it is now. */
        vfw_admin_set_num_vfs(&s->admin, pcie_sriov_num_vfs(PCI_DEVICE(s)));
        if (!vfw_admin_write(&s->admin, addr, val, size)) {
            qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte admin write at 0x%"
                          HWADDR_PRIx " ignored\n", size, addr);
        }
        return;
    }
    vfwarp_func_mmio_write(s, vfw_func_pf(&s->fn), addr, val, size);
}

/* BAR4 of the PF: doorbell pages (write-only; reads return 0). */
static uint64_t vfwarp_pf_db_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void vfwarp_pf_db_write(void *opaque, hwaddr addr, uint64_t val,
                               unsigned size)
{
    vfwarp_rnic_doorbell(opaque, 0, addr, val, size);
}

static const MemoryRegionOps vfwarp_pf_db_ops = {
    .read = vfwarp_pf_db_read,
    .write = vfwarp_pf_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = { .min_access_size = 1, .max_access_size = 8 },
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

/* Mailbox interrupts: the PF's request vector or a VF's reply vector. */
static void vfwarp_mbox_irq(void *opaque, unsigned fn, unsigned vector)
{
    VfwarpPFState *s = opaque;
    PCIDevice *pf = PCI_DEVICE(s);
    PCIDevice *d = fn == 0 ? pf : fn - 1 < pcie_sriov_num_vfs(pf) ?
                   pcie_sriov_get_vf_at_index(pf, fn - 1) : NULL;

    if (d && msix_enabled(d) && vector < d->msix_entries_nr) {
        msix_notify(d, vector);
    }
}

static const MemoryRegionOps vfwarp_pf_mmio_ops = {
    .read = vfwarp_pf_mmio_read,
    .write = vfwarp_pf_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = { .min_access_size = 1, .max_access_size = 4 },
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

/* Admin queue DMA: the PF's bus master address space only. */
static int vfwarp_pf_admin_dma_read(void *opaque, uint64_t addr, void *buf,
                                    size_t len)
{
    return pci_dma_read(PCI_DEVICE(opaque), addr, buf, len) != MEMTX_OK;
}

static int vfwarp_pf_admin_dma_write(void *opaque, uint64_t addr,
                                     const void *buf, size_t len)
{
    return pci_dma_write(PCI_DEVICE(opaque), addr, buf, len) != MEMTX_OK;
}

/* Uplink receive: no data path yet, the frame is only counted. */
static ssize_t vfwarp_pf_receive(NetClientState *nc, const uint8_t *buf,
                                 size_t size)
{
    VfwarpPFState *s = qemu_get_nic_opaque(nc);

    vfw_func_uplink_rx(&s->fn);
    vfwarp_dp_uplink_rx(s, buf, size);
    return size;
}

static NetClientInfo vfwarp_pf_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .receive = vfwarp_pf_receive,
};

static void vfwarp_pf_write_config(PCIDevice *dev, uint32_t addr,
                                   uint32_t val, int len)
{
    pci_default_write_config(dev, addr, val, len);
    pcie_cap_flr_write_config(dev, addr, val, len);
    /* VF Enable / NumVFs: removed VFs lose their admin config. */
    vfw_admin_set_num_vfs(&VFWARP_PF(dev)->admin, pcie_sriov_num_vfs(dev));
}

static void vfwarp_pf_cleanup_msix(PCIDevice *pdev)
{
    VfwarpPFState *s = VFWARP_PF(pdev);

    if (msix_present(pdev)) {
        msix_unuse_all_vectors(pdev);
        msix_uninit(pdev, &s->msix, &s->msix);
    }
}

static void vfwarp_pf_realize(PCIDevice *pdev, Error **errp)
{
    VfwarpPFState *s = VFWARP_PF(pdev);
    DeviceState *dev = DEVICE(pdev);

    if (s->total_vfs > VFW_SRIOV_TOTAL_VFS) {
        error_setg(errp, "vfwarp: total-vfs must be at most %d",
                   VFW_SRIOV_TOTAL_VFS);
        return;
    }
    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    if (vfw_func_dev_init(&s->fn, s->conf.macaddr.a, s->total_vfs)) {
        error_setg(errp, "vfwarp: cannot set up the function table");
        return;
    }
    if (!vfwarp_dp_init(s, errp)) {
        return;
    }
    if (!vfwarp_rnic_init(s, errp)) {
        vfwarp_dp_exit(s);
        return;
    }
    if (vfw_admin_init(&s->admin, &(struct vfw_admin_ops) {
                           .dma_read = vfwarp_pf_admin_dma_read,
                           .dma_write = vfwarp_pf_admin_dma_write,
                           .rdma_quota_set = vfwarp_rnic_quota_set,
                           .rdma_quota_get = vfwarp_rnic_quota_get,
                           .qos_dp = vfwarp_dp_core(s),
                           .opaque = s }, s->total_vfs)) {
        error_setg(errp, "vfwarp: cannot set up the admin queue");
        return;
    }
    if (vfw_mbox_init(&s->mbox, &(struct vfw_mbox_ops) {
                          .irq = vfwarp_mbox_irq, .opaque = s },
                      s->total_vfs)) {
        error_setg(errp, "vfwarp: cannot set up the mailbox");
        return;
    }

    pdev->config_write = vfwarp_pf_write_config;
    pdev->config[PCI_INTERRUPT_PIN] = 1;
    memory_region_init_io(&s->mmio, OBJECT(s), &vfwarp_pf_mmio_ops, s,
                          "vfwarp-bar0", VFW_BAR0_SIZE);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->mmio);
    memory_region_init(&s->msix, OBJECT(s), "vfwarp-msix", VFW_MSIX_BAR_SIZE);
    pci_register_bar(pdev, VFW_MSIX_BAR, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->msix);
    memory_region_init_io(&s->db, OBJECT(s), &vfwarp_pf_db_ops, s,
                          "vfwarp-bar4-doorbells", VFW_DB_BAR_SIZE);
    pci_register_bar(pdev, VFW_DB_BAR, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->db);

    if (pcie_endpoint_cap_init(pdev, 0xa0) < 0) {
        error_setg(errp, "vfwarp: cannot add the PCIe capability");
        return;
    }
    if (msix_init(pdev, VFW_PF_MSIX_VECTORS, &s->msix, VFW_MSIX_BAR,
                  VFW_MSIX_TABLE_OFFSET, &s->msix, VFW_MSIX_BAR,
                  VFW_MSIX_PBA_OFFSET, 0x70, errp)) {
        pcie_cap_exit(pdev);
        return;
    }
    for (int i = 0; i < VFW_PF_MSIX_VECTORS; i++) {
        msix_vector_use(pdev, i);
    }
    pcie_cap_flr_init(pdev);
    pcie_ari_init(pdev, VFWARP_ARI_OFFSET);

    if (s->total_vfs) {
        if (!pcie_sriov_pf_init(pdev, VFWARP_SRIOV_OFFSET, TYPE_VFWARP_VF,
                                VFW_PCI_DEVICE_ID_VF, s->total_vfs,
                                s->total_vfs, VFW_SRIOV_VF_OFFSET,
                                VFW_SRIOV_VF_STRIDE, errp)) {
            vfwarp_pf_cleanup_msix(pdev);
            pcie_cap_exit(pdev);
            return;
        }
        pcie_sriov_pf_init_vf_bar(pdev, 0, PCI_BASE_ADDRESS_MEM_TYPE_64 |
                                  PCI_BASE_ADDRESS_MEM_PREFETCH,
                                  VFW_BAR0_SIZE);
        pcie_sriov_pf_init_vf_bar(pdev, VFW_MSIX_BAR,
                                  PCI_BASE_ADDRESS_MEM_TYPE_64 |
                                  PCI_BASE_ADDRESS_MEM_PREFETCH,
                                  VFW_MSIX_BAR_SIZE);
        pcie_sriov_pf_init_vf_bar(pdev, VFW_DB_BAR,
                                  PCI_BASE_ADDRESS_MEM_TYPE_64 |
                                  PCI_BASE_ADDRESS_MEM_PREFETCH,
                                  VFW_DB_BAR_SIZE);
    }

    s->nic = qemu_new_nic(&vfwarp_pf_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);
    vfw_func_set_uplink(&s->fn, qemu_get_queue(s->nic)->peer != NULL);
    vfwarp_dp_set_uplink(s, qemu_get_queue(s->nic)->peer != NULL);
}

static void vfwarp_pf_exit(PCIDevice *pdev)
{
    VfwarpPFState *s = VFWARP_PF(pdev);

    pcie_sriov_pf_exit(pdev);
    vfwarp_pf_cleanup_msix(pdev);
    pcie_cap_exit(pdev);
    qemu_del_nic(s->nic);
    vfwarp_rnic_exit(s);    /* before the data path its frames go to */
    vfwarp_dp_exit(s);
}

/* Power-on, PCI reset or FLR of the PF: every function's registers. (The
 * PCI core clears VF Enable on the same reset, which resets the VFs too.) */
static void vfwarp_pf_reset(DeviceState *dev)
{
    VfwarpPFState *s = VFWARP_PF(dev);

    vfw_func_dev_reset(&s->fn);
    vfwarp_dp_reset(s);
    vfwarp_rnic_reset(s);
    vfw_admin_reset(&s->admin);
    vfw_mbox_reset(&s->mbox);
    if (s->nic) {
        vfw_func_set_uplink(&s->fn, qemu_get_queue(s->nic)->peer != NULL);
        vfwarp_dp_set_uplink(s, qemu_get_queue(s->nic)->peer != NULL);
    }
}

static const VMStateDescription vfwarp_pf_vmstate = {
    .name = "vfwarp",
    .unmigratable = 1,
};

static const Property vfwarp_pf_properties[] = {
    DEFINE_NIC_PROPERTIES(VfwarpPFState, conf),
    DEFINE_PROP_UINT16("total-vfs", VfwarpPFState, total_vfs,
                       VFW_SRIOV_TOTAL_VFS),
    /* Uplink line rate in bits/s for the QoS scheduler (docs/qos.md);
     * 0 = none until the PF driver sets one (QOS_SET_LINE), so labs that
     * never configure QoS see no queueing. */
    DEFINE_PROP_UINT64("line-rate", VfwarpPFState, line_rate, 0),
};

static void vfwarp_pf_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = vfwarp_pf_realize;
    pc->exit = vfwarp_pf_exit;
    pc->vendor_id = VFW_PCI_VENDOR_ID;
    pc->device_id = VFW_PCI_DEVICE_ID_PF;
    pc->revision = VFW_HW_VERSION_MAJOR;
    pc->class_id = PCI_CLASS_NETWORK_ETHERNET;
    dc->desc = "vfwarp SR-IOV iWARP adapter (emulated)";
    dc->vmsd = &vfwarp_pf_vmstate;
    device_class_set_legacy_reset(dc, vfwarp_pf_reset);
    device_class_set_props(dc, vfwarp_pf_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo vfwarp_pf_info = {
    .name = TYPE_VFWARP_PF,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(VfwarpPFState),
    .class_init = vfwarp_pf_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void vfwarp_pf_register_types(void)
{
    type_register_static(&vfwarp_pf_info);
}

type_init(vfwarp_pf_register_types)
