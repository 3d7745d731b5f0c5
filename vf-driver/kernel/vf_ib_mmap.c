// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf RDMA: user contexts and their doorbell page.
 *
 * Each user context owns one 4 KiB page of BAR4 (pages 1..db_pages-1;
 * page 0 is the kernel's). The page index goes to the device with every
 * CQ/QP the context creates, and the device ignores a doorbell for an
 * object written through another page: a process can ring only its own
 * queues. The page reaches user space as an rdma_user_mmap_entry
 * (offset in vfwarp_alloc_ucontext_resp), mapped uncached with
 * rdma_user_mmap_io, so the core zaps it on hot-unplug. The page returns
 * to the pool only in mmap_free, i.e. once no mapping can still reach it.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include <rdma/uverbs_ioctl.h>

#include "vf.h"
#include "vf_ib.h"

struct vfw_db_entry {
	struct rdma_user_mmap_entry rdma;
	struct vfw_ib_dev *dev;
	u16 page;
};

static int db_page_get(struct vfw_ib_dev *dev)
{
	unsigned long p;
	int ret = -ENOSPC;

	spin_lock(&dev->db_lock);
	p = find_next_zero_bit(dev->db_used, dev->lim.db_pages, 1);
	if (p < dev->lim.db_pages) {
		__set_bit(p, dev->db_used);
		ret = p;
	}
	spin_unlock(&dev->db_lock);
	return ret;
}

static void db_page_put(struct vfw_ib_dev *dev, u16 page)
{
	spin_lock(&dev->db_lock);
	__clear_bit(page, dev->db_used);
	spin_unlock(&dev->db_lock);
}

static int vfw_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibuc->device);
	struct vfw_ucontext *uc = to_vuctx(ibuc);
	struct vfwarp_alloc_ucontext_resp resp = {};
	struct vfw_db_entry *e;
	int page, err;

	if (!udata)
		return -EINVAL;
	/* a mapping is a CPU page: larger pages would expose others' doorbells */
	if (PAGE_SIZE != VFW_DB_PAGE_SIZE)
		return -EOPNOTSUPP;
	page = db_page_get(dev);
	if (page < 0) {
		ibdev_dbg(&dev->ibdev, "no free doorbell page for a new context\n");
		return page;
	}
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e) {
		db_page_put(dev, page);
		return -ENOMEM;
	}
	e->dev = dev;
	e->page = page;
	err = rdma_user_mmap_entry_insert(ibuc, &e->rdma, PAGE_SIZE);
	if (err) {
		kfree(e);
		db_page_put(dev, page);
		return err;
	}
	uc->db_page = page;
	uc->db_entry = &e->rdma;

	resp.abi_version = VFWARP_ABI_VERSION;
	resp.db_page = page;
	resp.db_mmap_offset = rdma_user_mmap_get_offset(&e->rdma);
	resp.max_qp_depth = dev->lim.max_qp_depth;
	resp.max_cq_depth = dev->lim.max_cq_depth;
	resp.max_sge = dev->lim.max_sge;
	resp.max_inline = dev->lim.max_inline;
	resp.wqe_size = VFW_WQE_SIZE;
	resp.cqe_size = VFW_CQE_SIZE;
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err) {
		/* mmap_free gives the page back */
		rdma_user_mmap_entry_remove(uc->db_entry);
		uc->db_entry = NULL;
		return err;
	}
	return 0;
}

static void vfw_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct vfw_ucontext *uc = to_vuctx(ibuc);

	if (uc->db_entry)
		rdma_user_mmap_entry_remove(uc->db_entry);
	uc->db_entry = NULL;
}

/*
 * Hot-unplug (VF disable, driver unload) with processes still open: the
 * core destroys their objects through our destroy verbs and zaps the
 * doorbell mappings (rdma_user_mmap_io entries); nothing is left for us.
 * Having this op is what lets ib_unregister_device() proceed instead of
 * waiting for every process to close its context.
 */
static void vfw_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int vfw_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct vfw_ib_dev *dev = to_vdev(ibuc->device);
	struct rdma_user_mmap_entry *re;
	struct vfw_db_entry *e;
	int err;

	re = rdma_user_mmap_entry_get(ibuc, vma);
	if (!re)
		return -EINVAL;
	e = container_of(re, struct vfw_db_entry, rdma);
	/* A doorbell page is write-only hardware: never executable, never
	 * cached. */
	if (vma->vm_flags & VM_EXEC) {
		err = -EPERM;
		goto out;
	}
	err = rdma_user_mmap_io(ibuc, vma,
				PHYS_PFN(dev->db_phys + (phys_addr_t)e->page * VFW_DB_PAGE_SIZE),
				PAGE_SIZE, pgprot_noncached(vma->vm_page_prot),
				re);
out:
	rdma_user_mmap_entry_put(re);
	return err;
}

static void vfw_mmap_free(struct rdma_user_mmap_entry *re)
{
	struct vfw_db_entry *e = container_of(re, struct vfw_db_entry, rdma);

	db_page_put(e->dev, e->page);
	kfree(e);
}

const struct ib_device_ops vfw_ib_mmap_ops = {
	.alloc_ucontext = vfw_alloc_ucontext,
	.dealloc_ucontext = vfw_dealloc_ucontext,
	.disassociate_ucontext = vfw_disassociate_ucontext,
	.mmap = vfw_mmap,
	.mmap_free = vfw_mmap_free,
	INIT_RDMA_OBJ_SIZE(ib_ucontext, vfw_ucontext, ibuc),
};
