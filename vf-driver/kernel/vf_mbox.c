// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf: the VF side of the VF-to-PF mailbox (include/vfwarp/
 * vfwarp_mbox.h). A VF cannot configure its own switch port: it asks the PF
 * driver, which decides (MAC change, VLAN filters, multicast list,
 * all-multicast and promiscuous mode) and answers. One request at a time
 * (mbx_lock); the reply raises VFW_VF_VEC_MBOX. The netdev ops that need
 * the PF's consent (vf_netdev.c) call the helpers at the end of this file.
 */
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/io.h>

#include "vf.h"
#include "vfwarp/vfwarp_mbox.h"

/* The PF answers from a threaded interrupt; under TCG and nested guests a
 * round trip takes milliseconds. A PF driver that is not loaded never
 * answers: give up and say so. */
#define VFW_VF_MBX_TIMEOUT_MS	5000

static int mbx_errno(u16 status)
{
	switch (status) {
	case VFW_MBX_S_OK:
		return 0;
	case VFW_MBX_S_DENIED:
		return -EPERM;
	case VFW_MBX_S_INVAL:
		return -EINVAL;
	case VFW_MBX_S_NOSPC:
		return -ENOSPC;
	case VFW_MBX_S_UNSUPPORTED:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
}

irqreturn_t vfw_vf_mbx_irq(int irq, void *data)
{
	struct vfw_vf *vf = data;

	/* on a shared vector (one_vec) the other causes call us too */
	if (vf->one_vec &&
	    !(ioread32(vf->eth.bar0 + VFW_REG_MBX_STATUS) & VFW_MBX_STS_REPLY))
		return IRQ_NONE;
	complete(&vf->mbx_done);
	return IRQ_HANDLED;
}

/* Arm the reply interrupt (probe, and after an FLR cleared it). */
void vfw_vf_mbx_enable(struct vfw_vf *vf)
{
	iowrite32(VFW_MBX_CTRL_IRQ_EN | vfw_vf_vec(vf, VFW_VF_VEC_MBOX) << VFW_MBX_CTRL_VEC_SHIFT,
		  vf->eth.bar0 + VFW_REG_MBX_CTRL);
}

/* Send `msg` to the PF and wait for its answer, which replaces `msg`.
 * Returns 0, the PF's refusal as an errno, or -ETIMEDOUT. Sleeps. */
static int vfw_vf_mbx_call(struct vfw_vf *vf, struct vfw_mbx_msg *msg)
{
	void __iomem *bar0 = vf->eth.bar0;
	__le32 *w = (__le32 *)msg;
	u16 op = le16_to_cpu(msg->opcode);
	u32 seq;
	int i, err;

	mutex_lock(&vf->mbx_lock);
	seq = ++vf->mbx_seq;
	msg->seq = cpu_to_le32(seq);
	msg->status = 0;
	reinit_completion(&vf->mbx_done);
	for (i = 0; i < VFW_MBX_MSG_WORDS; i++)
		iowrite32(le32_to_cpu(w[i]), bar0 + VFW_REG_MBX_MSG(i));
	iowrite32(1, bar0 + VFW_REG_MBX_DOORBELL);
	wait_for_completion_timeout(&vf->mbx_done,
				    msecs_to_jiffies(VFW_VF_MBX_TIMEOUT_MS));
	/* The status register decides: an interrupt may be late or lost. */
	if (!(ioread32(bar0 + VFW_REG_MBX_STATUS) & VFW_MBX_STS_REPLY)) {
		dev_warn(&vf->eth.pdev->dev,
			 "PF did not answer request 0x%04x in %d ms (is vfwarp_pf loaded on the host?)\n",
			 op, VFW_VF_MBX_TIMEOUT_MS);
		err = -ETIMEDOUT;
		goto out;
	}
	for (i = 0; i < VFW_MBX_MSG_WORDS; i++)
		w[i] = cpu_to_le32(ioread32(bar0 + VFW_REG_MBX_MSG(i)));
	/* A late answer to an earlier request that timed out is not ours. */
	if (le32_to_cpu(msg->seq) != seq || le16_to_cpu(msg->opcode) != op) {
		dev_warn(&vf->eth.pdev->dev,
			 "mailbox: reply 0x%04x/%u does not match request 0x%04x/%u\n",
			 le16_to_cpu(msg->opcode), le32_to_cpu(msg->seq), op, seq);
		err = -EIO;
		goto out;
	}
	err = mbx_errno(le16_to_cpu(msg->status));
out:
	mutex_unlock(&vf->mbx_lock);
	return err;
}

/* Driver start: the PF forgets what an earlier driver asked for. */
int vfw_vf_mbx_hello(struct vfw_vf *vf)
{
	struct vfw_mbx_msg m = { .opcode = cpu_to_le16(VFW_MBX_OP_HELLO) };

	m.u.hello.api = cpu_to_le16(VFW_MBX_API_VERSION);
	return vfw_vf_mbx_call(vf, &m);
}

int vfw_vf_mbx_set_mac(struct vfw_vf *vf, const u8 *mac)
{
	struct vfw_mbx_msg m = { .opcode = cpu_to_le16(VFW_MBX_OP_SET_MAC) };

	ether_addr_copy(m.u.mac.mac, mac);
	return vfw_vf_mbx_call(vf, &m);
}

int vfw_vf_mbx_vlan(struct vfw_vf *vf, u16 vid, bool add)
{
	struct vfw_mbx_msg m = { .opcode = cpu_to_le16(VFW_MBX_OP_VLAN) };

	m.u.vlan.vid = cpu_to_le16(vid);
	m.u.vlan.add = add;
	return vfw_vf_mbx_call(vf, &m);
}

/* ndo_set_rx_mode runs atomically; the request goes from a work item. */
void vfw_vf_rx_mode_work(struct work_struct *work)
{
	struct vfw_vf *vf = container_of(work, struct vfw_vf, rx_mode_work);
	struct net_device *dev = vf->eth.netdev;
	struct vfw_mbx_msg m = { .opcode = cpu_to_le16(VFW_MBX_OP_RX_MODE) };
	struct vfw_mbx_rx_mode *rm = &m.u.rx_mode;
	struct netdev_hw_addr *ha;
	u8 want = 0;
	int err;

	netif_addr_lock_bh(dev);
	if (dev->flags & IFF_PROMISC)
		want |= VFW_RXM_PROMISC;
	/* More groups than the exact filter holds: ask for all of them. */
	if ((dev->flags & IFF_ALLMULTI) ||
	    netdev_mc_count(dev) > VFW_MC_FILTER_MAX)
		want |= VFW_RXM_ALLMULTI;
	netdev_for_each_mc_addr(ha, dev) {
		if (rm->mc_count == VFW_MC_FILTER_MAX)
			break;
		ether_addr_copy(rm->mc[rm->mc_count++], ha->addr);
	}
	netif_addr_unlock_bh(dev);
	rm->flags = want;

	err = vfw_vf_mbx_call(vf, &m);
	if (err) {
		netdev_warn(dev, "PF refused the RX mode (%d multicast groups, flags 0x%x): %d\n",
			    rm->mc_count, want, err);
		return;
	}
	if (m.u.rx_mode.flags != want)
		netdev_info(dev, "PF granted RX flags 0x%x of 0x%x (allmulti/promiscuous need trust); multicast filter holds %u groups\n",
			    m.u.rx_mode.flags, want, m.u.rx_mode.mc_count);
}
