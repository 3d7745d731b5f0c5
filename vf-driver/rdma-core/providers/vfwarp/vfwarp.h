/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libvfwarp: the rdma-core provider of the vfwarp iWARP RNIC (PF and VFs).
 *
 * The data path never enters the kernel: SQ, RQ and CQ rings live in this
 * process's memory (page aligned, pinned by vfwarp_vf.ko from the addresses
 * passed in udata), WQEs and CQEs have the layouts of vfwarp_rdma.h, and
 * doorbells are 32-bit writes to the context's BAR4 page mapped with
 * mmap(db_mmap_offset). The control path (PD, MR, CQ, QP) goes through the
 * ordinary uverbs commands with the udata of <rdma/vfwarp-abi.h>.
 *
 * Built in tree in rdma-core: lab/build-provider.sh copies this directory to
 * providers/vfwarp, vfwarp-abi.h to kernel-headers/rdma/ and the hardware
 * header vfwarp_rdma.h next to these sources.
 */
#ifndef VFWARP_PROVIDER_H
#define VFWARP_PROVIDER_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/vfwarp-abi.h>
#include <kernel-abi/vfwarp-abi.h>

#include "vfwarp_rdma.h"

#define PCI_VENDOR_ID_VFWARP	0x1234
#define PCI_DEVICE_ID_VFWARP_PF	0xf0a0
#define PCI_DEVICE_ID_VFWARP_VF	0xf0a1

DECLARE_DRV_CMD(vfwarp_cmd_alloc_ucontext, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, vfwarp_alloc_ucontext_resp);
DECLARE_DRV_CMD(vfwarp_cmd_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		vfwarp_create_cq_req, vfwarp_create_cq_resp);
DECLARE_DRV_CMD(vfwarp_cmd_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		vfwarp_create_qp_req, vfwarp_create_qp_resp);

/* QP ids are 16 bits in a doorbell; a CQE naming this id is skipped. */
#define VFWARP_QP_ID_NONE	0xffffffffu
/* Buckets of the context's QP id -> QP table (power of two). */
#define VFWARP_QP_HASH		256

struct vfwarp_device {
	struct verbs_device ibv_dev;
};

struct vfwarp_qp;

struct vfwarp_context {
	struct verbs_context ibv_ctx;
	void *db;			/* this context's doorbell page (BAR4) */
	/* Read-only status page: VFWARP_STATUS_LIVE while the device is
	 * there, zeros once it is gone (NULL: an older kernel has none). */
	const volatile uint32_t *status;
	uint32_t db_page;
	uint32_t max_qp_depth;		/* power of two */
	uint32_t max_cq_depth;		/* power of two */
	uint32_t max_sge;
	uint32_t max_inline;
	size_t page_size;
	/*
	 * QP id -> QP, for CQEs: poll_cq frees SQ/RQ slots of the QP a CQE
	 * names and reports its qp_num. Guarded by qp_lock; lock order is
	 * cq->lock, then qp_lock, then a queue's lock.
	 */
	pthread_spinlock_t qp_lock;
	struct vfwarp_qp *qp_hash[VFWARP_QP_HASH];
};

struct vfwarp_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	struct vfw_cqe_hw *ring;	/* depth entries, then the control block */
	uint32_t *ctrl_cons;		/* le32: CQEs consumed (wrapping) */
	size_t buf_len;
	uint32_t depth;			/* power of two */
	uint32_t id;			/* device CQ id, for the arm doorbell */
	uint32_t cons;			/* CQEs consumed (wrapping) */
	/* The device is gone: the ring is not read again, poll_cq flushes
	 * the outstanding WRs of the CQ's QPs itself. */
	bool dead;
};

/* One work queue: a ring of depth WQEs of VFW_WQE_SIZE bytes. */
struct vfwarp_wq {
	pthread_spinlock_t lock;
	uint8_t *ring;
	size_t buf_len;
	uint32_t depth;			/* power of two */
	uint32_t max_sge;
	uint32_t pi;			/* WQEs posted (wrapping) */
	uint32_t ci;			/* WQEs retired by CQEs (wrapping) */
};

struct vfwarp_qp {
	struct verbs_qp vqp;
	struct vfwarp_qp *hash_next;
	uint32_t id;			/* device QP id (doorbell, CQE.qp) */
	uint32_t max_inline;
	bool sq_sig_all;
	struct vfwarp_wq sq;
	struct vfwarp_wq rq;
};

static inline struct vfwarp_context *to_vctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct vfwarp_context, ibv_ctx.context);
}

static inline struct vfwarp_cq *to_vcq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct vfwarp_cq, vcq.cq);
}

static inline struct vfwarp_qp *to_vqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct vfwarp_qp, vqp.qp);
}

/* verbs.c */
int vfwarp_query_device(struct ibv_context *context,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int vfwarp_query_port(struct ibv_context *context, uint8_t port,
		      struct ibv_port_attr *attr);
struct ibv_pd *vfwarp_alloc_pd(struct ibv_context *context);
int vfwarp_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *vfwarp_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			     uint64_t hca_va, int access);
int vfwarp_dereg_mr(struct verbs_mr *vmr);
struct ibv_cq *vfwarp_create_cq(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel,
				int comp_vector);
int vfwarp_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int vfwarp_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int vfwarp_destroy_cq(struct ibv_cq *ibcq);
struct ibv_qp *vfwarp_create_qp(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr);
int vfwarp_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask, struct ibv_qp_init_attr *init_attr);
int vfwarp_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask);
int vfwarp_destroy_qp(struct ibv_qp *ibqp);
int vfwarp_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr);
int vfwarp_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr);

#endif /* VFWARP_PROVIDER_H */
