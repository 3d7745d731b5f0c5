/* fdb.c - forwarding database: the static table programmed by the PF
 * (immutable, rebuilt and swapped on each change) and the learned table
 * (owned by the data path).  Both are open-addressing hash tables keyed by
 * MAC + VID (vsw_fdb_key), linear probing. */
#include "vsw_internal.h"
#include <stdlib.h>
#include <string.h>

static int fdb_insert_raw(vsw_fdb_ent *e, size_t mask, uint64_t key, uint16_t port)
{
    for (size_t i = vsw_hash64(key) & mask;; i = (i + 1) & mask) {
        if (e[i].key == 0 || e[i].key == key) {
            int fresh = e[i].key == 0;
            e[i].key = key;
            e[i].port = port;
            return fresh;
        }
    }
}

/* New table = old + (key -> port), or old - key when port < 0. */
vsw_fdb *vsw_fdb_clone_set(const vsw_fdb *old, uint64_t key, int port)
{
    size_t n = old ? old->n : 0;
    /* at most a quarter full: every frame looks up its destination, and a
     * second probe (a collision) mispredicts the probe loop; at half full
     * a quarter of 128 VF MACs missed their first slot (64 bytes/entry) */
    size_t cap = 16;
    while (cap < 4 * (n + 1))
        cap *= 2;
    vsw_fdb *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->e = calloc(cap, sizeof(vsw_fdb_ent));
    if (!f->e) {
        free(f);
        return NULL;
    }
    f->mask = cap - 1;
    if (old)
        for (size_t i = 0; i <= old->mask; i++)
            if (old->e[i].key && old->e[i].key != key)
                f->n += (size_t)fdb_insert_raw(f->e, f->mask, old->e[i].key, old->e[i].port);
    if (port >= 0)
        f->n += (size_t)fdb_insert_raw(f->e, f->mask, key, (uint16_t)port);
    return f;
}

void vsw_fdb_free(vsw_fdb *f)
{
    if (f) {
        free(f->e);
        free(f);
    }
}

/* ---- learned entries: fixed capacity, aged by caller time ---- */
int vsw_learn_init(vsw_learn *l, size_t max)
{
    size_t cap = 16;
    while (cap < 2 * max)
        cap *= 2;
    l->e = calloc(cap, sizeof(vsw_learn_ent));
    l->mask = cap - 1;
    l->n = 0;
    l->max = max;
    return l->e ? 0 : -ENOMEM;
}

void vsw_learn_fini(vsw_learn *l)
{
    free(l->e);
    l->e = NULL;
}

void vsw_learn_flush(vsw_learn *l)
{
    memset(l->e, 0, (l->mask + 1) * sizeof(vsw_learn_ent));
    l->n = 0;
    l->full_until = 0;
}

int vsw_learn_find(const vsw_learn *l, uint64_t key, uint64_t now, uint64_t age)
{
    if (!l->n)
        return -1;
    for (size_t i = vsw_hash64(key) & l->mask;; i = (i + 1) & l->mask) {
        const vsw_learn_ent *e = &l->e[i];
        if (e->key == key)
            return now - e->seen <= age || now < e->seen ? e->port : -1;
        if (e->key == 0)
            return -1;
    }
}

/* Rebuild without expired entries (when the table is full). When it stays
 * full, note when its oldest live entry can expire: until then no address
 * can be learned and vsw_learn_update refuses without a compaction. */
static void learn_compact(vsw_learn *l, uint64_t now, uint64_t age)
{
    size_t cap = l->mask + 1;
    vsw_learn_ent *old = malloc(cap * sizeof(*old));
    if (!old)
        return;
    l->compactions++;
    memcpy(old, l->e, cap * sizeof(*old));
    vsw_learn_flush(l);
    uint64_t oldest = UINT64_MAX;
    for (size_t j = 0; j < cap; j++) {
        if (!old[j].key || (now >= old[j].seen && now - old[j].seen > age))
            continue;
        if (old[j].seen < oldest)
            oldest = old[j].seen;
        for (size_t i = vsw_hash64(old[j].key) & l->mask;; i = (i + 1) & l->mask)
            if (!l->e[i].key) {
                l->e[i] = old[j];
                l->n++;
                break;
            }
    }
    free(old);
    /* entries are only refreshed (seen grows), so none expires sooner; an
     * entry seen "in the future" (a clock step back) expires at once */
    l->full_until = l->n >= l->max && oldest != UINT64_MAX && oldest <= now &&
                    oldest + age > oldest ? oldest + age + 1 : 0;
}

void vsw_learn_update(vsw_learn *l, uint64_t key, unsigned port, uint64_t now,
                      uint64_t age)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = vsw_hash64(key) & l->mask;; i = (i + 1) & l->mask) {
            vsw_learn_ent *e = &l->e[i];
            if (e->key == key) {
                e->seen = now;
                e->port = (uint16_t)port;
                return;
            }
            if (e->key == 0)
                break;
        }
        if (l->n < l->max)
            break;
        if (pass == 0 && now < l->full_until && now >= l->full_until - age - 1) {
            l->not_learned++;               /* still full: nothing expired */
            return;
        }
        if (pass == 0)
            learn_compact(l, now, age);
        else {
            l->not_learned++;               /* full of live entries */
            return;
        }
    }
    if (l->n >= l->max) {
        l->not_learned++;
        return;
    }
    for (size_t i = vsw_hash64(key) & l->mask;; i = (i + 1) & l->mask)
        if (!l->e[i].key) {
            l->e[i].key = key;
            l->e[i].seen = now;
            l->e[i].port = (uint16_t)port;
            l->n++;
            return;
        }
}
