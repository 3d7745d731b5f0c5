// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libvfwarp verbs. The control verbs are uverbs commands; posting and
 * polling touch only this process's rings and its doorbell page.
 *
 * Ring sizing (the kernel driver checks the same, from udata):
 *   CQ: depth = roundup_pow_of_two(cqe + 1); buffer = page-aligned
 *       depth * VFW_CQE_SIZE + VFW_CQ_CTRL_SIZE bytes rounded up to pages.
 *   SQ/RQ: depth = roundup_pow_of_two(max(max_wr + 1, 2)); buffer =
 *       page-aligned depth * VFW_WQE_SIZE bytes rounded up to pages.
 *   At most depth - 1 WQEs are outstanding per queue, so the producer
 *   index never runs more than depth ahead of the device's consumer.
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include "vfwarp.h"

/* ---- device, port, PD, MR ------------------------------------------- */

int vfwarp_query_device(struct ibv_context *context,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

int vfwarp_query_port(struct ibv_context *context, uint8_t port,
		      struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *vfwarp_alloc_pd(struct ibv_context *context)
{
	struct ibv_alloc_pd cmd = {};
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp,
			     sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return pd;
}

int vfwarp_dealloc_pd(struct ibv_pd *pd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(pd);
	if (ret)
		return ret;
	free(pd);
	return 0;
}

struct ibv_mr *vfwarp_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			     uint64_t hca_va, int access)
{
	struct ibv_reg_mr cmd = {};
	struct ib_uverbs_reg_mr_resp resp = {};
	struct verbs_mr *vmr;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	if (ibv_cmd_reg_mr(pd, addr, len, hca_va, access, vmr, &cmd,
			   sizeof(cmd), &resp, sizeof(resp))) {
		free(vmr);
		return NULL;
	}
	return &vmr->ibv_mr;
}

int vfwarp_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	free(vmr);
	return 0;
}

/* ---- ring memory ------------------------------------------------------ */

/*
 * Rings are whole anonymous pages: page aligned as the ABI asks, zeroed
 * (a zero owner bit is "not yet written" on the CQ's first pass), and kept
 * out of fork()ed children since the device writes them by DMA.
 */
static void *vfwarp_alloc_ring(size_t len)
{
	void *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (ibv_dontfork_range(p, len)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

static void vfwarp_free_ring(void *p, size_t len)
{
	if (!p)
		return;
	ibv_dofork_range(p, len);
	munmap(p, len);
}

/* ---- CQ --------------------------------------------------------------- */

struct ibv_cq *vfwarp_create_cq(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel,
				int comp_vector)
{
	struct vfwarp_context *ctx = to_vctx(context);
	struct vfwarp_cmd_create_cq cmd = {};
	struct vfwarp_cmd_create_cq_resp resp = {};
	struct vfwarp_cq *cq;
	uint32_t depth;
	int ret;

	/* max_cq_depth is a power of two, so depth cannot exceed it either. */
	if (cqe < 1 || (uint64_t)cqe + 1 > ctx->max_cq_depth) {
		errno = EINVAL;
		return NULL;
	}
	depth = roundup_pow_of_two((uint64_t)cqe + 1);

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	cq->depth = depth;
	cq->buf_len = align((size_t)depth * VFW_CQE_SIZE + VFW_CQ_CTRL_SIZE,
			    ctx->page_size);
	cq->ring = vfwarp_alloc_ring(cq->buf_len);
	if (!cq->ring) {
		ret = errno ? errno : ENOMEM;
		goto err_free;
	}
	cq->ctrl_cons = (uint32_t *)((uint8_t *)cq->ring +
				     (size_t)depth * VFW_CQE_SIZE);

	cmd.buf_va = (uintptr_t)cq->ring;
	cmd.buf_len = cq->buf_len;
	cmd.depth = depth;
	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_ring;
	if (resp.depth != depth || resp.cq_id > VFW_DB_ID_MASK) {
		verbs_err(&ctx->ibv_ctx,
			  "vfwarp: CQ create answered id %u depth %u for depth %u\n",
			  resp.cq_id, resp.depth, depth);
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		ret = EINVAL;
		goto err_ring;
	}
	cq->id = resp.cq_id;
	/* depth CQEs fit before an overflow; report what was asked for at least. */
	cq->vcq.cq.cqe = depth - 1;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return &cq->vcq.cq;

err_ring:
	vfwarp_free_ring(cq->ring, cq->buf_len);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

int vfwarp_destroy_cq(struct ibv_cq *ibcq)
{
	struct vfwarp_cq *cq = to_vcq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	pthread_spin_destroy(&cq->lock);
	vfwarp_free_ring(cq->ring, cq->buf_len);
	free(cq);
	return 0;
}

static inline uint8_t vfwarp_cq_owner(const struct vfwarp_cq *cq, uint32_t n)
{
	return ((n / cq->depth) & 1) ^ 1;
}

/* The n-th CQE if the device has written it, else NULL. */
static struct vfw_cqe_hw *vfwarp_cq_entry(struct vfwarp_cq *cq, uint32_t n)
{
	struct vfw_cqe_hw *hw = &cq->ring[n & (cq->depth - 1)];

	if ((*(volatile uint8_t *)&hw->owner & 1) != vfwarp_cq_owner(cq, n))
		return NULL;
	/* The owner byte is written last: read the rest only after it. */
	udma_from_device_barrier();
	return hw;
}

static struct vfwarp_qp *vfwarp_qp_lookup(struct vfwarp_context *ctx,
					  uint32_t id)
{
	struct vfwarp_qp *qp;

	for (qp = ctx->qp_hash[id & (VFWARP_QP_HASH - 1)]; qp;
	     qp = qp->hash_next)
		if (qp->id == id)
			return qp;
	return NULL;
}

/*
 * A CQE retires the WQE at ring index idx (mod 65536) and, on the SQ,
 * every unsignaled WQE before it. An index outside the outstanding window
 * (a stale or bogus CQE) frees nothing.
 */
static void vfwarp_wq_retire(struct vfwarp_wq *wq, uint16_t idx)
{
	uint32_t done;

	pthread_spin_lock(&wq->lock);
	done = (uint16_t)(idx - wq->ci) + 1u;
	if (done <= wq->pi - wq->ci)
		wq->ci += done;
	pthread_spin_unlock(&wq->lock);
}

static enum ibv_wc_status vfwarp_wc_status(uint8_t s)
{
	switch (s) {
	case VFW_CQE_S_SUCCESS:		return IBV_WC_SUCCESS;
	case VFW_CQE_S_LOC_LEN_ERR:	return IBV_WC_LOC_LEN_ERR;
	case VFW_CQE_S_LOC_QP_OP_ERR:	return IBV_WC_LOC_QP_OP_ERR;
	case VFW_CQE_S_LOC_PROT_ERR:	return IBV_WC_LOC_PROT_ERR;
	case VFW_CQE_S_WR_FLUSH_ERR:	return IBV_WC_WR_FLUSH_ERR;
	case VFW_CQE_S_REM_ACCESS_ERR:	return IBV_WC_REM_ACCESS_ERR;
	case VFW_CQE_S_REM_OP_ERR:	return IBV_WC_REM_OP_ERR;
	case VFW_CQE_S_REM_INV_REQ_ERR:	return IBV_WC_REM_INV_REQ_ERR;
	default:			return IBV_WC_GENERAL_ERR;
	}
}

/*
 * Translate one CQE (a private copy) into wc. Returns false for a CQE of
 * a QP this context no longer has (destroyed; its CQEs are dropped, as
 * other providers clean them from the CQ).
 */
static bool vfwarp_cqe_to_wc(struct vfwarp_context *ctx,
			     const struct vfw_cqe_hw *cqe, struct ibv_wc *wc)
{
	struct vfwarp_qp *qp;
	uint16_t idx = le16toh(cqe->wqe_idx);

	pthread_spin_lock(&ctx->qp_lock);
	qp = vfwarp_qp_lookup(ctx, le32toh(cqe->qp));
	if (!qp) {
		pthread_spin_unlock(&ctx->qp_lock);
		return false;
	}

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = le64toh(cqe->wr_id);
	wc->status = vfwarp_wc_status(cqe->status);
	if (wc->status != IBV_WC_SUCCESS)
		wc->vendor_err = cqe->status;
	wc->byte_len = le32toh(cqe->byte_len);
	wc->qp_num = qp->vqp.qp.qp_num;
	switch (cqe->opcode) {
	case VFW_CQE_OP_SEND:
		wc->opcode = IBV_WC_SEND;
		vfwarp_wq_retire(&qp->sq, idx);
		break;
	case VFW_CQE_OP_RDMA_WRITE:
		wc->opcode = IBV_WC_RDMA_WRITE;
		vfwarp_wq_retire(&qp->sq, idx);
		break;
	case VFW_CQE_OP_RDMA_READ:
		wc->opcode = IBV_WC_RDMA_READ;
		vfwarp_wq_retire(&qp->sq, idx);
		break;
	case VFW_CQE_OP_RECV:
		wc->opcode = IBV_WC_RECV;
		vfwarp_wq_retire(&qp->rq, idx);
		if (cqe->flags & VFW_CQE_F_WITH_INV) {
			wc->wc_flags |= IBV_WC_WITH_INV;
			wc->invalidated_rkey = le32toh(cqe->inv_stag);
		}
		break;
	default:
		/* Unknown to this provider: report it, retire nothing. */
		wc->opcode = IBV_WC_SEND;
		wc->status = IBV_WC_GENERAL_ERR;
		wc->vendor_err = 0x100 | cqe->opcode;
		break;
	}
	pthread_spin_unlock(&ctx->qp_lock);
	return true;
}

/*
 * The device of this context is gone (FLR, VF disable, driver unload): the
 * kernel zapped the status page, which now reads as zeros. The device
 * flushed what it had been told before it went; anything posted since
 * (a doorbell into the zapped page reaches no device) would wait forever.
 */
static bool vfwarp_device_gone(struct vfwarp_context *ctx)
{
	return ctx->status && le32toh(*ctx->status) != VFWARP_STATUS_LIVE;
}

static enum ibv_wc_opcode vfwarp_sq_wc_opcode(uint8_t wqe_opcode)
{
	switch (wqe_opcode) {
	case VFW_WQE_OP_RDMA_WRITE:	return IBV_WC_RDMA_WRITE;
	case VFW_WQE_OP_RDMA_READ:	return IBV_WC_RDMA_READ;
	default:			return IBV_WC_SEND;
	}
}

/* Flush one work queue's outstanding WRs into wc, oldest first. */
static int vfwarp_wq_flush_sw(struct vfwarp_qp *qp, struct vfwarp_wq *wq,
			      bool sq, struct ibv_wc *wc, int max)
{
	int n = 0;

	pthread_spin_lock(&wq->lock);
	while (n < max && wq->ci != wq->pi) {
		const struct vfw_wqe *w = (const struct vfw_wqe *)
			(wq->ring + (size_t)(wq->ci & (wq->depth - 1)) * VFW_WQE_SIZE);

		memset(&wc[n], 0, sizeof(wc[n]));
		wc[n].wr_id = le64toh(w->wr_id);
		wc[n].status = IBV_WC_WR_FLUSH_ERR;
		wc[n].vendor_err = VFW_CQE_S_WR_FLUSH_ERR;
		wc[n].opcode = sq ? vfwarp_sq_wc_opcode(w->opcode) : IBV_WC_RECV;
		wc[n].qp_num = qp->vqp.qp.qp_num;
		wq->ci++;
		n++;
	}
	pthread_spin_unlock(&wq->lock);
	return n;
}

/*
 * A dead CQ's completions, made here: every WR still outstanding on a QP
 * that completes into this CQ ends with WR_FLUSH_ERR, as the device would
 * have flushed it (the device's QPs of a removed function are in ERROR).
 * WRs posted later are flushed by the next poll. Called with cq->lock.
 */
static int vfwarp_cq_flush_sw(struct vfwarp_context *ctx,
			      struct vfwarp_cq *cq, struct ibv_wc *wc, int max)
{
	int n = 0;

	pthread_spin_lock(&ctx->qp_lock);
	for (unsigned int b = 0; b < VFWARP_QP_HASH && n < max; b++) {
		for (struct vfwarp_qp *qp = ctx->qp_hash[b]; qp && n < max;
		     qp = qp->hash_next) {
			if (to_vcq(qp->vqp.qp.recv_cq) == cq)
				n += vfwarp_wq_flush_sw(qp, &qp->rq, false,
							wc + n, max - n);
			if (to_vcq(qp->vqp.qp.send_cq) == cq)
				n += vfwarp_wq_flush_sw(qp, &qp->sq, true,
							wc + n, max - n);
		}
	}
	pthread_spin_unlock(&ctx->qp_lock);
	return n;
}

int vfwarp_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct vfwarp_cq *cq = to_vcq(ibcq);
	struct vfwarp_context *ctx = to_vctx(ibcq->context);
	uint32_t scanned = 0;
	int n = 0;

	if (num_entries <= 0)
		return 0;

	pthread_spin_lock(&cq->lock);
	if (cq->dead)
		goto flush;
	/* At most one pass over the ring per call, dropped CQEs included. */
	while (n < num_entries && scanned < cq->depth) {
		struct vfw_cqe_hw *hw = vfwarp_cq_entry(cq, cq->cons);
		struct vfw_cqe_hw cqe;

		if (!hw)
			break;
		memcpy(&cqe, hw, sizeof(cqe));
		cq->cons++;
		scanned++;
		if (vfwarp_cqe_to_wc(ctx, &cqe, &wc[n]))
			n++;
	}
	if (scanned) {
		/*
		 * The entries were copied out before the device learns it may
		 * overwrite them; the count wraps like the device's.
		 */
		udma_to_device_barrier();
		*(volatile uint32_t *)cq->ctrl_cons = htole32(cq->cons);
	}
	/*
	 * The ring is drained: from now on, if the device is gone, this CQ
	 * completes its WRs itself. CQEs the device may still write while
	 * the kernel tears its objects down are not read: they would repeat
	 * WRs flushed here.
	 */
	if (n < num_entries && vfwarp_device_gone(ctx))
		cq->dead = true;
flush:
	if (cq->dead)
		n += vfwarp_cq_flush_sw(ctx, cq, wc + n, num_entries - n);
	pthread_spin_unlock(&cq->lock);
	return n;
}

int vfwarp_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct vfwarp_cq *cq = to_vcq(ibcq);
	struct vfwarp_context *ctx = to_vctx(ibcq->context);
	uint32_t v = cq->id | (solicited_only ? VFW_DB_CQ_ARM_SOLICITED :
						VFW_DB_CQ_ARM_NEXT);

	/* The consumer count poll_cq stored goes before the arm. */
	udma_to_device_barrier();
	mmio_write32_le((uint8_t *)ctx->db + VFW_DB_CQ, htole32(v));
	return 0;
}

/*
 * After the QP is destroyed, mark its CQEs still unconsumed in cq so a new
 * QP that gets the same id does not inherit them. Called with cq->lock.
 * Written entries are the process's until consumed; the device does not
 * touch them again.
 */
static void vfwarp_cq_clean(struct vfwarp_cq *cq, uint32_t qp_id)
{
	uint32_t i;

	for (i = 0; i < cq->depth; i++) {
		struct vfw_cqe_hw *hw = vfwarp_cq_entry(cq, cq->cons + i);

		if (!hw)
			break;
		if (le32toh(hw->qp) == qp_id)
			hw->qp = htole32(VFWARP_QP_ID_NONE);
	}
}

/* ---- QP --------------------------------------------------------------- */

static uint32_t vfwarp_wq_depth(uint32_t max_wr)
{
	uint64_t want = (uint64_t)max_wr + 1;

	return roundup_pow_of_two(want < 2 ? 2 : want);
}

static int vfwarp_wq_init(struct vfwarp_wq *wq, uint32_t depth,
			  size_t page_size)
{
	wq->depth = depth;
	wq->buf_len = align((size_t)depth * VFW_WQE_SIZE, page_size);
	wq->ring = vfwarp_alloc_ring(wq->buf_len);
	if (!wq->ring)
		return errno ? errno : ENOMEM;
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

static void vfwarp_wq_fini(struct vfwarp_wq *wq)
{
	if (!wq->ring)
		return;
	pthread_spin_destroy(&wq->lock);
	vfwarp_free_ring(wq->ring, wq->buf_len);
	wq->ring = NULL;
}

static void vfwarp_lock_cqs(struct vfwarp_cq *a, struct vfwarp_cq *b)
{
	/* Address order, so two destroys with swapped CQs cannot deadlock. */
	if (a == b) {
		pthread_spin_lock(&a->lock);
	} else if (a < b) {
		pthread_spin_lock(&a->lock);
		pthread_spin_lock(&b->lock);
	} else {
		pthread_spin_lock(&b->lock);
		pthread_spin_lock(&a->lock);
	}
}

static void vfwarp_unlock_cqs(struct vfwarp_cq *a, struct vfwarp_cq *b)
{
	pthread_spin_unlock(&a->lock);
	if (a != b)
		pthread_spin_unlock(&b->lock);
}

struct ibv_qp *vfwarp_create_qp(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr)
{
	struct vfwarp_context *ctx = to_vctx(pd->context);
	struct vfwarp_cmd_create_qp cmd = {};
	struct vfwarp_cmd_create_qp_resp resp = {};
	struct ibv_qp_cap want = attr->cap;
	struct vfwarp_qp *qp;
	uint32_t bucket;
	int ret;

	if (attr->qp_type != IBV_QPT_RC || attr->srq) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->send_cq || !attr->recv_cq ||
	    want.max_send_wr >= ctx->max_qp_depth ||
	    want.max_recv_wr >= ctx->max_qp_depth ||
	    want.max_send_sge > ctx->max_sge ||
	    want.max_recv_sge > ctx->max_sge ||
	    want.max_inline_data > ctx->max_inline) {
		errno = EINVAL;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = vfwarp_wq_init(&qp->sq, vfwarp_wq_depth(want.max_send_wr),
			     ctx->page_size);
	if (ret)
		goto err_free;
	ret = vfwarp_wq_init(&qp->rq, vfwarp_wq_depth(want.max_recv_wr),
			     ctx->page_size);
	if (ret)
		goto err_rings;

	cmd.sq_va = (uintptr_t)qp->sq.ring;
	cmd.rq_va = (uintptr_t)qp->rq.ring;
	cmd.sq_len = qp->sq.buf_len;
	cmd.rq_len = qp->rq.buf_len;
	cmd.sq_depth = qp->sq.depth;
	cmd.rq_depth = qp->rq.depth;
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_rings;

	if (resp.sq_depth != qp->sq.depth || resp.rq_depth != qp->rq.depth ||
	    resp.qp_id > VFW_DB_ID_MASK ||
	    resp.max_inline < want.max_inline_data ||
	    resp.max_inline > ctx->max_inline) {
		verbs_err(&ctx->ibv_ctx,
			  "vfwarp: QP create answered id %u depths %u/%u inline %u for %u/%u/%u\n",
			  resp.qp_id, resp.sq_depth, resp.rq_depth,
			  resp.max_inline, qp->sq.depth, qp->rq.depth,
			  want.max_inline_data);
		ret = EINVAL;
		goto err_destroy;
	}
	qp->id = resp.qp_id;
	qp->max_inline = resp.max_inline;
	qp->sq_sig_all = attr->sq_sig_all;
	/* What the kernel accepted, never more than a WQE holds. */
	qp->sq.max_sge = want.max_send_sge;
	qp->rq.max_sge = want.max_recv_sge;
	if (attr->cap.max_send_sge > qp->sq.max_sge)
		qp->sq.max_sge = attr->cap.max_send_sge < ctx->max_sge ?
				 attr->cap.max_send_sge : ctx->max_sge;
	if (attr->cap.max_recv_sge > qp->rq.max_sge)
		qp->rq.max_sge = attr->cap.max_recv_sge < ctx->max_sge ?
				 attr->cap.max_recv_sge : ctx->max_sge;

	attr->cap.max_send_wr = qp->sq.depth - 1;
	attr->cap.max_recv_wr = qp->rq.depth - 1;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;

	bucket = qp->id & (VFWARP_QP_HASH - 1);
	pthread_spin_lock(&ctx->qp_lock);
	if (vfwarp_qp_lookup(ctx, qp->id)) {
		pthread_spin_unlock(&ctx->qp_lock);
		verbs_err(&ctx->ibv_ctx, "vfwarp: QP id %u already in use\n",
			  qp->id);
		ret = EINVAL;
		goto err_destroy;
	}
	qp->hash_next = ctx->qp_hash[bucket];
	ctx->qp_hash[bucket] = qp;
	pthread_spin_unlock(&ctx->qp_lock);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_rings:
	vfwarp_wq_fini(&qp->rq);
	vfwarp_wq_fini(&qp->sq);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

int vfwarp_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct vfwarp_qp *qp = to_vqp(ibqp);
	struct ibv_query_qp cmd = {};
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (ret)
		return ret;
	/* The queue sizes are the provider's. */
	attr->cap.max_send_wr = qp->sq.depth - 1;
	attr->cap.max_recv_wr = qp->rq.depth - 1;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;
	init_attr->cap = attr->cap;
	return 0;
}

int vfwarp_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

int vfwarp_destroy_qp(struct ibv_qp *ibqp)
{
	struct vfwarp_context *ctx = to_vctx(ibqp->context);
	struct vfwarp_qp *qp = to_vqp(ibqp);
	struct vfwarp_cq *scq = to_vcq(ibqp->send_cq);
	struct vfwarp_cq *rcq = to_vcq(ibqp->recv_cq);
	struct vfwarp_qp **pp;
	int ret;

	/* Once this returns the device writes nothing more for the QP. */
	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	vfwarp_lock_cqs(scq, rcq);
	pthread_spin_lock(&ctx->qp_lock);
	for (pp = &ctx->qp_hash[qp->id & (VFWARP_QP_HASH - 1)]; *pp;
	     pp = &(*pp)->hash_next) {
		if (*pp == qp) {
			*pp = qp->hash_next;
			break;
		}
	}
	pthread_spin_unlock(&ctx->qp_lock);
	vfwarp_cq_clean(scq, qp->id);
	if (rcq != scq)
		vfwarp_cq_clean(rcq, qp->id);
	vfwarp_unlock_cqs(scq, rcq);

	vfwarp_wq_fini(&qp->rq);
	vfwarp_wq_fini(&qp->sq);
	free(qp);
	return 0;
}

/* ---- posting ---------------------------------------------------------- */

#define VFWARP_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			   IBV_SEND_SOLICITED | IBV_SEND_INLINE)

static int vfwarp_build_send(struct vfwarp_qp *qp, const struct ibv_send_wr *wr,
			     struct vfw_wqe *wqe)
{
	uint8_t flags = 0;
	int i;

	if (wr->num_sge < 0 || (wr->send_flags & ~VFWARP_SEND_FLAGS))
		return EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = htole64(wr->wr_id);
	switch (wr->opcode) {
	case IBV_WR_SEND:
		wqe->opcode = VFW_WQE_OP_SEND;
		break;
	case IBV_WR_SEND_WITH_INV:
		wqe->opcode = VFW_WQE_OP_SEND_INV;
		wqe->inv_stag = htole32(wr->invalidate_rkey);
		break;
	case IBV_WR_RDMA_WRITE:
		wqe->opcode = VFW_WQE_OP_RDMA_WRITE;
		wqe->remote_stag = htole32(wr->wr.rdma.rkey);
		wqe->remote_addr = htole64(wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_RDMA_READ:
		/* The sink is one local SGE; there is nothing to inline. */
		if (wr->num_sge != 1 || (wr->send_flags & IBV_SEND_INLINE))
			return EINVAL;
		wqe->opcode = VFW_WQE_OP_RDMA_READ;
		wqe->remote_stag = htole32(wr->wr.rdma.rkey);
		wqe->remote_addr = htole64(wr->wr.rdma.remote_addr);
		break;
	default:
		/* No immediate data or atomics on iWARP. */
		return EINVAL;
	}

	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		flags |= VFW_WQE_F_SIGNALED;
	if (wr->send_flags & IBV_SEND_FENCE)
		flags |= VFW_WQE_F_FENCE;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		flags |= VFW_WQE_F_SOLICITED;

	if (wr->send_flags & IBV_SEND_INLINE) {
		uint32_t total = 0;

		for (i = 0; i < wr->num_sge; i++) {
			uint32_t len = wr->sg_list[i].length;

			if (len > qp->max_inline - total)
				return EINVAL;
			memcpy(wqe->u.inline_data + total,
			       (const void *)(uintptr_t)wr->sg_list[i].addr,
			       len);
			total += len;
		}
		flags |= VFW_WQE_F_INLINE;
		wqe->inline_len = htole32(total);
		wqe->num_sge = 0;
	} else {
		if ((uint32_t)wr->num_sge > qp->sq.max_sge)
			return EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			wqe->u.sge[i].addr = htole64(wr->sg_list[i].addr);
			wqe->u.sge[i].lkey = htole32(wr->sg_list[i].lkey);
			wqe->u.sge[i].len = htole32(wr->sg_list[i].length);
		}
		wqe->num_sge = wr->num_sge;
	}
	wqe->flags = flags;
	return 0;
}

static inline void vfwarp_wq_put(struct vfwarp_wq *wq,
				 const struct vfw_wqe *wqe)
{
	memcpy(wq->ring + (size_t)(wq->pi & (wq->depth - 1)) * VFW_WQE_SIZE,
	       wqe, sizeof(*wqe));
	wq->pi++;
}

/* With the queue's lock held: WQEs first, then the producer index. */
static inline void vfwarp_ring_db(struct vfwarp_qp *qp, struct vfwarp_wq *wq,
				  unsigned int reg)
{
	struct vfwarp_context *ctx = to_vctx(qp->vqp.qp.context);

	udma_to_device_barrier();
	mmio_write32_le((uint8_t *)ctx->db + reg,
			htole32(qp->id | (wq->pi & 0xffff) << VFW_DB_PI_SHIFT));
}

int vfwarp_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr)
{
	struct vfwarp_qp *qp = to_vqp(ibqp);
	struct vfwarp_wq *sq = &qp->sq;
	unsigned int posted = 0;
	int ret = 0;

	pthread_spin_lock(&sq->lock);
	for (; wr; wr = wr->next) {
		struct vfw_wqe wqe;

		if (sq->pi - sq->ci >= sq->depth - 1) {
			ret = ENOMEM;
			break;
		}
		ret = vfwarp_build_send(qp, wr, &wqe);
		if (ret)
			break;
		vfwarp_wq_put(sq, &wqe);
		posted++;
	}
	if (posted)
		vfwarp_ring_db(qp, sq, VFW_DB_SQ);
	pthread_spin_unlock(&sq->lock);

	if (ret)
		*bad_wr = wr;
	return ret;
}

int vfwarp_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct vfwarp_qp *qp = to_vqp(ibqp);
	struct vfwarp_wq *rq = &qp->rq;
	unsigned int posted = 0;
	int ret = 0;
	int i;

	pthread_spin_lock(&rq->lock);
	for (; wr; wr = wr->next) {
		struct vfw_wqe wqe;

		if (rq->pi - rq->ci >= rq->depth - 1) {
			ret = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge) {
			ret = EINVAL;
			break;
		}
		memset(&wqe, 0, sizeof(wqe));
		wqe.wr_id = htole64(wr->wr_id);
		wqe.num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			wqe.u.sge[i].addr = htole64(wr->sg_list[i].addr);
			wqe.u.sge[i].lkey = htole32(wr->sg_list[i].lkey);
			wqe.u.sge[i].len = htole32(wr->sg_list[i].length);
		}
		vfwarp_wq_put(rq, &wqe);
		posted++;
	}
	if (posted)
		vfwarp_ring_db(qp, rq, VFW_DB_RQ);
	pthread_spin_unlock(&rq->lock);

	if (ret)
		*bad_wr = wr;
	return ret;
}
