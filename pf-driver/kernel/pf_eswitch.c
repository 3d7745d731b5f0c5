// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_eswitch.c - the eswitch mode (`devlink dev eswitch set pci/<BDF> mode
 * legacy|switchdev`, docs/switchdev.md) and the representors that come
 * with switchdev mode (pf_repr.c).
 *
 * legacy -> switchdev: a representor per enabled VF is registered first,
 * then the device is switched (ESW_SET_MODE): from then on what a VF sends
 * and nothing forwards reaches its representor. switchdev -> legacy: the
 * device first, so no frame still goes to a representor on its way out.
 * Either way a failure leaves the previous mode in the device and in the
 * driver, with an extack message. VFs enabled or removed while in
 * switchdev mode gain or lose their representors with their devlink ports
 * (pf_devlink.c). Everything here runs under the devlink instance lock.
 */
#include "pf.h"

static int vfw_pf_esw_cmd(struct vfw_pf *pf, u8 mode,
			  struct netlink_ext_ack *extack)
{
	struct vfw_aq_desc d = {};
	int st;

	d.opcode = cpu_to_le16(VFW_AQ_OP_ESW_SET_MODE);
	d.u.esw.mode = mode;
	st = vfw_pf_aq_exec(pf, &d);
	if (st == VFW_AQ_S_OK)
		return 0;
	if (st < 0) {
		NL_SET_ERR_MSG_MOD(extack, "the adapter did not answer the eswitch mode command");
		return st;
	}
	NL_SET_ERR_MSG_FMT_MOD(extack, "the adapter refused the eswitch mode: %s",
			       vfw_pf_aq_status_str(st));
	return vfw_pf_aq_errno(st);
}

static void vfw_pf_reprs_destroy(struct vfw_pf *pf, int from, int to)
{
	int vf;

	for (vf = to - 1; vf >= from; vf--)
		vfw_pf_repr_destroy(pf, vf);
}

/* Representors for VFs [from, to): all or none. */
static int vfw_pf_reprs_create(struct vfw_pf *pf, int from, int to,
			       struct netlink_ext_ack *extack)
{
	int vf, err;

	for (vf = from; vf < to; vf++) {
		err = vfw_pf_repr_create(pf, vf);
		if (err) {
			NL_SET_ERR_MSG_FMT_MOD(extack,
					       "cannot create the representor of VF %d: %d",
					       vf, err);
			vfw_pf_reprs_destroy(pf, from, vf);
			return err;
		}
	}
	return 0;
}

int vfw_pf_eswitch_mode_get(struct devlink *devlink, u16 *mode)
{
	struct vfw_pf *pf = *(struct vfw_pf **)devlink_priv(devlink);

	*mode = pf->eswitch_mode;
	return 0;
}

int vfw_pf_eswitch_mode_set(struct devlink *devlink, u16 mode,
			    struct netlink_ext_ack *extack)
{
	struct vfw_pf *pf = *(struct vfw_pf **)devlink_priv(devlink);
	int err;

	if (mode == pf->eswitch_mode)
		return 0;
	if (mode != DEVLINK_ESWITCH_MODE_LEGACY &&
	    mode != DEVLINK_ESWITCH_MODE_SWITCHDEV) {
		NL_SET_ERR_MSG_MOD(extack, "only the legacy and switchdev modes exist");
		return -EOPNOTSUPP;
	}
	if (mode == DEVLINK_ESWITCH_MODE_SWITCHDEV) {
		if (!pf->netdev) {
			NL_SET_ERR_MSG_MOD(extack, "the PF has no netdev to carry the representors' traffic");
			return -ENODEV;
		}
		err = vfw_pf_reprs_create(pf, 0, pf->num_vf_ports, extack);
		if (err)
			return err;
		err = vfw_pf_esw_cmd(pf, VFW_ESW_MODE_SWITCHDEV, extack);
		if (err) {
			vfw_pf_reprs_destroy(pf, 0, pf->num_vf_ports);
			return err;
		}
	} else {
		err = vfw_pf_esw_cmd(pf, VFW_ESW_MODE_LEGACY, extack);
		if (err)
			return err;
		vfw_pf_reprs_destroy(pf, 0, pf->num_vf_ports);
	}
	pf->eswitch_mode = mode;
	dev_info(&pf->pdev->dev, "eswitch mode %s, %d VF representors\n",
		 mode == DEVLINK_ESWITCH_MODE_SWITCHDEV ? "switchdev" : "legacy",
		 mode == DEVLINK_ESWITCH_MODE_SWITCHDEV ? pf->num_vf_ports : 0);
	return 0;
}

/* VFs [0, num) just got their devlink ports: their representors, in
 * switchdev mode. Caller holds the devlink lock. */
int vfw_pf_eswitch_vfs_add(struct vfw_pf *pf, int num)
{
	if (pf->eswitch_mode != DEVLINK_ESWITCH_MODE_SWITCHDEV)
		return 0;
	return vfw_pf_reprs_create(pf, 0, num, NULL);
}

/* The VFs are going: their representors first. Caller holds the devlink
 * lock. */
void vfw_pf_eswitch_vfs_del(struct vfw_pf *pf, int num)
{
	if (pf->eswitch_mode == DEVLINK_ESWITCH_MODE_SWITCHDEV)
		vfw_pf_reprs_destroy(pf, 0, num);
}

/* Driver removal: back to legacy in the device (it may be bound again by a
 * driver that knows nothing of representors), representors gone. */
void vfw_pf_eswitch_fini(struct vfw_pf *pf)
{
	if (pf->eswitch_mode != DEVLINK_ESWITCH_MODE_SWITCHDEV)
		return;
	vfw_pf_esw_cmd(pf, VFW_ESW_MODE_LEGACY, NULL);
	vfw_pf_reprs_destroy(pf, 0, pf->num_vf_ports);
	pf->eswitch_mode = DEVLINK_ESWITCH_MODE_LEGACY;
}
