/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rnic_pgl.c - function memory: DMA as the function, page-list copies, and
 * ring offset -> DMA address translation. The one place ring DMA happens:
 * every ring access is bounds-checked against the ring's size and split
 * at page boundaries of its copied page list.
 */
#include <errno.h>
#include <stdlib.h>
#include "rnic_internal.h"

int rnic_dma_read(struct rnic_fn *fs, uint64_t addr, void *buf, size_t len)
{
    if (len == 0)
        return 0;
    if (addr + len < addr ||
        fs->r->ops.dma_read(fs->r->ctx, fs->fn, addr, buf, len)) {
        rnic_stat(fs, VFW_RSTAT_DMA_ERR);
        return -EIO;
    }
    return 0;
}

int rnic_dma_write(struct rnic_fn *fs, uint64_t addr, const void *buf,
                   size_t len)
{
    if (len == 0)
        return 0;
    if (addr + len < addr ||
        fs->r->ops.dma_write(fs->r->ctx, fs->fn, addr, buf, len)) {
        rnic_stat(fs, VFW_RSTAT_DMA_ERR);
        return -EIO;
    }
    return 0;
}

/* Validate ref, copy its list. The list must cover the pages that
 * [start_off, start_off + need_bytes) touches: exactly those (MRs, whose
 * pages count against the quota), or at least those (rings: a process
 * may hand a larger buffer; only the pages the ring uses are copied). */
int rnic_pgl_fetch(struct rnic_fn *fs, const struct vfw_pgl_ref *ref,
                   uint64_t start_off, uint64_t need_bytes,
                   uint32_t max_pages, bool exact, uint64_t **pages)
{
    *pages = NULL;
    if (ref->rsvd || ref->page_shift < VFW_PGL_MIN_SHIFT ||
        ref->page_shift > VFW_PGL_MAX_SHIFT || (ref->pgl_addr & 7) ||
        ref->npages == 0 || ref->npages > max_pages || need_bytes == 0)
        return VFW_RCMD_S_INVAL;
    uint64_t psz = 1ull << ref->page_shift;
    if (start_off >= psz)
        return VFW_RCMD_S_INVAL;
    /* need_bytes is bounded by the callers (rings: a few MiB; MRs: the
     * page count times the page size was checked against max_pages), so
     * this sum cannot overflow: start_off < 2^30, need < 2^49. */
    if (need_bytes > (uint64_t)max_pages << ref->page_shift)
        return VFW_RCMD_S_INVAL;
    uint64_t span = (start_off + need_bytes + psz - 1) >> ref->page_shift;
    if (exact ? span != ref->npages : span > ref->npages)
        return VFW_RCMD_S_INVAL;
    uint64_t bytes = span * 8;
    if (ref->pgl_addr + bytes < ref->pgl_addr)
        return VFW_RCMD_S_INVAL;
    /* the walk costs the same whether the list then passes or not */
    rnic_work_charge(fs, span / RNIC_PGL_ENTRIES_PER_UNIT);
    uint64_t *p = malloc(bytes);
    if (!p)
        return VFW_RCMD_S_NOSPC;
    if (rnic_dma_read(fs, ref->pgl_addr, p, bytes)) {
        free(p);
        return VFW_RCMD_S_DMA;
    }
    for (uint64_t i = 0; i < span; i++) {
        p[i] = vfw_ld_le64(&p[i]);
        if ((p[i] & (psz - 1)) || p[i] + psz - 1 < p[i]) {
            free(p);
            return VFW_RCMD_S_INVAL;
        }
    }
    *pages = p;
    return VFW_RCMD_S_OK;
}

int rnic_ring_init(struct rnic_fn *fs, struct rnic_ring *ring,
                   const struct vfw_pgl_ref *ref, uint64_t bytes,
                   uint32_t align)
{
    memset(ring, 0, sizeof(*ring));
    /* Entries never straddle a page: offset aligned to the entry size. */
    if (ref->offset >= VFW_DB_PAGE_SIZE || (ref->offset & (align - 1)))
        return VFW_RCMD_S_INVAL;
    int st = rnic_pgl_fetch(fs, ref, ref->offset, bytes, VFW_RDMA_MAX_MR_PGL,
                            false, &ring->pages);
    if (st)
        return st;
    /* the pages the ring touches (what was copied) */
    ring->npages = (uint32_t)((ref->offset + bytes +
                               (1ull << ref->page_shift) - 1) >>
                              ref->page_shift);
    ring->shift = ref->page_shift;
    ring->offset = ref->offset;
    ring->bytes = bytes;
    return VFW_RCMD_S_OK;
}

void rnic_ring_free(struct rnic_ring *ring)
{
    free(ring->pages);
    memset(ring, 0, sizeof(*ring));
}

/* rd: destination for a read, wr: source for a write (exactly one set) */
static int ring_rw(struct rnic_fn *fs, const struct rnic_ring *ring,
                   uint64_t off, uint8_t *rd, const uint8_t *wr, size_t len)
{
    if (!ring->pages || off > ring->bytes || len > ring->bytes - off)
        return -EINVAL;
    uint64_t psz = 1ull << ring->shift;
    uint64_t pos = ring->offset + off;
    /* at most npages iterations: each step ends at a page boundary */
    while (len) {
        uint64_t pi = pos >> ring->shift, in = pos & (psz - 1);
        if (pi >= ring->npages)
            return -EINVAL;
        size_t n = (size_t)(psz - in < len ? psz - in : len);
        uint64_t a = ring->pages[pi] + in;
        int rc = wr ? rnic_dma_write(fs, a, wr, n) : rnic_dma_read(fs, a, rd, n);
        if (rc)
            return rc;
        if (wr)
            wr += n;
        else
            rd += n;
        pos += n;
        len -= n;
    }
    return 0;
}

int rnic_ring_read(struct rnic_fn *fs, const struct rnic_ring *ring,
                   uint64_t off, void *buf, size_t len)
{
    return ring_rw(fs, ring, off, buf, NULL, len);
}

int rnic_ring_write(struct rnic_fn *fs, const struct rnic_ring *ring,
                    uint64_t off, const void *buf, size_t len)
{
    return ring_rw(fs, ring, off, NULL, buf, len);
}
