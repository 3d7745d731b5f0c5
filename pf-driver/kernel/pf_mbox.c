// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_mbox.c - the PF side of the VF-to-PF mailbox (include/vfwarp/
 * vfwarp_mbox.h): a VF asks, this file decides, programs the adapter
 * through the admin queue and answers. The policy, as ixgbe/ice apply it:
 *
 *   SET_MAC   refused when the administrator set the VF's MAC
 *             (ip link set PF vf N mac ...) unless the VF is trusted.
 *   VLAN      refused while the VF has a port VLAN; an untrusted VF may
 *             join at most VFW_PF_VF_MAX_VLANS VLANs.
 *   RX_MODE   the multicast list is granted (up to VFW_MC_FILTER_MAX);
 *             allmulti and promiscuous only to a trusted VF.
 *   HELLO     a VF driver (re)starts: its VLAN filters and RX mode go.
 *
 * Everything in a request comes from a VM and is checked here; the device
 * carries messages without reading them. Requests are served in a threaded
 * interrupt handler because the admin queue sleeps.
 */
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/io.h>

#include "pf.h"
#include "vfwarp/vfwarp_mbox.h"

#define VFW_PF_VF_MAX_VLANS 16

static void mbox_read_req(struct vfw_pf *pf, struct vfw_mbx_msg *m)
{
	__le32 *w = (__le32 *)m;
	int i;

	for (i = 0; i < VFW_MBX_MSG_WORDS; i++)
		w[i] = cpu_to_le32(ioread32(pf->bar0 + VFW_REG_PF_MBX_REQ(i)));
}

static void mbox_send_reply(struct vfw_pf *pf, const struct vfw_mbx_msg *m)
{
	const __le32 *w = (const __le32 *)m;
	int i;

	for (i = 0; i < VFW_MBX_MSG_WORDS; i++)
		iowrite32(le32_to_cpu(w[i]), pf->bar0 + VFW_REG_PF_MBX_REPLY(i));
	iowrite32(1, pf->bar0 + VFW_REG_PF_MBX_DOORBELL);
}

/* An admin command for VF `vf`; the status as a mailbox status. */
static u16 mbox_aq(struct vfw_pf *pf, u16 op, int vf, struct vfw_aq_desc *d)
{
	int st;

	d->opcode = cpu_to_le16(op);
	d->vf = cpu_to_le16(vf);
	st = vfw_pf_aq_exec(pf, d);
	if (st == VFW_AQ_S_OK)
		return VFW_MBX_S_OK;
	dev_warn(&pf->pdev->dev, "VF %d: admin command 0x%04x failed (%d)\n",
		 vf, op, st);
	return VFW_MBX_S_ERR;
}

static u16 mbox_set_mac(struct vfw_pf *pf, int vf, const struct vfw_aq_desc *cfg,
			const struct vfw_mbx_msg *req)
{
	struct vfw_aq_desc d = {};
	const u8 *mac = req->u.mac.mac;

	if (!is_valid_ether_addr(mac) || req->u.mac.rsvd)
		return VFW_MBX_S_INVAL;
	if (test_bit(vf, pf->vf_admin_mac) && !cfg->u.cfg.trust) {
		if (ether_addr_equal(mac, cfg->u.cfg.mac))
			return VFW_MBX_S_OK;
		dev_info(&pf->pdev->dev,
			 "VF %d: MAC change to %pM refused: the administrator set %pM (trust off)\n",
			 vf, mac, cfg->u.cfg.mac);
		return VFW_MBX_S_DENIED;
	}
	ether_addr_copy(d.u.mac.mac, mac);
	return mbox_aq(pf, VFW_AQ_OP_SET_VF_MAC, vf, &d);
}

static u16 mbox_vlan(struct vfw_pf *pf, int vf, const struct vfw_aq_desc *cfg,
		     const struct vfw_mbx_msg *req)
{
	u16 vid = le16_to_cpu(req->u.vlan.vid);
	struct vfw_aq_desc d = {};

	if (vid < 1 || vid > VFW_VLAN_VID_MAX || req->u.vlan.add > 1 ||
	    req->u.vlan.rsvd)
		return VFW_MBX_S_INVAL;
	if (cfg->u.cfg.vid) {
		dev_info(&pf->pdev->dev,
			 "VF %d: VLAN %u filter refused: port VLAN %u is set\n",
			 vf, vid, le16_to_cpu(cfg->u.cfg.vid));
		return VFW_MBX_S_DENIED;
	}
	if (req->u.vlan.add && !cfg->u.cfg.trust &&
	    le16_to_cpu(cfg->u.cfg.vlan_filters) >= VFW_PF_VF_MAX_VLANS) {
		dev_info(&pf->pdev->dev,
			 "VF %d: VLAN %u refused: %d VLANs is the limit for an untrusted VF\n",
			 vf, vid, VFW_PF_VF_MAX_VLANS);
		return VFW_MBX_S_NOSPC;
	}
	d.u.vlan_filter.vid = cpu_to_le16(vid);
	d.u.vlan_filter.on = req->u.vlan.add;
	return mbox_aq(pf, VFW_AQ_OP_SET_VF_VLAN_FILTER, vf, &d);
}

static u16 mbox_rx_mode(struct vfw_pf *pf, int vf,
			const struct vfw_aq_desc *cfg,
			const struct vfw_mbx_msg *req, struct vfw_mbx_msg *rep)
{
	const struct vfw_mbx_rx_mode *rm = &req->u.rx_mode;
	u8 want = rm->flags, grant;
	struct vfw_aq_desc d = {};
	int i;
	u16 st;

	if ((want & ~(VFW_RXM_ALLMULTI | VFW_RXM_PROMISC)) || rm->rsvd ||
	    rm->mc_count > VFW_MC_FILTER_MAX)
		return VFW_MBX_S_INVAL;
	for (i = 0; i < rm->mc_count; i++)
		if (!is_multicast_ether_addr(rm->mc[i]))
			return VFW_MBX_S_INVAL;
	grant = cfg->u.cfg.trust ? want : 0;
	if (grant != want)
		dev_info_ratelimited(&pf->pdev->dev,
				     "VF %d: %s refused: VF not trusted\n", vf,
				     (want & VFW_RXM_PROMISC) ? "promiscuous mode" :
								"all-multicast");
	d.u.rx_mode.flags = grant;
	d.u.rx_mode.mc_count = rm->mc_count;
	memcpy(d.u.rx_mode.mc, rm->mc, (size_t)rm->mc_count * ETH_ALEN);
	st = mbox_aq(pf, VFW_AQ_OP_SET_VF_RX_MODE, vf, &d);
	rep->u.rx_mode.flags = grant;
	rep->u.rx_mode.mc_count = rm->mc_count;
	return st;
}

/* Serve VF `vf`'s posted request. */
static void mbox_serve(struct vfw_pf *pf, int vf)
{
	struct vfw_mbx_msg req, rep = {};
	struct vfw_aq_desc cfg = {}, d = {};
	u16 st;

	iowrite32(vf, pf->bar0 + VFW_REG_PF_MBX_SEL);
	mbox_read_req(pf, &req);
	rep.opcode = req.opcode;
	rep.seq = req.seq;
	/* Decisions use the device's current view of the VF. */
	st = mbox_aq(pf, VFW_AQ_OP_GET_VF_CONFIG, vf, &cfg);
	if (st != VFW_MBX_S_OK)
		goto reply;
	switch (le16_to_cpu(req.opcode)) {
	case VFW_MBX_OP_HELLO:
		st = mbox_aq(pf, VFW_AQ_OP_CLEAR_VF_FILTERS, vf, &d);
		rep.u.hello.api = cpu_to_le16(VFW_MBX_API_VERSION);
		break;
	case VFW_MBX_OP_SET_MAC:
		st = mbox_set_mac(pf, vf, &cfg, &req);
		break;
	case VFW_MBX_OP_VLAN:
		st = mbox_vlan(pf, vf, &cfg, &req);
		break;
	case VFW_MBX_OP_RX_MODE:
		st = mbox_rx_mode(pf, vf, &cfg, &req, &rep);
		break;
	default:
		st = VFW_MBX_S_UNSUPPORTED;
		break;
	}
reply:
	rep.status = cpu_to_le16(st);
	pf->mbx_served++;
	if (st != VFW_MBX_S_OK)
		pf->mbx_refused++;
	mbox_send_reply(pf, &rep);
}

static irqreturn_t vfw_pf_mbox_thread(int irq, void *data)
{
	struct vfw_pf *pf = data;
	int pass, w;

	/* Bounded: each VF has at most one request in flight, and one that
	 * posts again while we work raises the vector again. */
	for (pass = 0; pass < 2; pass++) {
		bool any = false;

		for (w = 0; w < VFW_SRIOV_TOTAL_VFS / 32; w++) {
			unsigned long pend =
				ioread32(pf->bar0 + VFW_REG_PF_MBX_PEND(w));
			int bit;

			/* Not bounded by pci_num_vf(): a VF probing inside
			 * pci_enable_sriov() asks before the PCI core counts
			 * it. The device only flags VFs that exist. */
			for_each_set_bit(bit, &pend, 32) {
				mbox_serve(pf, w * 32 + bit);
				any = true;
			}
		}
		if (!any)
			break;
	}
	return IRQ_HANDLED;
}

int vfw_pf_mbox_init(struct vfw_pf *pf)
{
	int err;

	err = request_threaded_irq(pci_irq_vector(pf->pdev, VFW_PF_VEC_MBOX),
				   NULL, vfw_pf_mbox_thread, IRQF_ONESHOT,
				   DRV_NAME "-mbox", pf);
	if (err)
		return err;
	iowrite32(VFW_MBX_CTRL_IRQ_EN |
		  VFW_PF_VEC_MBOX << VFW_MBX_CTRL_VEC_SHIFT,
		  pf->bar0 + VFW_REG_PF_MBX_CTRL);
	return 0;
}

void vfw_pf_mbox_fini(struct vfw_pf *pf)
{
	iowrite32(0, pf->bar0 + VFW_REG_PF_MBX_CTRL);
	free_irq(pci_irq_vector(pf->pdev, VFW_PF_VEC_MBOX), pf);
}
