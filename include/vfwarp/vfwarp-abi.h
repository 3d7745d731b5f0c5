/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * vfwarp uverbs ABI: the udata structures the VF driver (vfwarp_vf.ko,
 * vf-driver/kernel/) and the rdma-core provider (vf-driver/rdma-core/)
 * exchange. uapi style: built in the kernel and, copied to
 * kernel-headers/rdma/vfwarp-abi.h, in rdma-core's tree.
 *
 * Queue memory belongs to the process: the provider allocates page-aligned
 * SQ/RQ/CQ buffers and passes their addresses; the driver pins them with
 * ib_umem and hands the device page lists (include/vfwarp/vfwarp_rdma.h).
 * Layouts: SQ/RQ rings are depth * VFW_WQE_SIZE bytes, a CQ ring is
 * depth * VFW_CQE_SIZE followed by VFW_CQ_CTRL_SIZE bytes of control block.
 * The doorbell page of the context is mapped with mmap(db_mmap_offset).
 *
 * With VFWARP_UCTX_F_STATUS the context also has a read-only status page,
 * mmap(status_mmap_offset): ordinary memory whose first 32-bit word reads
 * VFWARP_STATUS_LIVE while the context is bound to its device. When the
 * device goes (FLR, VF disable, driver unload) the core zaps the mapping
 * and the page reads as zeros from then on, with no system call: a
 * process busy-polling a CQ learns that no completion will ever come from
 * the device, and the provider flushes its outstanding work requests
 * itself (a removed device's QPs are in ERROR).
 */
#ifndef VFWARP_ABI_USER_H
#define VFWARP_ABI_USER_H

#include <linux/types.h>

#define VFWARP_ABI_VERSION 1

struct vfwarp_alloc_ucontext_resp {
	__u32 abi_version;
	__u32 db_page;          /* index of this context's page in BAR4 */
	__aligned_u64 db_mmap_offset;
	__u32 max_qp_depth;
	__u32 max_cq_depth;
	__u32 max_sge;
	__u32 max_inline;
	__u32 wqe_size;         /* VFW_WQE_SIZE */
	__u32 cqe_size;         /* VFW_CQE_SIZE */
	__aligned_u64 status_mmap_offset;   /* with VFWARP_UCTX_F_STATUS */
	__u32 flags;            /* VFWARP_UCTX_F_* */
	__u32 rsvd;
};

#define VFWARP_UCTX_F_STATUS	0x1u
#define VFWARP_STATUS_LIVE	0x4c495645u	/* "LIVE" */

struct vfwarp_create_cq_req {
	__aligned_u64 buf_va;   /* page aligned */
	__u32 buf_len;          /* >= depth * cqe_size + VFW_CQ_CTRL_SIZE */
	__u32 depth;            /* power of two */
};

struct vfwarp_create_cq_resp {
	__u32 cq_id;
	__u32 depth;
};

struct vfwarp_create_qp_req {
	__aligned_u64 sq_va;    /* page aligned */
	__aligned_u64 rq_va;
	__u32 sq_len;           /* >= sq_depth * wqe_size */
	__u32 rq_len;
	__u32 sq_depth;         /* power of two */
	__u32 rq_depth;
};

struct vfwarp_create_qp_resp {
	__u32 qp_id;
	__u32 sq_depth;
	__u32 rq_depth;
	__u32 max_inline;
};

#endif /* VFWARP_ABI_USER_H */
