// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf: VF driver of the vfwarp SR-IOV iWARP adapter.
 *
 * Bind a VF, map BAR0, check the identification block of the
 * hardware interface (include/vfwarp/vfwarp_regs.h) and that FUNC_INFO says
 * this function is a VF, and report it; then the Ethernet netdev
 * (vf_netdev.c, rings in common/kernel/vfw_eth.c, requests to the PF in
 * vf_mbox.c), then the RDMA auxiliary device beside it (vf_rdma_aux.c),
 * to which vfwarp_rdma.ko (vf_ib_*.c) binds its iWARP ib_device.
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/io.h>

#include "vfwarp/vfwarp_regs.h"
#include "vf.h"

#define DRV_NAME "vfwarp_vf"

static int vfw_vf_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	u32 magic, version, info, probe;
	void __iomem *bar0;
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return err;
	if (pci_resource_len(pdev, 0) < VFW_BAR0_SIZE)
		return -ENODEV;
	err = pcim_iomap_regions(pdev, BIT(0), DRV_NAME);
	if (err)
		return err;
	bar0 = pcim_iomap_table(pdev)[0];

	magic = ioread32(bar0 + VFW_REG_MAGIC);
	if (magic != VFW_MAGIC) {
		dev_err(dev, "bad magic 0x%08x (want 0x%08x)\n", magic, VFW_MAGIC);
		return -ENODEV;
	}
	version = ioread32(bar0 + VFW_REG_VERSION);
	if ((version >> 16) != VFW_HW_VERSION_MAJOR) {
		dev_err(dev, "hardware interface v%u.%u, driver speaks v%u\n",
			version >> 16, version & 0xffff, VFW_HW_VERSION_MAJOR);
		return -ENODEV;
	}
	info = ioread32(bar0 + VFW_REG_FUNC_INFO);
	if (!(info & VFW_FUNC_IS_VF)) {
		dev_err(dev, "FUNC_INFO 0x%08x: not a virtual function\n", info);
		return -ENODEV;
	}
	probe = 0xa5a50000 | (info & VFW_FUNC_INDEX_MASK);
	iowrite32(probe, bar0 + VFW_REG_SCRATCH);
	if (ioread32(bar0 + VFW_REG_SCRATCH) != probe) {
		dev_err(dev, "scratch register does not hold its value\n");
		return -EIO;
	}
	dev_info(dev, "vfwarp VF %u, hw interface v%u.%u\n",
		 info & VFW_FUNC_INDEX_MASK, version >> 16, version & 0xffff);
	return vfw_vf_netdev_probe(pdev, bar0, info & VFW_FUNC_INDEX_MASK);
}

static void vfw_vf_remove(struct pci_dev *pdev)
{
	vfw_vf_netdev_remove(pdev);
	dev_info(&pdev->dev, "vfwarp VF released\n");
}

static const struct pci_device_id vfw_vf_ids[] = {
	{ PCI_DEVICE(VFW_PCI_VENDOR_ID, VFW_PCI_DEVICE_ID_VF) },
	{ }
};
MODULE_DEVICE_TABLE(pci, vfw_vf_ids);

static struct pci_driver vfw_vf_driver = {
	.name = DRV_NAME,
	.id_table = vfw_vf_ids,
	.probe = vfw_vf_probe,
	.remove = vfw_vf_remove,
	.err_handler = &vfw_vf_err_handlers,
};
module_pci_driver(vfw_vf_driver);

MODULE_DESCRIPTION("vfwarp SR-IOV iWARP adapter: virtual function");
MODULE_LICENSE("GPL");
/* modprobe vfwarp_vf brings the RDMA driver for the auxiliary devices */
MODULE_SOFTDEP("post: vfwarp_rdma");
