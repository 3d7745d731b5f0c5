// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libvfwarp: device matching and the user context (doorbell page mapping).
 * The verbs themselves are in verbs.c.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "vfwarp.h"

static void vfwarp_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops vfwarp_ctx_ops = {
	.alloc_pd = vfwarp_alloc_pd,
	.create_cq = vfwarp_create_cq,
	.create_qp = vfwarp_create_qp,
	.dealloc_pd = vfwarp_dealloc_pd,
	.dereg_mr = vfwarp_dereg_mr,
	.destroy_cq = vfwarp_destroy_cq,
	.destroy_qp = vfwarp_destroy_qp,
	.free_context = vfwarp_free_context,
	.modify_qp = vfwarp_modify_qp,
	.poll_cq = vfwarp_poll_cq,
	.post_recv = vfwarp_post_recv,
	.post_send = vfwarp_post_send,
	.query_device_ex = vfwarp_query_device,
	.query_port = vfwarp_query_port,
	.query_qp = vfwarp_query_qp,
	.reg_mr = vfwarp_reg_mr,
	.req_notify_cq = vfwarp_req_notify_cq,
};

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/*
 * The kernel's answer decides the ring limits this context uses; it is
 * checked against the hardware interface, so a confused driver cannot make
 * the provider write past a ring or a WQE.
 */
static int vfwarp_check_ucontext(struct vfwarp_context *ctx,
				 const struct vfwarp_alloc_ucontext_resp *r)
{
	if (r->abi_version != VFWARP_ABI_VERSION ||
	    r->wqe_size != VFW_WQE_SIZE || r->cqe_size != VFW_CQE_SIZE) {
		verbs_err(&ctx->ibv_ctx,
			  "vfwarp: kernel ABI %u (WQE %u, CQE %u bytes), provider %u (%u, %u)\n",
			  r->abi_version, r->wqe_size, r->cqe_size,
			  VFWARP_ABI_VERSION, VFW_WQE_SIZE, VFW_CQE_SIZE);
		return EINVAL;
	}
	if (!is_pow2(r->max_qp_depth) || r->max_qp_depth < 2 ||
	    r->max_qp_depth > VFW_RDMA_MAX_QP_DEPTH ||
	    !is_pow2(r->max_cq_depth) || r->max_cq_depth < 2 ||
	    r->max_cq_depth > VFW_RDMA_MAX_CQ_DEPTH ||
	    r->max_sge > VFW_RDMA_MAX_SGE ||
	    r->max_inline > VFW_RDMA_MAX_INLINE ||
	    r->db_page >= VFW_DB_PAGES) {
		verbs_err(&ctx->ibv_ctx,
			  "vfwarp: bad limits from the kernel (qp depth %u, cq depth %u, sge %u, inline %u, db page %u)\n",
			  r->max_qp_depth, r->max_cq_depth, r->max_sge,
			  r->max_inline, r->db_page);
		return EINVAL;
	}
	return 0;
}

static struct verbs_context *vfwarp_alloc_context(struct ibv_device *ibdev,
						  int cmd_fd,
						  void *private_data)
{
	struct vfwarp_cmd_alloc_ucontext cmd = {};
	struct vfwarp_cmd_alloc_ucontext_resp resp = {};
	struct vfwarp_context *ctx;
	long psz;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	if (ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp)))
		goto err_free;
	if (vfwarp_check_ucontext(ctx, &resp.drv_payload)) {
		errno = EINVAL;
		goto err_free;
	}

	psz = sysconf(_SC_PAGESIZE);
	ctx->page_size = psz > 0 ? (size_t)psz : 4096;
	ctx->db_page = resp.db_page;
	ctx->max_qp_depth = resp.max_qp_depth;
	ctx->max_cq_depth = resp.max_cq_depth;
	ctx->max_sge = resp.max_sge;
	ctx->max_inline = resp.max_inline;
	pthread_spin_init(&ctx->qp_lock, PTHREAD_PROCESS_PRIVATE);

	/* Write only: doorbell reads return 0 and are never needed. */
	ctx->db = mmap(NULL, VFW_DB_PAGE_SIZE, PROT_WRITE, MAP_SHARED, cmd_fd,
		       resp.db_mmap_offset);
	if (ctx->db == MAP_FAILED) {
		verbs_err(&ctx->ibv_ctx,
			  "vfwarp: mapping doorbell page %u failed: %d\n",
			  resp.db_page, errno);
		pthread_spin_destroy(&ctx->qp_lock);
		goto err_free;
	}

	if (resp.flags & VFWARP_UCTX_F_STATUS) {
		void *st = mmap(NULL, ctx->page_size, PROT_READ, MAP_SHARED,
				cmd_fd, resp.status_mmap_offset);

		if (st == MAP_FAILED) {
			verbs_err(&ctx->ibv_ctx,
				  "vfwarp: mapping the status page failed: %d\n",
				  errno);
			munmap(ctx->db, VFW_DB_PAGE_SIZE);
			pthread_spin_destroy(&ctx->qp_lock);
			goto err_free;
		}
		ctx->status = st;
	}

	verbs_set_ops(&ctx->ibv_ctx, &vfwarp_ctx_ops);
	return &ctx->ibv_ctx;

err_free:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	return NULL;
}

static void vfwarp_free_context(struct ibv_context *ibctx)
{
	struct vfwarp_context *ctx = to_vctx(ibctx);

	munmap(ctx->db, VFW_DB_PAGE_SIZE);
	if (ctx->status)
		munmap((void *)ctx->status, ctx->page_size);
	pthread_spin_destroy(&ctx->qp_lock);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *vfwarp_device_alloc(struct verbs_sysfs_dev *sdev)
{
	struct vfwarp_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void vfwarp_device_free(struct verbs_device *vdev)
{
	free(container_of(vdev, struct vfwarp_device, ibv_dev));
}

/*
 * Out of tree, the kernel driver reports RDMA_DRIVER_UNKNOWN, so match by
 * the PCI function the ib_device sits on: the VF, and the PF (which has
 * the same RDMA interface for its own verbs).
 */
static const struct verbs_match_ent vfwarp_match_table[] = {
	VERBS_PCI_MATCH(PCI_VENDOR_ID_VFWARP, PCI_DEVICE_ID_VFWARP_VF, NULL),
	VERBS_PCI_MATCH(PCI_VENDOR_ID_VFWARP, PCI_DEVICE_ID_VFWARP_PF, NULL),
	{}
};

static const struct verbs_device_ops vfwarp_dev_ops = {
	.name = "vfwarp",
	.match_min_abi_version = VFWARP_ABI_VERSION,
	.match_max_abi_version = VFWARP_ABI_VERSION,
	.match_table = vfwarp_match_table,
	.alloc_device = vfwarp_device_alloc,
	.uninit_device = vfwarp_device_free,
	.alloc_context = vfwarp_alloc_context,
};

PROVIDER_DRIVER(vfwarp, vfwarp_dev_ops);
