/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_input.c - frames into the offloaded TCP stack (vfw_tcp.h): Ethernet
 * and IPv4 checks (RFC 791; fragments dropped and counted), TCP segment
 * arrival per RFC 9293 sec. 3.10.7 (sequence acceptability, RST, SYN, ACK,
 * text, FIN), RFC 5961 challenge ACKs and RST/ACK checks, the SYN options
 * (MSS clamped to [64, ours], RFC 7323 window scale), RTT samples (RFC 6298,
 * Karn), slow start, congestion avoidance, fast retransmit and NewReno
 * recovery (RFC 5681, RFC 6582), delayed ACK (every 2nd segment, RFC 1122
 * 4.2.3.2), out-of-order ranges kept in place in the receive buffer, and
 * delivery to the recv upcall. vfw_tcp_wants() is the same match without
 * side effects, for the device's steering.
 *
 * Trust: every frame is untrusted (the wire, any peer on it). Each length
 * (Ethernet, IP header and total length, TCP data offset) is checked
 * before the bytes it covers are read, and the IP and TCP checksums before
 * any state changes; malformed frames are dropped and counted. Option
 * parsing is bounded by the option length; data is copied only into the
 * free part of the receive buffer. Bounds: at most tun.ooo_max_ranges
 * (<= MAX_OOO) holes per connection (beyond that the segment is dropped
 * and counted); delivery re-offers at most 16 times per call.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "tcp_internal.h"

struct seg {
    const uint8_t *smac;
    uint32_t sip;
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t wnd;
    const uint8_t *opt;
    size_t optlen;
    const uint8_t *data;
    uint32_t len;
};

static void send_rst_for(struct vfw_tcp_stack *s, const struct seg *g)
{
    if (g->flags & VFW_TH_RST)
        return;
    if (g->flags & VFW_TH_ACK) {
        toe_send_raw(s, g->smac, g->sip, g->dport, g->sport, g->ack, 0,
                     VFW_TH_RST, 0, NULL, 0, NULL, 0);
    } else {
        uint32_t sl = g->len + ((g->flags & VFW_TH_SYN) ? 1 : 0) +
                      ((g->flags & VFW_TH_FIN) ? 1 : 0);
        toe_send_raw(s, g->smac, g->sip, g->dport, g->sport, 0, g->seq + sl,
                     VFW_TH_RST | VFW_TH_ACK, 0, NULL, 0, NULL, 0);
    }
}

static void parse_syn_opts(struct vfw_tcp_conn *c, const struct seg *g)
{
    uint16_t mss = 536;
    bool ws = false;
    uint8_t shift = 0;
    size_t i = 0;
    while (i < g->optlen) {
        uint8_t k = g->opt[i];
        if (k == 0)
            break;
        if (k == 1) {
            i++;
            continue;
        }
        if (i + 1 >= g->optlen)
            break;
        uint8_t l = g->opt[i + 1];
        if (l < 2 || i + l > g->optlen)
            break;
        if (k == 2 && l == 4)
            mss = vfw_ld_be16(g->opt + i + 2);
        else if (k == 3 && l == 3) {
            ws = true;
            shift = g->opt[i + 2];
            if (shift > 14)
                shift = 14;
        }
        i += l;
    }
    if (mss < 64)
        mss = 64;
    if (mss > c->lmss)
        mss = c->lmss;
    c->mss = mss;
    if (ws && c->s->tun.wscale) {
        c->ws_ok = true;
        c->snd_wscale = shift;
    } else {
        c->ws_ok = false;
        c->snd_wscale = 0;
        c->rcv_wscale = 0;
    }
}

static void init_cc(struct vfw_tcp_conn *c)
{
    uint32_t iw = 4u * c->mss;   /* RFC 5681 eq. (3) */
    uint32_t hi = 2u * c->mss > 4380 ? 2u * c->mss : 4380;
    if (iw > hi)
        iw = hi;
    c->cwnd = iw;
}

static void rtt_sample(struct vfw_tcp_conn *c, uint64_t r)
{
    const struct vfw_tcp_tunables *t = &c->s->tun;
    if (!c->have_srtt) {
        c->srtt = r;
        c->rttvar = r / 2;
        c->have_srtt = true;
    } else {
        uint64_t d = c->srtt > r ? c->srtt - r : r - c->srtt;
        c->rttvar = (3 * c->rttvar + d) / 4;
        c->srtt = (7 * c->srtt + r) / 8;
    }
    uint64_t k = 4 * c->rttvar;
    if (k < NS_PER_MS)
        k = NS_PER_MS;
    c->rto = c->srtt + k;
    if (c->rto < t->rto_min_ns)
        c->rto = t->rto_min_ns;
    if (c->rto > t->rto_max_ns)
        c->rto = t->rto_max_ns;
}

static void pop_acked(struct vfw_tcp_conn *c, uint32_t ack)
{
    uint32_t dend = toe_data_end(c);
    uint32_t upto = VFW_SEQ_GT(ack, dend) ? dend : ack;
    uint32_t n = VFW_SEQ_GT(upto, c->snd_una) ? upto - c->snd_una : 0;
    c->sbuf_head = (c->sbuf_head + n) % c->sbuf_size;
    c->sbuf_len -= n;
    while (c->rec_cnt &&
           VFW_SEQ_LEQ(c->rec[c->rec_head], upto)) {
        c->rec_head = (c->rec_head + 1) % c->rec_cap;
        c->rec_cnt--;
        if (c->rec_nxt)
            c->rec_nxt--;
    }
    c->snd_una = ack;
}

static bool fin_acked(const struct vfw_tcp_conn *c)
{
    return c->fin_queued && VFW_SEQ_GT(c->snd_una, c->snd_end);
}

/* Process the ACK field. Returns false if the segment must be dropped. */
static bool process_ack(struct vfw_tcp_conn *c, const struct seg *g)
{
    uint32_t ack = g->ack;
    if (VFW_SEQ_GT(ack, c->snd_max)) {
        toe_send_ack(c);
        return false;
    }
    uint32_t mw = c->max_snd_wnd > 65535 ? c->max_snd_wnd : 65535;
    if (VFW_SEQ_LT(ack, c->snd_una - mw))
        return false;                     /* RFC 5961 sec. 5 */
    uint32_t nwnd = (uint32_t)g->wnd << c->snd_wscale;
    if (VFW_SEQ_GT(ack, c->snd_una)) {
        uint32_t acked = ack - c->snd_una;
        uint32_t flight_before = c->snd_max - c->snd_una;
        pop_acked(c, ack);
        if (VFW_SEQ_LT(c->snd_nxt, c->snd_una)) {
            c->snd_nxt = c->snd_una;
            c->rec_nxt = 0;
        }
        if (c->rtt_active && VFW_SEQ_GEQ(ack, c->rtt_seq)) {
            c->rtt_active = false;
            rtt_sample(c, toe_now(c->s) - c->rtt_start);
        } else if (c->retries) {
            /* Karn: keep the backed-off RTO until a clean sample. */
        }
        c->retries = 0;
        if (c->in_recovery) {
            if (VFW_SEQ_GEQ(ack, c->recover)) {
                uint32_t fl = c->snd_max - c->snd_una;
                c->cwnd = c->ssthresh < fl + c->mss ? c->ssthresh
                                                    : fl + c->mss;
                c->in_recovery = false;
            } else {
                /* Partial ACK (RFC 6582): retransmit the next hole. */
                uint32_t idx = 0;
                toe_send_data_seg(c, c->snd_una, c->mss, &idx);
                c->cwnd = c->cwnd > acked ? c->cwnd - acked : 0;
                if (acked >= c->mss)
                    c->cwnd += c->mss;
                if (c->cwnd < c->mss)
                    c->cwnd = c->mss;
                c->t_rtx = toe_rtx_deadline(c);
            }
        } else if (c->cwnd < c->ssthresh) {
            c->cwnd += acked < c->mss ? acked : c->mss;
        } else {
            uint32_t inc = (uint32_t)((uint64_t)c->mss * c->mss / c->cwnd);
            c->cwnd += inc ? inc : 1;
        }
        if (c->cwnd > (1u << 30))
            c->cwnd = 1u << 30;
        (void)flight_before;
        c->dupacks = 0;
        if (c->snd_una == c->snd_max) {
            c->t_rtx = 0;
            c->persist = false;
        } else if (!c->in_recovery) {
            c->t_rtx = toe_rtx_deadline(c);
        }
    } else if (ack == c->snd_una && g->len == 0 &&
               !(g->flags & (VFW_TH_SYN | VFW_TH_FIN)) &&
               nwnd == c->snd_wnd && c->snd_max != c->snd_una) {
        c->s->st.dup_acks++;
        c->dupacks++;
        if (c->dupacks == 3 && !c->in_recovery &&
            VFW_SEQ_GT(ack, c->recover)) {
            /* Fast retransmit + NewReno fast recovery (RFC 6582). */
            uint32_t fl = c->snd_max - c->snd_una;
            c->ssthresh = fl / 2 > 2u * c->mss ? fl / 2 : 2u * c->mss;
            c->recover = c->snd_max;
            c->in_recovery = true;
            uint32_t idx = 0;
            toe_send_data_seg(c, c->snd_una, c->mss, &idx);
            c->rtt_active = false;
            c->cwnd = c->ssthresh + 3u * c->mss;
            c->t_rtx = toe_rtx_deadline(c);
        } else if (c->in_recovery) {
            c->cwnd += c->mss;
        }
    }
    /* Send window update (RFC 9293 3.10.7.4). */
    if (VFW_SEQ_LT(c->snd_wl1, g->seq) ||
        (c->snd_wl1 == g->seq && VFW_SEQ_LEQ(c->snd_wl2, ack))) {
        c->snd_wnd = nwnd;
        c->snd_wl1 = g->seq;
        c->snd_wl2 = ack;
        if (nwnd > c->max_snd_wnd)
            c->max_snd_wnd = nwnd;
    }
    return true;
}

/* Insert an out-of-order range; false if the bounded table is full. */
static bool ooo_insert(struct vfw_tcp_conn *c, uint32_t a, uint32_t b)
{
    uint32_t i = 0;
    while (i < c->nooo && VFW_SEQ_LT(c->ooo[i].end, a))
        i++;
    if (i < c->nooo && VFW_SEQ_LEQ(c->ooo[i].start, b)) {
        /* Overlaps/touches range i: merge forward. */
        if (VFW_SEQ_LT(a, c->ooo[i].start))
            c->ooo[i].start = a;
        if (VFW_SEQ_GT(b, c->ooo[i].end))
            c->ooo[i].end = b;
        uint32_t j = i + 1;
        while (j < c->nooo && VFW_SEQ_LEQ(c->ooo[j].start, c->ooo[i].end)) {
            if (VFW_SEQ_GT(c->ooo[j].end, c->ooo[i].end))
                c->ooo[i].end = c->ooo[j].end;
            j++;
        }
        memmove(&c->ooo[i + 1], &c->ooo[j],
                (c->nooo - j) * sizeof(c->ooo[0]));
        c->nooo -= j - i - 1;
        return true;
    }
    if (c->nooo >= c->s->tun.ooo_max_ranges)
        return false;
    memmove(&c->ooo[i + 1], &c->ooo[i], (c->nooo - i) * sizeof(c->ooo[0]));
    c->ooo[i].start = a;
    c->ooo[i].end = b;
    c->nooo++;
    return true;
}

static void enter_time_wait(struct vfw_tcp_conn *c)
{
    c->state = ST_TIME_WAIT;
    c->t_rtx = 0;
    c->t_misc = toe_now(c->s) + c->s->tun.time_wait_ns;
}

/* Process the FIN at rcv_nxt. */
static void process_fin(struct vfw_tcp_conn *c)
{
    c->rcv_nxt++;
    c->ack_now = true;
    c->fin_ooo = false;
    switch (c->state) {
    case ST_ESTABLISHED:
        c->state = ST_CLOSE_WAIT;
        c->eof_pending = true;
        break;
    case ST_FIN_WAIT_1:
        if (fin_acked(c)) {
            enter_time_wait(c);
        } else {
            c->state = ST_CLOSING;
        }
        c->eof_pending = true;
        break;
    case ST_FIN_WAIT_2:
        enter_time_wait(c);
        c->eof_pending = true;
        break;
    default:
        break;
    }
}

/* Segment text. Returns true if new in-order data arrived. */
static bool process_data(struct vfw_tcp_conn *c, struct seg *g)
{
    if (!(c->state == ST_ESTABLISHED || c->state == ST_FIN_WAIT_1 ||
          c->state == ST_FIN_WAIT_2))
        return false;
    bool fin = (g->flags & VFW_TH_FIN) != 0;
    uint32_t seq = g->seq;
    uint32_t len = g->len;
    const uint8_t *d = g->data;
    uint32_t space = c->rbuf_size - c->rd - c->avail;
    /* Trim to [rcv_nxt, rcv_nxt + space). */
    if (VFW_SEQ_LT(seq, c->rcv_nxt)) {
        uint32_t cut = c->rcv_nxt - seq;
        if (cut >= len) {
            if (cut > len)
                fin = false;        /* FIN already seen */
            cut = len;
        }
        seq += cut;
        d += cut;
        len -= cut;
    }
    uint32_t off = seq - c->rcv_nxt;
    if (off > space) {
        c->ack_now = true;
        return false;
    }
    if (len > space - off) {
        len = space - off;
        fin = false;
        c->ack_now = true;           /* e.g. a zero-window probe */
    }
    bool inorder = false;
    if (len) {
        if (off == 0) {
            memcpy(c->rbuf + c->rd + c->avail, d, len);
            c->avail += len;
            c->rcv_nxt += len;
            inorder = true;
            bool filled = false;
            while (c->nooo && VFW_SEQ_LEQ(c->ooo[0].start, c->rcv_nxt)) {
                if (VFW_SEQ_GT(c->ooo[0].end, c->rcv_nxt)) {
                    c->avail += c->ooo[0].end - c->rcv_nxt;
                    c->rcv_nxt = c->ooo[0].end;
                }
                memmove(&c->ooo[0], &c->ooo[1],
                        (c->nooo - 1) * sizeof(c->ooo[0]));
                c->nooo--;
                filled = true;
            }
            if (filled)
                c->ack_now = true;
            if (++c->unacked_segs >= 2)
                c->ack_now = true;
            else if (!c->t_delack)
                c->t_delack = toe_now(c->s) + c->s->tun.delack_ns;
        } else {
            if (ooo_insert(c, seq, seq + len)) {
                memcpy(c->rbuf + c->rd + c->avail + off, d, len);
                c->s->st.ooo_queued++;
            } else {
                c->s->st.ooo_dropped++;
            }
            c->ack_now = true;          /* duplicate ACK */
            if (fin) {
                c->fin_ooo = true;
                c->fin_ooo_seq = seq + len;
            }
            return false;
        }
    } else if (off != 0) {
        if (fin) {
            c->fin_ooo = true;
            c->fin_ooo_seq = seq;
        }
        c->ack_now = true;
        return false;
    }
    if (fin)
        process_fin(c);
    else if (c->fin_ooo && c->fin_ooo_seq == c->rcv_nxt)
        process_fin(c);
    return inorder;
}

static void established(struct vfw_tcp_conn *c, const struct seg *g)
{
    c->snd_wnd = (uint32_t)g->wnd << c->snd_wscale;
    c->max_snd_wnd = c->snd_wnd;
    c->snd_wl1 = g->seq;
    c->snd_wl2 = g->ack;
    c->state = ST_ESTABLISHED;
    c->retries = 0;
    c->t_rtx = 0;
    c->rto = c->s->tun.rto_init_ns;
    if (c->rtt_active) {
        c->rtt_active = false;
        if (c->retries == 0)
            rtt_sample(c, toe_now(c->s) - c->rtt_start);
    }
    init_cc(c);
}

static void compact_rbuf(struct vfw_tcp_conn *c)
{
    if (!c->rd)
        return;
    uint32_t extent = c->avail;
    if (c->nooo)
        extent += c->ooo[c->nooo - 1].end - c->rcv_nxt;
    if (extent == 0) {
        c->rd = 0;
        return;
    }
    uint32_t free_b = c->rbuf_size - c->rd - c->avail;
    if (c->rd >= c->rbuf_size / 4 || free_b < 2u * c->lmss) {
        memmove(c->rbuf, c->rbuf + c->rd, extent);
        c->rd = 0;
    }
}

/* Offer in-order data to the user. */
void toe_deliver(struct vfw_tcp_conn *c)
{
    if (c->dead || c->in_deliver)  {
        if (c->in_deliver)
            c->redeliver = true;
        return;
    }
    uint32_t adv_before = VFW_SEQ_GT(c->rcv_adv, c->rcv_nxt) ?
                          c->rcv_adv - c->rcv_nxt : 0;
    c->in_deliver = true;
    for (int i = 0; i < 16; i++) {
        c->redeliver = false;
        if (!c->avail || !c->user_owned || !c->cb->recv)
            break;
        size_t n = c->cb->recv(c, c->rbuf + c->rd, c->avail, c->user);
        if (c->dead)
            return;
        if (n > c->avail)
            n = c->avail;
        c->rd += (uint32_t)n;
        c->avail -= (uint32_t)n;
        if (!c->redeliver)
            break;
    }
    c->in_deliver = false;
    if (!c->avail && !c->nooo)
        c->rd = 0;
    compact_rbuf(c);
    /* Window update if the window opened substantially. */
    if (toe_synchronized(c) && c->state != ST_TIME_WAIT) {
        uint32_t free_b = c->rbuf_size - c->rd - c->avail;
        uint32_t thresh = c->rbuf_size / 2;
        if (thresh > c->lmss)
            thresh = c->lmss;
        if (free_b >= adv_before + thresh && adv_before < c->rbuf_size / 2)
            toe_send_ack(c);
    }
    toe_maybe_eof(c);
}

static void maybe_writable(struct vfw_tcp_conn *c)
{
    if (c->dead || !c->want_writable || !c->user_owned || c->user_closed)
        return;
    if (c->sbuf_size - c->sbuf_len < c->mss && c->sbuf_len)
        return;
    if (c->rec_cnt >= c->rec_cap)
        return;
    c->want_writable = false;
    if (c->cb->writable)
        c->cb->writable(c, c->user);
}

/* Finish segment processing: deliver, notify, transmit, acknowledge. */
static void after_segment(struct vfw_tcp_conn *c, bool newdata)
{
    if (!c->dead && newdata)
        toe_deliver(c);
    if (!c->dead)
        toe_maybe_eof(c);
    if (!c->dead)
        maybe_writable(c);
    if (!c->dead)
        toe_output(c);
    if (!c->dead && c->ack_now && toe_synchronized(c))
        toe_send_ack(c);
}

static void conn_input(struct vfw_tcp_conn *c, struct seg *g)
{
    struct vfw_tcp_stack *s = c->s;
    if (c->state == ST_SYN_SENT) {
        bool ackok = (g->flags & VFW_TH_ACK) && g->ack == c->iss + 1;
        if ((g->flags & VFW_TH_ACK) && !ackok) {
            send_rst_for(s, g);
            return;
        }
        if (g->flags & VFW_TH_RST) {
            if (ackok)
                toe_conn_fail(c, -ECONNREFUSED);
            return;
        }
        if (!(g->flags & VFW_TH_SYN))
            return;
        c->irs = g->seq;
        c->rcv_nxt = g->seq + 1;
        c->rcv_adv = c->rcv_nxt;
        parse_syn_opts(c, g);
        if (ackok) {
            c->snd_una = g->ack;
            established(c, g);
            /* SYN-ACK window is never scaled. */
            c->snd_wnd = g->wnd;
            c->max_snd_wnd = g->wnd;
            toe_send_ack(c);
            if (c->cb->connected)
                c->cb->connected(c, 0, c->user);
            if (!c->dead)
                after_segment(c, false);
        } else {
            /* Simultaneous open. */
            c->state = ST_SYN_RCVD;
            toe_send_syn(c);
            c->t_rtx = toe_rtx_deadline(c);
        }
        return;
    }

    if (c->state == ST_SYN_RCVD && (g->flags & VFW_TH_SYN) &&
        !(g->flags & VFW_TH_ACK) && g->seq == c->irs) {
        toe_send_syn(c);             /* peer retransmitted its SYN */
        return;
    }

    if (c->state == ST_TIME_WAIT && (g->flags & VFW_TH_SYN) &&
        !(g->flags & (VFW_TH_ACK | VFW_TH_RST)))
        return;                      /* handled by the caller */

    /* 1. Sequence acceptability (lenient on the left like Linux). */
    uint32_t seglen = g->len + ((g->flags & VFW_TH_SYN) ? 1 : 0) +
                      ((g->flags & VFW_TH_FIN) ? 1 : 0);
    uint32_t space = c->rbuf_size - c->rd - c->avail;
    uint32_t wend = c->rcv_nxt + space;
    if (VFW_SEQ_GT(c->rcv_adv, wend))
        wend = c->rcv_adv;
    bool ok;
    if (seglen == 0)
        ok = VFW_SEQ_GEQ(g->seq, c->rcv_nxt) && VFW_SEQ_LEQ(g->seq, wend);
    else
        ok = VFW_SEQ_GT(g->seq + seglen, c->rcv_nxt) &&
             VFW_SEQ_LT(g->seq, wend + (space == 0 ? 1 : 0));
    if (!ok && seglen == 0 && g->seq == c->rcv_nxt)
        ok = true;
    if (!ok) {
        if (!(g->flags & VFW_TH_RST)) {
            if (c->state == ST_TIME_WAIT && (g->flags & VFW_TH_FIN))
                c->t_misc = toe_now(s) + s->tun.time_wait_ns;
            toe_send_ack(c);
        }
        return;
    }
    /* 2. RST (RFC 5961 sec. 3). */
    if (g->flags & VFW_TH_RST) {
        if (g->seq != c->rcv_nxt) {
            toe_send_ack(c);         /* challenge ACK */
            return;
        }
        toe_conn_fail(c, -ECONNRESET);
        return;
    }
    /* 3. SYN in a synchronized state: challenge ACK (RFC 5961 sec. 4). */
    if (g->flags & VFW_TH_SYN) {
        toe_send_ack(c);
        return;
    }
    /* 4. ACK. */
    if (!(g->flags & VFW_TH_ACK))
        return;
    if (c->state == ST_SYN_RCVD) {
        if (!(VFW_SEQ_GT(g->ack, c->snd_una) &&
              VFW_SEQ_LEQ(g->ack, c->snd_max))) {
            send_rst_for(s, g);
            return;
        }
        if (c->passive) {
            /* the handshake is complete: now the conn gets its buffers
             * (a SYN alone never does, issue 33) */
            toe_synq_unlink(c);
            if (toe_conn_bufs(c)) {
                toe_send_raw(s, c->rmac, c->rip, c->lport, c->rport,
                             c->snd_nxt, 0, VFW_TH_RST, 0, NULL, 0, c, 0);
                c->state = ST_CLOSED;
                toe_try_free(c);
                return;
            }
        }
        c->snd_una = g->ack;
        established(c, g);
        if (!c->passive) {
            /* Simultaneous open completes an active open. */
            if (c->cb->connected)
                c->cb->connected(c, 0, c->user);
        } else {
            struct listener *l = toe_find_listener(s, c->lport);
            const struct vfw_tcp_cb *cb = NULL;
            void *cu = NULL;
            if (l)
                cb = l->accept(c, l->user, &cu);
            if (c->dead)
                return;
            if (!cb) {
                toe_send_raw(s, c->rmac, c->rip, c->lport, c->rport,
                             c->snd_nxt, 0, VFW_TH_RST, 0, NULL, 0, c, 0);
                c->state = ST_CLOSED;
                toe_try_free(c);
                return;
            }
            c->cb = cb;
            c->user = cu;
            c->user_owned = true;
        }
        if (c->dead)
            return;
    }
    if (!process_ack(c, g) || c->dead)
        return;
    switch (c->state) {
    case ST_FIN_WAIT_1:
        if (fin_acked(c))
            c->state = ST_FIN_WAIT_2,
            c->t_misc = toe_now(s) + s->tun.fin_wait2_ns;
        break;
    case ST_CLOSING:
        if (fin_acked(c))
            enter_time_wait(c);
        break;
    case ST_LAST_ACK:
        if (fin_acked(c)) {
            c->state = ST_CLOSED;
            if (c->user_owned && !c->closed_delivered) {
                /* close() came before eof was reported. */
                c->closed_delivered = true;
                c->user_owned = false;
                if (c->cb->closed)
                    c->cb->closed(c, 0, c->user);
            }
            if (!c->dead)
                toe_try_free(c);
            return;
        }
        break;
    case ST_TIME_WAIT:
        if (g->flags & VFW_TH_FIN) {
            c->t_misc = toe_now(s) + s->tun.time_wait_ns;
            toe_send_ack(c);
        }
        return;
    default:
        break;
    }
    /* 5. Text and FIN. */
    bool newdata = process_data(c, g);
    if (c->state == ST_TIME_WAIT && c->eof_pending && !c->user_owned)
        c->eof_pending = false;
    after_segment(c, newdata);
}

static void listen_input(struct vfw_tcp_stack *s, struct listener *l,
                         struct seg *g)
{
    if (g->flags & VFW_TH_RST)
        return;
    if (g->flags & VFW_TH_ACK) {
        send_rst_for(s, g);
        return;
    }
    if (!(g->flags & VFW_TH_SYN))
        return;
    /* The listener's backlog bounds its half-open conns: beyond it the
     * oldest one makes room (a flood displaces itself; see
     * tcp_internal.h). l stays valid: dropping frees a conn, never a
     * listener. */
    if (l->nsyn >= l->backlog)
        toe_synq_drop_oldest(s, l->port);
    struct vfw_tcp_conn *c = toe_conn_new(s, g->sip, g->sport, g->dport,
                                          false);
    if (!c) {
        send_rst_for(s, g);
        return;
    }
    toe_synq_add(c, l);
    c->passive = true;
    memcpy(c->rmac, g->smac, 6);
    if (s->arp_passive)
        toe_neigh_learn(s, g->sip, g->smac);
    c->irs = g->seq;
    c->rcv_nxt = g->seq + 1;
    c->rcv_adv = c->rcv_nxt;
    parse_syn_opts(c, g);
    c->state = ST_SYN_RCVD;
    c->snd_una = c->iss;
    c->snd_nxt = c->iss + 1;
    c->snd_max = c->snd_nxt;
    c->snd_end = c->snd_nxt;
    c->recover = c->iss;
    toe_send_syn(c);
    c->rtt_active = true;
    c->rtt_seq = c->snd_nxt;
    c->rtt_start = toe_now(s);
    c->t_rtx = toe_rtx_deadline(c);
}

static void tcp_input(struct vfw_tcp_stack *s, const uint8_t *f,
                      const uint8_t *ip, size_t iphl, size_t iplen, bool cur)
{
    const uint8_t *th = ip + iphl;
    size_t tlen = iplen - iphl;
    if (tlen < VFW_TCP_HLEN) {
        s->st.malformed++;
        return;
    }
    size_t thl = (size_t)(th[12] >> 4) * 4;
    if (thl < VFW_TCP_HLEN || thl > tlen) {
        s->st.malformed++;
        return;
    }
    struct seg g;
    g.sip = vfw_ld_be32(ip + 12);
    uint64_t sum = vfw_csum_pseudo(g.sip, vfw_ld_be32(ip + 16), 6,
                                   (uint16_t)tlen);
    if (vfw_csum_fold(vfw_csum_partial(th, tlen, sum)) != 0xffff) {
        s->st.bad_csum++;
        return;
    }
    s->st.segs_in++;
    g.smac = f + 6;
    g.sport = vfw_ld_be16(th);
    g.dport = vfw_ld_be16(th + 2);
    g.seq = vfw_ld_be32(th + 4);
    g.ack = vfw_ld_be32(th + 8);
    g.flags = th[13] & 0x3f;
    g.wnd = vfw_ld_be16(th + 14);
    g.opt = th + VFW_TCP_HLEN;
    g.optlen = thl - VFW_TCP_HLEN;
    g.data = th + thl;
    g.len = (uint32_t)(tlen - thl);
    if (!g.sport || !g.dport || toe_is_bcast_or_mcast_ip(g.sip) ||
        (g.smac[0] & 1)) {
        s->st.malformed++;
        return;
    }
    if ((g.flags & VFW_TH_SYN) && (g.flags & VFW_TH_FIN)) {
        s->st.malformed++;
        return;
    }
    struct vfw_tcp_conn *c = toe_conn_lookup(s, g.sip, g.sport, g.dport);
    /* a conn answers only at the address it started with; after
     * vfw_tcp_set_addr moved the stack, frames to an old address reach
     * only the conns that still use it */
    if (c && (c->lip != vfw_ld_be32(ip + 16) || memcmp(c->lmac, f, 6)))
        c = NULL;
    if (!cur && !c)
        return;
    if (c && c->state == ST_TIME_WAIT && (g.flags & VFW_TH_SYN) &&
        !(g.flags & (VFW_TH_ACK | VFW_TH_RST)) &&
        VFW_SEQ_GT(g.seq, c->rcv_nxt) && !c->user_owned) {
        toe_conn_free(c);                /* new incarnation (RFC 6191-ish) */
        c = NULL;
    }
    if (c && c->state != ST_CLOSED) {
        conn_input(c, &g);
        return;
    }
    struct listener *l = toe_find_listener(s, g.dport);
    if (l && !c) {
        listen_input(s, l, &g);
        return;
    }
    s->st.drops_no_conn++;
    send_rst_for(s, &g);
}

static void ip_input(struct vfw_tcp_stack *s, const uint8_t *f, size_t len,
                     bool to_us)
{
    if (len < VFW_ETH_HLEN + VFW_IP_HLEN) {
        s->st.malformed++;
        return;
    }
    const uint8_t *ip = f + VFW_ETH_HLEN;
    size_t avail = len - VFW_ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0xf) * 4;
    size_t tot = vfw_ld_be16(ip + 2);
    if ((ip[0] >> 4) != 4 || ihl < VFW_IP_HLEN || tot < ihl || tot > avail) {
        s->st.malformed++;
        return;
    }
    if (vfw_csum_fold(vfw_csum_partial(ip, ihl, 0)) != 0xffff) {
        s->st.bad_csum++;
        return;
    }
    bool cur = to_us && vfw_ld_be32(ip + 16) == s->cfg.ip;
    if (!cur && !s->addr_moved)
        return;
    if (vfw_ld_be16(ip + 6) & 0x3fff) {     /* MF or fragment offset */
        s->st.ip_frags++;
        return;
    }
    if (ip[9] != 6)
        return;
    tcp_input(s, f, ip, ihl, tot, cur);
}

void vfw_tcp_input(struct vfw_tcp_stack *s, const uint8_t *frame, size_t len)
{
    if (!frame || len < VFW_ETH_HLEN) {
        s->st.malformed++;
        return;
    }
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    bool to_us = memcmp(frame, s->cfg.mac, 6) == 0;
    bool to_bc = memcmp(frame, bcast, 6) == 0;
    uint16_t type = vfw_ld_be16(frame + 12);
    toe_stack_enter(s);
    if (type == VFW_ETH_P_ARP && (to_us || to_bc))
        toe_arp_input(s, frame, len);
    else if (type == VFW_ETH_P_IP && (to_us || s->addr_moved))
        ip_input(s, frame, len, to_us);
    toe_stack_leave(s);
}

/*
 * Steering decision for the device: an untagged IPv4/TCP frame to our MAC
 * and IP for one of our listeners or connections (TIME_WAIT included), or
 * to the old address of a conn that started before vfw_tcp_set_addr. Reads
 * at most the Ethernet, IP and the first 4 TCP header bytes, each only
 * after checking len; no checksum (the stack checks on input). A first
 * fragment whose ports match is ours too (the stack drops it) so the guest
 * never sees a segment of an offloaded connection. vfw_tcp_wants_kind
 * also says whether the 4-tuple is a synchronized connection (CONN) or
 * only a listener's or a handshake's (SETUP): a SYN flood is all SETUP.
 */
int vfw_tcp_wants(const struct vfw_tcp_stack *s, const uint8_t *frame,
                  size_t len)
{
    return vfw_tcp_wants_kind(s, frame, len) != VFW_TCP_WANT_NO;
}

int vfw_tcp_wants_kind(const struct vfw_tcp_stack *s, const uint8_t *frame,
                       size_t len)
{
    if (!s || !frame || len < VFW_ETH_HLEN + VFW_IP_HLEN)
        return 0;
    if (vfw_ld_be16(frame + 12) != VFW_ETH_P_IP || (frame[0] & 1))
        return 0;
    const uint8_t *ip = frame + VFW_ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0xf) * 4;
    if ((ip[0] >> 4) != 4 || ihl < VFW_IP_HLEN || ip[9] != 6 ||
        len < VFW_ETH_HLEN + ihl + 4 || (vfw_ld_be16(ip + 6) & 0x1fff))
        return 0;
    uint32_t sip = vfw_ld_be32(ip + 12), dip = vfw_ld_be32(ip + 16);
    const uint8_t *th = ip + ihl;
    uint16_t sport = vfw_ld_be16(th), dport = vfw_ld_be16(th + 2);
    bool cur = dip == s->cfg.ip && memcmp(frame, s->cfg.mac, 6) == 0;
    if (!cur && !s->addr_moved)
        return 0;
    struct vfw_tcp_stack *ms = (struct vfw_tcp_stack *)s; /* lookup only */
    const struct vfw_tcp_conn *c = toe_conn_lookup(ms, sip, sport, dport);
    if (c && c->lip == dip && memcmp(c->lmac, frame, 6) == 0)
        return toe_synchronized(c) ? VFW_TCP_WANT_CONN : VFW_TCP_WANT_SETUP;
    return cur && toe_find_listener(ms, dport) ? VFW_TCP_WANT_SETUP
                                               : VFW_TCP_WANT_NO;
}
