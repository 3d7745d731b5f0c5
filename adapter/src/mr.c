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

int vfw_mr_reg(struct vfw_engine *e, uint32_t pd_id, uint64_t iova,
               uint64_t len, uint32_t access, uint32_t *stag)
{
    if (!e || !stag)
        return -EINVAL;
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
    for (uint32_t i = 1; i <= e->max_mr; i++) {
        struct vfw_mr *m = &e->mr[i];
        if (m->used)
            continue;
        m->used = true;
        m->valid = true;
        m->key = (uint8_t)(m->key + 1);
        if (m->key == 0)
            m->key = 1;
        m->pd = pd_id;
        m->iova = iova;
        m->len = len;
        m->access = access;
        e->pd[pd_id].refs++;
        *stag = i << 8 | m->key;
        return 0;
    }
    return -ENOSPC;
}

int vfw_mr_dereg(struct vfw_engine *e, uint32_t stag)
{
    struct vfw_mr *m = e ? mr_lookup(e, stag) : NULL;
    if (!m)
        return -ENOENT;
    e->pd[m->pd].refs--;
    m->used = false;
    m->valid = false;
    return 0;
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
