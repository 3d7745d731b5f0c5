/*
 * vfwarp VF: QEMU glue of one SR-IOV virtual function of the vfwarp adapter.
 *
 * The PF creates its VFs (pcie_sriov_pf_init); each VF has BAR0 (its
 * register windows), BAR2 (MSI-X, VFW_VF_MSIX_VECTORS), BAR4 (its RDMA
 * doorbells), ARI and FLR. BAR0, BAR4 and resets go to the PF's adapter
 * object as function 1 + the VF's number; PCI is all this file does.
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
#include "migration/vmstate.h"

#include "vfwarp/vfwarp_regs.h"
#include "vfwarp/vfwarp_rdma.h"
#include "vfwarp.h"

OBJECT_DECLARE_SIMPLE_TYPE(VfwarpVFState, VFWARP_VF)

struct VfwarpVFState {
    PCIDevice parent_obj;
    MemoryRegion mmio;
    MemoryRegion msix;
    MemoryRegion db;
};

/* The table and PBA of VFW_VF_MSIX_VECTORS entries must fit in BAR2. */
QEMU_BUILD_BUG_ON(VFW_MSIX_TABLE_OFFSET + VFW_VF_MSIX_VECTORS * PCI_MSIX_ENTRY_SIZE
                  > VFW_MSIX_PBA_OFFSET);
QEMU_BUILD_BUG_ON(VFW_MSIX_PBA_OFFSET + DIV_ROUND_UP(VFW_VF_MSIX_VECTORS, 64) * 8
                  > VFW_MSIX_BAR_SIZE);
QEMU_BUILD_BUG_ON(VFW_MSIX_VEC_RDMA_EQ >= VFW_VF_MSIX_VECTORS);

/* The owning PF's state (NULL if inconsistent) and this VF's function
 * number in its adapter. */
static VfwarpPFState *vfwarp_vf_pf(PCIDevice *vf, unsigned *fn)
{
    PCIDevice *pf = pcie_sriov_get_pf(vf);
    Object *o = pf ? object_dynamic_cast(OBJECT(pf), TYPE_VFWARP_PF) : NULL;
    VfwarpPFState *s = o ? VFWARP_PF(o) : NULL;

    *fn = 1u + pcie_sriov_vf_number(vf);
    return s && s->adapter && *fn <= s->total_vfs ? s : NULL;
}

static uint64_t vfwarp_vf_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    unsigned fn;
    VfwarpPFState *s = vfwarp_vf_pf(PCI_DEVICE(opaque), &fn);

    return s ? vfwarp_bar0_read(s, fn, addr, size) : 0;
}

static void vfwarp_vf_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    unsigned fn;
    VfwarpPFState *s = vfwarp_vf_pf(PCI_DEVICE(opaque), &fn);

    if (s) {
        vfwarp_bar0_write(s, fn, addr, val, size);
    }
}

/* BAR4: this VF's doorbell pages (write-only; reads return 0). */
static uint64_t vfwarp_vf_db_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void vfwarp_vf_db_write(void *opaque, hwaddr addr, uint64_t val,
                               unsigned size)
{
    unsigned fn;
    VfwarpPFState *s = vfwarp_vf_pf(PCI_DEVICE(opaque), &fn);

    if (s) {
        vfwarp_doorbell(s, fn, addr, val, size);
    }
}

static const MemoryRegionOps vfwarp_vf_db_ops = {
    .read = vfwarp_vf_db_read,
    .write = vfwarp_vf_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = { .min_access_size = 1, .max_access_size = 8 },
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

static const MemoryRegionOps vfwarp_vf_mmio_ops = {
    .read = vfwarp_vf_mmio_read,
    .write = vfwarp_vf_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = { .min_access_size = 1, .max_access_size = 4 },
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

static void vfwarp_vf_write_config(PCIDevice *dev, uint32_t addr,
                                   uint32_t val, int len)
{
    pci_default_write_config(dev, addr, val, len);
    pcie_cap_flr_write_config(dev, addr, val, len);
}

static void vfwarp_vf_realize(PCIDevice *dev, Error **errp)
{
    VfwarpVFState *v = VFWARP_VF(dev);
    int ret;

    if (!pcie_sriov_get_pf(dev)) {
        error_setg(errp, "vfwarp-vf is created by its PF only");
        return;
    }
    dev->config_write = vfwarp_vf_write_config;

    memory_region_init_io(&v->mmio, OBJECT(dev), &vfwarp_vf_mmio_ops, dev,
                          "vfwarp-vf-bar0", VFW_BAR0_SIZE);
    pci_register_bar(dev, 0, PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &v->mmio);
    memory_region_init(&v->msix, OBJECT(dev), "vfwarp-vf-msix",
                       VFW_MSIX_BAR_SIZE);
    pci_register_bar(dev, VFW_MSIX_BAR, PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &v->msix);
    memory_region_init_io(&v->db, OBJECT(dev), &vfwarp_vf_db_ops, dev,
                          "vfwarp-vf-bar4-doorbells", VFW_DB_BAR_SIZE);
    pci_register_bar(dev, VFW_DB_BAR, PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &v->db);

    ret = msix_init(dev, VFW_VF_MSIX_VECTORS, &v->msix, VFW_MSIX_BAR,
                    VFW_MSIX_TABLE_OFFSET, &v->msix, VFW_MSIX_BAR,
                    VFW_MSIX_PBA_OFFSET, 0x70, errp);
    if (ret) {
        return;
    }
    for (int i = 0; i < VFW_VF_MSIX_VECTORS; i++) {
        msix_vector_use(dev, i);
    }
    if (pcie_endpoint_cap_init(dev, 0xa0) < 0) {
        msix_unuse_all_vectors(dev);
        msix_uninit(dev, &v->msix, &v->msix);
        error_setg(errp, "vfwarp-vf: cannot add the PCIe capability");
        return;
    }
    pcie_cap_flr_init(dev);
    pcie_ari_init(dev, 0x100);
}

static void vfwarp_vf_exit(PCIDevice *dev)
{
    VfwarpVFState *v = VFWARP_VF(dev);

    pcie_cap_exit(dev);
    msix_unuse_all_vectors(dev);
    msix_uninit(dev, &v->msix, &v->msix);
}

/* FLR of this VF, the VF being enabled or disabled, or a system reset. */
static void vfwarp_vf_reset(DeviceState *dev)
{
    unsigned fn;
    VfwarpPFState *s = vfwarp_vf_pf(PCI_DEVICE(dev), &fn);

    if (s) {
        vfw_adapter_reset_fn(s->adapter, fn);
    }
}

static const VMStateDescription vfwarp_vf_vmstate = {
    .name = "vfwarp-vf",
    .unmigratable = 1,
};

static void vfwarp_vf_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = vfwarp_vf_realize;
    pc->exit = vfwarp_vf_exit;
    pc->vendor_id = VFW_PCI_VENDOR_ID;
    pc->device_id = VFW_PCI_DEVICE_ID_VF;
    pc->revision = VFW_HW_VERSION_MAJOR;
    pc->class_id = PCI_CLASS_NETWORK_ETHERNET;
    dc->desc = "vfwarp SR-IOV iWARP adapter, virtual function (emulated)";
    dc->vmsd = &vfwarp_vf_vmstate;
    dc->user_creatable = false;
    device_class_set_legacy_reset(dc, vfwarp_vf_reset);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo vfwarp_vf_info = {
    .name = TYPE_VFWARP_VF,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(VfwarpVFState),
    .class_init = vfwarp_vf_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void vfwarp_vf_register_types(void)
{
    type_register_static(&vfwarp_vf_info);
}

type_init(vfwarp_vf_register_types)
