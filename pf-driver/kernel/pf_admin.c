// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_admin.c - admin queue client of the vfwarp PF driver: one command
 * ring in coherent DMA memory (include/vfwarp/vfwarp_admin.h), commands
 * submitted one at a time under aq_lock and polled for completion.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>

#include "pf.h"

/* The device completes in well under this; polled in 10-20 us steps. */
#define VFW_PF_AQ_TIMEOUT_US 200000

int vfw_pf_aq_init(struct vfw_pf *pf)
{
	struct device *dev = &pf->pdev->dev;
	size_t size = VFW_PF_AQ_LEN * sizeof(*pf->aq_ring);
	u32 st;

	mutex_init(&pf->aq_lock);
	pf->aq_ring = dmam_alloc_coherent(dev, size, &pf->aq_dma, GFP_KERNEL);
	if (!pf->aq_ring)
		return -ENOMEM;
	iowrite32(0, pf->bar0 + VFW_REG_AQ_CTRL);
	iowrite32(lower_32_bits(pf->aq_dma), pf->bar0 + VFW_REG_AQ_BASE_LO);
	iowrite32(upper_32_bits(pf->aq_dma), pf->bar0 + VFW_REG_AQ_BASE_HI);
	iowrite32(VFW_PF_AQ_LEN, pf->bar0 + VFW_REG_AQ_LEN);
	iowrite32(VFW_AQ_CTRL_ENABLE, pf->bar0 + VFW_REG_AQ_CTRL);
	st = ioread32(pf->bar0 + VFW_REG_AQ_STATUS);
	if (st != VFW_AQ_STATUS_ENABLED) {
		dev_err(dev, "admin queue did not start (status 0x%x)\n", st);
		return -EIO;
	}
	pf->aq_tail = 0;
	pf->aq_up = true;
	return 0;
}

void vfw_pf_aq_fini(struct vfw_pf *pf)
{
	mutex_lock(&pf->aq_lock);
	pf->aq_up = false;
	iowrite32(0, pf->bar0 + VFW_REG_AQ_CTRL);
	mutex_unlock(&pf->aq_lock);
}

int vfw_pf_aq_errno(u16 status)
{
	switch (status) {
	case VFW_AQ_S_OK:
		return 0;
	case VFW_AQ_S_BAD_VF:
	case VFW_AQ_S_RANGE:
	case VFW_AQ_S_INVAL:
		return -EINVAL;
	case VFW_AQ_S_UNSUPPORTED:
		return -EPROTONOSUPPORT;
	case VFW_AQ_S_BAD_OPCODE:
		return -EOPNOTSUPP;
	/* 2.1 (QoS); docs/qos.md "Status -> errno and extack" */
	case VFW_AQ_S_NOENT:
		return -ENOENT;
	case VFW_AQ_S_BUSY:
		return -EBUSY;
	case VFW_AQ_S_NOSPC:
		return -ENOSPC;
	case VFW_AQ_S_LOOP:
		return -ELOOP;
	case VFW_AQ_S_OVERSUB:
		return -ERANGE;
	default:
		return -EIO;
	}
}

/* For log messages: a completion status by name. */
const char *vfw_pf_aq_status_str(u16 status)
{
	static const char * const names[] = {
		[VFW_AQ_S_OK] = "OK",
		[VFW_AQ_S_BAD_OPCODE] = "BAD_OPCODE",
		[VFW_AQ_S_BAD_VF] = "BAD_VF",
		[VFW_AQ_S_RANGE] = "RANGE",
		[VFW_AQ_S_INVAL] = "INVAL",
		[VFW_AQ_S_UNSUPPORTED] = "UNSUPPORTED",
		[VFW_AQ_S_NOENT] = "NOENT",
		[VFW_AQ_S_BUSY] = "BUSY",
		[VFW_AQ_S_NOSPC] = "NOSPC",
		[VFW_AQ_S_LOOP] = "LOOP",
		[VFW_AQ_S_OVERSUB] = "OVERSUB",
	};

	return status < ARRAY_SIZE(names) && names[status] ? names[status] :
							       "unknown";
}

/*
 * Run one command. On return *desc holds the device's write-back. Returns
 * the completion status (VFW_AQ_S_*, >= 0), or a negative errno when the
 * queue is down or the device did not complete.
 */
int vfw_pf_aq_exec(struct vfw_pf *pf, struct vfw_aq_desc *desc)
{
	struct device *dev = &pf->pdev->dev;
	struct vfw_aq_desc *slot;
	u32 waited = 0, cookie;
	int ret;

	mutex_lock(&pf->aq_lock);
	if (!pf->aq_up) {
		ret = -ENODEV;
		goto out;
	}
	cookie = ++pf->aq_cookie;
	slot = &pf->aq_ring[pf->aq_tail];
	desc->flags = 0;
	desc->status = 0;
	desc->cookie = cpu_to_le32(cookie);
	memcpy(slot, desc, sizeof(*slot));
	pf->aq_tail = (pf->aq_tail + 1) % VFW_PF_AQ_LEN;
	pf->aq_stats.cmds++;
	dma_wmb();
	iowrite32(pf->aq_tail, pf->bar0 + VFW_REG_AQ_TAIL);

	while (!(le16_to_cpu(READ_ONCE(slot->flags)) & VFW_AQ_F_DONE)) {
		if (waited >= VFW_PF_AQ_TIMEOUT_US ||
		    !(ioread32(pf->bar0 + VFW_REG_AQ_STATUS) &
		      VFW_AQ_STATUS_ENABLED)) {
			pf->aq_stats.timeouts++;
			pf->aq_up = false;
			iowrite32(0, pf->bar0 + VFW_REG_AQ_CTRL);
			dev_err(dev, "admin command 0x%04x: no completion (status 0x%x); admin queue stopped\n",
				le16_to_cpu(desc->opcode),
				ioread32(pf->bar0 + VFW_REG_AQ_STATUS));
			ret = -ETIMEDOUT;
			goto out;
		}
		usleep_range(10, 20);
		waited += 15;
	}
	dma_rmb();
	memcpy(desc, slot, sizeof(*desc));
	ret = le16_to_cpu(desc->status);
	if (ret != VFW_AQ_S_OK)
		pf->aq_stats.errors++;
	if (le32_to_cpu(desc->cookie) != cookie)
		dev_warn(dev, "admin completion cookie %u, expected %u\n",
			 le32_to_cpu(desc->cookie), cookie);
out:
	mutex_unlock(&pf->aq_lock);
	return ret;
}
