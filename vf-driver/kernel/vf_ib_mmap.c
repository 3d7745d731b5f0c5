// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf RDMA: user contexts, their doorbell page and their status page.
 *
 * Each user context owns one 4 KiB page of BAR4 (pages 1..db_pages-1;
 * page 0 is the kernel's). The page index goes to the device with every
 * CQ/QP the context creates, and the device ignores a doorbell for an
 * object written through another page: a process can ring only its own
 * queues. The page reaches user space as an rdma_user_mmap_entry
 * (offset in vfwarp_alloc_ucontext_resp), mapped uncached with
 * rdma_user_mmap_io, so the core zaps it on hot-unplug. The page returns
 * to the pool only in mmap_free, i.e. once no mapping can still reach it.
 *
 * Each context also gets a read-only status page (kernel memory, first
 * word VFWARP_STATUS_LIVE), mapped the same way. Zapped on hot-unplug, it
 * reads as the zero page: the provider's poll_cq sees that the device is
 * gone without a system call and flushes what its process posted, which
 * the device will never complete (vfwarp-abi.h).
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include <rdma/uverbs_ioctl.h>

#include "vfwarp/vfwarp_regs.h"
#include "vf_ib.h"

struct vfw_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	struct vfw_ib_dev *dev;
	void *status;		/* the status page; NULL: a doorbell page */
	u16 page;		/* doorbell: its BAR4 page */
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

/* Entries removed here are freed by mmap_free once nothing maps them. */
static void vfw_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct vfw_ucontext *uc = to_vuctx(ibuc);

	if (uc->db_entry)
		rdma_user_mmap_entry_remove(uc->db_entry);
	uc->db_entry = NULL;
	if (uc->status_entry)
		rdma_user_mmap_entry_remove(uc->status_entry);
	uc->status_entry = NULL;
}

static int db_page_add(struct vfw_ucontext *uc, struct vfw_ib_dev *dev)
{
	struct vfw_mmap_entry *e;
	int page, err;

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
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &e->rdma, PAGE_SIZE);
	if (err) {
		kfree(e);
		db_page_put(dev, page);
		return err;
	}
	uc->db_page = page;
	uc->db_entry = &e->rdma;
	return 0;
}

/* The context's status page: LIVE until the core zaps its mapping. */
static int status_page_add(struct vfw_ucontext *uc, struct vfw_ib_dev *dev)
{
	struct vfw_mmap_entry *e;
	int err;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->dev = dev;
	e->status = (void *)get_zeroed_page(GFP_KERNEL);
	if (!e->status) {
		kfree(e);
		return -ENOMEM;
	}
	*(__le32 *)e->status = cpu_to_le32(VFWARP_STATUS_LIVE);
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &e->rdma, PAGE_SIZE);
	if (err) {
		free_page((unsigned long)e->status);
		kfree(e);
		return err;
	}
	uc->status_entry = &e->rdma;
	return 0;
}

static int vfw_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibuc->device);
	struct vfw_ucontext *uc = to_vuctx(ibuc);
	struct vfwarp_alloc_ucontext_resp resp = {};
	int err;

	if (!udata)
		return -EINVAL;
	/* a mapping is a CPU page: larger pages would expose others' doorbells */
	if (PAGE_SIZE != VFW_DB_PAGE_SIZE)
		return -EOPNOTSUPP;
	err = db_page_add(uc, dev);
	if (err)
		return err;
	err = status_page_add(uc, dev);
	if (err)
		goto err_entries;

	resp.abi_version = VFWARP_ABI_VERSION;
	resp.db_page = uc->db_page;
	resp.db_mmap_offset = rdma_user_mmap_get_offset(uc->db_entry);
	resp.max_qp_depth = dev->lim.max_qp_depth;
	resp.max_cq_depth = dev->lim.max_cq_depth;
	resp.max_sge = dev->lim.max_sge;
	resp.max_inline = dev->lim.max_inline;
	resp.wqe_size = VFW_WQE_SIZE;
	resp.cqe_size = VFW_CQE_SIZE;
	resp.status_mmap_offset = rdma_user_mmap_get_offset(uc->status_entry);
	resp.flags = VFWARP_UCTX_F_STATUS;
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		goto err_entries;
	return 0;

err_entries:
	vfw_dealloc_ucontext(ibuc);
	return err;
}

/*
 * Hot-unplug (VF disable, driver unload) with processes still open: the
 * core destroys their objects through our destroy verbs and zaps the
 * doorbell and status mappings (rdma_user_mmap_io entries); nothing is
 * left for us. Having this op is what lets ib_unregister_device() proceed
 * instead of waiting for every process to close its context.
 */
static void vfw_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int vfw_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct vfw_ib_dev *dev = to_vdev(ibuc->device);
	struct rdma_user_mmap_entry *re;
	struct vfw_mmap_entry *e;
	int err;

	re = rdma_user_mmap_entry_get(ibuc, vma);
	if (!re)
		return -EINVAL;
	e = container_of(re, struct vfw_mmap_entry, rdma);
	if (vma->vm_flags & VM_EXEC) {
		err = -EPERM;
		goto out;
	}
	if (e->status) {
		/* Read-only for good: once zapped, a mapping that can never
		 * be writable faults in the zero page (not SIGBUS), which is
		 * how the provider sees its device gone. */
		if (vma->vm_flags & VM_WRITE) {
			err = -EPERM;
			goto out;
		}
		vm_flags_clear(vma, VM_MAYWRITE);
		err = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(virt_to_phys(e->status)),
					PAGE_SIZE, vma->vm_page_prot, re);
		goto out;
	}
	/* A doorbell page is write-only hardware: never executable, never
	 * cached. */
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
	struct vfw_mmap_entry *e = container_of(re, struct vfw_mmap_entry, rdma);

	if (e->status)
		free_page((unsigned long)e->status);
	else
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
