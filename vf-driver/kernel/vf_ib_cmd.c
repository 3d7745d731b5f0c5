// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf RDMA: the verbs command queue (RCQ) and the event queue (EQ)
 * of hardware interface 2.0 (include/vfwarp/vfwarp_rdma.h).
 *
 * RCQ: a coherent ring of VFW_IB_RCQ_LEN descriptors. Commands are
 * synchronous: one at a time (cmd_lock), fill the descriptor, write TAIL,
 * poll its DONE flag. The device writes the reply fields and status into
 * the same descriptor. A command that never completes makes the queue
 * unusable (the device may still run it later and we cannot tell which
 * descriptor it is on), so it is marked dead and every later command
 * fails with -EIO.
 *
 * EQ: a coherent ring of VFW_IB_EQ_LEN entries and one private-data slot
 * per entry, on MSI-X vector VFW_MSIX_VEC_RDMA_EQ. The hard IRQ handler
 * consumes entries: completion and error events go to the CQ/QP handlers
 * directly (as every RDMA driver does from its interrupt), CM events are
 * copied with their private data and handed to an ordered workqueue
 * (vf_ib_cm.c), so iw_cm sees them in EQ order and in process context.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/slab.h>

#include "vfwarp/vfwarp_regs.h"
#include "vf_ib.h"

static inline u32 rd(struct vfw_ib_dev *dev, u32 reg)
{
	return ioread32(dev->bar0 + reg);
}

static inline void wr(struct vfw_ib_dev *dev, u32 reg, u32 val)
{
	iowrite32(val, dev->bar0 + reg);
}

static int rcmd_errno(u16 status)
{
	switch (status) {
	case VFW_RCMD_S_OK:
		return 0;
	case VFW_RCMD_S_BAD_OPCODE:
	case VFW_RCMD_S_UNSUPPORTED:
		return -EOPNOTSUPP;
	case VFW_RCMD_S_INVAL:
		return -EINVAL;
	case VFW_RCMD_S_NOSPC:
		return -ENOSPC;
	case VFW_RCMD_S_NOENT:
		return -ENOENT;
	case VFW_RCMD_S_BUSY:
		return -EBUSY;
	case VFW_RCMD_S_DMA:
		return -EFAULT;
	case VFW_RCMD_S_STATE:
		return -EINVAL;
	case VFW_RCMD_S_ADDRINUSE:
		return -EADDRINUSE;
	default:
		return -EIO;
	}
}

/*
 * Run one command. `cmd` holds opcode and arguments; on return it holds
 * the device's reply (reply fields, status). Returns 0 or the errno of the
 * device's status, -ETIMEDOUT (queue now dead) or -EIO (queue dead).
 * Sleeps.
 */
int vfw_ib_cmd(struct vfw_ib_dev *dev, struct vfw_rcmd *cmd)
{
	unsigned long deadline;
	struct vfw_rcmd *d;
	unsigned int spins = 0;
	u16 flags;
	int err;

	mutex_lock(&dev->cmd_lock);
	if (dev->cmd_dead) {
		err = -EIO;
		goto out;
	}
	d = &dev->rcq[dev->rcq_tail];
	cmd->flags = 0;
	cmd->status = 0;
	cmd->cookie = ++dev->cmd_cookie;
	memcpy(d, cmd, sizeof(*d));
	dev->rcq_tail = (dev->rcq_tail + 1) % VFW_IB_RCQ_LEN;
	/* iowrite32 orders the descriptor (coherent memory) before the doorbell */
	wr(dev, VFW_REG_RCQ_TAIL, dev->rcq_tail);

	deadline = jiffies + msecs_to_jiffies(VFW_IB_CMD_TIMEOUT_MS);
	for (;;) {
		flags = READ_ONCE(d->flags);
		if (flags & VFW_RCMD_F_DONE)
			break;
		if (time_after(jiffies, deadline)) {
			dev->cmd_dead = true;
			ibdev_err(&dev->ibdev,
				  "command 0x%02x timed out (RCQ status 0x%x head %u); RDMA commands disabled\n",
				  cmd->opcode, rd(dev, VFW_REG_RCQ_STATUS),
				  rd(dev, VFW_REG_RCQ_HEAD));
			err = -ETIMEDOUT;
			goto out;
		}
		/* The emulation usually completes before the doorbell write
		 * returns: spin briefly, then sleep. */
		if (++spins < 20)
			udelay(5);
		else
			usleep_range(50, 200);
	}
	dma_rmb();		/* reply fields after DONE */
	memcpy(cmd, d, sizeof(*cmd));
	if (cmd->cookie != dev->cmd_cookie)
		ibdev_warn(&dev->ibdev, "command cookie %u, expected %u\n",
			   cmd->cookie, dev->cmd_cookie);
	err = (flags & VFW_RCMD_F_ERR) ? rcmd_errno(cmd->status) : 0;
	if ((flags & VFW_RCMD_F_ERR) && !err)
		err = -EIO;
	if (err)
		ibdev_dbg(&dev->ibdev, "command 0x%02x: status %u (%d)\n",
			  cmd->opcode, cmd->status, err);
out:
	mutex_unlock(&dev->cmd_lock);
	return err;
}

/* A page list buffer for one command; the device copies it at the
 * command, so it is freed right after. */
void *vfw_ib_pgl_alloc(struct vfw_ib_dev *dev, u32 npages, dma_addr_t *dma)
{
	return dma_alloc_coherent(&dev->pdev->dev, (size_t)npages * sizeof(u64),
				  dma, GFP_KERNEL);
}

void vfw_ib_pgl_free(struct vfw_ib_dev *dev, u32 npages, void *pgl,
		     dma_addr_t dma)
{
	dma_free_coherent(&dev->pdev->dev, (size_t)npages * sizeof(u64), pgl,
			  dma);
}

int vfw_ib_rcq_init(struct vfw_ib_dev *dev)
{
	size_t sz = VFW_IB_RCQ_LEN * VFW_RCQ_DESC_SIZE;

	mutex_init(&dev->cmd_lock);
	dev->rcq = dma_alloc_coherent(&dev->pdev->dev, sz, &dev->rcq_dma,
				      GFP_KERNEL);
	if (!dev->rcq)
		return -ENOMEM;
	vfw_ib_rcq_enable(dev);
	if (!(rd(dev, VFW_REG_RCQ_STATUS) & VFW_RCQ_STATUS_ENABLED)) {
		dev_err(&dev->pdev->dev, "RDMA command queue did not enable (status 0x%x)\n",
			rd(dev, VFW_REG_RCQ_STATUS));
		wr(dev, VFW_REG_RCQ_CTRL, 0);
		dma_free_coherent(&dev->pdev->dev, sz, dev->rcq, dev->rcq_dma);
		dev->rcq = NULL;
		return -EIO;
	}
	return 0;
}

/* Program and enable the queue (probe, and after an FLR reset it). */
void vfw_ib_rcq_enable(struct vfw_ib_dev *dev)
{
	mutex_lock(&dev->cmd_lock);
	memset(dev->rcq, 0, VFW_IB_RCQ_LEN * VFW_RCQ_DESC_SIZE);
	wr(dev, VFW_REG_RCQ_CTRL, 0);
	wr(dev, VFW_REG_RCQ_BASE_LO, lower_32_bits(dev->rcq_dma));
	wr(dev, VFW_REG_RCQ_BASE_HI, upper_32_bits(dev->rcq_dma));
	wr(dev, VFW_REG_RCQ_LEN, VFW_IB_RCQ_LEN);
	wr(dev, VFW_REG_RCQ_CTRL, VFW_RCQ_CTRL_ENABLE);
	/* the device starts at HEAD = TAIL = 0 on enable */
	dev->rcq_tail = rd(dev, VFW_REG_RCQ_HEAD) % VFW_IB_RCQ_LEN;
	dev->cmd_dead = false;
	mutex_unlock(&dev->cmd_lock);
}

void vfw_ib_rcq_fini(struct vfw_ib_dev *dev)
{
	if (!dev->rcq)
		return;
	wr(dev, VFW_REG_RCQ_CTRL, 0);
	dma_free_coherent(&dev->pdev->dev, VFW_IB_RCQ_LEN * VFW_RCQ_DESC_SIZE,
			  dev->rcq, dev->rcq_dma);
	dev->rcq = NULL;
}

/* ---- event queue ---------------------------------------------------- */

static bool eqe_is_cm(u8 type)
{
	return type >= VFW_EQE_CONNECT_REQUEST && type <= VFW_EQE_CLOSE;
}

static void eq_queue_cm(struct vfw_ib_dev *dev, const struct vfw_eqe *eqe,
			u32 slot, u32 seq)
{
	u16 plen = min_t(u16, eqe->pdata_len, VFW_EQ_PDATA_SLOT);
	struct vfw_cm_evt *evt;

	if (!dev->eq_pdata)
		plen = 0;
	evt = kmalloc(struct_size(evt, pdata, plen), GFP_ATOMIC);
	if (!evt) {
		/* Losing a CM event strands a connection; say so loudly. */
		ibdev_err(&dev->ibdev, "out of memory: CM event %u for cep %u lost\n",
			  eqe->type, eqe->obj);
		return;
	}
	evt->seq = seq;
	evt->eqe = *eqe;
	evt->eqe.pdata_len = plen;
	if (plen)
		memcpy(evt->pdata, dev->eq_pdata + (size_t)slot * VFW_EQ_PDATA_SLOT,
		       plen);
	spin_lock(&dev->cm_evt_lock);
	list_add_tail(&evt->node, &dev->cm_evts);
	spin_unlock(&dev->cm_evt_lock);
}

/*
 * Consume the EQ. Called from the interrupt, and with the CM lock held
 * from vf_ib_cm.c when it must see every event the device has written so
 * far. Returns the number of entries consumed.
 */
unsigned int vfw_ib_eq_poll(struct vfw_ib_dev *dev)
{
	unsigned long flags;
	bool cm = false;
	unsigned int n;

	spin_lock_irqsave(&dev->eq_lock, flags);
	if (!dev->eq) {
		spin_unlock_irqrestore(&dev->eq_lock, flags);
		return 0;
	}
	/* Bounded: at most one pass of the ring per call; the device
	 * raises the vector again for entries written after our CONS. */
	for (n = 0; n < VFW_IB_EQ_LEN; n++) {
		u32 slot = dev->eq_cons % VFW_IB_EQ_LEN;
		u8 pass = ((dev->eq_cons / VFW_IB_EQ_LEN) & 1) ^ 1;
		struct vfw_eqe *e = &dev->eq[slot];
		struct vfw_eqe eqe;

		if ((READ_ONCE(e->owner) & 1) != pass)
			break;
		dma_rmb();	/* the entry after its owner byte */
		eqe = *e;
		switch (eqe.type) {
		case VFW_EQE_COMP:
			vfw_ib_cq_event(dev, eqe.obj, false);
			break;
		case VFW_EQE_CQ_ERROR:
			vfw_ib_cq_event(dev, eqe.obj, true);
			break;
		case VFW_EQE_QP_ERROR:
			vfw_ib_qp_fatal(dev, &eqe);
			break;
		default:
			if (eqe_is_cm(eqe.type)) {
				eq_queue_cm(dev, &eqe, slot, dev->eq_cons);
				cm = true;
			} else {
				ibdev_warn_ratelimited(&dev->ibdev,
						       "unknown event type %u\n",
						       eqe.type);
			}
		}
		dev->eq_cons++;
	}
	if (n)
		wr(dev, VFW_REG_REQ_CONS, dev->eq_cons);
	spin_unlock_irqrestore(&dev->eq_lock, flags);
	if (cm)
		queue_work(dev->cm_wq, &dev->cm_work);
	return n;
}

static irqreturn_t vfw_ib_eq_irq(int irq, void *data)
{
	return vfw_ib_eq_poll(data) ? IRQ_HANDLED : IRQ_NONE;
}

/* EQ position the device will write next: events before it are older
 * than anything the device does after this read. */
u32 vfw_ib_eq_prod(struct vfw_ib_dev *dev)
{
	return rd(dev, VFW_REG_REQ_PROD);
}

static size_t eq_ring_size(void)
{
	return VFW_IB_EQ_LEN * VFW_EQE_SIZE;
}

static size_t eq_pdata_size(void)
{
	return VFW_IB_EQ_LEN * VFW_EQ_PDATA_SLOT;
}

void vfw_ib_eq_enable(struct vfw_ib_dev *dev)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->eq_lock, flags);
	wr(dev, VFW_REG_REQ_CTRL, 0);
	memset(dev->eq, 0, eq_ring_size());
	dev->eq_cons = 0;
	wr(dev, VFW_REG_REQ_BASE_LO, lower_32_bits(dev->eq_dma));
	wr(dev, VFW_REG_REQ_BASE_HI, upper_32_bits(dev->eq_dma));
	wr(dev, VFW_REG_REQ_LEN, VFW_IB_EQ_LEN);
	wr(dev, VFW_REG_REQ_PDATA_LO, lower_32_bits(dev->eq_pdata_dma));
	wr(dev, VFW_REG_REQ_PDATA_HI, upper_32_bits(dev->eq_pdata_dma));
	wr(dev, VFW_REG_REQ_CTRL, VFW_REQ_CTRL_ENABLE | VFW_REQ_CTRL_IRQ_EN |
	   (dev->eq_vec << VFW_REQ_CTRL_VEC_SHIFT));
	spin_unlock_irqrestore(&dev->eq_lock, flags);
}

int vfw_ib_eq_init(struct vfw_ib_dev *dev)
{
	struct device *d = &dev->pdev->dev;
	int err;

	spin_lock_init(&dev->eq_lock);
	dev->eq = dma_alloc_coherent(d, eq_ring_size(), &dev->eq_dma,
				     GFP_KERNEL);
	if (!dev->eq)
		return -ENOMEM;
	dev->eq_pdata = dma_alloc_coherent(d, eq_pdata_size(),
					   &dev->eq_pdata_dma, GFP_KERNEL);
	if (!dev->eq_pdata) {
		err = -ENOMEM;
		goto err_ring;
	}
	/* dev->eq_irq: the VF driver's vector eq_vec, shared with the VF's
	 * other causes when it has one vector (the handler says IRQ_NONE
	 * when the EQ holds nothing new) */
	err = request_irq(dev->eq_irq, vfw_ib_eq_irq, IRQF_SHARED, "vfwarp_rdma", dev);
	if (err)
		goto err_pdata;
	dev->eq_irq_on = true;
	vfw_ib_eq_enable(dev);
	if (!(rd(dev, VFW_REG_REQ_STATUS) & VFW_REQ_STATUS_ENABLED)) {
		dev_err(d, "RDMA event queue did not enable (status 0x%x)\n",
			rd(dev, VFW_REG_REQ_STATUS));
		err = -EIO;
		goto err_irq;
	}
	return 0;

err_irq:
	wr(dev, VFW_REG_REQ_CTRL, 0);
	free_irq(dev->eq_irq, dev);
	dev->eq_irq_on = false;
err_pdata:
	dma_free_coherent(d, eq_pdata_size(), dev->eq_pdata, dev->eq_pdata_dma);
	dev->eq_pdata = NULL;
err_ring:
	dma_free_coherent(d, eq_ring_size(), dev->eq, dev->eq_dma);
	dev->eq = NULL;
	return err;
}

void vfw_ib_eq_fini(struct vfw_ib_dev *dev)
{
	struct device *d = &dev->pdev->dev;
	unsigned long flags;
	void *ring, *pdata;

	if (!dev->eq)
		return;
	wr(dev, VFW_REG_REQ_CTRL, 0);
	if (dev->eq_irq_on) {
		free_irq(dev->eq_irq, dev);
		dev->eq_irq_on = false;
	}
	spin_lock_irqsave(&dev->eq_lock, flags);
	ring = dev->eq;
	pdata = dev->eq_pdata;
	dev->eq = NULL;
	dev->eq_pdata = NULL;
	spin_unlock_irqrestore(&dev->eq_lock, flags);
	dma_free_coherent(d, eq_pdata_size(), pdata, dev->eq_pdata_dma);
	dma_free_coherent(d, eq_ring_size(), ring, dev->eq_dma);
}
