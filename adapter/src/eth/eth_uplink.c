/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * eth_uplink.c - the uplink as a wire with a line rate (see vfw_uplink.h):
 * frame copies held for the link QoS scheduler of vswitch/, sent as time
 * allows.
 *
 * The scheduler queues opaque handles; here a handle is a slot in a table of
 * frame copies. The table holds as many frames as the scheduler's hard
 * bounds allow in all classes together, so a slot is always free when the
 * scheduler would accept a frame.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_uplink.h"
#include "vfwarp/vfwarp_ring.h"

/* Class queues of 2048 frames / 2 MiB, a function's part at most 256
 * frames / 256 KiB: at 10 Gbit/s a full class is 1.7 ms of wire time, a
 * function's part 0.2 ms; back-pressure keeps the rest in the TX rings. */
#define UP_TC_FRAMES   2048u
#define UP_TC_BYTES    (2u << 20)
#define UP_FN_FRAMES   256u
#define UP_FN_BYTES    (256u << 10)
#define UP_SLOTS       (UP_TC_FRAMES * VSW_NUM_TC)
/* vfw_uplink_advance: at most this many rounds of "send, then resume the
 * functions that may send again" when resuming feeds new frames in */
#define UP_ROUNDS      4

struct up_slot {
    uint8_t *frame;
    uint32_t len;
};

struct vfw_uplink {
    const struct vfw_uplink_ops *ops;
    void *ctx;
    unsigned nfn;
    vsw_qos *q;
    struct up_slot slot[UP_SLOTS];
    uint32_t free_list[UP_SLOTS];
    uint32_t nfree;
    uint64_t now;               /* the latest time seen */
    bool in_advance;            /* guards against re-entry via ops->resume */
};

struct vfw_uplink *vfw_uplink_create(const struct vfw_uplink_ops *ops,
                                     void *ctx, unsigned nfn)
{
    struct vfw_uplink *up;
    vsw_qos_limits lim = {
        .tc_frames = UP_TC_FRAMES, .tc_bytes = UP_TC_BYTES,
        .leaf_frames = UP_FN_FRAMES, .leaf_bytes = UP_FN_BYTES,
        .max_frame = VFW_FRAME_MAX + 4,       /* a tag may be inserted */
    };

    if (!ops || !ops->tx || nfn == 0 || nfn > VSW_QOS_MAX_LEAVES) {
        return NULL;
    }
    up = calloc(1, sizeof(*up));
    if (!up) {
        return NULL;
    }
    up->ops = ops;
    up->ctx = ctx;
    up->nfn = nfn;
    up->q = vsw_qos_create(nfn, &lim);
    if (!up->q) {
        free(up);
        return NULL;
    }
    for (uint32_t i = 0; i < UP_SLOTS; i++) {
        up->free_list[i] = UP_SLOTS - 1 - i;
    }
    up->nfree = UP_SLOTS;
    return up;
}

static void slot_free(struct vfw_uplink *up, uint32_t h)
{
    free(up->slot[h].frame);
    up->slot[h].frame = NULL;
    up->free_list[up->nfree++] = h;
}

static void flush_one(void *ctx, uint64_t handle)
{
    slot_free(ctx, (uint32_t)handle);
}

void vfw_uplink_destroy(struct vfw_uplink *up)
{
    if (!up) {
        return;
    }
    vsw_qos_flush(up->q, flush_one, up);
    vsw_qos_destroy(up->q);
    free(up);
}

vsw_qos *vfw_uplink_qos(struct vfw_uplink *up)
{
    return up ? up->q : NULL;
}

bool vfw_uplink_paused(const struct vfw_uplink *up, unsigned fn)
{
    return up && vsw_qos_paused(up->q, fn);
}

bool vfw_uplink_paused_tc(const struct vfw_uplink *up, unsigned fn,
                          unsigned tc)
{
    return up && vsw_qos_paused_tc(up->q, fn, tc);
}

/* Put on the wire what it can carry by `now`; returns when to come back. */
static uint64_t drain(struct vfw_uplink *up, uint64_t now)
{
    vsw_qos_frame f;
    uint64_t next = UINT64_MAX;

    for (unsigned i = 0; i < UP_SLOTS && vsw_qos_dequeue(up->q, now, &f, &next); i++) {
        uint32_t h = (uint32_t)f.handle;

        up->ops->tx(up->ctx, up->slot[h].frame, up->slot[h].len);
        slot_free(up, h);
    }
    return next;
}

/* Send what can go now and ask for the timer when more can. */
static void pump(struct vfw_uplink *up)
{
    uint64_t next = drain(up, up->now);

    if (next != UINT64_MAX && up->ops->timer) {
        up->ops->timer(up->ctx, next);
    }
}

/*
 * Functions are resumed here only, never from vfw_uplink_send: a resume
 * re-enters the data path (the function's TX ring is walked again), and
 * send is called from inside that walk, with a frame half done.
 */
void vfw_uplink_advance(struct vfw_uplink *up, uint64_t now)
{
    bool more = false;

    if (!up) {
        return;
    }
    if (now > up->now) {
        up->now = now;
    }
    if (up->in_advance) {       /* from a resume: the outer call goes on */
        return;
    }
    up->in_advance = true;
    for (unsigned round = 0; round < UP_ROUNDS; round++) {
        uint16_t fns[VSW_QOS_MAX_LEAVES];
        size_t n;

        drain(up, up->now);
        n = vsw_qos_resumed(up->q, fns, VSW_QOS_MAX_LEAVES);
        more = n > 0;
        if (!n) {
            break;
        }
        for (size_t i = 0; i < n && up->ops->resume; i++) {
            up->ops->resume(up->ctx, fns[i]);
        }
    }
    up->in_advance = false;
    pump(up);
    /* the frames the resumed functions sent may have freed room for
     * others already: come back at once rather than never */
    if (more && up->ops->timer) {
        up->ops->timer(up->ctx, up->now);
    }
}

int vfw_uplink_send(struct vfw_uplink *up, unsigned fn, unsigned tc,
                    const uint8_t *frame, size_t len, uint64_t now)
{
    uint32_t h;
    int rc;

    if (!up || !frame || fn >= up->nfn || tc >= VSW_NUM_TC || len == 0 ||
        len > VFW_FRAME_MAX + 4) {
        return -EINVAL;
    }
    if (!up->nfree) {           /* cannot happen: see UP_SLOTS */
        return -ENOSPC;
    }
    h = up->free_list[up->nfree - 1];
    up->slot[h].frame = malloc(len);
    if (!up->slot[h].frame) {
        return -ENOMEM;
    }
    memcpy(up->slot[h].frame, frame, len);
    up->slot[h].len = (uint32_t)len;
    up->nfree--;
    rc = vsw_qos_enqueue(up->q, fn, tc, h, (uint32_t)len, now);
    if (rc < 0) {
        slot_free(up, h);
        return rc;
    }
    if (now > up->now) {
        up->now = now;
    }
    pump(up);
    return vfw_uplink_paused_tc(up, fn, tc) ? VFW_UPLINK_PAUSED : 0;
}

void vfw_uplink_flush(struct vfw_uplink *up)
{
    if (!up) {
        return;
    }
    vsw_qos_flush(up->q, flush_one, up);
    vfw_uplink_advance(up, up->now);    /* tells the paused functions */
}
