/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * eth_tx.c - frames into the embedded switch and out of it (see
 * vfw_dataplane.h; the files are listed in eth_internal.h).
 *
 * TX: a doorbell (TAIL write) makes the run walk [HEAD, TAIL): gather one
 * frame (<= VFW_TX_MAX_FRAGS descriptors up to EOP), check it, optionally
 * insert a VLAN tag, run it through vsw_process() and hand a copy to every
 * egress port: the uplink (ops->uplink_tx) or another function's RX ring.
 * A VF with max_mbps is shaped here: a frame that would exceed its token
 * bucket stays on the ring (back-pressure to the driver's queue) and a timer
 * resumes the ring when enough tokens have accumulated, so TCP sees a clean
 * bottleneck instead of policer drops.
 * QoS (issue 17): with ops->uplink_timer the uplink is a wire with a line
 * rate behind the link QoS scheduler (eth_uplink.c); the hooks here are
 * marked "QoS hook": frames to the uplink go to its queues, a paused
 * function's TX ring waits, the uplink's timer and resumes drive it
 * (eth_qos.c), and a VF's min/max_mbps are its leaf's tx_share/tx_max.
 * 2.5: every function has VFW_TXQ_MAX TX rings (a driver puts a traffic
 * class on each); a ring whose head frame is of a class paused at the
 * uplink waits, the function's other rings go on (tx_ring_walk).
 * TX of the rings is queued work (issue 33): a TAIL write, the shaper's
 * timer and the uplink resuming a function only record which rings have
 * work (eth_tx_want) and ask for a run; vfw_dp_run walks them. So no TX
 * happens inside a register write, where a DMA or MSI-X of it aimed at
 * another function's BAR could start that function's TX in the middle
 * of this one's frame (dp->buf and dp->out are shared).
 * The function's RDMA engine sends through vfw_dp_fn_inject (the ring's
 * path without the ring; over max_mbps its frames wait in a hold queue),
 * frames from the wire through vfw_dp_uplink_rx; RX rings are eth_rx.c.
 *
 * Trust and bounds: descriptors and buffers are the guest's, read through
 * ops->dma_read only. One doorbell takes at most one ring's worth of
 * descriptors; a frame is at most VFW_TX_MAX_FRAGS descriptors and
 * VFW_FRAME_MIN..VFW_FRAME_MAX bytes, else it fails alone (VFW_TXD_STS_ERR,
 * TX_DESC_ERR); a descriptor fetch or write-back the DMA refuses stops the
 * ring (VFW_RING_STS_ERR). Representor xmit is the PF's, in switchdev mode,
 * to an existing VF. The hold queue keeps HOLD_N frames per function;
 * injection nests at most 4 deep; a frame from the wire is
 * VFW_FRAME_MIN..VFW_FRAME_MAX + 4 bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "eth_internal.h"

/* --- the switch: a frame in, a copy to every egress port -------------- */

/* Egress: a frame the switch sends to `port` (d: its decision). */
static void deliver(struct vfw_dp *dp, const vsw_decision *d, unsigned port,
                    const uint8_t *frame, size_t len)
{
    if (port == VSW_PORT_UPLINK && dp->up && dp->line_bps) {
        /* QoS hook: the sender's queue of the frame's class; a full queue
         * pauses the sender (tx_ring_walk checks), a drop is the
         * class's count */
        unsigned fn = d->in_port == VSW_PORT_PF ? VFW_DP_FN_PF : VFW_DP_FN_VF(d->in_port - 2u);

        if (dp->uplink_up && d->in_port != VSW_PORT_UPLINK) {
            vfw_uplink_send(dp->up, fn, d->tc, frame, len, now(dp));
        }
    } else if (port == VSW_PORT_UPLINK) {
        if (dp->uplink_up && dp->ops->uplink_tx) {
            dp->ops->uplink_tx(dp->ctx, frame, len);
        }
    } else if (port == VSW_PORT_PF) {
        /* switchdev: whatever a VF sends the PF is its representor's */
        int src = dp->switchdev && d->in_port >= 2 ? (int)d->in_port - 2 : -1;

        eth_rx_frame(dp, VFW_DP_FN_PF, frame, len, src);
    } else if (port - 2 < dp->total_vfs) {
        eth_rx_vf(dp, port - 2, frame, len);
    }
}

/* Run a frame through the switch from `in_port`; returns the drop reason. */
static unsigned switch_frame(struct vfw_dp *dp, unsigned in_port,
                             const uint8_t *frame, size_t len)
{
    vsw_decision d;

    if (!vsw_process(dp->sw, in_port, frame, len, now(dp), &d)) {
        return d.drop ? d.drop : VSW_DROP_NO_DEST;
    }
    for (unsigned w = 0; w < 3; w++) {
        uint64_t bits = d.egress.w[w];

        while (bits) {
            unsigned p = w * 64 + (unsigned)__builtin_ctzll(bits);
            size_t n;

            bits &= bits - 1;
            n = vsw_egress_frame(dp->sw, &d, p, frame, len, dp->out,
                                 sizeof(dp->out));
            if (n) {
                deliver(dp, &d, p, dp->out, n);
            }
        }
    }
    return VSW_DROP_NONE;
}

/* Representor xmit: straight to VF vf's RX (its multicast filter and link
 * apply, as for any frame the VF receives), not through the switch. */
static void to_vf(struct vfw_dp *dp, unsigned vf, const uint8_t *frame,
                  size_t len)
{
    if (!eth_fn_link(dp, VFW_DP_FN_VF(vf))) {
        return;
    }
    eth_rx_vf(dp, vf, frame, len);
}

/* --- TX rings: the doorbell, the shaper -------------------------------- */

static void count_drop(struct dp_fn *f, unsigned reason)
{
    switch (reason) {
    case VSW_DROP_SPOOF:
        f->stat[VFW_STAT_TX_DROP_SPOOF]++;
        break;
    case VSW_DROP_VLAN:
        f->stat[VFW_STAT_TX_DROP_VLAN]++;
        break;
    case VSW_DROP_LINK_DOWN:
        f->stat[VFW_STAT_TX_DROP_LINK]++;
        break;
    case VSW_DROP_METER:
        f->stat[VFW_STAT_TX_DROP_METER]++;
        break;
    case VSW_DROP_ACL:
        f->stat[VFW_STAT_TX_DROP_ACL]++;
        break;
    default:
        f->stat[VFW_STAT_TX_DROP_OTHER]++;
        break;
    }
}

/* May function `fn` send `len` bytes now? If not, arm the timer (when
 * `arm`: a ring waits for it; an injected frame has no ring to wait on). */
static bool shaper_take(struct vfw_dp *dp, unsigned fn, size_t len, bool arm)
{
    struct dp_fn *f = &dp->fn[fn];
    uint32_t mbps = fn ? dp->cfg[fn - 1].max_mbps : 0;
    uint64_t rate, t, el;
    int64_t burst;

    if (!mbps) {
        return true;
    }
    rate = (uint64_t)mbps * 125000u;            /* bytes per second */
    burst = (int64_t)(rate / 200);              /* 5 ms */
    if (burst < 2 * (VFW_FRAME_MAX + 4)) {
        burst = 2 * (VFW_FRAME_MAX + 4);
    }
    t = now(dp);
    el = t > f->last_ns ? t - f->last_ns : 0;
    if (el > 1000000000u) {
        el = 1000000000u;
    }
    f->tokens += (int64_t)(el * rate / 1000000000u);
    if (f->tokens > burst) {
        f->tokens = burst;
    }
    f->last_ns = t;
    if (f->tokens >= (int64_t)len) {
        f->tokens -= (int64_t)len;
        return true;
    }
    if (arm && dp->ops->timer) {
        uint64_t need = (uint64_t)((int64_t)len - f->tokens);

        dp->ops->timer(dp->ctx, fn, t + need * 1000000000u / rate + 1);
        f->timer_armed = true;
    }
    return false;
}

/*
 * QoS hook (2.5): may the frame in dp->buf, the head of one of fn's TX
 * rings, be taken now? Not while its class is paused at the uplink: the
 * ring then waits (the uplink resumes the function) and the function's
 * other rings go on. The class is the one the switch will give the frame
 * (vsw_frame_tc changes nothing); asked only while some class of fn is
 * paused, so an unpaused function pays nothing for it. A frame the switch
 * will drop goes (it never reaches the uplink).
 */
static bool tx_class_paused(struct vfw_dp *dp, unsigned fn, unsigned in_port,
                            size_t len)
{
    int tc;

    if (!vfw_uplink_paused(dp->up, fn)) {
        return false;
    }
    tc = vsw_frame_tc(dp->sw, in_port, dp->buf, len, now(dp));
    return tc >= 0 && vfw_uplink_paused_tc(dp->up, fn, (unsigned)tc);
}

/* Walk TX ring q of fn: at most one ring's worth of descriptors. true =
 * that budget ran out with descriptors left (another run takes them); a
 * ring that waits (shaper, paused class, a frame not all posted) or
 * stopped returns false: its timer, resume or doorbell records it again. */
static bool tx_ring_walk(struct vfw_dp *dp, unsigned fn, unsigned q)
{
    struct dp_fn *f = &dp->fn[fn];
    struct dp_ring *r = &f->tx[q];
    unsigned budget, done = 0;
    unsigned in_port = fn ? VSW_PORT_VF(fn - 1) : VSW_PORT_PF;

    if (!ring_on(r)) {
        return false;
    }
    budget = r->len;
    while (r->head != r->tail && budget) {
        uint32_t mask = r->len - 1;
        uint32_t avail = (r->tail - r->head) & mask;
        uint8_t raw[VFW_TX_MAX_FRAGS][VFW_DESC_SIZE];
        unsigned n = 0;
        bool eop = false, bad = false;
        size_t total = 0;
        uint8_t status = VFW_TXD_STS_DD;

        while (n < avail && n < VFW_TX_MAX_FRAGS) {
            uint16_t l;

            if (!fetch(dp, fn, r, (r->head + n) & mask, raw[n])) {
                goto out;
            }
            l = vfw_ld_le16(raw[n] + 8);
            n++;
            if (l == 0 || l > VFW_FRAME_MAX || total + l > VFW_FRAME_MAX) {
                bad = true;
            } else {
                total += l;
            }
            if (raw[n - 1][10] & VFW_TXD_EOP) {
                eop = true;
                break;
            }
        }
        if (!eop) {
            if (n < VFW_TX_MAX_FRAGS) {
                break;          /* the rest of the frame is not posted yet */
            }
            bad = true;         /* no EOP within VFW_TX_MAX_FRAGS */
        }
        if (!bad && total < VFW_FRAME_MIN) {
            bad = true;
        }
        /* the frame is read before the shaper and the pause decide, so
         * that its class is known (a frame left on the ring is read again
         * next time: no state changed) */
        if (!bad) {
            size_t off = 0;

            for (unsigned i = 0; i < n && !bad; i++) {
                uint16_t l = vfw_ld_le16(raw[i] + 8);

                if (dp->ops->dma_read(dp->ctx, fn, vfw_ld_le64(raw[i]),
                                      dp->buf + off, l)) {
                    bad = true;
                }
                off += l;
            }
        }
        if (!bad && (raw[0][10] & VFW_TXD_VLAN)) {
            uint16_t tci = vfw_ld_le16(raw[0] + 12);

            memmove(dp->buf + 16, dp->buf + 12, total - 12);
            dp->buf[12] = 0x81;
            dp->buf[13] = 0x00;
            dp->buf[14] = (uint8_t)(tci >> 8);
            dp->buf[15] = (uint8_t)tci;
            total += 4;
        }
        if (!bad && (raw[0][10] & VFW_TXD_TO_PORT)) {
            /* representor xmit: the PF in switchdev mode, an existing VF */
            uint16_t to = vfw_ld_le16(raw[0] + 14);

            if (fn != VFW_DP_FN_PF || !dp->switchdev || to >= dp->total_vfs) {
                bad = true;
            }
        }
        if (!bad && !(raw[0][10] & VFW_TXD_TO_PORT) &&
            tx_class_paused(dp, fn, in_port, total)) {
            break;      /* QoS hook: the ring waits; the uplink resumes it */
        }
        if (!bad && !shaper_take(dp, fn, total, true)) {
            break;              /* stays on the ring; the timer resumes */
        }
        if (bad) {
            status |= VFW_TXD_STS_ERR;
            f->stat[VFW_STAT_TX_DESC_ERR]++;
        } else if (raw[0][10] & VFW_TXD_TO_PORT) {
            f->stat[VFW_STAT_TX_PKTS]++;
            f->stat[VFW_STAT_TX_BYTES] += total;
            to_vf(dp, vfw_ld_le16(raw[0] + 14), dp->buf, total);
        } else {
            unsigned why;

            f->stat[VFW_STAT_TX_PKTS]++;
            f->stat[VFW_STAT_TX_BYTES] += total;
            why = switch_frame(dp, in_port, dp->buf, total);
            if (why != VSW_DROP_NONE) {
                status |= VFW_TXD_STS_DROP;
                count_drop(f, why);
            }
        }
        for (unsigned i = 0; i < n; i++) {
            uint64_t a = r->base + (uint64_t)((r->head + i) & mask) *
                         VFW_DESC_SIZE + 11;

            if (dp->ops->dma_write(dp->ctx, fn, a, &status, 1)) {
                r->status |= VFW_RING_STS_ERR;
                goto out;
            }
        }
        r->head = (r->head + n) & mask;
        budget = budget > n ? budget - n : 0;
        done += n;
    }
    if (done) {
        eth_fire(dp, fn, r->ctrl, &r->irq_pending);
    }
    return !budget && ring_on(r) && r->head != r->tail;
out:
    if (done) {
        eth_fire(dp, fn, r->ctrl, &r->irq_pending);
    }
    return false;
}

void eth_tx_want(struct vfw_dp *dp, unsigned fn, unsigned mask)
{
    dp->fn[fn].tx_pending |= (uint8_t)(mask & ETH_TX_ALL);
    if (dp->in_run) {
        dp->rekick = true;
    } else if (dp->ops->kick) {
        dp->ops->kick(dp->ctx);
    }
}

/* Every function's rings with work, each function's highest ring first:
 * with no line rate (frames go out at once) a driver's strict-class ring
 * is not queued behind its bulk ring; with one, the uplink's scheduler
 * orders what the rings gave it. A ring is taken off the pending set
 * before it is walked, so work recorded meanwhile (the shaper's timer, a
 * resume) is seen by the next run. */
void vfw_dp_run(struct vfw_dp *dp)
{
    if (!dp) {
        return;
    }
    if (dp->in_run) {
        dp->rekick = true;
        return;
    }
    dp->in_run = true;
    dp->rekick = false;
    for (unsigned fn = 0; fn < fn_count(dp); fn++) {
        struct dp_fn *f = &dp->fn[fn];

        for (unsigned q = VFW_TXQ_MAX; f->tx_pending && q-- > 0;) {
            if (!(f->tx_pending & (1u << q))) {
                continue;
            }
            f->tx_pending &= (uint8_t)~(1u << q);
            if (tx_ring_walk(dp, fn, q)) {
                f->tx_pending |= (uint8_t)(1u << q);
                dp->rekick = true;
            }
        }
    }
    dp->in_run = false;
    if (dp->rekick && dp->ops->kick) {
        dp->ops->kick(dp->ctx);
    }
}

/* --- the RDMA engine's frames and their hold queue --------------------- */

static void inject_now(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                       size_t len);

/* The held engine frames the shaper lets go now, oldest first. */
static void hold_drain(struct vfw_dp *dp, unsigned fn)
{
    struct dp_fn *f = &dp->fn[fn];

    while (f->hold_count) {
        unsigned i = f->hold_head;

        if (!shaper_take(dp, fn, f->hold_len[i], true)) {
            return;             /* the timer comes back */
        }
        f->hold_head = (i + 1) % HOLD_N;
        f->hold_count--;
        inject_now(dp, fn, f->hold + (size_t)i * HOLD_SLOT, f->hold_len[i]);
    }
}

void vfw_dp_timer(struct vfw_dp *dp, unsigned fn)
{
    if (!dp || fn >= fn_count(dp)) {
        return;
    }
    dp->fn[fn].timer_armed = false;
    hold_drain(dp, fn);
    eth_tx_want(dp, fn, ETH_TX_ALL);    /* the run sends */
}

/*
 * A frame of fn's RDMA engine: the TX ring's path without the ring. Same
 * length bounds, shaping, switch checks and counters (TX_PKTS/TX_BYTES,
 * the TX_DROP_* reasons). A bad length counts TX_DROP_OTHER. A frame over
 * the VF's max_mbps waits in the function's hold queue (behind any frame
 * already waiting) until the shaper's timer lets it go, as a ring's frame
 * waits on its ring: the engine's TCP then sees the cap as a slower path,
 * not as loss (issue 17: dropping held an ib_write_bw -R flow at 15-45%
 * of its cap). Only a full queue drops (TX_DROP_METER). Nesting (rx_steer
 * of a hairpin peer injecting synchronously) is bounded.
 */
void vfw_dp_fn_inject(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                      size_t len)
{
    if (!dp || fn >= fn_count(dp)) {
        return;
    }
    struct dp_fn *f = &dp->fn[fn];

    if (!frame || len < VFW_FRAME_MIN || len > VFW_FRAME_MAX ||
        dp->inject_depth >= 4) {
        f->stat[VFW_STAT_TX_DROP_OTHER]++;
        return;
    }
    if (f->hold_count || !shaper_take(dp, fn, len, true)) {
        unsigned i;

        if (f->hold_count == HOLD_N || !dp->ops->timer ||
            (!f->hold && !(f->hold = malloc((size_t)HOLD_N * HOLD_SLOT)))) {
            f->stat[VFW_STAT_TX_DROP_METER]++;
            return;
        }
        i = (f->hold_head + f->hold_count) % HOLD_N;
        memcpy(f->hold + (size_t)i * HOLD_SLOT, frame, len);
        f->hold_len[i] = (uint16_t)len;
        f->hold_count++;
        hold_drain(dp, fn);     /* what the tokens allow now; else the timer */
        return;
    }
    inject_now(dp, fn, frame, len);
}

/* Past the shaper: counters, the switch. */
static void inject_now(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                       size_t len)
{
    struct dp_fn *f = &dp->fn[fn];
    unsigned why;

    f->stat[VFW_STAT_TX_PKTS]++;
    f->stat[VFW_STAT_TX_BYTES] += len;
    dp->inject_depth++;
    why = switch_frame(dp, fn ? VSW_PORT_VF(fn - 1) : VSW_PORT_PF, frame,
                       len);
    dp->inject_depth--;
    if (why != VSW_DROP_NONE) {
        count_drop(f, why);
    }
}

/* --- frames from the wire --------------------------------------------- */

void vfw_dp_uplink_rx(struct vfw_dp *dp, const uint8_t *frame, size_t len)
{
    if (!dp || !frame || len < VFW_FRAME_MIN || len > VFW_FRAME_MAX + 4) {
        return;
    }
    switch_frame(dp, VSW_PORT_UPLINK, frame, len);
}
