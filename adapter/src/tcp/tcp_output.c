/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_output.c - segments out of the offloaded TCP stack (vfw_tcp.h): the
 * IPv4/TCP header build and checksums (RFC 791, RFC 9293 sec. 3.1, RFC 1071),
 * SYN options (MSS, RFC 7323 window scale), the advertised window with
 * receiver SWS avoidance (RFC 1122 4.2.3.3), and transmission of what the
 * send and congestion windows allow (RFC 5681), always cut at record ends
 * so that a segment carries at most one FPDU (RFC 5044 sec. 8).
 *
 * Bounds: every frame is built in the stack's one transmit buffer (Ethernet
 * + MTU + 64 bytes; the length is checked before writing, payload <= mss);
 * payload is copied only from the conn's own send ring; one toe_output()
 * call sends at most MAX_SEG_BURST segments. Nothing here reads a frame
 * from the wire: the peer reaches it only through the connection's state
 * (its MSS clamped on input, its window only limiting what is sent).
 */
#include <stdbool.h>
#include <string.h>

#include "tcp_internal.h"

#define MAX_SEG_BURST  4096   /* segments sent by one output call */
#define TCP_OPT_MAX    40

/*
 * Build and send one TCP segment. Payload comes from the conn's send ring
 * (seq .. seq+len) when c is given; `opts` are raw option bytes.
 */
void toe_send_raw(struct vfw_tcp_stack *s, const uint8_t *dmac,
                  uint32_t dip, uint16_t sport, uint16_t dport,
                  uint32_t seq, uint32_t ack, uint8_t flags, uint16_t wnd,
                  const uint8_t *opts, size_t optlen,
                  const struct vfw_tcp_conn *c, uint32_t len)
{
    size_t thl = VFW_TCP_HLEN + optlen;
    size_t iplen = VFW_IP_HLEN + thl + len;
    if (VFW_ETH_HLEN + iplen > s->tx_size)
        return;                           /* cannot happen: len <= mss */
    /* a conn keeps the address it started with (vfw_tcp_set_addr) */
    uint32_t sip = c ? c->lip : s->cfg.ip;
    toe_eth_hdr(s, dmac, c ? c->lmac : s->cfg.mac, VFW_ETH_P_IP);
    uint8_t *ip = s->tx + VFW_ETH_HLEN;
    ip[0] = 0x45;
    ip[1] = c ? c->tos : 0;
    vfw_st_be16(ip + 2, (uint16_t)iplen);
    vfw_st_be16(ip + 4, s->ip_id++);
    vfw_st_be16(ip + 6, 0x4000);            /* DF */
    ip[8] = 64;
    ip[9] = 6;
    ip[10] = ip[11] = 0;
    vfw_st_be32(ip + 12, sip);
    vfw_st_be32(ip + 16, dip);
    vfw_csum_store(ip + 10, vfw_csum_partial(ip, VFW_IP_HLEN, 0));
    uint8_t *th = ip + VFW_IP_HLEN;
    vfw_st_be16(th, sport);
    vfw_st_be16(th + 2, dport);
    vfw_st_be32(th + 4, seq);
    vfw_st_be32(th + 8, ack);
    th[12] = (uint8_t)((thl / 4) << 4);
    th[13] = flags;
    vfw_st_be16(th + 14, wnd);
    th[16] = th[17] = th[18] = th[19] = 0;
    if (optlen)
        memcpy(th + VFW_TCP_HLEN, opts, optlen);
    if (len && c) {
        uint32_t off = (c->sbuf_head + (seq - c->snd_una)) % c->sbuf_size;
        uint32_t first = c->sbuf_size - off;
        if (first > len)
            first = len;
        memcpy(th + thl, c->sbuf + off, first);
        memcpy(th + thl + first, c->sbuf, len - first);
    }
    uint64_t sum = vfw_csum_pseudo(sip, dip, 6,
                                   (uint16_t)(thl + len));
    vfw_csum_store(th + 16, vfw_csum_partial(th, thl + len, sum));
    s->st.segs_out++;
    if (flags & VFW_TH_RST)
        s->st.rst_out++;
    size_t flen = VFW_ETH_HLEN + iplen;
    if (flen < 60) {
        memset(s->tx + flen, 0, 60 - flen);
        flen = 60;
    }
    toe_emit(s, flen);
}

/* Receive window to advertise (unscaled bytes); updates rcv_adv. */
uint16_t toe_rcv_window(struct vfw_tcp_conn *c, bool syn)
{
    uint32_t free_b = c->rbuf_size - c->rd - c->avail;
    uint32_t thresh = c->rbuf_size / 2;
    if (thresh > c->lmss)
        thresh = c->lmss;
    uint32_t win = free_b;
    uint32_t adv_left = VFW_SEQ_GT(c->rcv_adv, c->rcv_nxt) ?
                        c->rcv_adv - c->rcv_nxt : 0;
    /* Receiver SWS avoidance (RFC 1122 4.2.3.3): move the right edge only
     * by at least min(buffer/2, MSS). */
    if (win > adv_left && win - adv_left < thresh)
        win = adv_left;
    uint32_t shift = syn ? 0 : c->rcv_wscale;
    uint32_t field = win >> shift;
    if (field > 65535)
        field = 65535;
    uint32_t edge = c->rcv_nxt + (field << shift);
    if (VFW_SEQ_GT(edge, c->rcv_adv))
        c->rcv_adv = edge;
    return (uint16_t)field;
}

static void conn_send(struct vfw_tcp_conn *c, uint32_t seq, uint8_t flags,
                      uint32_t len, const uint8_t *opts, size_t optlen)
{
    struct vfw_tcp_stack *s = c->s;
    uint16_t wnd = toe_rcv_window(c, (flags & VFW_TH_SYN) != 0);
    if (flags & VFW_TH_ACK) {
        c->t_delack = 0;
        c->unacked_segs = 0;
        c->ack_now = false;
    }
    if ((flags & VFW_TH_SYN) ? c->retries > 0 :
        (VFW_SEQ_LT(seq, c->snd_max) && (len || (flags & VFW_TH_FIN))))
        s->st.retrans++;
    toe_send_raw(s, c->rmac, c->rip, c->lport, c->rport, seq, c->rcv_nxt, flags,
                 wnd, opts, optlen, c, len);
}

void toe_send_ack(struct vfw_tcp_conn *c)
{
    conn_send(c, c->snd_max, VFW_TH_ACK, 0, NULL, 0);
}

static size_t syn_opts(struct vfw_tcp_conn *c, uint8_t *o, bool synack)
{
    size_t n = 0;
    o[n++] = 2;
    o[n++] = 4;
    vfw_st_be16(o + n, c->lmss);
    n += 2;
    if (c->s->tun.wscale && (!synack || c->ws_ok)) {
        o[n++] = 1;
        o[n++] = 3;
        o[n++] = 3;
        o[n++] = c->rcv_wscale;
    }
    return n;
}

void toe_send_syn(struct vfw_tcp_conn *c)
{
    uint8_t o[TCP_OPT_MAX];
    bool synack = c->state == ST_SYN_RCVD;
    if (!synack && !c->s->tun.wscale)
        c->rcv_wscale = 0;
    size_t n = syn_opts(c, o, synack);
    conn_send(c, c->iss, synack ? (VFW_TH_SYN | VFW_TH_ACK) : VFW_TH_SYN, 0,
              o, n);
}

/* End sequence of the segment starting at seq: the next record end. */
static uint32_t seg_end_for(struct vfw_tcp_conn *c, uint32_t seq,
                            uint32_t *idx)
{
    uint32_t i = *idx;
    while (i < c->rec_cnt) {
        uint32_t e = c->rec[(c->rec_head + i) % c->rec_cap];
        if (VFW_SEQ_GT(e, seq)) {
            *idx = i;
            return e;
        }
        i++;
    }
    *idx = i;
    return c->snd_end;                 /* not reached: records cover data */
}

/* Send one segment starting at seq, at most maxlen bytes of data. */
uint32_t toe_send_data_seg(struct vfw_tcp_conn *c, uint32_t seq,
                           uint32_t maxlen, uint32_t *idx)
{
    uint32_t end = seg_end_for(c, seq, idx);
    uint32_t len = end - seq;
    if (len > c->mss)
        len = c->mss;
    if (len > maxlen)
        len = maxlen;
    uint8_t flags = VFW_TH_ACK;
    if (seq + len == toe_data_end(c)) {
        flags |= VFW_TH_PSH;
        if (c->fin_queued)
            flags |= VFW_TH_FIN;
    }
    conn_send(c, seq, flags, len, NULL, 0);
    return len + ((flags & VFW_TH_FIN) ? 1 : 0);
}

/* Transmit what the windows allow. */
void toe_output(struct vfw_tcp_conn *c)
{
    if (c->dead || !toe_synchronized(c) || c->state == ST_TIME_WAIT)
        return;
    for (unsigned n = 0; n < MAX_SEG_BURST; n++) {
        uint32_t dend = toe_data_end(c);
        uint32_t wnd = c->snd_wnd < c->cwnd ? c->snd_wnd : c->cwnd;
        uint32_t flight = c->snd_nxt - c->snd_una;
        uint32_t usable = wnd > flight ? wnd - flight : 0;
        uint32_t sent;
        if (VFW_SEQ_LT(c->snd_nxt, dend)) {
            uint32_t idx = c->rec_nxt;
            uint32_t end = seg_end_for(c, c->snd_nxt, &idx);
            c->rec_nxt = idx;
            uint32_t len = end - c->snd_nxt;
            if (len > c->mss)
                len = c->mss;
            if (len > usable) {
                /* Never split a record on first transmission; if nothing
                 * is in flight, the persist timer takes over. */
                if (flight == 0 && !c->t_rtx) {
                    c->persist = true;
                    c->t_rtx = toe_rtx_deadline(c);
                }
                return;
            }
            if (c->persist) {
                c->persist = false;
                c->t_rtx = 0;
            }
            sent = toe_send_data_seg(c, c->snd_nxt, len, &c->rec_nxt);
        } else if (c->fin_queued && c->snd_nxt == dend) {
            conn_send(c, c->snd_nxt, VFW_TH_FIN | VFW_TH_ACK, 0, NULL, 0);
            sent = 1;
        } else {
            return;
        }
        if (VFW_SEQ_GEQ(c->snd_nxt, c->snd_max) && !c->rtt_active) {
            c->rtt_active = true;
            c->rtt_seq = c->snd_nxt;
            c->rtt_start = toe_now(c->s);
        }
        c->snd_nxt += sent;
        if (VFW_SEQ_GT(c->snd_nxt, c->snd_max))
            c->snd_max = c->snd_nxt;
        if (!c->t_rtx)
            c->t_rtx = toe_rtx_deadline(c);
    }
}
