// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_dcb.c - dcbnl (IEEE 802.1Qaz) on the PF netdev: the uplink's 8 traffic
 * classes (ETS or strict, shares, priority -> class), a maxrate per class,
 * the app table (DSCP -> priority, the default priority) and the trust
 * order, each op one admin command of hardware interface 2.1
 * (docs/qos.md "dcbnl -> admin command"). `dcb ets|maxrate|apptrust show`
 * read the device back; `dcb app show` lists the kernel's app table, which
 * the driver changes only after the device accepted the entry, and seeds
 * from the device at probe (the device keeps its DCB state across driver
 * loads; only a PF reset restores the defaults).
 *
 * Host-managed IEEE DCBX only (no LLDP agent in the device). dcbnl ops
 * carry no extack: a refusal is logged with the status by name and
 * returned as the errno of docs/qos.md's table.
 */
#include <net/dcbnl.h>

#include "pf.h"

static int vfw_pf_dcb_cmd(struct vfw_pf *pf, u16 op, struct vfw_aq_desc *d,
			  const char *what)
{
	int st;

	d->opcode = cpu_to_le16(op);
	d->vf = 0;
	st = vfw_pf_aq_exec(pf, d);
	if (st < 0)
		return st;
	if (st != VFW_AQ_S_OK)
		netdev_err(pf->netdev, "dcb %s refused by the adapter (status %s)\n",
			   what, vfw_pf_aq_status_str(st));
	return vfw_pf_qos_errno(st, VFW_RANGE_ANY, NULL);
}

static int vfw_pf_dcb_getets(struct net_device *dev, struct ieee_ets *ets)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};
	int err;

	err = vfw_pf_dcb_cmd(pf, VFW_AQ_OP_DCB_GET_ETS, &d, "get ets");
	if (err)
		return err;
	memset(ets, 0, sizeof(*ets));
	ets->ets_cap = VFW_QOS_NUM_TC;
	memcpy(ets->tc_tsa, d.u.ets.tc_tsa, VFW_QOS_NUM_TC);
	memcpy(ets->tc_tx_bw, d.u.ets.tc_tx_bw, VFW_QOS_NUM_TC);
	memcpy(ets->prio_tc, d.u.ets.prio_tc, VFW_QOS_NUM_TC);
	return 0;
}

/* The class of 802.1p priority `prio` (dcb ets prio-tc) as the device has
 * it; the default map (identity) if it cannot be read. */
u8 vfw_pf_prio_tc(struct vfw_pf *pf, u8 prio)
{
	struct vfw_aq_desc d = {};

	if (vfw_pf_dcb_cmd(pf, VFW_AQ_OP_DCB_GET_ETS, &d, "get ets"))
		return prio & 7;
	return d.u.ets.prio_tc[prio & 7] & 7;
}

static int vfw_pf_dcb_setets(struct net_device *dev, struct ieee_ets *ets)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};

	/* willing, cbs and the rx/reco tables have no meaning here: the
	 * device has no DCBX agent and schedules transmit only. */
	memcpy(d.u.ets.tc_tsa, ets->tc_tsa, VFW_QOS_NUM_TC);
	memcpy(d.u.ets.tc_tx_bw, ets->tc_tx_bw, VFW_QOS_NUM_TC);
	memcpy(d.u.ets.prio_tc, ets->prio_tc, VFW_QOS_NUM_TC);
	return vfw_pf_dcb_cmd(pf, VFW_AQ_OP_DCB_SET_ETS, &d, "set ets");
}

static int vfw_pf_dcb_getmaxrate(struct net_device *dev,
				 struct ieee_maxrate *maxrate)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};
	int err, t;

	err = vfw_pf_dcb_cmd(pf, VFW_AQ_OP_DCB_GET_MAXRATE, &d, "get maxrate");
	if (err)
		return err;
	memset(maxrate, 0, sizeof(*maxrate));
	for (t = 0; t < VFW_QOS_NUM_TC; t++)
		maxrate->tc_maxrate[t] =
			le32_to_cpu(d.u.maxrate.tc_maxrate_kbps[t]);
	return 0;
}

static int vfw_pf_dcb_setmaxrate(struct net_device *dev,
				 struct ieee_maxrate *maxrate)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};
	int t;

	for (t = 0; t < VFW_QOS_NUM_TC; t++) {
		/* kbit/s; the command has 32 bits (4.29 Pbit/s, above the
		 * device's 1.6 Tbit/s anyway). */
		if (maxrate->tc_maxrate[t] > U32_MAX) {
			netdev_err(dev, "dcb maxrate of class %d above %u kbit/s\n",
				   t, U32_MAX);
			return -EINVAL;
		}
		d.u.maxrate.tc_maxrate_kbps[t] =
			cpu_to_le32(maxrate->tc_maxrate[t]);
	}
	return vfw_pf_dcb_cmd(pf, VFW_AQ_OP_DCB_SET_MAXRATE, &d,
			      "set maxrate");
}

static int vfw_pf_dcb_app_cmd(struct vfw_pf *pf, u16 op,
			      const struct dcb_app *app, const char *what)
{
	struct vfw_aq_desc d = {};

	d.u.app.selector = app->selector;
	d.u.app.priority = app->priority;
	d.u.app.protocol = cpu_to_le16(app->protocol);
	return vfw_pf_dcb_cmd(pf, op, &d, what);
}

/*
 * The device keeps one priority per DSCP (and one default); dcbnl's table
 * may hold several per protocol. So an accepted entry replaces the kernel's
 * entries of the same selector and protocol, as mlx5 does, and `dcb app
 * show` lists what the device applies.
 */
static void vfw_pf_dcb_app_replace(struct net_device *dev,
				   struct dcb_app *app)
{
	u8 mask = dcb_ieee_getapp_mask(dev, app);
	struct dcb_app old = *app;
	int p;

	for (p = 0; p < IEEE_8021QAZ_MAX_TCS; p++) {
		if (!(mask & BIT(p)) || p == app->priority)
			continue;
		old.priority = p;
		dcb_ieee_delapp(dev, &old);
	}
	if (!(mask & BIT(app->priority)))
		dcb_ieee_setapp(dev, app);
}

static int vfw_pf_dcb_setapp(struct net_device *dev, struct dcb_app *app)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	int err;

	if (app->protocol > U16_MAX)
		return -EINVAL;
	err = vfw_pf_dcb_app_cmd(pf, VFW_AQ_OP_DCB_SET_APP, app, "set app");
	if (err)
		return err;
	vfw_pf_dcb_app_replace(dev, app);
	return 0;
}

static int vfw_pf_dcb_delapp(struct net_device *dev, struct dcb_app *app)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	int err;

	if (app->protocol > U16_MAX)
		return -EINVAL;
	err = vfw_pf_dcb_app_cmd(pf, VFW_AQ_OP_DCB_DEL_APP, app, "del app");
	if (err)
		return err;
	return dcb_ieee_delapp(dev, app);
}

static int vfw_pf_dcb_setapptrust(struct net_device *dev, u8 *selectors,
				  int nselectors)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};

	/* The device trusts one source or none: any other order is not
	 * sent (docs/qos.md). */
	if (nselectors == 0) {
		d.u.trust.trust = VFW_TRUST_NONE;
	} else if (nselectors == 1 &&
		   selectors[0] == IEEE_8021QAZ_APP_SEL_DSCP) {
		d.u.trust.trust = VFW_TRUST_DSCP;
	} else if (nselectors == 1 && selectors[0] == DCB_APP_SEL_PCP) {
		d.u.trust.trust = VFW_TRUST_PCP;
	} else {
		netdev_err(dev, "dcb apptrust: the adapter trusts one of pcp or dscp, or none\n");
		return -EOPNOTSUPP;
	}
	return vfw_pf_dcb_cmd(pf, VFW_AQ_OP_DCB_SET_TRUST, &d, "set trust");
}

static int vfw_pf_dcb_get_apps(struct vfw_pf *pf, struct vfw_aq_desc *d)
{
	memset(d, 0, sizeof(*d));
	return vfw_pf_dcb_cmd(pf, VFW_AQ_OP_DCB_GET_APP, d, "get app");
}

static int vfw_pf_dcb_getapptrust(struct net_device *dev, u8 *selectors,
				  int *nselectors)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d;
	int err;

	err = vfw_pf_dcb_get_apps(pf, &d);
	if (err)
		return err;
	switch (d.u.apps.trust) {
	case VFW_TRUST_DSCP:
		selectors[0] = IEEE_8021QAZ_APP_SEL_DSCP;
		*nselectors = 1;
		break;
	case VFW_TRUST_PCP:
		selectors[0] = DCB_APP_SEL_PCP;
		*nselectors = 1;
		break;
	default:
		*nselectors = 0;
		break;
	}
	return 0;
}

static u8 vfw_pf_dcb_getdcbx(struct net_device *dev)
{
	return DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
}

static u8 vfw_pf_dcb_setdcbx(struct net_device *dev, u8 mode)
{
	/* 0 = accepted: only the mode we have. */
	return mode == (DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE) ? 0 : 1;
}

static const struct dcbnl_rtnl_ops vfw_pf_dcbnl_ops = {
	.ieee_getets = vfw_pf_dcb_getets,
	.ieee_setets = vfw_pf_dcb_setets,
	.ieee_getmaxrate = vfw_pf_dcb_getmaxrate,
	.ieee_setmaxrate = vfw_pf_dcb_setmaxrate,
	.ieee_setapp = vfw_pf_dcb_setapp,
	.ieee_delapp = vfw_pf_dcb_delapp,
	.dcbnl_setapptrust = vfw_pf_dcb_setapptrust,
	.dcbnl_getapptrust = vfw_pf_dcb_getapptrust,
	.getdcbx = vfw_pf_dcb_getdcbx,
	.setdcbx = vfw_pf_dcb_setdcbx,
};

/* Before register_netdev. */
void vfw_pf_dcb_set_ops(struct net_device *dev)
{
	dev->dcbnl_ops = &vfw_pf_dcbnl_ops;
}

/* After register_netdev: the kernel's app table from the device's. */
void vfw_pf_dcb_init(struct vfw_pf *pf)
{
	struct dcb_app app;
	struct vfw_aq_desc d;
	u64 mapped;
	int dscp;

	if (vfw_pf_dcb_get_apps(pf, &d))
		return;	/* pre-2.1 device: the ops will say so */
	mapped = le64_to_cpu(d.u.apps.dscp_mapped);
	for (dscp = 0; dscp < 64; dscp++) {
		if (!(mapped & BIT_ULL(dscp)))
			continue;
		app.selector = IEEE_8021QAZ_APP_SEL_DSCP;
		app.protocol = dscp;
		app.priority = vfw_apps_dscp_prio(&d.u.apps, dscp);
		dcb_ieee_setapp(pf->netdev, &app);
	}
	if (d.u.apps.flags & VFW_APP_F_DEFAULT) {
		app.selector = IEEE_8021QAZ_APP_SEL_ETHERTYPE;
		app.protocol = 0;
		app.priority = d.u.apps.default_prio;
		dcb_ieee_setapp(pf->netdev, &app);
	}
}
