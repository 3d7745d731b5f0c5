// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf: RDMA on or off per VF. The iWARP ib_device is another
 * module's (vfwarp_rdma.ko, vf_ib_*.c), bound to the auxiliary device this
 * file creates per VF (vf_rdma_aux.h), as ice creates one for irdma
 * (ice_idc.c). Whether the VF has it is the VF's devlink parameter
 * enable_rdma (the kernel's generic one, cmode runtime):
 *
 *   devlink dev param set pci/<VF BDF> name enable_rdma value false cmode runtime
 *
 * deletes the auxiliary device (the RDMA driver unregisters the ib_device:
 * its users see DEVICE_REMOVAL / a fatal event, as at an FLR), `value
 * true` adds it again. The module parameter rdma= is the value a new VF
 * starts with. A VF whose device has no iWARP engine, no MSI-X vector for
 * the RDMA event queue or no doorbell BAR refuses `true`.
 *
 * Lock order: devlink instance lock (param set) -> aux_lock. An FLR deletes
 * the device in reset_prepare and adds it back in reset_done if
 * enable_rdma is on (a set during the reset only records the value).
 */
#include <linux/idr.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <net/devlink.h>

#include "vfwarp/vfwarp_rdma.h"
#include "vfwarp/vfwarp_regs.h"
#include "vf.h"
#include "vf_rdma_aux.h"

static bool rdma = true;
module_param(rdma, bool, 0444);
MODULE_PARM_DESC(rdma, "enable_rdma of a new VF: an RDMA auxiliary device for vfwarp_rdma (default on; per VF at run time: devlink dev param enable_rdma)");

/* auxiliary device ids, unique while the VF is bound */
static DEFINE_IDA(vfw_rdma_ida);

static void vfw_rdma_aux_release(struct device *d)
{
	kfree(to_vfw_rdma_aux(to_auxiliary_dev(d)));
}

/* aux_lock held */
static int vfw_vf_rdma_plug(struct vfw_vf *vf)
{
	struct pci_dev *pdev = vf->eth.pdev;
	struct vfw_rdma_aux_dev *ad;
	int err;

	if (vf->rdma_aux || vf->rdma_id < 0)
		return 0;
	ad = kzalloc(sizeof(*ad), GFP_KERNEL);
	if (!ad)
		return -ENOMEM;
	ad->pdev = pdev;
	ad->netdev = vf->eth.netdev;
	ad->bar0 = vf->eth.bar0;
	ad->kdb = vf->rdma_kdb;
	ad->db_phys = pci_resource_start(pdev, VFW_DB_BAR);
	ad->db_len = pci_resource_len(pdev, VFW_DB_BAR);
	ad->eq_vec = vfw_vf_vec(vf, VFW_MSIX_VEC_RDMA_EQ);
	ad->eq_irq = pci_irq_vector(pdev, ad->eq_vec);
	ad->vf_index = vf->index;
	ad->adev.name = VFW_RDMA_AUX_NAME;
	ad->adev.id = vf->rdma_id;
	ad->adev.dev.parent = &pdev->dev;
	ad->adev.dev.release = vfw_rdma_aux_release;
	err = auxiliary_device_init(&ad->adev);
	if (err) {
		kfree(ad);
		return err;
	}
	err = auxiliary_device_add(&ad->adev);
	if (err) {
		auxiliary_device_uninit(&ad->adev);	/* frees ad */
		return err;
	}
	vf->rdma_aux = ad;
	return 0;
}

/* aux_lock held. The RDMA driver's remove runs inside: every RDMA object
 * of the function is destroyed before this returns. */
static void vfw_vf_rdma_unplug(struct vfw_vf *vf)
{
	struct vfw_rdma_aux_dev *ad = vf->rdma_aux;

	if (!ad)
		return;
	vf->rdma_aux = NULL;
	auxiliary_device_delete(&ad->adev);
	auxiliary_device_uninit(&ad->adev);
}

/* ---- devlink: enable_rdma ------------------------------------------------ */

static struct vfw_vf *dl_vf(struct devlink *dl)
{
	return *(struct vfw_vf **)devlink_priv(dl);
}

static int vfw_vf_enable_rdma_get(struct devlink *dl, u32 id,
				  struct devlink_param_gset_ctx *ctx)
{
	struct vfw_vf *vf = dl_vf(dl);

	mutex_lock(&vf->aux_lock);
	ctx->val.vbool = vf->rdma_on;
	mutex_unlock(&vf->aux_lock);
	return 0;
}

static int vfw_vf_enable_rdma_set(struct devlink *dl, u32 id,
				  struct devlink_param_gset_ctx *ctx,
				  struct netlink_ext_ack *extack)
{
	struct vfw_vf *vf = dl_vf(dl);
	bool on = ctx->val.vbool;
	int err = 0;

	mutex_lock(&vf->aux_lock);
	if (on == vf->rdma_on)
		goto out;
	if (vf->in_reset) {		/* reset_done follows the value */
		vf->rdma_on = on;
		goto out;
	}
	if (on) {
		err = vfw_vf_rdma_plug(vf);
		if (err) {
			NL_SET_ERR_MSG_MOD(extack, "cannot add the RDMA auxiliary device");
			goto out;
		}
	} else {
		vfw_vf_rdma_unplug(vf);
	}
	vf->rdma_on = on;
	dev_info(&vf->eth.pdev->dev, "enable_rdma %s\n", on ? "on" : "off");
out:
	mutex_unlock(&vf->aux_lock);
	return err;
}

static int vfw_vf_enable_rdma_validate(struct devlink *dl, u32 id,
				       union devlink_param_value val,
				       struct netlink_ext_ack *extack)
{
	struct vfw_vf *vf = dl_vf(dl);

	if (val.vbool && vf->rdma_id < 0) {
		NL_SET_ERR_MSG_MOD(extack, "this VF cannot do RDMA: no iWARP engine, RDMA MSI-X vector or doorbell BAR");
		return -EOPNOTSUPP;
	}
	return 0;
}

static const struct devlink_param vfw_vf_params[] = {
	DEVLINK_PARAM_GENERIC(ENABLE_RDMA, BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			      vfw_vf_enable_rdma_get, vfw_vf_enable_rdma_set,
			      vfw_vf_enable_rdma_validate),
};

static const struct devlink_ops vfw_vf_devlink_ops = {
};

/* ---- probe / remove / reset ----------------------------------------------- */

/* After the netdev: can the VF do RDMA, then its auxiliary device (if
 * rdma=), then the devlink instance that switches it. Without RDMA the
 * netdev still works: only allocation failures fail the probe. */
int vfw_vf_rdma_probe(struct vfw_vf *vf)
{
	struct pci_dev *pdev = vf->eth.pdev;
	struct devlink *dl;
	u32 caps;
	int err;

	mutex_init(&vf->aux_lock);
	vf->rdma_id = -1;
	caps = ioread32(vf->eth.bar0 + VFW_REG_RDMA_CAPS);
	if (!(caps & VFW_RDMA_CAP_IWARP))
		dev_info(&pdev->dev, "no iWARP engine (RDMA caps 0x%x)\n", caps);
	else if (!vf->one_vec && vf->nvec <= VFW_MSIX_VEC_RDMA_EQ)
		dev_warn(&pdev->dev, "%d MSI-X vectors: none for the RDMA event queue\n",
			 vf->nvec);
	else if (pci_resource_len(pdev, VFW_DB_BAR) < VFW_DB_PAGE_SIZE)
		dev_warn(&pdev->dev, "doorbell BAR%d missing\n", VFW_DB_BAR);
	else
		vf->rdma_id = 0;
	if (vf->rdma_id == 0) {
		vf->rdma_kdb = pci_iomap_range(pdev, VFW_DB_BAR, 0, VFW_DB_PAGE_SIZE);
		if (!vf->rdma_kdb)
			return -ENOMEM;
		err = ida_alloc(&vfw_rdma_ida, GFP_KERNEL);
		if (err < 0)
			goto err_unmap;
		vf->rdma_id = err;
		vf->rdma_on = rdma;
	}

	dl = devlink_alloc(&vfw_vf_devlink_ops, sizeof(vf), &pdev->dev);
	if (!dl) {
		err = -ENOMEM;
		goto err_ida;
	}
	*(struct vfw_vf **)devlink_priv(dl) = vf;
	vf->devlink = dl;

	mutex_lock(&vf->aux_lock);
	err = vf->rdma_on ? vfw_vf_rdma_plug(vf) : 0;
	mutex_unlock(&vf->aux_lock);
	if (err) {
		dev_warn(&pdev->dev, "no RDMA auxiliary device: %d\n", err);
		vf->rdma_on = false;
	}

	devl_lock(dl);
	err = devl_params_register(dl, vfw_vf_params, ARRAY_SIZE(vfw_vf_params));
	if (!err) {
		err = devl_register(dl);
		if (err)
			devl_params_unregister(dl, vfw_vf_params,
					       ARRAY_SIZE(vfw_vf_params));
	}
	devl_unlock(dl);
	if (err)
		goto err_unplug;
	return 0;

err_unplug:
	mutex_lock(&vf->aux_lock);
	vfw_vf_rdma_unplug(vf);
	mutex_unlock(&vf->aux_lock);
	devlink_free(dl);
	vf->devlink = NULL;
err_ida:
	if (vf->rdma_id >= 0)
		ida_free(&vfw_rdma_ida, vf->rdma_id);
err_unmap:
	if (vf->rdma_kdb)
		pci_iounmap(pdev, vf->rdma_kdb);
	vf->rdma_kdb = NULL;
	vf->rdma_id = -1;
	return err;
}

/* Before the netdev goes: no more param changes, then the ib_device. */
void vfw_vf_rdma_remove(struct vfw_vf *vf)
{
	struct devlink *dl = vf->devlink;

	if (!dl)
		return;
	devl_lock(dl);
	devl_unregister(dl);
	devl_params_unregister(dl, vfw_vf_params, ARRAY_SIZE(vfw_vf_params));
	devl_unlock(dl);
	mutex_lock(&vf->aux_lock);
	vfw_vf_rdma_unplug(vf);
	mutex_unlock(&vf->aux_lock);
	devlink_free(dl);
	vf->devlink = NULL;
	if (vf->rdma_id >= 0)
		ida_free(&vfw_rdma_ida, vf->rdma_id);
	vf->rdma_id = -1;
	if (vf->rdma_kdb)
		pci_iounmap(vf->eth.pdev, vf->rdma_kdb);
	vf->rdma_kdb = NULL;
}

/*
 * FLR: the device destroys every RDMA object of the function and resets
 * its connections. As irdma does across an ice reset, the ib_device goes
 * before the reset, while the device still answers commands: deleting the
 * auxiliary device unregisters it, which disassociates every user context
 * (its process sees EIO and IB_EVENT_DEVICE_FATAL, its mappings are
 * zapped), gives rdma_cm users RDMA_CM_EVENT_DEVICE_REMOVAL and destroys
 * each object in order, so `rdma res` ends empty and nothing refers to ids
 * the device forgot. The device (and a new ib_device) comes back after.
 */
void vfw_vf_rdma_reset_prepare(struct vfw_vf *vf)
{
	if (!vf->devlink)
		return;
	mutex_lock(&vf->aux_lock);
	vf->in_reset = true;
	vfw_vf_rdma_unplug(vf);
	mutex_unlock(&vf->aux_lock);
}

void vfw_vf_rdma_reset_done(struct vfw_vf *vf)
{
	int err = 0;

	if (!vf->devlink)
		return;
	mutex_lock(&vf->aux_lock);
	vf->in_reset = false;
	if (vf->rdma_on)
		err = vfw_vf_rdma_plug(vf);
	mutex_unlock(&vf->aux_lock);
	if (err)
		dev_warn(&vf->eth.pdev->dev, "no RDMA auxiliary device after reset: %d\n",
			 err);
}
