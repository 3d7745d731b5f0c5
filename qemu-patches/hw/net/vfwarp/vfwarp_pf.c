/*
 * vfwarp PF: QEMU glue for the emulated SR-IOV iWARP adapter.
 *
 * This file is only the QEMU side: PCI config, BARs, MSI-X, SR-IOV, the
 * uplink netdev, and the host ops of the adapter object (DMA as the
 * requesting function, MSI-X, the wire, the virtual clock, one timer, a
 * bottom half). Device behaviour lives in adapter/ (vfw_adapter.h) and
 * vswitch/, which know nothing of QEMU (the igb.c vs igb_core.c split).
 * The PF has BAR0 (include/vfwarp/vfwarp_regs.h), BAR2 (MSI-X), BAR4 (RDMA
 * doorbells, include/vfwarp/vfwarp_rdma.h; every VF has one too), FLR, ARI
 * and the SR-IOV capability for up to VFW_SRIOV_TOTAL_VFS VFs
 * (vfwarp_vf.c) on its own bus.
 *
 * Re-entrancy: the adapter's runs (vfw_adapter_run) come only from a bottom
 * half guarded by the PF's mem_reentrancy_guard, so a DMA aimed at the
 * PF's own BARs is refused by the memory core. The adapter guards itself
 * against the rest (a VF's BAR, config space, the timer): a BAR write or
 * doorbell reaching it from inside its work is refused, and a reset or
 * NumVFs is applied when that work ends (adapter.c), so the calls below
 * need no care here.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/module.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/pci/pcie_sriov.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "system/dma.h"
#include "net/net.h"
#include "migration/vmstate.h"

#include "vfwarp/vfwarp_admin.h"
#include "vfwarp/vfwarp_regs.h"
#include "vfwarp/vfwarp_rdma.h"
#include "vfwarp.h"

/* Extended capabilities: ARI first (0x100), then SR-IOV. */
#define VFWARP_ARI_OFFSET    0x100
#define VFWARP_SRIOV_OFFSET  0x160

/* ---- the adapter's host ops ---------------------------------------------- */

/* The PCI function behind function number fn; NULL for a VF that is not
 * enabled (NumVFs with VF Enable) or does not exist. */
static PCIDevice *vfwarp_fn_dev(VfwarpPFState *s, unsigned fn)
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

static int vfwarp_dma_read(void *ctx, unsigned fn, uint64_t addr, void *buf,
                           size_t len)
{
    PCIDevice *d = vfwarp_fn_dev(ctx, fn);

    return !d || pci_dma_read(d, addr, buf, len) != MEMTX_OK;
}

static int vfwarp_dma_write(void *ctx, unsigned fn, uint64_t addr,
                            const void *buf, size_t len)
{
    PCIDevice *d = vfwarp_fn_dev(ctx, fn);

    return !d || pci_dma_write(d, addr, buf, len) != MEMTX_OK;
}

static void vfwarp_irq(void *ctx, unsigned fn, unsigned vector)
{
    PCIDevice *d = vfwarp_fn_dev(ctx, fn);

    /* The vector may come from a guest-written register: check it against
     * this function's table. */
    if (d && msix_enabled(d) && vector < d->msix_entries_nr) {
        msix_notify(d, vector);
    }
}

static void vfwarp_uplink_tx(void *ctx, const uint8_t *frame, size_t len)
{
    VfwarpPFState *s = ctx;

    if (s->nic) {
        qemu_send_packet(qemu_get_queue(s->nic), frame, len);
    }
}

static uint64_t vfwarp_now(void *ctx)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void vfwarp_timer_req(void *ctx, uint64_t when)
{
    VfwarpPFState *s = ctx;

    timer_mod(s->timer, (int64_t)MIN(when, (uint64_t)INT64_MAX));
}

static void vfwarp_kick(void *ctx)
{
    VfwarpPFState *s = ctx;

    qemu_bh_schedule(s->bh);
}

static const struct vfw_adapter_ops vfwarp_adapter_ops = {
    .dma_read = vfwarp_dma_read,
    .dma_write = vfwarp_dma_write,
    .irq = vfwarp_irq,
    .uplink_tx = vfwarp_uplink_tx,
    .now_ns = vfwarp_now,
    .timer = vfwarp_timer_req,
    .kick = vfwarp_kick,
};

static void vfwarp_bh(void *opaque)
{
    VfwarpPFState *s = opaque;

    vfw_adapter_run(s->adapter);
}

static void vfwarp_timer_cb(void *opaque)
{
    VfwarpPFState *s = opaque;

    vfw_adapter_timer(s->adapter);
}

/* ---- BARs ------------------------------------------------------------------ */

uint64_t vfwarp_bar0_read(VfwarpPFState *s, unsigned fn, hwaddr addr,
                          unsigned size)
{
    uint32_t val = 0;

    if (!vfw_adapter_bar0_read(s->adapter, fn, addr, size, &val)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte read at 0x%"
                      HWADDR_PRIx " of function %u ignored\n", size, addr, fn);
    }
    return val;
}

void vfwarp_bar0_write(VfwarpPFState *s, unsigned fn, hwaddr addr,
                       uint64_t val, unsigned size)
{
    if (!vfw_adapter_bar0_write(s->adapter, fn, addr, val, size)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: %u-byte write at 0x%"
                      HWADDR_PRIx " of function %u ignored\n", size, addr,
                      fn);
    }
}

void vfwarp_doorbell(VfwarpPFState *s, unsigned fn, hwaddr addr,
                     uint64_t val, unsigned size)
{
    if (!vfw_adapter_doorbell(s->adapter, fn, addr, val, size)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vfwarp: doorbell write at 0x%"
                      HWADDR_PRIx " of function %u ignored\n", addr, fn);
    }
}

static uint64_t vfwarp_pf_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    return vfwarp_bar0_read(opaque, 0, addr, size);
}

static void vfwarp_pf_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
    VfwarpPFState *s = opaque;

    /* The device checks VF indices against NumVFs as it is now. */
    vfw_adapter_set_num_vfs(s->adapter, pcie_sriov_num_vfs(PCI_DEVICE(s)));
    vfwarp_bar0_write(s, 0, addr, val, size);
}

static const MemoryRegionOps vfwarp_pf_mmio_ops = {
    .read = vfwarp_pf_mmio_read,
    .write = vfwarp_pf_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = { .min_access_size = 1, .max_access_size = 4 },
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

/* BAR4 of the PF: doorbell pages (write-only; reads return 0). */
static uint64_t vfwarp_pf_db_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void vfwarp_pf_db_write(void *opaque, hwaddr addr, uint64_t val,
                               unsigned size)
{
    vfwarp_doorbell(opaque, 0, addr, val, size);
}

static const MemoryRegionOps vfwarp_pf_db_ops = {
    .read = vfwarp_pf_db_read,
    .write = vfwarp_pf_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = { .min_access_size = 1, .max_access_size = 8 },
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

/* ---- the uplink ------------------------------------------------------------ */

static ssize_t vfwarp_pf_receive(NetClientState *nc, const uint8_t *buf,
                                 size_t size)
{
    VfwarpPFState *s = qemu_get_nic_opaque(nc);

    vfw_adapter_uplink_rx(s->adapter, buf, size);
    return size;
}

static NetClientInfo vfwarp_pf_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .receive = vfwarp_pf_receive,
};

/* ---- PCI ------------------------------------------------------------------- */

static void vfwarp_pf_write_config(PCIDevice *dev, uint32_t addr,
                                   uint32_t val, int len)
{
    pci_default_write_config(dev, addr, val, len);
    pcie_cap_flr_write_config(dev, addr, val, len);
    /* VF Enable / NumVFs: removed VFs lose their admin config. */
    vfw_adapter_set_num_vfs(VFWARP_PF(dev)->adapter, pcie_sriov_num_vfs(dev));
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
    const char *why = NULL;

    if (s->total_vfs > VFW_SRIOV_TOTAL_VFS) {
        error_setg(errp, "vfwarp: total-vfs must be at most %d",
                   VFW_SRIOV_TOTAL_VFS);
        return;
    }
    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    /* The bottom half and the timer exist before the adapter may ask. */
    s->bh = qemu_bh_new_guarded(vfwarp_bh, s,
                                &DEVICE(s)->mem_reentrancy_guard);
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, vfwarp_timer_cb, s);
    s->adapter = vfw_adapter_create(&vfwarp_adapter_ops, s,
                                    s->conf.macaddr.a, s->total_vfs,
                                    s->line_rate, &why);
    if (!s->adapter) {
        if (s->line_rate && (s->line_rate < VFW_QOS_LINE_MIN ||
                             s->line_rate > VFW_QOS_LINE_MAX)) {
            error_setg(errp, "vfwarp: line-rate must be 0 (none) or "
                       "%llu..%llu bits/s",
                       (unsigned long long)VFW_QOS_LINE_MIN,
                       (unsigned long long)VFW_QOS_LINE_MAX);
        } else {
            error_setg(errp, "vfwarp: %s", why);
        }
        timer_free(s->timer);
        qemu_bh_delete(s->bh);
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
    vfw_adapter_set_uplink(s->adapter, qemu_get_queue(s->nic)->peer != NULL);
}

static void vfwarp_pf_exit(PCIDevice *pdev)
{
    VfwarpPFState *s = VFWARP_PF(pdev);

    pcie_sriov_pf_exit(pdev);
    vfwarp_pf_cleanup_msix(pdev);
    pcie_cap_exit(pdev);
    qemu_del_nic(s->nic);
    s->nic = NULL;
    vfw_adapter_destroy(s->adapter);
    s->adapter = NULL;
    timer_free(s->timer);
    qemu_bh_delete(s->bh);
}

/* Power-on, PCI reset or FLR of the PF: the whole adapter (it keeps the
 * uplink's attachment). The PCI core clears VF Enable on the same reset,
 * which resets the VFs too. */
static void vfwarp_pf_reset(DeviceState *dev)
{
    VfwarpPFState *s = VFWARP_PF(dev);

    if (s->adapter) {
        vfw_adapter_reset(s->adapter);
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
