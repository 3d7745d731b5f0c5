// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit test of libvfwarp's data path (verbs.c) without a kernel or device:
 * the uverbs commands are replaced by a fake kernel below that checks the
 * udata the provider sends (as vfwarp_vf.ko must) and answers like it; the
 * test then plays the device: it reads the WQEs the provider wrote into its
 * rings, the doorbell values written into the doorbell page (plain memory
 * here), and writes CQEs with the owner-bit protocol of vfwarp_rdma.h.
 *
 * Built and run in the image chroot by lab/build-provider.sh, with ASan and
 * UBSan, against the scratch rdma-core tree (it needs driver.h).
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vfwarp.h"

static int failures;
#define CHECK(c) do { if (!(c)) { failures++; \
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); } } while (0)

/* ---- fake kernel ------------------------------------------------------ */

static uint32_t next_cq_id = 3, next_qp_id = 7;
static int cq_depth_override;		/* answer a different CQ depth */
static struct vfwarp_create_qp_req last_qp_req;
static int destroyed_qps, destroyed_cqs;

static bool pow2(uint32_t v) { return v && !(v & (v - 1)); }

int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size)
{
	struct vfwarp_cmd_create_cq *c = (struct vfwarp_cmd_create_cq *)cmd;
	struct vfwarp_cmd_create_cq_resp *r =
		(struct vfwarp_cmd_create_cq_resp *)resp;

	if (cmd_size != sizeof(*c) || resp_size != sizeof(*r))
		return EINVAL;
	/* What vfwarp_vf.ko checks before pinning the ring. */
	if (c->buf_va & 4095 || !pow2(c->depth) || c->depth < 2 ||
	    c->depth > VFW_RDMA_MAX_CQ_DEPTH ||
	    c->buf_len < (uint64_t)c->depth * VFW_CQE_SIZE + VFW_CQ_CTRL_SIZE ||
	    c->depth < (uint32_t)cqe + 1)
		return EINVAL;
	cq->context = context;
	cq->cqe = cqe;
	r->cq_id = next_cq_id++;
	r->depth = cq_depth_override ? (uint32_t)cq_depth_override : c->depth;
	return 0;
}

int ibv_cmd_destroy_cq(struct ibv_cq *cq)
{
	destroyed_cqs++;
	return 0;
}

int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size)
{
	struct vfwarp_cmd_create_qp *c = (struct vfwarp_cmd_create_qp *)cmd;
	struct vfwarp_cmd_create_qp_resp *r =
		(struct vfwarp_cmd_create_qp_resp *)resp;

	if (cmd_size != sizeof(*c) || resp_size != sizeof(*r))
		return EINVAL;
	if (c->sq_va & 4095 || c->rq_va & 4095 || !pow2(c->sq_depth) ||
	    !pow2(c->rq_depth) || c->sq_depth < 2 || c->rq_depth < 2 ||
	    c->sq_depth > VFW_RDMA_MAX_QP_DEPTH ||
	    c->rq_depth > VFW_RDMA_MAX_QP_DEPTH ||
	    c->sq_len < (uint64_t)c->sq_depth * VFW_WQE_SIZE ||
	    c->rq_len < (uint64_t)c->rq_depth * VFW_WQE_SIZE ||
	    c->sq_depth < attr->cap.max_send_wr + 1 ||
	    c->rq_depth < attr->cap.max_recv_wr + 1)
		return EINVAL;
	last_qp_req = c->drv_payload;
	/* As libibverbs' set_qp() and the reply handling do. */
	qp->context = pd->context;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->qp_type = attr->qp_type;
	qp->state = IBV_QPS_RESET;
	r->qp_id = next_qp_id;
	qp->qp_num = next_qp_id;
	next_qp_id++;
	r->sq_depth = c->sq_depth;
	r->rq_depth = c->rq_depth;
	r->max_inline = VFW_RDMA_MAX_INLINE;
	return 0;
}

int ibv_cmd_destroy_qp(struct ibv_qp *qp)
{
	destroyed_qps++;
	return 0;
}

/* Linked but not exercised here: they only forward to uverbs. */
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size) { return EOPNOTSUPP; }
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size)
{ return EOPNOTSUPP; }
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size)
{ return EOPNOTSUPP; }
int ibv_cmd_dealloc_pd(struct ibv_pd *pd) { return EOPNOTSUPP; }
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size)
{ return EOPNOTSUPP; }
int ibv_cmd_dereg_mr(struct verbs_mr *vmr) { return EOPNOTSUPP; }
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size)
{ return EOPNOTSUPP; }
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd, size_t cmd_size)
{ return EOPNOTSUPP; }
int ibv_dontfork_range(void *base, size_t size) { return 0; }
int ibv_dofork_range(void *base, size_t size) { return 0; }
void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "  (provider log) ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* ---- fake device ------------------------------------------------------ */

static uint32_t db_read(struct vfwarp_context *ctx, unsigned int reg)
{
	uint32_t v;

	memcpy(&v, (uint8_t *)ctx->db + reg, 4);
	return le32toh(v);
}

static struct vfw_wqe *wqe_at(uint64_t ring_va, uint32_t depth, uint32_t n)
{
	return (struct vfw_wqe *)(uintptr_t)(ring_va +
		(uint64_t)(n & (depth - 1)) * VFW_WQE_SIZE);
}

/* Write CQE number n of a CQ as the device does: owner byte last. */
static void dev_cqe(struct vfwarp_cq *cq, uint32_t n, uint32_t qp,
		    uint16_t wqe_idx, uint8_t op, uint8_t status,
		    uint32_t len, uint64_t wr_id, uint8_t flags, uint32_t inv)
{
	struct vfw_cqe_hw *e = &cq->ring[n & (cq->depth - 1)];

	e->wr_id = htole64(wr_id);
	e->qp = htole32(qp);
	e->byte_len = htole32(len);
	e->inv_stag = htole32(inv);
	e->wqe_idx = htole16(wqe_idx);
	e->opcode = op;
	e->status = status;
	e->flags = flags;
	__atomic_store_n(&e->owner, ((n / cq->depth) & 1) ^ 1,
			 __ATOMIC_RELEASE);
}

/* The context's status page as the kernel maps it: LIVE, zeros once the
 * core zapped the mapping (device gone). */
static uint32_t status_word;

static uint32_t ctrl_cons(struct vfwarp_cq *cq)
{
	return le32toh(*cq->ctrl_cons);
}

int main(void)
{
	static struct ibv_device fake_dev = { .name = "vfwarp0" };
	struct vfwarp_context *ctx;
	struct ibv_pd pd = {};
	struct ibv_cq *ibcq, *ibcq2;
	struct vfwarp_cq *cq;
	struct ibv_qp *ibqp;
	struct vfwarp_qp *qp;
	struct ibv_qp_init_attr qa;
	struct ibv_send_wr swr[5], *bad_s;
	struct ibv_recv_wr rwr[2], *bad_r;
	struct ibv_sge sge[3];
	struct ibv_wc wc[16];
	struct vfw_wqe *w;
	char payload[200];
	uint64_t sq_va, rq_va;
	uint32_t i, n, qpid;
	int ret;

	ctx = calloc(1, sizeof(*ctx));
	ctx->ibv_ctx.context.device = &fake_dev;
	ctx->db = mmap(NULL, VFW_DB_PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ctx->db != MAP_FAILED);
	ctx->max_qp_depth = 4096;
	ctx->max_cq_depth = 65536;
	ctx->max_sge = VFW_RDMA_MAX_SGE;
	ctx->max_inline = VFW_RDMA_MAX_INLINE;
	ctx->page_size = 4096;
	status_word = htole32(VFWARP_STATUS_LIVE);
	ctx->status = &status_word;
	pthread_spin_init(&ctx->qp_lock, PTHREAD_PROCESS_PRIVATE);
	pd.context = &ctx->ibv_ctx.context;

	/* CQ sizing: cqe 5 -> depth 8, one page; bad sizes refused. */
	ibcq = vfwarp_create_cq(&ctx->ibv_ctx.context, 5, NULL, 0);
	CHECK(ibcq != NULL);
	cq = to_vcq(ibcq);
	CHECK(cq->depth == 8 && cq->buf_len == 4096 && cq->id == 3);
	CHECK(((uintptr_t)cq->ring & 4095) == 0);
	CHECK((uint8_t *)cq->ctrl_cons == (uint8_t *)cq->ring + 8 * VFW_CQE_SIZE);
	CHECK(ibcq->cqe == 7);
	CHECK(vfwarp_create_cq(&ctx->ibv_ctx.context, 0, NULL, 0) == NULL);
	CHECK(vfwarp_create_cq(&ctx->ibv_ctx.context, 65536, NULL, 0) == NULL);
	ibcq2 = vfwarp_create_cq(&ctx->ibv_ctx.context, 65535, NULL, 0);
	CHECK(ibcq2 && to_vcq(ibcq2)->depth == 65536 &&
	      to_vcq(ibcq2)->buf_len == 65536 * 32 + 4096);
	CHECK(vfwarp_destroy_cq(ibcq2) == 0);
	/* A kernel answering another depth than asked is not believed. */
	cq_depth_override = 16;
	destroyed_cqs = 0;
	CHECK(vfwarp_create_cq(&ctx->ibv_ctx.context, 5, NULL, 0) == NULL &&
	      errno == EINVAL && destroyed_cqs == 1);
	cq_depth_override = 0;

	/* QP sizing: send 3 -> SQ depth 4, recv 1 -> RQ depth 2. */
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ibcq;
	qa.recv_cq = ibcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 3;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 2;
	qa.cap.max_inline_data = 64;
	ibqp = vfwarp_create_qp(&pd, &qa);
	CHECK(ibqp != NULL);
	qp = to_vqp(ibqp);
	qpid = qp->id;
	CHECK(last_qp_req.sq_depth == 4 && last_qp_req.rq_depth == 2);
	CHECK(last_qp_req.sq_len == 4096 && last_qp_req.rq_len == 4096);
	CHECK(qa.cap.max_send_wr == 3 && qa.cap.max_recv_wr == 1);
	CHECK(qa.cap.max_inline_data == VFW_RDMA_MAX_INLINE);
	sq_va = last_qp_req.sq_va;
	rq_va = last_qp_req.rq_va;

	/* UD, too deep, too many SGEs, too much inline: refused up front. */
	qa.qp_type = IBV_QPT_UD;
	CHECK(vfwarp_create_qp(&pd, &qa) == NULL && errno == EOPNOTSUPP);
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4096;
	CHECK(vfwarp_create_qp(&pd, &qa) == NULL && errno == EINVAL);
	qa.cap.max_send_wr = 3;
	qa.cap.max_send_sge = VFW_RDMA_MAX_SGE + 1;
	CHECK(vfwarp_create_qp(&pd, &qa) == NULL && errno == EINVAL);
	qa.cap.max_send_sge = 2;
	qa.cap.max_inline_data = VFW_RDMA_MAX_INLINE + 1;
	CHECK(vfwarp_create_qp(&pd, &qa) == NULL && errno == EINVAL);

	/* Post three sends (inline SEND, 2-SGE WRITE, READ); the fourth
	 * finds the SQ full (depth - 1 outstanding). One doorbell. */
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (char)i;
	memset(swr, 0, sizeof(swr));
	sge[0] = (struct ibv_sge){ (uintptr_t)payload, 40, 0 };
	sge[1] = (struct ibv_sge){ (uintptr_t)payload + 40, 20, 0 };
	swr[0] = (struct ibv_send_wr){ .wr_id = 100, .next = &swr[1],
		.sg_list = sge, .num_sge = 2, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE | IBV_SEND_SOLICITED };
	sge[2] = (struct ibv_sge){ 0x10000, 4096, 0x1234 };
	swr[1] = (struct ibv_send_wr){ .wr_id = 101, .next = &swr[2],
		.sg_list = sge, .num_sge = 2, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_FENCE };
	swr[1].sg_list = (struct ibv_sge[]){ { 0x10000, 4096, 0x1234 },
					     { 0x20000, 100, 0x1235 } };
	swr[1].wr.rdma.remote_addr = 0xabcdef0000ull;
	swr[1].wr.rdma.rkey = 0x5555;
	swr[2] = (struct ibv_send_wr){ .wr_id = 102, .next = &swr[3],
		.sg_list = &sge[2], .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED };
	swr[2].wr.rdma.remote_addr = 0x77770000ull;
	swr[2].wr.rdma.rkey = 0x6666;
	swr[3] = (struct ibv_send_wr){ .wr_id = 103, .sg_list = &sge[2],
		.num_sge = 1, .opcode = IBV_WR_SEND };
	ret = vfwarp_post_send(ibqp, swr, &bad_s);
	CHECK(ret == ENOMEM && bad_s == &swr[3]);
	CHECK(db_read(ctx, VFW_DB_SQ) == (qpid | 3u << 16));
	w = wqe_at(sq_va, 4, 0);
	CHECK(le64toh(w->wr_id) == 100 && w->opcode == VFW_WQE_OP_SEND &&
	      w->flags == (VFW_WQE_F_INLINE | VFW_WQE_F_SOLICITED) &&
	      w->num_sge == 0 && le32toh(w->inline_len) == 60 &&
	      !memcmp(w->u.inline_data, payload, 60));
	w = wqe_at(sq_va, 4, 1);
	CHECK(le64toh(w->wr_id) == 101 && w->opcode == VFW_WQE_OP_RDMA_WRITE &&
	      w->flags == VFW_WQE_F_FENCE && w->num_sge == 2 &&
	      le32toh(w->remote_stag) == 0x5555 &&
	      le64toh(w->remote_addr) == 0xabcdef0000ull &&
	      le64toh(w->u.sge[1].addr) == 0x20000 &&
	      le32toh(w->u.sge[1].lkey) == 0x1235 &&
	      le32toh(w->u.sge[1].len) == 100);
	w = wqe_at(sq_va, 4, 2);
	CHECK(w->opcode == VFW_WQE_OP_RDMA_READ &&
	      w->flags == VFW_WQE_F_SIGNALED && w->num_sge == 1 &&
	      le32toh(w->remote_stag) == 0x6666);

	/* The device completes the signaled READ (index 2): it retires the
	 * two unsignaled WQEs before it as well. */
	dev_cqe(cq, 0, qpid, 2, VFW_CQE_OP_RDMA_READ, VFW_CQE_S_SUCCESS,
		4096, 102, 0, 0);
	n = vfwarp_poll_cq(ibcq, 16, wc);
	CHECK(n == 1 && wc[0].wr_id == 102 && wc[0].opcode == IBV_WC_RDMA_READ &&
	      wc[0].status == IBV_WC_SUCCESS && wc[0].byte_len == 4096 &&
	      wc[0].qp_num == ibqp->qp_num && wc[0].wc_flags == 0);
	CHECK(ctrl_cons(cq) == 1);
	CHECK(vfwarp_poll_cq(ibcq, 16, wc) == 0);
	CHECK(qp->sq.ci == 3 && qp->sq.pi == 3);

	/* Invalid sends leave the queue alone. */
	swr[4] = (struct ibv_send_wr){ .wr_id = 9, .sg_list = sge,
		.num_sge = 2, .opcode = IBV_WR_RDMA_READ };
	CHECK(vfwarp_post_send(ibqp, &swr[4], &bad_s) == EINVAL);
	swr[4].opcode = IBV_WR_SEND_WITH_IMM;
	CHECK(vfwarp_post_send(ibqp, &swr[4], &bad_s) == EINVAL);
	swr[4].opcode = IBV_WR_SEND;
	swr[4].num_sge = 3;
	CHECK(vfwarp_post_send(ibqp, &swr[4], &bad_s) == EINVAL);
	sge[0].length = VFW_RDMA_MAX_INLINE + 1;
	swr[4].num_sge = 1;
	swr[4].send_flags = IBV_SEND_INLINE;
	CHECK(vfwarp_post_send(ibqp, &swr[4], &bad_s) == EINVAL &&
	      bad_s == &swr[4]);
	CHECK(qp->sq.pi == 3 && db_read(ctx, VFW_DB_SQ) == (qpid | 3u << 16));

	/* SEND_WITH_INV across the ring wrap (index 3, then 0). */
	sge[0].length = 8;
	swr[4] = (struct ibv_send_wr){ .wr_id = 200, .sg_list = sge,
		.num_sge = 1, .opcode = IBV_WR_SEND_WITH_INV,
		.invalidate_rkey = 0xfeed };
	swr[4].next = NULL;
	CHECK(vfwarp_post_send(ibqp, &swr[4], &bad_s) == 0);
	swr[4].wr_id = 201;
	CHECK(vfwarp_post_send(ibqp, &swr[4], &bad_s) == 0);
	CHECK(db_read(ctx, VFW_DB_SQ) == (qpid | 5u << 16));
	w = wqe_at(sq_va, 4, 4);
	CHECK(le64toh(w->wr_id) == 201 && w->opcode == VFW_WQE_OP_SEND_INV &&
	      le32toh(w->inv_stag) == 0xfeed);

	/* Receives: RQ depth 2 holds one outstanding WQE. */
	memset(rwr, 0, sizeof(rwr));
	rwr[0] = (struct ibv_recv_wr){ .wr_id = 300, .next = &rwr[1],
		.sg_list = sge, .num_sge = 2 };
	rwr[1] = (struct ibv_recv_wr){ .wr_id = 301, .sg_list = sge,
		.num_sge = 1 };
	CHECK(vfwarp_post_recv(ibqp, rwr, &bad_r) == ENOMEM &&
	      bad_r == &rwr[1]);
	CHECK(db_read(ctx, VFW_DB_RQ) == (qpid | 1u << 16));
	w = wqe_at(rq_va, 2, 0);
	CHECK(le64toh(w->wr_id) == 300 && w->num_sge == 2 && w->opcode == 0 &&
	      w->flags == 0);
	rwr[1].num_sge = 3;
	CHECK(vfwarp_post_recv(ibqp, &rwr[1], &bad_r) == ENOMEM);

	/* A receive with invalidation, a flushed send, a CQE with a bogus
	 * index (frees nothing), in one poll; the CQ wraps (depth 8) later. */
	dev_cqe(cq, 1, qpid, 0, VFW_CQE_OP_RECV, VFW_CQE_S_SUCCESS, 77, 300,
		VFW_CQE_F_WITH_INV, 0xbeef);
	dev_cqe(cq, 2, qpid, 3, VFW_CQE_OP_SEND, VFW_CQE_S_WR_FLUSH_ERR, 0,
		200, 0, 0);
	dev_cqe(cq, 3, qpid, 1000, VFW_CQE_OP_SEND, VFW_CQE_S_SUCCESS, 0, 999,
		0, 0);
	n = vfwarp_poll_cq(ibcq, 2, wc);
	CHECK(n == 2);
	CHECK(wc[0].wr_id == 300 && wc[0].opcode == IBV_WC_RECV &&
	      wc[0].byte_len == 77 && wc[0].wc_flags == IBV_WC_WITH_INV &&
	      wc[0].invalidated_rkey == 0xbeef);
	CHECK(wc[1].wr_id == 200 && wc[1].status == IBV_WC_WR_FLUSH_ERR &&
	      wc[1].vendor_err == VFW_CQE_S_WR_FLUSH_ERR);
	CHECK(ctrl_cons(cq) == 3 && qp->rq.ci == 1 && qp->sq.ci == 4);
	n = vfwarp_poll_cq(ibcq, 16, wc);
	CHECK(n == 1 && wc[0].wr_id == 999 && qp->sq.ci == 4);

	/* Wrap the CQ several times; an entry of the previous pass is not
	 * taken for a new one. */
	for (i = 4; i < 40; i++) {
		uint32_t before = cq->cons;

		CHECK(vfwarp_poll_cq(ibcq, 16, wc) == 0);
		dev_cqe(cq, i, qpid, 0xffff, VFW_CQE_OP_SEND,
			VFW_CQE_S_SUCCESS, 0, i, 0, 0);
		n = vfwarp_poll_cq(ibcq, 16, wc);
		CHECK(n == 1 && wc[0].wr_id == i && cq->cons == before + 1);
	}
	CHECK(ctrl_cons(cq) == 40);

	/* Arm: solicited and next. */
	vfwarp_req_notify_cq(ibcq, 0);
	CHECK(db_read(ctx, VFW_DB_CQ) == (cq->id | VFW_DB_CQ_ARM_NEXT));
	vfwarp_req_notify_cq(ibcq, 1);
	CHECK(db_read(ctx, VFW_DB_CQ) == (cq->id | VFW_DB_CQ_ARM_SOLICITED));

	/* CQEs of a destroyed QP are dropped, even when a new QP takes its
	 * id; the new QP's own CQEs are reported. */
	dev_cqe(cq, 40, qpid, 5, VFW_CQE_OP_SEND, VFW_CQE_S_SUCCESS, 0, 400,
		0, 0);
	dev_cqe(cq, 41, qpid, 1, VFW_CQE_OP_RECV, VFW_CQE_S_WR_FLUSH_ERR, 0,
		401, 0, 0);
	CHECK(vfwarp_destroy_qp(ibqp) == 0 && destroyed_qps == 1);
	next_qp_id = qpid;
	qa.cap.max_inline_data = 0;
	ibqp = vfwarp_create_qp(&pd, &qa);
	CHECK(ibqp && to_vqp(ibqp)->id == qpid);
	dev_cqe(cq, 42, qpid, 0, VFW_CQE_OP_SEND, VFW_CQE_S_SUCCESS, 0, 402,
		0, 0);
	n = vfwarp_poll_cq(ibcq, 16, wc);
	CHECK(n == 1 && wc[0].wr_id == 402 && ctrl_cons(cq) == 43);
	CHECK(vfwarp_destroy_qp(ibqp) == 0);

	/* A full ring of unknown-QP CQEs: one poll scans one pass at most. */
	for (i = 43; i < 43 + 8; i++)
		dev_cqe(cq, i, 0x4242, 0, VFW_CQE_OP_SEND, 0, 0, i, 0, 0);
	CHECK(vfwarp_poll_cq(ibcq, 16, wc) == 0 && ctrl_cons(cq) == 51);

	/* The device goes (FLR) with a receive and two sends outstanding, one
	 * completed in the ring: the ring's CQE first, then the rest flushed
	 * by the provider, unsignaled ones too; nothing read from the ring
	 * after that; a send posted after the device went is flushed too. */
	qa.cap.max_inline_data = 0;
	ibqp = vfwarp_create_qp(&pd, &qa);
	CHECK(ibqp != NULL);
	qp = to_vqp(ibqp);
	rwr[0] = (struct ibv_recv_wr){ .wr_id = 500, .sg_list = sge,
		.num_sge = 1 };
	CHECK(vfwarp_post_recv(ibqp, rwr, &bad_r) == 0);
	swr[0] = (struct ibv_send_wr){ .wr_id = 501, .next = &swr[1],
		.sg_list = sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED };
	swr[1] = (struct ibv_send_wr){ .wr_id = 502, .sg_list = sge,
		.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };
	swr[1].wr.rdma.rkey = 0x5555;
	CHECK(vfwarp_post_send(ibqp, swr, &bad_s) == 0);
	dev_cqe(cq, 51, qp->id, 0, VFW_CQE_OP_SEND, VFW_CQE_S_SUCCESS, 8, 501,
		0, 0);
	CHECK(vfwarp_poll_cq(ibcq, 16, wc) == 1 && wc[0].wr_id == 501);
	CHECK(vfwarp_poll_cq(ibcq, 16, wc) == 0 && !cq->dead);
	status_word = 0;
	n = vfwarp_poll_cq(ibcq, 1, wc);
	CHECK(n == 1 && wc[0].wr_id == 500 && wc[0].opcode == IBV_WC_RECV &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR &&
	      wc[0].qp_num == ibqp->qp_num && cq->dead);
	dev_cqe(cq, 52, qp->id, 1, VFW_CQE_OP_RDMA_WRITE,
		VFW_CQE_S_WR_FLUSH_ERR, 0, 502, 0, 0);
	n = vfwarp_poll_cq(ibcq, 16, wc);
	CHECK(n == 1 && wc[0].wr_id == 502 &&
	      wc[0].opcode == IBV_WC_RDMA_WRITE &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR);
	CHECK(vfwarp_poll_cq(ibcq, 16, wc) == 0 && ctrl_cons(cq) == 52);
	swr[0].wr_id = 503;
	swr[0].next = NULL;
	CHECK(vfwarp_post_send(ibqp, swr, &bad_s) == 0);
	n = vfwarp_poll_cq(ibcq, 16, wc);
	CHECK(n == 1 && wc[0].wr_id == 503 && wc[0].opcode == IBV_WC_SEND &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR);
	CHECK(qp->sq.ci == qp->sq.pi && qp->rq.ci == qp->rq.pi);
	CHECK(vfwarp_destroy_qp(ibqp) == 0);

	CHECK(vfwarp_destroy_cq(ibcq) == 0);
	pthread_spin_destroy(&ctx->qp_lock);
	munmap(ctx->db, VFW_DB_PAGE_SIZE);
	free(ctx);

	if (failures) {
		fprintf(stderr, "test_datapath: %d check(s) failed\n", failures);
		return 1;
	}
	printf("test_datapath: all checks passed\n");
	return 0;
}
