/*
 * vfwarp PF: QEMU glue for the emulated SR-IOV iWARP adapter.
 *
 * This file is only the QEMU side (PCI config, BARs, the uplink netdev);
 * device behaviour belongs in adapter/ and vswitch/, which know nothing of
 * QEMU (the igb.c vs igb_core.c split). At the lab-foundation stage the
 * device exposes the identification block of include/vfwarp/vfwarp_regs.h
 * and counts uplink frames; the adapter skeleton adds SR-IOV and queues.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/module.h"
#include "qemu/log.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "net/net.h"
#include "migration/vmstate.h"

#include "vfwarp/vfwarp_regs.h"

#define TYPE_VFWARP_PF "vfwarp"
OBJECT_DECLARE_SIMPLE_TYPE(VfwarpPFState, VFWARP_PF)

struct VfwarpPFState {
    PCIDevice parent_obj;
    MemoryRegion mmio;
    NICState *nic;
    NICConf conf;
    uint32_t scratch;
    uint32_t uplink_rx;
    uint32_t uplink_tx;
};

static uint64_t vfwarp_pf_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    VfwarpPFState *s = opaque;
    const uint8_t *mac = s->conf.macaddr.a;

    if (size != 4) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte read at 0x%" HWADDR_PRIx
                      " ignored\n", size, addr);
        return 0;
    }
    switch (addr) {
    case VFW_REG_MAGIC:
        return VFW_MAGIC;
    case VFW_REG_VERSION:
        return (VFW_HW_VERSION_MAJOR << 16) | VFW_HW_VERSION_MINOR;
    case VFW_REG_FEATURES_LO:
        return s->nic && qemu_get_queue(s->nic)->peer ? VFW_FEAT_UPLINK : 0;
    case VFW_REG_FEATURES_HI:
        return 0;
    case VFW_REG_SCRATCH:
        return s->scratch;
    case VFW_REG_FUNC_INFO:
        return 0; /* the PF: not a VF, index 0 */
    case VFW_REG_UPLINK_RX_PKTS:
        return s->uplink_rx;
    case VFW_REG_UPLINK_TX_PKTS:
        return s->uplink_tx;
    case VFW_REG_MAC_LO:
        return mac[0] | mac[1] << 8 | mac[2] << 16 | (uint32_t)mac[3] << 24;
    case VFW_REG_MAC_HI:
        return mac[4] | mac[5] << 8;
    default:
        return 0;
    }
}

static void vfwarp_pf_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    VfwarpPFState *s = opaque;

    if (size != 4) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte write at 0x%"
                      HWADDR_PRIx " ignored\n", size, addr);
        return;
    }
    if (addr == VFW_REG_SCRATCH) {
        s->scratch = val;
    }
    /* Every other register is read-only or reserved: writes are dropped. */
}

static const MemoryRegionOps vfwarp_pf_mmio_ops = {
    .read = vfwarp_pf_mmio_read,
    .write = vfwarp_pf_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = { .min_access_size = 1, .max_access_size = 4 },
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

/* Uplink receive: no data path yet, the frame is only counted. */
static ssize_t vfwarp_pf_receive(NetClientState *nc, const uint8_t *buf,
                                 size_t size)
{
    VfwarpPFState *s = qemu_get_nic_opaque(nc);

    s->uplink_rx++;
    return size;
}

static NetClientInfo vfwarp_pf_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .receive = vfwarp_pf_receive,
};

static void vfwarp_pf_realize(PCIDevice *pdev, Error **errp)
{
    VfwarpPFState *s = VFWARP_PF(pdev);
    DeviceState *dev = DEVICE(pdev);

    pdev->config[PCI_INTERRUPT_PIN] = 1;
    memory_region_init_io(&s->mmio, OBJECT(s), &vfwarp_pf_mmio_ops, s,
                          "vfwarp-bar0", VFW_BAR0_SIZE);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->mmio);

    if (pcie_endpoint_cap_init(pdev, 0xa0) < 0) {
        error_setg(errp, "vfwarp: cannot add the PCIe capability");
        return;
    }

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&vfwarp_pf_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);
}

static void vfwarp_pf_exit(PCIDevice *pdev)
{
    VfwarpPFState *s = VFWARP_PF(pdev);

    pcie_cap_exit(pdev);
    qemu_del_nic(s->nic);
}

static void vfwarp_pf_reset(DeviceState *dev)
{
    VfwarpPFState *s = VFWARP_PF(dev);

    s->scratch = 0;
}

static const VMStateDescription vfwarp_pf_vmstate = {
    .name = "vfwarp",
    .unmigratable = 1,
};

static const Property vfwarp_pf_properties[] = {
    DEFINE_NIC_PROPERTIES(VfwarpPFState, conf),
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
