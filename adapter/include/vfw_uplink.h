/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_uplink.h - the adapter's uplink as a wire with a line rate: frames
 * the embedded switch forwards to the uplink are copied into the link QoS
 * scheduler of vswitch/ (vswitch.h "Link QoS": 8 traffic classes, strict or
 * ETS, over the devlink rate tree of functions and tenant nodes) and leave
 * through ops->tx as time advances, at the line rate (default 10 Gbit/s).
 *
 * Leaves of the rate tree are the adapter's functions: fn 0 the PF, fn n+1
 * VF n (VFW_DP_FN_*). A function whose part of a class is full is PAUSED in
 * that class: the data path stops consuming those of its TX rings whose
 * next frame is of that class (back-pressure to the guest driver, as a NIC
 * that stops fetching descriptors), and ops->resume(fn) says when a class
 * of it may send again. Frames that cannot be paused (flood copies, the RDMA engine's
 * frames) are dropped and counted when no room is left.
 *
 * Plain C11, no QEMU; time comes from the caller (simulated in tests). Not
 * thread-safe; the caller serialises (QEMU's BQL). Re-entrant calls from
 * ops->resume (which feeds frames back in) are bounded.
 */
#ifndef VFW_UPLINK_H
#define VFW_UPLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vswitch.h"

struct vfw_uplink_ops {
    /* A frame goes on the wire now. */
    void (*tx)(void *ctx, const uint8_t *frame, size_t len);
    /* Call vfw_uplink_advance() at (or after) when_ns; a later request
     * replaces an earlier one. */
    void (*timer)(void *ctx, uint64_t when_ns);
    /* Function fn, paused earlier, may send again (may re-enter
     * vfw_uplink_send). */
    void (*resume)(void *ctx, unsigned fn);
};

struct vfw_uplink;

/* An uplink for `nfn` functions (1..VSW_QOS_MAX_LEAVES) with the
 * scheduler's default limits. NULL on bad arguments or OOM. */
struct vfw_uplink *vfw_uplink_create(const struct vfw_uplink_ops *ops,
                                     void *ctx, unsigned nfn);
void vfw_uplink_destroy(struct vfw_uplink *up);

/* Queue a copy of a frame of function fn in class tc and send what the
 * wire can carry now. Returns 0 (queued), VFW_UPLINK_PAUSED (queued, and fn
 * is now paused in class tc), or a negative errno when the frame was dropped (-ENOSPC:
 * no room, counted in the class's dropped counter; -EINVAL: bad fn, tc or
 * length; -ENOMEM). */
#define VFW_UPLINK_PAUSED VSW_QOS_PAUSED
int vfw_uplink_send(struct vfw_uplink *up, unsigned fn, unsigned tc,
                    const uint8_t *frame, size_t len, uint64_t now_ns);
bool vfw_uplink_paused(const struct vfw_uplink *up, unsigned fn); /* any class */
/* 2.5: is fn paused in class tc? The data path stops only a TX ring whose
 * head frame is of such a class; fn's other rings go on. */
bool vfw_uplink_paused_tc(const struct vfw_uplink *up, unsigned fn,
                          unsigned tc);

/* Send what the wire can carry by now_ns, tell resumed functions, and ask
 * for the timer when more can go. */
void vfw_uplink_advance(struct vfw_uplink *up, uint64_t now_ns);

/* Carrier down or reset: every queued frame is dropped (counted) and every
 * paused function resumed. */
void vfw_uplink_flush(struct vfw_uplink *up);

/* The scheduler: line rate, classes, rate tree, counters (vswitch.h). */
vsw_qos *vfw_uplink_qos(struct vfw_uplink *up);

#endif /* VFW_UPLINK_H */
