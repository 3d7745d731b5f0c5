// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf RDMA: protection domains, memory regions, completion queues
 * and queue pairs.
 *
 * Every object is a device object made by a command (vf_ib_cmd.c); the
 * driver keeps only what it needs to name it and, for kernel consumers,
 * the rings. Memory the device reads or writes is described by page
 * lists of 4 KiB blocks:
 *   - user MRs and user rings: ib_umem pins the process's pages,
 *     rdma_umem_for_each_dma_block() yields the DMA addresses;
 *   - kernel rings: one coherent allocation, listed page by page.
 * The page list buffer lives only for the command (the device copies it).
 *
 * Kernel QPs post WQEs into their coherent rings and ring doorbell page 0
 * (BAR4); kernel CQs are polled here. User QPs/CQs are driven by the
 * provider through its own doorbell page (vf_ib_mmap.c); the kernel only
 * creates and destroys them.
 */
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/sizes.h>

#include <rdma/iter.h>
#include <rdma/uverbs_ioctl.h>

#include "vfwarp/vfwarp_regs.h"
#include "vf_ib.h"

/* ---- page lists ------------------------------------------------------ */

struct vfw_pgl {
	u64 *va;
	dma_addr_t dma;
	u32 n;
};

static void pgl_free(struct vfw_ib_dev *dev, struct vfw_pgl *p)
{
	if (p->va)
		vfw_ib_pgl_free(dev, p->n, p->va, p->dma);
	p->va = NULL;
}

/* 4 KiB blocks of a pinned user buffer (ib_umem_find_best_pgsz() may have
 * set umem->iova). */
static int pgl_from_umem(struct vfw_ib_dev *dev, struct ib_umem *umem,
			 struct vfw_pgl *p, struct vfw_pgl_ref *ref)
{
	struct ib_block_iter biter;
	size_t n = ib_umem_num_dma_blocks(umem, SZ_4K);
	u32 i = 0;

	if (!n || n > VFW_RDMA_MAX_MR_PGL)
		return -EINVAL;
	p->n = n;
	p->va = vfw_ib_pgl_alloc(dev, p->n, &p->dma);
	if (!p->va)
		return -ENOMEM;
	rdma_umem_for_each_dma_block(umem, &biter, SZ_4K) {
		if (i == p->n)
			break;
		p->va[i++] = rdma_block_iter_dma_address(&biter);
	}
	ref->pgl_addr = p->dma;
	ref->npages = i;
	ref->page_shift = 12;
	ref->offset = 0;
	return 0;
}

/* A coherent kernel ring, listed page by page. */
static int pgl_from_coherent(struct vfw_ib_dev *dev, dma_addr_t base,
			     size_t size, struct vfw_pgl *p,
			     struct vfw_pgl_ref *ref)
{
	u32 i;

	p->n = DIV_ROUND_UP(size, SZ_4K);
	p->va = vfw_ib_pgl_alloc(dev, p->n, &p->dma);
	if (!p->va)
		return -ENOMEM;
	for (i = 0; i < p->n; i++)
		p->va[i] = base + (u64)i * SZ_4K;
	ref->pgl_addr = p->dma;
	ref->npages = p->n;
	ref->page_shift = 12;
	ref->offset = 0;
	return 0;
}

/* ---- rings ------------------------------------------------------------ */

static int ring_alloc_kernel(struct vfw_ib_dev *dev, struct vfw_ring *r,
			     size_t size)
{
	r->size = PAGE_ALIGN(size);
	r->va = dma_alloc_coherent(&dev->pdev->dev, r->size, &r->dma,
				   GFP_KERNEL);
	return r->va ? 0 : -ENOMEM;
}

static int ring_pin_user(struct vfw_ib_dev *dev, struct vfw_ring *r, u64 va,
			 u64 len, size_t need)
{
	struct ib_umem *umem;

	if (!va || (va & ~PAGE_MASK) || len < need || len > SZ_1G)
		return -EINVAL;
	/* LOCAL_WRITE also for rings the device only reads: it makes
	 * ib_umem_get() break COW now, so the pinned pages stay the ones
	 * the process writes. */
	umem = ib_umem_get(&dev->ibdev, va, need, IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(umem))
		return PTR_ERR(umem);
	r->umem = umem;
	r->size = need;
	return 0;
}

static void ring_free(struct vfw_ib_dev *dev, struct vfw_ring *r)
{
	if (r->umem)
		ib_umem_release(r->umem);
	else if (r->va)
		dma_free_coherent(&dev->pdev->dev, r->size, r->va, r->dma);
	r->umem = NULL;
	r->va = NULL;
}

static int ring_pgl(struct vfw_ib_dev *dev, struct vfw_ring *r,
		    struct vfw_pgl *p, struct vfw_pgl_ref *ref)
{
	if (r->umem)
		return pgl_from_umem(dev, r->umem, p, ref);
	return pgl_from_coherent(dev, r->dma, r->size, p, ref);
}

static u16 udata_db_page(struct ib_udata *udata)
{
	struct vfw_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct vfw_ucontext, ibuc);

	return uc ? uc->db_page : 0;
}

/* ---- PD ---------------------------------------------------------------- */

static int vfw_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibpd->device);
	struct vfw_pd *pd = container_of(ibpd, struct vfw_pd, ibpd);
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_PD_ALLOC };
	int err;

	err = vfw_ib_cmd(dev, &cmd);
	if (err)
		return err;
	pd->id = cmd.u.pd.pd;
	return 0;
}

/* Destroy verbs never fail on our side: the device may already have
 * forgotten the object (FLR), and the core must be able to free it. */
static int vfw_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibpd->device);
	struct vfw_pd *pd = container_of(ibpd, struct vfw_pd, ibpd);
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_PD_FREE };
	int err;

	cmd.u.pd.pd = pd->id;
	err = vfw_ib_cmd(dev, &cmd);
	if (err)
		ibdev_warn(&dev->ibdev, "PD %u free: %d\n", pd->id, err);
	return 0;
}

/* ---- MR ---------------------------------------------------------------- */

static u32 mr_access(int acc)
{
	u32 a = 0;

	if (acc & IB_ACCESS_LOCAL_WRITE)
		a |= VFW_MR_ACC_LOCAL_WRITE;
	if (acc & IB_ACCESS_REMOTE_WRITE)
		a |= VFW_MR_ACC_REMOTE_WRITE;
	if (acc & IB_ACCESS_REMOTE_READ)
		a |= VFW_MR_ACC_REMOTE_READ;
	return a;
}

#define VFW_MR_SUPPORTED_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_OPTIONAL)

static struct ib_mr *vfw_get_dma_mr(struct ib_pd *ibpd, int acc)
{
	struct vfw_ib_dev *dev = to_vdev(ibpd->device);
	struct vfw_pd *pd = container_of(ibpd, struct vfw_pd, ibpd);
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_MR_REG };
	struct vfw_mr *mr;
	int err;

	/* PHYS MRs are local only (the contract) */
	if (acc & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_OPTIONAL))
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	cmd.u.mr_reg.pd = pd->id;
	cmd.u.mr_reg.access = mr_access(acc);
	cmd.u.mr_reg.iova = 0;
	cmd.u.mr_reg.len = U64_MAX;	/* all of the function's DMA space */
	cmd.u.mr_reg.flags = VFW_MR_F_PHYS;
	err = vfw_ib_cmd(dev, &cmd);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->stag = cmd.u.mr_reg.stag;
	mr->ibmr.lkey = mr->stag;
	mr->ibmr.rkey = mr->stag;
	return &mr->ibmr;
}

static struct ib_mr *vfw_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				     u64 virt, int acc, struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibpd->device);
	struct vfw_pd *pd = container_of(ibpd, struct vfw_pd, ibpd);
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_MR_REG };
	struct vfw_pgl pgl = {};
	struct ib_umem *umem;
	struct vfw_mr *mr;
	int err;

	if (acc & ~VFW_MR_SUPPORTED_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	if (!length || length > (u64)dev->lim.max_mr_pages * SZ_4K)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	umem = ib_umem_get(&dev->ibdev, start, length, acc);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_free;
	}
	/* 4 KiB blocks addressed by the VA the peer uses (iova); start and
	 * iova must agree in their offset inside a block. */
	if (!ib_umem_find_best_pgsz(umem, SZ_4K, virt)) {
		err = -EINVAL;
		goto err_umem;
	}
	err = pgl_from_umem(dev, umem, &pgl, &cmd.u.mr_reg.pgl);
	if (err)
		goto err_umem;
	cmd.u.mr_reg.pgl.offset = virt & (SZ_4K - 1);
	cmd.u.mr_reg.pd = pd->id;
	cmd.u.mr_reg.access = mr_access(acc);
	cmd.u.mr_reg.iova = virt;
	cmd.u.mr_reg.len = length;
	cmd.u.mr_reg.flags = 0;
	err = vfw_ib_cmd(dev, &cmd);
	pgl_free(dev, &pgl);
	if (err)
		goto err_umem;
	mr->umem = umem;
	mr->stag = cmd.u.mr_reg.stag;
	mr->ibmr.lkey = mr->stag;
	mr->ibmr.rkey = mr->stag;
	mr->ibmr.iova = virt;
	mr->ibmr.length = length;
	return &mr->ibmr;

err_umem:
	ib_umem_release(umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int vfw_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibmr->device);
	struct vfw_mr *mr = container_of(ibmr, struct vfw_mr, ibmr);
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_MR_DEREG };
	int err;

	cmd.u.mr_dereg.stag = mr->stag;
	err = vfw_ib_cmd(dev, &cmd);
	if (err)
		ibdev_warn(&dev->ibdev, "MR 0x%x dereg: %d\n", mr->stag, err);
	/* Unpinning after a failed dereg is safe only because a device
	 * that failed the command no longer answers at all (dead queue) or
	 * does not know the STag (-ENOENT). */
	if (mr->umem)
		ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

/* ---- CQ ---------------------------------------------------------------- */

static void cq_destroy_hw(struct vfw_ib_dev *dev, u32 id)
{
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_CQ_DESTROY };
	int err;

	cmd.u.cq_destroy.cq = id;
	err = vfw_ib_cmd(dev, &cmd);
	if (err)
		ibdev_warn(&dev->ibdev, "CQ %u destroy: %d\n", id, err);
}

static int vfw_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			 struct uverbs_attr_bundle *attrs)
{
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
	struct vfw_ib_dev *dev = to_vdev(ibcq->device);
	struct vfw_cq *cq = to_vcq(ibcq);
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_CQ_CREATE };
	struct vfw_pgl pgl = {};
	u32 depth;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	spin_lock_init(&cq->lock);
	if (udata) {
		struct vfwarp_create_cq_req req;

		if (udata->inlen < sizeof(req))
			return -EINVAL;
		err = ib_copy_from_udata(&req, udata, sizeof(req));
		if (err)
			return err;
		depth = req.depth;
		if (depth < 2 || !is_power_of_2(depth) ||
		    depth > dev->lim.max_cq_depth || depth < attr->cqe)
			return -EINVAL;
		err = ring_pin_user(dev, &cq->ring, req.buf_va, req.buf_len,
				    (size_t)depth * VFW_CQE_SIZE + VFW_CQ_CTRL_SIZE);
		if (err)
			return err;
		cq->user = true;
		cq->db_page = udata_db_page(udata);
		cq->depth = depth;
	} else {
		if (attr->cqe < 1 || attr->cqe >= dev->lim.max_cq_depth)
			return -EINVAL;
		depth = roundup_pow_of_two(attr->cqe + 1);
		err = ring_alloc_kernel(dev, &cq->ring,
					(size_t)depth * VFW_CQE_SIZE + VFW_CQ_CTRL_SIZE);
		if (err)
			return err;
		cq->db_page = 0;
		cq->depth = depth;
	}
	err = ring_pgl(dev, &cq->ring, &pgl, &cmd.u.cq_create.pgl);
	if (err)
		goto err_ring;
	cmd.u.cq_create.depth = depth;
	cmd.u.cq_create.db_page = cq->db_page;
	err = vfw_ib_cmd(dev, &cmd);
	pgl_free(dev, &pgl);
	if (err)
		goto err_ring;
	cq->id = cmd.u.cq_create.cq;
	cq->ibcq.cqe = cq->user ? depth : depth - 1;
	err = xa_insert_irq(&dev->cqs, cq->id, cq, GFP_KERNEL);
	if (err) {
		ibdev_err(&dev->ibdev, "device returned CQ id %u twice\n", cq->id);
		err = -EIO;
		goto err_hw;
	}
	if (udata) {
		struct vfwarp_create_cq_resp resp = { .cq_id = cq->id, .depth = depth };

		err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_xa;
	}
	return 0;

err_xa:
	xa_erase_irq(&dev->cqs, cq->id);
	synchronize_irq(dev->eq_irq);
err_hw:
	cq_destroy_hw(dev, cq->id);
err_ring:
	ring_free(dev, &cq->ring);
	return err;
}

static int vfw_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibcq->device);
	struct vfw_cq *cq = to_vcq(ibcq);

	xa_erase_irq(&dev->cqs, cq->id);
	/* the EQ handler may be calling this CQ's handlers right now */
	synchronize_irq(dev->eq_irq);
	cq_destroy_hw(dev, cq->id);
	ring_free(dev, &cq->ring);
	return 0;
}

/* EQ (IRQ context): completion notification or CQ error. */
void vfw_ib_cq_event(struct vfw_ib_dev *dev, u32 cq_id, bool error)
{
	struct vfw_cq *cq = xa_load(&dev->cqs, cq_id);
	struct ib_event ev;

	if (!cq)
		return;
	if (!error) {
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		return;
	}
	ibdev_warn_ratelimited(&dev->ibdev, "CQ %u error (overflow or DMA)\n",
			       cq_id);
	if (cq->ibcq.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.cq = &cq->ibcq;
		ev.event = IB_EVENT_CQ_ERR;
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
}

static struct vfw_cqe_hw *cq_entry(struct vfw_cq *cq, u32 n)
{
	return (struct vfw_cqe_hw *)cq->ring.va + (n & (cq->depth - 1));
}

static bool cq_valid(struct vfw_cq *cq, u32 n)
{
	u8 pass = ((n / cq->depth) & 1) ^ 1;

	return (READ_ONCE(cq_entry(cq, n)->owner) & 1) == pass;
}

static enum ib_wc_status wc_status(u8 s)
{
	switch (s) {
	case VFW_CQE_S_SUCCESS:		return IB_WC_SUCCESS;
	case VFW_CQE_S_LOC_LEN_ERR:	return IB_WC_LOC_LEN_ERR;
	case VFW_CQE_S_LOC_QP_OP_ERR:	return IB_WC_LOC_QP_OP_ERR;
	case VFW_CQE_S_LOC_PROT_ERR:	return IB_WC_LOC_PROT_ERR;
	case VFW_CQE_S_WR_FLUSH_ERR:	return IB_WC_WR_FLUSH_ERR;
	case VFW_CQE_S_REM_ACCESS_ERR:	return IB_WC_REM_ACCESS_ERR;
	case VFW_CQE_S_REM_OP_ERR:	return IB_WC_REM_OP_ERR;
	case VFW_CQE_S_REM_INV_REQ_ERR:	return IB_WC_REM_INV_REQ_ERR;
	default:			return IB_WC_GENERAL_ERR;
	}
}

/* A CQE retires its WQE and every earlier one of that queue (unsignaled
 * WQEs complete silently). */
static void qp_retire(u32 *ci, u16 wqe_idx)
{
	*ci += (u16)(wqe_idx + 1 - (u16)*ci);
}

static int vfw_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct vfw_ib_dev *dev = to_vdev(ibcq->device);
	struct vfw_cq *cq = to_vcq(ibcq);
	unsigned long flags;
	unsigned int budget;
	int got = 0;

	if (cq->user)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	/* bounded by one pass of the ring */
	for (budget = cq->depth; got < num && budget; budget--) {
		struct vfw_cqe_hw c;
		struct vfw_qp *qp;
		struct ib_wc *w = &wc[got];

		if (!cq_valid(cq, cq->cons))
			break;
		dma_rmb();
		c = *cq_entry(cq, cq->cons);
		cq->cons++;
		qp = xa_load(&dev->qps, c.qp);
		if (!qp)	/* its QP is gone: nobody to report to */
			continue;
		memset(w, 0, sizeof(*w));
		w->wr_id = c.wr_id;
		w->status = wc_status(c.status);
		w->vendor_err = c.status;
		w->qp = &qp->ibqp;
		w->byte_len = c.byte_len;
		switch (c.opcode) {
		case VFW_CQE_OP_SEND:
			w->opcode = IB_WC_SEND;
			break;
		case VFW_CQE_OP_RDMA_WRITE:
			w->opcode = IB_WC_RDMA_WRITE;
			break;
		case VFW_CQE_OP_RDMA_READ:
			w->opcode = IB_WC_RDMA_READ;
			break;
		default:
			w->opcode = IB_WC_RECV;
			break;
		}
		if (c.opcode == VFW_CQE_OP_RECV) {
			spin_lock(&qp->rq_lock);
			qp_retire(&qp->rq_ci, c.wqe_idx);
			spin_unlock(&qp->rq_lock);
			if (c.flags & VFW_CQE_F_WITH_INV) {
				w->wc_flags |= IB_WC_WITH_INVALIDATE;
				w->ex.invalidate_rkey = c.inv_stag;
			}
		} else {
			spin_lock(&qp->sq_lock);
			qp_retire(&qp->sq_ci, c.wqe_idx);
			spin_unlock(&qp->sq_lock);
		}
		got++;
	}
	/* tell the device what we consumed (control block after the ring) */
	WRITE_ONCE(*(u32 *)((u8 *)cq->ring.va + (size_t)cq->depth * VFW_CQE_SIZE),
		   cq->cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return got;
}

static int vfw_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags fl)
{
	struct vfw_ib_dev *dev = to_vdev(ibcq->device);
	struct vfw_cq *cq = to_vcq(ibcq);
	unsigned long flags;
	u32 arm;
	int ret = 0;

	if (cq->user)
		return -EINVAL;
	arm = (fl & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		VFW_DB_CQ_ARM_SOLICITED : VFW_DB_CQ_ARM_NEXT;
	spin_lock_irqsave(&cq->lock, flags);
	writel(cq->id | arm, dev->kdb + VFW_DB_CQ);
	if ((fl & IB_CQ_REPORT_MISSED_EVENTS) && cq_valid(cq, cq->cons))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, flags);
	return ret;
}

/* ---- QP ---------------------------------------------------------------- */

static void qp_destroy_hw(struct vfw_ib_dev *dev, u32 id)
{
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_QP_DESTROY };
	int err;

	cmd.u.qp_modify.qp = id;
	err = vfw_ib_cmd(dev, &cmd);
	if (err)
		ibdev_warn(&dev->ibdev, "QP %u destroy: %d\n", id, err);
}

static int qp_depth_ok(struct vfw_ib_dev *dev, u32 d)
{
	return d >= 2 && is_power_of_2(d) && d <= dev->lim.max_qp_depth;
}

static int vfw_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			 struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibqp->device);
	struct vfw_pd *pd = container_of(ibqp->pd, struct vfw_pd, ibpd);
	struct vfw_qp *qp = to_vqp(ibqp);
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_QP_CREATE };
	struct vfw_rcmd_qp_create *c = &cmd.u.qp_create;
	struct vfw_pgl sq_pgl = {}, rq_pgl = {};
	int err;

	if (init->qp_type != IB_QPT_RC || init->srq || init->create_flags)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (init->cap.max_send_sge > dev->lim.max_sge ||
	    init->cap.max_recv_sge > dev->lim.max_sge ||
	    init->cap.max_inline_data > dev->lim.max_inline)
		return -EINVAL;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	refcount_set(&qp->iw_refs, 1);
	init_completion(&qp->iw_free);
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_send_sge = dev->lim.max_sge;
	qp->max_recv_sge = dev->lim.max_sge;
	qp->max_inline = dev->lim.max_inline;

	if (udata) {
		struct vfwarp_create_qp_req req;

		if (udata->inlen < sizeof(req))
			return -EINVAL;
		err = ib_copy_from_udata(&req, udata, sizeof(req));
		if (err)
			return err;
		if (!qp_depth_ok(dev, req.sq_depth) || !qp_depth_ok(dev, req.rq_depth))
			return -EINVAL;
		qp->sq_depth = req.sq_depth;
		qp->rq_depth = req.rq_depth;
		err = ring_pin_user(dev, &qp->sq, req.sq_va, req.sq_len,
				    (size_t)qp->sq_depth * VFW_WQE_SIZE);
		if (err)
			return err;
		err = ring_pin_user(dev, &qp->rq, req.rq_va, req.rq_len,
				    (size_t)qp->rq_depth * VFW_WQE_SIZE);
		if (err)
			goto err_sq;
		qp->user = true;
		qp->db_page = udata_db_page(udata);
	} else {
		qp->sq_depth = roundup_pow_of_two(max(init->cap.max_send_wr, 2u));
		qp->rq_depth = roundup_pow_of_two(max(init->cap.max_recv_wr, 2u));
		if (!qp_depth_ok(dev, qp->sq_depth) || !qp_depth_ok(dev, qp->rq_depth))
			return -EINVAL;
		err = ring_alloc_kernel(dev, &qp->sq, (size_t)qp->sq_depth * VFW_WQE_SIZE);
		if (err)
			return err;
		err = ring_alloc_kernel(dev, &qp->rq, (size_t)qp->rq_depth * VFW_WQE_SIZE);
		if (err)
			goto err_sq;
		qp->db_page = 0;
	}
	err = ring_pgl(dev, &qp->sq, &sq_pgl, &c->sq);
	if (!err)
		err = ring_pgl(dev, &qp->rq, &rq_pgl, &c->rq);
	if (err)
		goto err_pgl;
	c->pd = pd->id;
	c->send_cq = to_vcq(init->send_cq)->id;
	c->recv_cq = to_vcq(init->recv_cq)->id;
	c->sq_depth = qp->sq_depth;
	c->rq_depth = qp->rq_depth;
	/* the connection negotiates the real ORD/IRD (CONNECT/ACCEPT) */
	c->ord = dev->lim.max_ord_ird;
	c->ird = dev->lim.max_ord_ird;
	c->db_page = qp->db_page;
	err = vfw_ib_cmd(dev, &cmd);
	if (err)
		goto err_pgl;
	pgl_free(dev, &sq_pgl);
	pgl_free(dev, &rq_pgl);
	qp->id = c->qp;
	qp->ibqp.qp_num = qp->id;
	qp->state = IB_QPS_RESET;
	err = xa_insert_irq(&dev->qps, qp->id, qp, GFP_KERNEL);
	if (err) {
		ibdev_err(&dev->ibdev, "device returned QP id %u twice\n", qp->id);
		err = -EIO;
		goto err_hw;
	}
	if (udata) {
		struct vfwarp_create_qp_resp resp = {
			.qp_id = qp->id,
			.sq_depth = qp->sq_depth,
			.rq_depth = qp->rq_depth,
			.max_inline = qp->max_inline,
		};

		err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_xa;
	}
	init->cap.max_send_wr = qp->sq_depth;
	init->cap.max_recv_wr = qp->rq_depth;
	init->cap.max_send_sge = qp->max_send_sge;
	init->cap.max_recv_sge = qp->max_recv_sge;
	init->cap.max_inline_data = qp->max_inline;
	return 0;

err_xa:
	xa_erase_irq(&dev->qps, qp->id);
	synchronize_irq(dev->eq_irq);
err_hw:
	qp_destroy_hw(dev, qp->id);
	goto err_rq;
err_pgl:
	pgl_free(dev, &sq_pgl);
	pgl_free(dev, &rq_pgl);
err_rq:
	ring_free(dev, &qp->rq);
err_sq:
	ring_free(dev, &qp->sq);
	return err;
}

static int qp_modify_hw(struct vfw_ib_dev *dev, struct vfw_qp *qp, u8 state)
{
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_QP_MODIFY };
	int err;

	cmd.u.qp_modify.qp = qp->id;
	cmd.u.qp_modify.state = state;
	err = vfw_ib_cmd(dev, &cmd);
	/* A QP the device already closed or errored (peer's FIN, RST,
	 * Terminate) is where the caller wants it. */
	if (err == -EINVAL || err == -ENOENT)
		err = 0;
	return err;
}

int vfw_ib_qp_to_error(struct vfw_ib_dev *dev, struct vfw_qp *qp)
{
	qp->state = IB_QPS_ERR;
	return qp_modify_hw(dev, qp, VFW_QPS_ERROR);
}

/*
 * Before a connection the QP walks RESET -> INIT -> RTR as librdmacm and
 * rdma_cm ask; those states live only here (the device's QP is IDLE until
 * CONNECT/ACCEPT moves it to RTS). After it, iw_cm asks SQD (graceful
 * close) or ERR (abort), user space may ask ERR: those go to the device.
 */
static int vfw_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
			 struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibqp->device);
	struct vfw_qp *qp = to_vqp(ibqp);
	enum ib_qp_state cur, new;
	int err;

	/* Attributes other than the state (access flags, port, ORD/IRD)
	 * are the connection's business on iWARP: accepted and ignored. */
	if (!(mask & IB_QP_STATE))
		return 0;
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	new = attr->qp_state;
	switch (new) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		if (cur != IB_QPS_RESET && cur != IB_QPS_INIT && cur != IB_QPS_RTR)
			return -EINVAL;
		qp->state = new;
		return 0;
	case IB_QPS_RTS:
		/* the connection makes it RTS; accept the request as a no-op */
		if (cur == IB_QPS_ERR || cur == IB_QPS_SQD)
			return -EINVAL;
		qp->state = new;
		return 0;
	case IB_QPS_SQD:
		if (qp->state == IB_QPS_ERR)
			return 0;
		qp->state = IB_QPS_SQD;
		return qp_modify_hw(dev, qp, VFW_QPS_CLOSING);
	case IB_QPS_SQE:
	case IB_QPS_ERR:
		err = vfw_ib_qp_to_error(dev, qp);
		/* The connection is aborted: iw_cm (its cm_id may be being
		 * destroyed, waiting for us) gets its final event now, not
		 * only when the device reports CLOSE. */
		vfw_ib_cm_qp_gone(dev, qp);
		return err;
	default:
		return -EINVAL;
	}
}

static int vfw_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
			struct ib_qp_init_attr *init)
{
	struct vfw_qp *qp = to_vqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->cap.max_send_wr = qp->sq_depth;
	attr->cap.max_recv_wr = qp->rq_depth;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->max_recv_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
				IB_ACCESS_REMOTE_READ;
	attr->port_num = 1;
	init->qp_type = IB_QPT_RC;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

static int vfw_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibqp->device);
	struct vfw_qp *qp = to_vqp(ibqp);
	unsigned int waited = 0;

	/* Abort its connection, then forget it: the device resets the
	 * connection and stops touching the rings. */
	vfw_ib_qp_to_error(dev, qp);
	qp_destroy_hw(dev, qp->id);
	xa_erase_irq(&dev->qps, qp->id);
	synchronize_irq(dev->eq_irq);
	/* a poller that found the QP before the erase is done with it once
	 * it has dropped its CQ's lock */
	spin_lock_irq(&to_vcq(ibqp->send_cq)->lock);
	spin_unlock_irq(&to_vcq(ibqp->send_cq)->lock);
	spin_lock_irq(&to_vcq(ibqp->recv_cq)->lock);
	spin_unlock_irq(&to_vcq(ibqp->recv_cq)->lock);
	/* give iw_cm its final event now, so it drops its QP reference */
	vfw_ib_cm_qp_gone(dev, qp);
	if (refcount_dec_and_test(&qp->iw_refs))
		complete(&qp->iw_free);
	while (!wait_for_completion_timeout(&qp->iw_free, 10 * HZ))
		ibdev_warn(&dev->ibdev, "QP %u: iw_cm still holds it after %us\n",
			   qp->id, waited += 10);
	ring_free(dev, &qp->rq);
	ring_free(dev, &qp->sq);
	return 0;
}

/* EQ (IRQ context): the device put the QP in ERROR. */
void vfw_ib_qp_fatal(struct vfw_ib_dev *dev, const struct vfw_eqe *e)
{
	struct vfw_qp *qp = xa_load(&dev->qps, e->obj);
	struct ib_event ev;

	ibdev_dbg(&dev->ibdev, "QP %u error: status %u terminate layer %u etype %u ecode %u\n",
		  e->obj, e->status, e->term_layer, e->term_etype, e->term_ecode);
	if (!qp)
		return;
	qp->state = IB_QPS_ERR;
	if (qp->ibqp.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.qp = &qp->ibqp;
		ev.event = IB_EVENT_QP_FATAL;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
}

/* ---- kernel post ------------------------------------------------------- */

static struct vfw_wqe *wqe_at(struct vfw_ring *r, u32 depth, u32 idx)
{
	return (struct vfw_wqe *)r->va + (idx & (depth - 1));
}

static int build_send(struct vfw_qp *qp, const struct ib_send_wr *wr,
		      struct vfw_wqe *w)
{
	int i;

	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	switch (wr->opcode) {
	case IB_WR_SEND:
		w->opcode = VFW_WQE_OP_SEND;
		break;
	case IB_WR_SEND_WITH_INV:
		w->opcode = VFW_WQE_OP_SEND_INV;
		w->inv_stag = wr->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_WRITE:
		w->opcode = VFW_WQE_OP_RDMA_WRITE;
		w->remote_stag = rdma_wr(wr)->rkey;
		w->remote_addr = rdma_wr(wr)->remote_addr;
		break;
	case IB_WR_RDMA_READ:
		if (wr->num_sge != 1)
			return -EINVAL;
		w->opcode = VFW_WQE_OP_RDMA_READ;
		w->remote_stag = rdma_wr(wr)->rkey;
		w->remote_addr = rdma_wr(wr)->remote_addr;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (qp->sig_all || (wr->send_flags & IB_SEND_SIGNALED))
		w->flags |= VFW_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_FENCE)
		w->flags |= VFW_WQE_F_FENCE;
	/* solicited events exist for Sends only (RDMAP) */
	if ((wr->send_flags & IB_SEND_SOLICITED) &&
	    (wr->opcode == IB_WR_SEND || wr->opcode == IB_WR_SEND_WITH_INV))
		w->flags |= VFW_WQE_F_SOLICITED;
	if ((wr->send_flags & IB_SEND_INLINE) && wr->opcode != IB_WR_RDMA_READ) {
		u32 len = 0;

		/* kernel inline SGEs carry kernel virtual addresses */
		for (i = 0; i < wr->num_sge; i++) {
			u32 l = wr->sg_list[i].length;

			if (len + l > qp->max_inline || len + l < len)
				return -EINVAL;
			memcpy(w->u.inline_data + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr, l);
			len += l;
		}
		w->flags |= VFW_WQE_F_INLINE;
		w->inline_len = len;
		return 0;
	}
	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w->u.sge[i].addr = wr->sg_list[i].addr;
		w->u.sge[i].lkey = wr->sg_list[i].lkey;
		w->u.sge[i].len = wr->sg_list[i].length;
	}
	return 0;
}

static int vfw_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad)
{
	struct vfw_ib_dev *dev = to_vdev(ibqp->device);
	struct vfw_qp *qp = to_vqp(ibqp);
	unsigned long flags;
	u32 posted = 0;
	int err = 0;

	if (qp->user) {
		*bad = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->state == IB_QPS_RESET || qp->state == IB_QPS_INIT) {
		err = -EINVAL;
		*bad = wr;
		goto out;
	}
	for (; wr; wr = wr->next) {
		struct vfw_wqe w;

		if (qp->sq_pi - qp->sq_ci >= qp->sq_depth) {
			err = -ENOMEM;
			break;
		}
		err = build_send(qp, wr, &w);
		if (err)
			break;
		memcpy(wqe_at(&qp->sq, qp->sq_depth, qp->sq_pi), &w, sizeof(w));
		qp->sq_pi++;
		posted++;
	}
	if (err)
		*bad = wr;
	if (posted)	/* writel orders the WQEs before the doorbell */
		writel(qp->id | (qp->sq_pi & 0xffff) << VFW_DB_PI_SHIFT,
		       dev->kdb + VFW_DB_SQ);
out:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return err;
}

static int vfw_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad)
{
	struct vfw_ib_dev *dev = to_vdev(ibqp->device);
	struct vfw_qp *qp = to_vqp(ibqp);
	unsigned long flags;
	u32 posted = 0;
	int err = 0, i;

	if (qp->user) {
		*bad = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	for (; wr; wr = wr->next) {
		struct vfw_wqe w = {};

		if (qp->rq_pi - qp->rq_ci >= qp->rq_depth) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > qp->max_recv_sge) {
			err = -EINVAL;
			break;
		}
		w.wr_id = wr->wr_id;
		w.num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			w.u.sge[i].addr = wr->sg_list[i].addr;
			w.u.sge[i].lkey = wr->sg_list[i].lkey;
			w.u.sge[i].len = wr->sg_list[i].length;
		}
		memcpy(wqe_at(&qp->rq, qp->rq_depth, qp->rq_pi), &w, sizeof(w));
		qp->rq_pi++;
		posted++;
	}
	if (err)
		*bad = wr;
	if (posted)
		writel(qp->id | (qp->rq_pi & 0xffff) << VFW_DB_PI_SHIFT,
		       dev->kdb + VFW_DB_RQ);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	return err;
}

const struct ib_device_ops vfw_ib_verbs_ops = {
	.alloc_pd = vfw_alloc_pd,
	.dealloc_pd = vfw_dealloc_pd,
	.get_dma_mr = vfw_get_dma_mr,
	.reg_user_mr = vfw_reg_user_mr,
	.dereg_mr = vfw_dereg_mr,
	.create_cq = vfw_create_cq,
	.destroy_cq = vfw_destroy_cq,
	.poll_cq = vfw_poll_cq,
	.req_notify_cq = vfw_req_notify_cq,
	.create_qp = vfw_create_qp,
	.modify_qp = vfw_modify_qp,
	.query_qp = vfw_query_qp,
	.destroy_qp = vfw_destroy_qp,
	.post_send = vfw_post_send,
	.post_recv = vfw_post_recv,
	INIT_RDMA_OBJ_SIZE(ib_pd, vfw_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_cq, vfw_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_qp, vfw_qp, ibqp),
};
