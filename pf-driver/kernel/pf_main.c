// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_pf: PF driver of the vfwarp SR-IOV iWARP adapter.
 *
 * Probe the PF, map BAR0, check the identification block of the hardware
 * interface (include/vfwarp/vfwarp_regs.h) and report it; create and remove
 * VFs through the standard sysfs sriov_numvfs (sriov_configure); start the
 * admin queue (pf_admin.c) and register the PF netdev (pf_netdev.c) whose
 * VF ops (pf_vf.c) configure the VFs through it, and the devlink instance
 * with a port per uplink, PF and VF (pf_devlink.c) and devlink rate
 * (pf_rate.c).
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/io.h>
#include <linux/string.h>
#include <linux/dma-mapping.h>

#include "pf.h"

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
	pf->features = feat;
	pf->mac[0] = maclo & 0xff;
	pf->mac[1] = (maclo >> 8) & 0xff;
	pf->mac[2] = (maclo >> 16) & 0xff;
	pf->mac[3] = maclo >> 24;
	pf->mac[4] = machi & 0xff;
	pf->mac[5] = (machi >> 8) & 0xff;
	pci_set_drvdata(pdev, pf);
	dev_info(&pdev->dev,
		 "vfwarp adapter, hw interface v%u.%u, features 0x%08x, uplink %s, mac %02x:%02x:%02x:%02x:%02x:%02x\n",
		 pf->version >> 16, pf->version & 0xffff, feat,
		 (feat & VFW_FEAT_UPLINK) ? "connected" : "absent",
		 maclo & 0xff, (maclo >> 8) & 0xff, (maclo >> 16) & 0xff,
		 maclo >> 24, machi & 0xff, (machi >> 8) & 0xff);
	if (pci_num_vf(pdev))
		dev_info(&pdev->dev, "adopting %d VFs left enabled\n",
			 pci_num_vf(pdev));

	pci_set_master(pdev);
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		return err;
	err = vfw_pf_aq_init(pf);
	if (err)
		return err;
	err = vfw_pf_irq_init(pf);
	if (err) {
		vfw_pf_aq_fini(pf);
		return err;
	}
	err = vfw_pf_tc_init(pf);
	if (err)
		goto err_tc;
	err = vfw_pf_netdev_create(pf);
	if (err)
		goto err_netdev;
	err = vfw_pf_devlink_init(pf);
	if (err)
		goto err_devlink;
	/* Last: VFs left enabled may ask at once, and need all of the above. */
	err = vfw_pf_mbox_init(pf);
	if (err)
		goto err_mbox;
	vfw_pf_debugfs_init(pf);
	return 0;

err_mbox:
	vfw_pf_devlink_fini(pf);
err_devlink:
	vfw_pf_netdev_destroy(pf);
err_netdev:
	vfw_pf_tc_fini(pf);
err_tc:
	vfw_pf_irq_fini(pf);
	vfw_pf_aq_fini(pf);
	return err;
}

/*
 * Is any of our VFs in use by a VM? pci_vfs_assigned() only sees the
 * legacy PCI_DEV_FLAGS_ASSIGNED; a VF bound to vfio-pci (or another vfio
 * variant driver) is not flagged, and removing it would block in vfio's
 * remove until the user lets go, with our device_lock held. So look at each
 * VF's driver too, as ice/i40e refuse with -EBUSY. The check is lockless
 * (the VF's device_lock may be held by that very blocking remove); a bind
 * racing with it is the window every SR-IOV driver has. Logs the first VF
 * found in use and returns how many are.
 */
static unsigned int vfw_pf_vfs_in_use(struct pci_dev *pdev, const char *what)
{
	int num = pci_num_vf(pdev), seen = 0;
	struct pci_dev *vf = NULL;
	unsigned int busy = 0;

	/* pci_get_device() drops the previous match's reference. */
	while ((vf = pci_get_device(pdev->vendor, VFW_PCI_DEVICE_ID_VF, vf))) {
		const struct device_driver *drv;
		bool in_use;

		if (!vf->is_virtfn || pci_physfn(vf) != pdev)
			continue;
		drv = READ_ONCE(vf->dev.driver);
		in_use = (vf->dev_flags & PCI_DEV_FLAGS_ASSIGNED) ||
			 (drv && !strncmp(drv->name, "vfio", 4));
		if (in_use && !busy++)
			dev_err(&pdev->dev,
				"%s: VF %d (%s) is in use (driver %s); unbind it first\n",
				what, pci_iov_vf_id(vf), pci_name(vf),
				drv ? drv->name : "none, assigned");
		if (++seen >= num || seen >= VFW_SRIOV_TOTAL_VFS) {
			pci_dev_put(vf);
			break;
		}
	}
	return busy;
}

static int vfw_pf_sriov_configure(struct pci_dev *pdev, int num_vfs)
{
	struct vfw_pf *pf = pci_get_drvdata(pdev);
	struct device *dev = &pdev->dev;
	int cur = pci_num_vf(pdev);
	unsigned int busy;
	int err;

	if (num_vfs < 0 || num_vfs > VFW_SRIOV_TOTAL_VFS ||
	    num_vfs > pci_sriov_get_totalvfs(pdev)) {
		dev_err(dev, "%d VFs requested, the adapter has %d\n", num_vfs,
			pci_sriov_get_totalvfs(pdev));
		return -ERANGE;
	}
	if (num_vfs == 0) {
		if (!cur)
			return 0;
		busy = vfw_pf_vfs_in_use(pdev, "cannot disable SR-IOV");
		if (busy) {
			dev_err(dev, "cannot disable SR-IOV: %u of %d VFs in use\n",
				busy, cur);
			return -EBUSY;
		}
		/* Their devlink ports (and rate leaves) go first: no devlink
		 * op may reach a VF on its way out. */
		vfw_pf_devlink_vfs_del(pf);
		pci_disable_sriov(pdev);
		/* New VFs start with no administrator-set MAC. */
		bitmap_zero(pf->vf_admin_mac, VFW_SRIOV_TOTAL_VFS);
		dev_info(dev, "SR-IOV disabled (%d VFs removed)\n", cur);
		return 0;
	}
	if (cur == num_vfs)
		return num_vfs;
	if (cur) {
		/* The PCI core refuses this too; say why if it gets here. */
		dev_err(dev, "%d VFs exist; write 0 before changing to %d\n",
			cur, num_vfs);
		return -EBUSY;
	}
	err = pci_enable_sriov(pdev, num_vfs);
	if (err) {
		dev_err(dev, "cannot enable %d VFs: %d\n", num_vfs, err);
		return err;
	}
	err = vfw_pf_devlink_vfs_add(pf, num_vfs);
	if (err) {
		dev_err(dev, "cannot create the devlink ports of %d VFs: %d\n",
			num_vfs, err);
		pci_disable_sriov(pdev);
		return err;
	}
	dev_info(dev, "SR-IOV enabled: %d VFs\n", num_vfs);
	return num_vfs;
}

static void vfw_pf_remove(struct pci_dev *pdev)
{
	struct vfw_pf *pf = pci_get_drvdata(pdev);
	int num = pci_num_vf(pdev);

	vfw_pf_debugfs_fini(pf);
	vfw_pf_devlink_fini(pf);
	vfw_pf_mbox_fini(pf);
	vfw_pf_netdev_destroy(pf);
	vfw_pf_bridge_flush();          /* FDB work of our netdevs done */
	vfw_pf_tc_fini(pf);

	if (num) {
		if (vfw_pf_vfs_in_use(pdev, "driver removal"))
			dev_warn(&pdev->dev,
				 "VFs in use: leaving %d VFs enabled; bind the PF driver again and write 0 to sriov_numvfs once they are free\n",
				 num);
		else
			pci_disable_sriov(pdev);
	}
	vfw_pf_aq_fini(pf);
	vfw_pf_irq_fini(pf);
	pci_clear_master(pdev);
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
	.sriov_configure = vfw_pf_sriov_configure,
};
static int __init vfw_pf_init(void)
{
	int err;

	vfw_pf_debugfs_register();
	err = vfw_pf_bridge_register();
	if (err)
		goto err_bridge;
	err = pci_register_driver(&vfw_pf_driver);
	if (err)
		goto err_pci;
	return 0;

err_pci:
	vfw_pf_bridge_unregister();
err_bridge:
	vfw_pf_debugfs_unregister();
	return err;
}
module_init(vfw_pf_init);

static void __exit vfw_pf_exit(void)
{
	pci_unregister_driver(&vfw_pf_driver);
	vfw_pf_bridge_unregister();
	vfw_pf_debugfs_unregister();
}
module_exit(vfw_pf_exit);

MODULE_DESCRIPTION("vfwarp SR-IOV iWARP adapter: physical function");
MODULE_LICENSE("GPL");
