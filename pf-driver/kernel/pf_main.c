// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_pf: PF driver of the vfwarp SR-IOV iWARP adapter.
 *
 * Lab-foundation stage: probe the PF, map BAR0, check the identification
 * block of the hardware interface (include/vfwarp/vfwarp_regs.h) and report
 * it. The admin queue, SR-IOV and netdev come with the adapter skeleton.
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/io.h>

#include "vfwarp/vfwarp_regs.h"

#define DRV_NAME "vfwarp_pf"

struct vfw_pf {
	struct pci_dev *pdev;
	void __iomem *bar0;
	u32 version;
};

static int vfw_pf_check_hw(struct vfw_pf *pf)
{
	struct device *dev = &pf->pdev->dev;
	u32 magic = ioread32(pf->bar0 + VFW_REG_MAGIC);
	u32 probe = 0x5a5aa5a5;

	if (magic != VFW_MAGIC) {
		dev_err(dev, "bad magic 0x%08x (want 0x%08x)\n", magic, VFW_MAGIC);
		return -ENODEV;
	}
	pf->version = ioread32(pf->bar0 + VFW_REG_VERSION);
	if ((pf->version >> 16) != VFW_HW_VERSION_MAJOR) {
		dev_err(dev, "hardware interface v%u.%u, driver speaks v%u\n",
			pf->version >> 16, pf->version & 0xffff,
			VFW_HW_VERSION_MAJOR);
		return -ENODEV;
	}
	/* A register that must hold what we write: proves the BAR decodes. */
	iowrite32(probe, pf->bar0 + VFW_REG_SCRATCH);
	if (ioread32(pf->bar0 + VFW_REG_SCRATCH) != probe) {
		dev_err(dev, "scratch register does not hold its value\n");
		return -EIO;
	}
	return 0;
}

static int vfw_pf_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vfw_pf *pf;
	u32 feat, maclo, machi;
	int err;

	pf = devm_kzalloc(&pdev->dev, sizeof(*pf), GFP_KERNEL);
	if (!pf)
		return -ENOMEM;
	pf->pdev = pdev;

	err = pcim_enable_device(pdev);
	if (err)
		return err;
	err = pcim_iomap_regions(pdev, BIT(0), DRV_NAME);
	if (err)
		return err;
	pf->bar0 = pcim_iomap_table(pdev)[0];
	if (pci_resource_len(pdev, 0) < VFW_BAR0_SIZE)
		return -ENODEV;

	err = vfw_pf_check_hw(pf);
	if (err)
		return err;

	feat = ioread32(pf->bar0 + VFW_REG_FEATURES_LO);
	maclo = ioread32(pf->bar0 + VFW_REG_MAC_LO);
	machi = ioread32(pf->bar0 + VFW_REG_MAC_HI);
	pci_set_drvdata(pdev, pf);
	dev_info(&pdev->dev,
		 "vfwarp adapter, hw interface v%u.%u, features 0x%08x, uplink %s, mac %02x:%02x:%02x:%02x:%02x:%02x\n",
		 pf->version >> 16, pf->version & 0xffff, feat,
		 (feat & VFW_FEAT_UPLINK) ? "connected" : "absent",
		 maclo & 0xff, (maclo >> 8) & 0xff, (maclo >> 16) & 0xff,
		 maclo >> 24, machi & 0xff, (machi >> 8) & 0xff);
	return 0;
}

static void vfw_pf_remove(struct pci_dev *pdev)
{
	dev_info(&pdev->dev, "vfwarp adapter released\n");
}

static const struct pci_device_id vfw_pf_ids[] = {
	{ PCI_DEVICE(VFW_PCI_VENDOR_ID, VFW_PCI_DEVICE_ID_PF) },
	{ }
};
MODULE_DEVICE_TABLE(pci, vfw_pf_ids);

static struct pci_driver vfw_pf_driver = {
	.name = DRV_NAME,
	.id_table = vfw_pf_ids,
	.probe = vfw_pf_probe,
	.remove = vfw_pf_remove,
};
module_pci_driver(vfw_pf_driver);

MODULE_DESCRIPTION("vfwarp SR-IOV iWARP adapter: physical function");
MODULE_LICENSE("GPL");
