/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_timer.c - the offloaded TCP stack's timers (vfw_tcp.h), driven by
 * vfw_tcp_poll(): retransmission with exponential backoff (RFC 6298 sec. 5)
 * and go-back-N with the RFC 5681 sec. 3.1 ssthresh/cwnd reset, SYN and
 * SYN-ACK retransmission, zero-window probes (persist, RFC 9293 sec.
 * 3.8.6.1), delayed ACK, TIME_WAIT expiry and the FIN_WAIT_2 limit.
 *
 * Time comes only from env->now_ns. Bounds: a connection gives up after
 * tun.syn_retries / tun.data_retries retransmissions (-ETIMEDOUT, or
 * -EHOSTUNREACH when ARP never answered); the RTO stays within [rto_min,
 * rto_max]; the poll walk is bounded to 4 x nconns + 64 steps.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "tcp_internal.h"

static void conn_timers(struct vfw_tcp_conn *c, uint64_t t)
{
    struct vfw_tcp_stack *s = c->s;
    if (c->t_misc && t >= c->t_misc) {
        c->t_misc = 0;
        if (c->state == ST_TIME_WAIT) {
            c->state = ST_CLOSED;
            if (c->user_owned && !c->closed_delivered) {
                c->eof_pending = true;
                c->avail = 0;
                toe_maybe_eof(c);
            }
            if (!c->dead)
                toe_try_free(c);
            return;
        }
        if (c->state == ST_FIN_WAIT_2) {
            s->st.timeouts++;
            toe_send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_max, 0,
                         VFW_TH_RST, 0, NULL, 0, c, 0);
            toe_conn_fail(c, -ETIMEDOUT);
            return;
        }
    }
    if (c->t_delack && t >= c->t_delack) {
        c->t_delack = 0;
        if (toe_synchronized(c))
            toe_send_ack(c);
    }
    if (!c->t_rtx || t < c->t_rtx)
        return;
    c->t_rtx = 0;
    if (c->persist) {
        /* Zero-window probe: an old sequence number elicits an ACK; if the
         * window is open but smaller than the next record, send what fits. */
        if (c->snd_wnd && VFW_SEQ_LT(c->snd_nxt, toe_data_end(c))) {
            c->persist = false;
            uint32_t sent = toe_send_data_seg(c, c->snd_nxt, c->snd_wnd,
                                              &c->rec_nxt);
            c->snd_nxt += sent;
            if (VFW_SEQ_GT(c->snd_nxt, c->snd_max))
                c->snd_max = c->snd_nxt;
            c->t_rtx = toe_rtx_deadline(c);
            return;
        }
        toe_send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_una - 1,
                     c->rcv_nxt, VFW_TH_ACK, toe_rcv_window(c, false), NULL, 0,
                     c, 0);
        c->rto = c->rto * 2 > s->tun.rto_max_ns ? s->tun.rto_max_ns
                                                : c->rto * 2;
        c->t_rtx = toe_rtx_deadline(c);
        return;
    }
    uint32_t limit = (c->state == ST_SYN_SENT || c->state == ST_SYN_RCVD) ?
                     s->tun.syn_retries : s->tun.data_retries;
    if (++c->retries > limit) {
        s->st.timeouts++;
        if (c->state == ST_SYN_RCVD && c->passive) {
            c->state = ST_CLOSED;
            toe_try_free(c);
            return;
        }
        if (toe_synchronized(c))
            toe_send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_max, 0,
                         VFW_TH_RST, 0, NULL, 0, c, 0);
        toe_conn_fail(c, (c->state == ST_SYN_SENT && c->arp_wait) ?
                      -EHOSTUNREACH : -ETIMEDOUT);
        return;
    }
    c->rto = c->rto * 2 > s->tun.rto_max_ns ? s->tun.rto_max_ns : c->rto * 2;
    c->rtt_active = false;
    if (c->state == ST_SYN_SENT) {
        if (c->arp_wait) {
            toe_arp_want(s, c->rip);
            toe_arp_send(s, 1, NULL, NULL, c->rip);
        }
        else
            toe_send_syn(c);
        c->t_rtx = toe_rtx_deadline(c);
        return;
    }
    if (c->state == ST_SYN_RCVD) {
        toe_send_syn(c);
        c->t_rtx = toe_rtx_deadline(c);
        return;
    }
    /* RFC 5681 sec. 3.1 eq. (4) on the first timeout, then LW = 1 MSS;
     * go back N from snd_una. */
    if (c->retries == 1) {
        uint32_t fl = c->snd_max - c->snd_una;
        c->ssthresh = fl / 2 > 2u * c->mss ? fl / 2 : 2u * c->mss;
    }
    c->cwnd = c->mss;
    c->in_recovery = false;
    c->dupacks = 0;
    c->recover = c->snd_max;
    c->snd_nxt = c->snd_una;
    c->rec_nxt = 0;
    uint32_t save_wnd = c->snd_wnd;
    if (c->snd_wnd < c->mss)
        c->snd_wnd = c->mss;     /* always retransmit at least a segment */
    toe_output(c);
    c->snd_wnd = save_wnd;
    if (!c->t_rtx && c->snd_una != c->snd_max)
        c->t_rtx = toe_rtx_deadline(c);
}

void vfw_tcp_poll(struct vfw_tcp_stack *s)
{
    uint64_t t = toe_now(s);
    toe_stack_enter(s);
    struct vfw_tcp_conn *c = s->conns;
    /* Upcalls may free other conns; zombies stay readable until we return
     * but a zombie's lnext points into the zombie list, so restart the walk
     * if `next` died. Expired timers are cleared when handled, so restarts
     * find nothing new; the step bound is a belt for the braces. */
    uint64_t steps = 4ull * s->nconns + 64;
    while (c && steps--) {
        struct vfw_tcp_conn *next = c->lnext;
        if (!c->dead)
            conn_timers(c, t);
        if (next && next->dead)
            next = s->conns;
        c = next;
    }
    toe_stack_leave(s);
}

static uint64_t umin(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

uint64_t vfw_tcp_next_timer_ns(const struct vfw_tcp_stack *s)
{
    uint64_t t = UINT64_MAX;
    for (const struct vfw_tcp_conn *c = s->conns; c; c = c->lnext) {
        if (c->t_rtx)
            t = umin(t, c->t_rtx);
        if (c->t_delack)
            t = umin(t, c->t_delack);
        if (c->t_misc)
            t = umin(t, c->t_misc);
    }
    return t;
}
