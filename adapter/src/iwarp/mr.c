/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mr.c - protection domains, memory regions, STags and the one access check
 * (vfw_mr_check) every data movement goes through before any byte moves.
 *
 * STag = (index << 8) | key. The index names a slot of the engine's MR
 * table (1..max_mr); the key changes on every registration of that slot so
 * that a stale STag no longer matches. STag 0 is never valid.
 */
#include <errno.h>
#include <stdlib.h>
#include "vfw_iwarp.h"

bool vfw_pd_valid(const struct vfw_engine *e, uint32_t pd)
{
    return pd >= 1 && pd <= e->max_pd && e->pd[pd].used;
}

int vfw_pd_alloc(struct vfw_engine *e, uint32_t *pd_id)
{
    if (!e || !pd_id)
        return -EINVAL;
    for (uint32_t i = 1; i <= e->max_pd; i++) {
        if (!e->pd[i].used) {
            if (i > e->pd_hi)
                e->pd_hi = i;
            e->pd[i].used = true;
            e->pd[i].refs = 0;
            *pd_id = i;
            return 0;
        }
    }
    return -ENOSPC;
}

int vfw_pd_free(struct vfw_engine *e, uint32_t pd_id)
{
    if (!e || !vfw_pd_valid(e, pd_id))
        return -ENOENT;
    if (e->pd[pd_id].refs)
        return -EBUSY;
    e->pd[pd_id].used = false;
    return 0;
}

static struct vfw_mr *mr_lookup(const struct vfw_engine *e, uint32_t stag)
{
    uint32_t idx = stag >> 8;
    if (idx < 1 || idx > e->max_mr)
        return NULL;
    struct vfw_mr *m = &e->mr[idx];
    if (!m->used || m->key != (uint8_t)stag)
        return NULL;
    return m;
}

static int mr_args_ok(struct vfw_engine *e, uint32_t pd_id, uint64_t iova,
                      uint64_t len, uint32_t access)
{
    if (!vfw_pd_valid(e, pd_id))
        return -ENOENT;
    if (access & ~(uint32_t)(VFW_ACC_LOCAL_WRITE | VFW_ACC_REMOTE_WRITE |
                             VFW_ACC_REMOTE_READ))
        return -EINVAL;
    /* Remote write without local write is meaningless (IB/iWARP rule). */
    if ((access & VFW_ACC_REMOTE_WRITE) && !(access & VFW_ACC_LOCAL_WRITE))
        return -EINVAL;
    if (len == 0 || iova + len < iova)
        return -EINVAL;
    return 0;
}

/* Take a free slot; the new key makes every older STag of it stale. */
static struct vfw_mr *mr_slot(struct vfw_engine *e, uint32_t *idx)
{
    for (uint32_t i = 1; i <= e->max_mr; i++) {
        struct vfw_mr *m = &e->mr[i];
        if (m->used)
            continue;
        m->key = (uint8_t)(m->key + 1);
        if (m->key == 0)
            m->key = 1;
        if (i > e->mr_hi)
            e->mr_hi = i;
        *idx = i;
        return m;
    }
    return NULL;
}

static void mr_fill(struct vfw_engine *e, struct vfw_mr *m, uint32_t pd_id,
                    uint64_t iova, uint64_t len, uint32_t access)
{
    m->used = true;
    m->valid = true;
    m->pd = pd_id;
    m->iova = iova;
    m->len = len;
    m->access = access;
    e->pd[pd_id].refs++;
}

int vfw_mr_reg(struct vfw_engine *e, uint32_t pd_id, uint64_t iova,
               uint64_t len, uint32_t access, uint32_t *stag)
{
    if (!e || !stag)
        return -EINVAL;
    int rc = mr_args_ok(e, pd_id, iova, len, access);
    if (rc)
        return rc;
    uint32_t i;
    struct vfw_mr *m = mr_slot(e, &i);
    if (!m)
        return -ENOSPC;
    mr_fill(e, m, pd_id, iova, len, access);
    m->pages = NULL;
    m->npages = 0;
    m->page_shift = 0;
    *stag = i << 8 | m->key;
    return 0;
}

int vfw_mr_reg_pages(struct vfw_engine *e, uint32_t pd_id, uint64_t iova,
                     uint64_t len, uint32_t access, unsigned page_shift,
                     const uint64_t *pages, uint32_t npages, uint32_t *stag)
{
    if (!e || !stag || !pages)
        return -EINVAL;
    int rc = mr_args_ok(e, pd_id, iova, len, access);
    if (rc)
        return rc;
    if (page_shift < 12 || page_shift > 30 || npages == 0 ||
        npages > VFW_MAX_MR_PGL)
        return -EINVAL;
    uint64_t mask = (1ull << page_shift) - 1;
    uint64_t fbo = iova & mask;
    /* npages must be exactly the pages [iova, iova + len) touches; both
     * sides are < 2^49 here, so nothing overflows */
    if (len > (uint64_t)npages << page_shift)
        return -EINVAL;
    if (((fbo + len - 1) >> page_shift) + 1 != npages)
        return -EINVAL;
    for (uint32_t k = 0; k < npages; k++)
        if ((pages[k] & mask) || pages[k] > UINT64_MAX - mask)
            return -EINVAL;
    if (npages > e->max_mr_pages - e->mr_pages)
        return -ENOSPC;
    uint32_t i;
    struct vfw_mr *m = mr_slot(e, &i);
    if (!m)
        return -ENOSPC;
    uint64_t *copy = malloc((size_t)npages * sizeof(*copy));
    if (!copy)
        return -ENOMEM;
    memcpy(copy, pages, (size_t)npages * sizeof(*copy));
    mr_fill(e, m, pd_id, iova, len, access);
    m->pages = copy;
    m->npages = npages;
    m->page_shift = (uint8_t)page_shift;
    e->mr_pages += npages;
    *stag = i << 8 | m->key;
    return 0;
}

static void mr_release(struct vfw_engine *e, struct vfw_mr *m)
{
    e->pd[m->pd].refs--;
    e->mr_pages -= m->npages;
    free(m->pages);
    m->pages = NULL;
    m->npages = 0;
    m->used = false;
    m->valid = false;
}

int vfw_mr_dereg(struct vfw_engine *e, uint32_t stag)
{
    struct vfw_mr *m = e ? mr_lookup(e, stag) : NULL;
    if (!m)
        return -ENOENT;
    mr_release(e, m);
    return 0;
}

void vfw_mr_free_all(struct vfw_engine *e)
{
    for (uint32_t i = 1; i <= e->mr_hi; i++)
        if (e->mr[i].used)
            mr_release(e, &e->mr[i]);
}

int vfw_mr_invalidate(struct vfw_engine *e, uint32_t stag)
{
    struct vfw_mr *m = e ? mr_lookup(e, stag) : NULL;
    if (!m)
        return -ENOENT;
    m->valid = false;
    return 0;
}

int vfw_mr_is_valid(const struct vfw_engine *e, uint32_t stag)
{
    const struct vfw_mr *m = e ? mr_lookup(e, stag) : NULL;
    return m && m->valid;
}

/*
 * The access check. `to` is VA-based (an iova inside the region); `need`
 * is the set of VFW_ACC_* rights required (0 for a local read).
 * Order of checks follows RFC 5040 sec. 6.4 / RFC 5041 sec. 7: STag
 * validity, association with the stream's PD, bounds (with wrap), rights.
 */
enum vfw_mr_err vfw_mr_check(struct vfw_engine *e, uint32_t pd, uint32_t stag,
                             uint64_t to, uint64_t len, uint32_t need)
{
    struct vfw_mr *m = mr_lookup(e, stag);
    if (!m || !m->valid)
        return MR_INV_STAG;
    if (m->pd != pd)
        return MR_PD;
    if (to + len < to)
        return MR_WRAP;
    if (to < m->iova || to + len > m->iova + m->len)
        return MR_BOUNDS;
    if ((m->access & need) != need)
        return MR_ACCESS;
    return MR_OK;
}

/* Translate and move. Only bounds/liveness are re-checked here (rights and
 * PD were judged by vfw_mr_check); a page-list MR is split at its page
 * boundaries, so one access becomes at most npages DMA operations. */
static int mr_dma(struct vfw_engine *e, uint32_t stag, uint64_t to,
                  uint8_t *rbuf, const uint8_t *wbuf, uint64_t len, bool wr)
{
    const struct vfw_mr *m = mr_lookup(e, stag);
    if (!m || !m->valid || to + len < to || to < m->iova ||
        to + len > m->iova + m->len)
        return -EACCES;
    if (len == 0)
        return 0;
    if (!m->pages) {
        int rc = !wr ? e->ops.dma_read(e->ops.opaque, e->func_id, to, rbuf,
                                        (size_t)len)
                      : e->ops.dma_write(e->ops.opaque, e->func_id, to, wbuf,
                                         (size_t)len);
        if (rc) {
            e->st.dma_errors++;
            return -EIO;
        }
        return 0;
    }
    uint64_t psz = 1ull << m->page_shift, mask = psz - 1;
    uint64_t off = (m->iova & mask) + (to - m->iova);
    while (len) {
        uint64_t idx = off >> m->page_shift;
        if (idx >= m->npages)          /* cannot happen after the bounds */
            return -EACCES;
        uint64_t in = off & mask;
        uint64_t chunk = psz - in;
        if (chunk > len)
            chunk = len;
        uint64_t a = m->pages[idx] + in;
        int rc = !wr ? e->ops.dma_read(e->ops.opaque, e->func_id, a, rbuf,
                                        (size_t)chunk)
                      : e->ops.dma_write(e->ops.opaque, e->func_id, a, wbuf,
                                         (size_t)chunk);
        if (rc) {
            e->st.dma_errors++;
            return -EIO;
        }
        if (!wr)
            rbuf += chunk;
        else
            wbuf += chunk;
        off += chunk;
        len -= chunk;
    }
    return 0;
}

int vfw_mr_dma_read(struct vfw_engine *e, uint32_t stag, uint64_t to,
                    void *buf, uint64_t len)
{
    return mr_dma(e, stag, to, buf, NULL, len, false);
}

int vfw_mr_dma_write(struct vfw_engine *e, uint32_t stag, uint64_t to,
                     const void *buf, uint64_t len)
{
    return mr_dma(e, stag, to, NULL, buf, len, true);
}
