/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfwarp_rdma: the VF's iWARP ib_device (hardware interface 2.0,
 * include/vfwarp/vfwarp_rdma.h; udata ABI include/vfwarp/vfwarp-abi.h), an
 * auxiliary driver of vfwarp_vf (vf_rdma_aux.h).
 *
 *   vf_ib_main.c   auxiliary probe/remove, registration, device and port queries,
 *                  the function's IPv4 address and MTU (SET_ADDR)
 *   vf_ib_cmd.c    verbs command queue (RCQ), event queue (EQ) + MSI-X
 *                  vector VFW_MSIX_VEC_RDMA_EQ, event dispatch
 *   vf_ib_verbs.c  PD, MR, CQ, QP; kernel post/poll over rings in
 *                  coherent memory, user objects over ib_umem page lists
 *   vf_ib_cm.c     iw_cm: listen, connect, accept, reject, CM events
 *   vf_ib_mmap.c   user contexts: one BAR4 doorbell page each, mmap
 *
 * The hardware structures are little endian and declared with plain
 * fixed-width types; this driver fills them in CPU order, so it is
 * little-endian only (x86-64, arm64 LE: every platform the lab runs).
 */
#ifndef VFW_VF_IB_H
#define VFW_VF_IB_H

#include <linux/bitmap.h>
#include <linux/interrupt.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/completion.h>
#include <net/sock.h>

#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>

#include "vfwarp/vfwarp_rdma.h"
#include "vfwarp/vfwarp-abi.h"

#ifdef __BIG_ENDIAN
#error "vfwarp_rdma: hardware structures are filled in CPU (little endian) order"
#endif

struct vfw_rdma_aux_dev;

/* Ring sizes the driver chooses (the device accepts 1..VFW_RCQ_MAX_LEN and
 * VFW_EQ_MIN_LEN..VFW_EQ_MAX_LEN). */
#define VFW_IB_RCQ_LEN		64
#define VFW_IB_EQ_LEN		256
/* A command the device has not completed by then is lost: the queue is
 * declared dead (every later verb fails with -EIO). TCG is slow. */
#define VFW_IB_CMD_TIMEOUT_MS	10000

struct vfw_ib_limits {
	u32 caps, max_qp, max_cq, max_mr, max_pd, max_mr_pages, max_conn;
	u32 max_qp_depth, max_cq_depth, max_sge, max_inline, max_ord_ird;
	u32 db_pages, max_pdata;
};

struct vfw_ib_dev {
	struct ib_device ibdev;
	struct vfw_rdma_aux_dev *adev;	/* what vfwarp_vf lent us */
	struct pci_dev *pdev;
	struct net_device *netdev;
	void __iomem *bar0;
	struct vfw_ib_limits lim;

	/* BAR4: page 0 (mapped by vfwarp_vf) for kernel QPs/CQs; user pages
	 * by address */
	void __iomem *kdb;
	phys_addr_t db_phys;
	spinlock_t db_lock;		/* db_used */
	DECLARE_BITMAP(db_used, VFW_DB_PAGES);

	/* verbs command queue (vf_ib_cmd.c) */
	struct mutex cmd_lock;
	struct vfw_rcmd *rcq;
	dma_addr_t rcq_dma;
	u32 rcq_tail;
	u32 cmd_cookie;
	bool cmd_dead;

	/* event queue */
	struct vfw_eqe *eq;
	dma_addr_t eq_dma;
	u8 *eq_pdata;
	dma_addr_t eq_pdata_dma;
	u32 eq_cons;
	spinlock_t eq_lock;		/* consumer; IRQ vs. reset */
	int eq_irq;
	u32 eq_vec;			/* its MSI-X vector (the aux device's eq_vec) */
	bool eq_irq_on;

	/* CM events go through an ordered workqueue (never the IRQ) */
	struct workqueue_struct *cm_wq;
	struct work_struct cm_work;
	spinlock_t cm_evt_lock;
	struct list_head cm_evts;
	struct mutex cm_lock;		/* CEP state, listeners, upcalls */
	struct xarray ceps;		/* device cep id -> struct vfw_cep */
	struct xarray cep_keys;		/* driver key (iw_cm provider_data) -> cep */
	u32 next_cep_key;
	struct xarray listeners;	/* device listener id -> struct vfw_listener */
	struct list_head lsn_list;	/* every listener, also dormant ones */

	/* objects the EQ names */
	struct xarray cqs;		/* cq id -> struct vfw_cq */
	struct xarray qps;		/* qp id -> struct vfw_qp */

	/* local address (SET_ADDR) */
	struct notifier_block inet_nb;
	struct notifier_block netdev_nb;
	struct work_struct addr_work;
	__be32 cur_ip;
	u16 cur_mtu;
	bool registered;
};

static inline struct vfw_ib_dev *to_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vfw_ib_dev, ibdev);
}

struct vfw_ucontext {
	struct ib_ucontext ibuc;
	u16 db_page;
	struct rdma_user_mmap_entry *db_entry;
	struct rdma_user_mmap_entry *status_entry;	/* reads LIVE until unplug */
};

static inline struct vfw_ucontext *to_vuctx(struct ib_ucontext *uc)
{
	return container_of(uc, struct vfw_ucontext, ibuc);
}

struct vfw_pd {
	struct ib_pd ibpd;
	u32 id;
};

struct vfw_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;		/* NULL for the DMA MR */
	u32 stag;
};

/* Ring memory of a kernel object, or the pinned user buffer. */
struct vfw_ring {
	void *va;			/* kernel: coherent memory */
	dma_addr_t dma;
	size_t size;
	struct ib_umem *umem;		/* user */
};

struct vfw_cq {
	struct ib_cq ibcq;
	u32 id;
	u32 depth;
	u16 db_page;
	bool user;
	struct vfw_ring ring;
	spinlock_t lock;		/* kernel CQ consumer */
	u32 cons;			/* CQEs consumed (wrapping) */
};

/* QP states as the driver reports them (the device owns the real one). */
struct vfw_qp {
	struct ib_qp ibqp;
	u32 id;
	u16 db_page;
	bool user;
	bool sig_all;
	enum ib_qp_state state;
	u32 sq_depth, rq_depth;
	u32 max_send_sge, max_recv_sge, max_inline;
	struct vfw_ring sq, rq;
	spinlock_t sq_lock, rq_lock;
	u32 sq_pi, sq_ci;		/* WQEs posted / retired */
	u32 rq_pi, rq_ci;
	/* iw_cm references (iw_add_ref/iw_rem_ref); destroy waits for 0 */
	refcount_t iw_refs;
	struct completion iw_free;
	struct vfw_cep *cep;		/* bound connection (cm_lock) */
};

static inline struct vfw_qp *to_vqp(struct ib_qp *q)
{
	return container_of(q, struct vfw_qp, ibqp);
}

static inline struct vfw_cq *to_vcq(struct ib_cq *c)
{
	return container_of(c, struct vfw_cq, ibcq);
}

/* A CM event copied off the EQ (with its private data) for the CM worker. */
struct vfw_cm_evt {
	struct list_head node;
	u32 seq;			/* EQ position (wrapping) */
	struct vfw_eqe eqe;
	u8 pdata[];
};

/* vf_ib_cmd.c */
int vfw_ib_cmd(struct vfw_ib_dev *dev, struct vfw_rcmd *cmd);
int vfw_ib_rcq_init(struct vfw_ib_dev *dev);
void vfw_ib_rcq_enable(struct vfw_ib_dev *dev);
void vfw_ib_rcq_fini(struct vfw_ib_dev *dev);
int vfw_ib_eq_init(struct vfw_ib_dev *dev);
void vfw_ib_eq_enable(struct vfw_ib_dev *dev);
void vfw_ib_eq_fini(struct vfw_ib_dev *dev);
unsigned int vfw_ib_eq_poll(struct vfw_ib_dev *dev);
u32 vfw_ib_eq_prod(struct vfw_ib_dev *dev);
void *vfw_ib_pgl_alloc(struct vfw_ib_dev *dev, u32 npages, dma_addr_t *dma);
void vfw_ib_pgl_free(struct vfw_ib_dev *dev, u32 npages, void *pgl,
		     dma_addr_t dma);

/* vf_ib_verbs.c */
extern const struct ib_device_ops vfw_ib_verbs_ops;
void vfw_ib_cq_event(struct vfw_ib_dev *dev, u32 cq_id, bool error);
void vfw_ib_qp_fatal(struct vfw_ib_dev *dev, const struct vfw_eqe *e);
int vfw_ib_qp_to_error(struct vfw_ib_dev *dev, struct vfw_qp *qp);

/* vf_ib_cm.c */
extern const struct ib_device_ops vfw_ib_cm_ops;
void vfw_ib_cm_work(struct work_struct *work);
void vfw_ib_cm_qp_gone(struct vfw_ib_dev *dev, struct vfw_qp *qp);
void vfw_ib_cm_fini(struct vfw_ib_dev *dev);
void vfw_ib_cm_addr_changed(struct vfw_ib_dev *dev, __be32 ip);

/* vf_ib_mmap.c */
extern const struct ib_device_ops vfw_ib_mmap_ops;

#endif /* VFW_VF_IB_H */
