/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp.c - the adapter's offloaded TCP/IPv4 stack (the TOE), see vfw_tcp.h.
 *
 * Purpose-built rather than lwIP (see docs/adapter-tcp.md for the measured
 * spike): one self-contained stack object per adapter function, no global
 * state, every queue bounded, time only from env->now_ns.
 *
 * Pieces: Ethernet, ARP (reply + resolve, small bounded cache), IPv4 (no
 * options needed, fragments dropped), TCP per RFC 9293 with MSS and window
 * scale options, RFC 6298 RTO, RFC 5681/6582 NewReno with fast retransmit,
 * delayed ACK, receiver SWS avoidance, zero-window probes, bounded
 * out-of-order ranges kept in place in the receive buffer, RFC 5961 RST/SYN
 * checks, TIME_WAIT. No SACK, no timestamps (both optional).
 *
 * Buffers: the send side is a byte ring plus a ring of record ends; segments
 * are always cut at record ends (first transmission and retransmission), so
 * every segment carries at most one FPDU. The receive side is a linear
 * buffer so in-order data is always offered to the recv upcall contiguously;
 * it is compacted when the consumed prefix grows.
 *
 * Re-entrancy: upcalls may call send/close/abort/recv_resume. A connection
 * freed while the stack is inside a call is parked on a zombie list and
 * released when the outermost call returns.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_tcp.h"
#include "tcp_wire.h"

#define NS_PER_MS      1000000ull
#define NS_PER_S       1000000000ull
#define ARP_CACHE      16
#define ARP_TTL_NS     (60 * NS_PER_S)
#define MAX_LISTEN     64
#define MAX_OOO        64
#define EPH_LO         49152u
#define EPH_N          16384u
#define MAX_SEG_BURST  4096   /* segments sent by one output call */
#define TCP_OPT_MAX    40

enum tstate {
    ST_CLOSED, ST_SYN_SENT, ST_SYN_RCVD, ST_ESTABLISHED, ST_FIN_WAIT_1,
    ST_FIN_WAIT_2, ST_CLOSING, ST_TIME_WAIT, ST_CLOSE_WAIT, ST_LAST_ACK,
};

struct arp_ent {
    uint32_t ip;
    uint8_t mac[6];
    uint8_t state;            /* 0 empty, 1 pending, 2 valid */
    uint64_t stamp;
};

struct listener {
    uint16_t port;
    vfw_tcp_accept_fn accept;
    void *user;
};

struct ooo_range {
    uint32_t start, end;      /* sequence numbers, [start, end) */
};

struct vfw_tcp_conn {
    struct vfw_tcp_stack *s;
    struct vfw_tcp_conn *hnext;   /* hash chain */
    struct vfw_tcp_conn *lnext;   /* list of all conns (or zombies) */
    struct vfw_tcp_conn *lprev;
    enum tstate state;
    uint32_t lip, rip;
    uint16_t lport, rport;
    uint8_t rmac[6];
    uint8_t lmac[6];              /* our MAC when the conn started */
    uint8_t tos;                  /* IPv4 TOS of every segment (DSCP) */
    uint16_t lmss;                /* our MSS (from the MTU) at start */
    bool arp_wait;

    const struct vfw_tcp_cb *cb;
    void *user;
    bool user_owned, user_closed, closed_delivered, eof_pending;
    bool want_writable, fin_queued, dead, in_deliver, redeliver, passive;
    bool persist, ack_now, ws_ok;

    /* send */
    uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, snd_wl1, snd_wl2;
    uint32_t snd_end;             /* sequence after the last queued byte */
    uint32_t max_snd_wnd;
    uint8_t snd_wscale, rcv_wscale;
    uint16_t mss;                 /* effective send MSS */
    uint8_t *sbuf;
    uint32_t sbuf_size, sbuf_head, sbuf_len;
    uint32_t *rec;                /* record end sequence numbers */
    uint32_t rec_cap, rec_head, rec_cnt, rec_nxt;
    /* congestion control */
    uint32_t cwnd, ssthresh, recover, dupacks;
    bool in_recovery;
    /* RTT / RTO */
    bool rtt_active, have_srtt;
    uint32_t rtt_seq;
    uint64_t rtt_start, srtt, rttvar, rto;
    uint32_t retries;
    /* timers (0 = off) */
    uint64_t t_rtx, t_delack, t_misc;
    /* receive */
    uint32_t irs, rcv_nxt, rcv_adv;
    uint8_t *rbuf;
    uint32_t rbuf_size, rd, avail;
    struct ooo_range ooo[MAX_OOO];
    uint32_t nooo;
    bool fin_ooo;
    uint32_t fin_ooo_seq;
    uint32_t unacked_segs;
};

struct vfw_tcp_stack {
    struct vfw_tcp_env env;
    struct vfw_tcp_config cfg;
    struct vfw_tcp_tunables tun;
    struct vfw_tcp_stats st;
    struct arp_ent arp[ARP_CACHE];
    struct listener lis[MAX_LISTEN];
    unsigned nlis;
    struct vfw_tcp_conn **hash;
    uint32_t hmask;
    struct vfw_tcp_conn *conns;   /* all live conns */
    struct vfw_tcp_conn *zombies; /* freed while depth > 0 */
    uint32_t nconns;
    uint32_t depth;
    uint16_t ip_id;
    uint16_t eph_next;
    uint16_t mss_local;
    bool arp_passive;             /* ARP is the netdev's: never send it */
    bool addr_moved;              /* set_addr changed MAC or IP once */
    uint8_t *tx;                  /* one frame */
    size_t tx_size;
};

/* ---------------------------------------------------------------- utils */

static uint64_t now(struct vfw_tcp_stack *s)
{
    return s->env.now_ns(s->env.opaque);
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static uint32_t tuple_hash(const struct vfw_tcp_stack *s, uint32_t rip,
                           uint16_t rport, uint16_t lport)
{
    uint64_t h = mix64(((uint64_t)rip << 32) ^ ((uint64_t)rport << 16) ^
                       lport ^ s->tun.isn_secret);
    return (uint32_t)h & s->hmask;
}

static bool is_bcast_or_mcast_ip(uint32_t ip)
{
    return ip == 0 || ip == 0xffffffffu || (ip >> 28) == 0xe;
}

static void stack_enter(struct vfw_tcp_stack *s)
{
    s->depth++;
}

static void conn_release(struct vfw_tcp_conn *c)
{
    free(c->sbuf);
    free(c->rbuf);
    free(c->rec);
    free(c);
}

static void stack_leave(struct vfw_tcp_stack *s)
{
    if (--s->depth)
        return;
    while (s->zombies) {
        struct vfw_tcp_conn *z = s->zombies;
        s->zombies = z->lnext;
        conn_release(z);
    }
}

/* Unlink from the hash and list; release now or when the stack unwinds. */
static void conn_free(struct vfw_tcp_conn *c)
{
    struct vfw_tcp_stack *s = c->s;
    if (c->dead)
        return;
    c->dead = true;
    c->state = ST_CLOSED;
    c->t_rtx = c->t_delack = c->t_misc = 0;
    struct vfw_tcp_conn **pp = &s->hash[tuple_hash(s, c->rip, c->rport,
                                                   c->lport)];
    while (*pp && *pp != c)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = c->hnext;
    if (c->lprev)
        c->lprev->lnext = c->lnext;
    else
        s->conns = c->lnext;
    if (c->lnext)
        c->lnext->lprev = c->lprev;
    s->nconns--;
    if (s->depth) {
        c->lnext = s->zombies;
        s->zombies = c;
    } else {
        conn_release(c);
    }
}

static struct vfw_tcp_conn *conn_lookup(struct vfw_tcp_stack *s, uint32_t rip,
                                        uint16_t rport, uint16_t lport)
{
    struct vfw_tcp_conn *c = s->hash[tuple_hash(s, rip, rport, lport)];
    for (; c; c = c->hnext)
        if (c->rip == rip && c->rport == rport && c->lport == lport)
            return c;
    return NULL;
}

static bool lport_in_use(struct vfw_tcp_stack *s, uint16_t port)
{
    for (unsigned i = 0; i < s->nlis; i++)
        if (s->lis[i].port == port)
            return true;
    for (struct vfw_tcp_conn *c = s->conns; c; c = c->lnext)
        if (c->lport == port)
            return true;
    return false;
}

static struct listener *find_listener(struct vfw_tcp_stack *s, uint16_t port)
{
    for (unsigned i = 0; i < s->nlis; i++)
        if (s->lis[i].port == port)
            return &s->lis[i];
    return NULL;
}

/* Make room by reaping the TIME_WAIT conn closest to expiry, if any. */
static bool reap_time_wait(struct vfw_tcp_stack *s)
{
    struct vfw_tcp_conn *best = NULL;
    for (struct vfw_tcp_conn *c = s->conns; c; c = c->lnext)
        if (c->state == ST_TIME_WAIT && !c->user_owned &&
            (!best || c->t_misc < best->t_misc))
            best = c;
    if (!best)
        return false;
    conn_free(best);
    return true;
}

static struct vfw_tcp_conn *conn_new(struct vfw_tcp_stack *s, uint32_t rip,
                                     uint16_t rport, uint16_t lport)
{
    if (s->nconns >= s->cfg.max_conns && !reap_time_wait(s)) {
        s->st.conn_limit++;
        return NULL;
    }
    struct vfw_tcp_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->s = s;
    c->sbuf_size = s->cfg.snd_buf;
    c->rbuf_size = s->cfg.rcv_buf;
    c->rec_cap = s->cfg.snd_buf / 16;
    if (c->rec_cap < 64)
        c->rec_cap = 64;
    if (c->rec_cap > 16384)
        c->rec_cap = 16384;
    c->sbuf = malloc(c->sbuf_size);
    c->rbuf = malloc(c->rbuf_size);
    c->rec = malloc(c->rec_cap * sizeof(uint32_t));
    if (!c->sbuf || !c->rbuf || !c->rec) {
        conn_release(c);
        return NULL;
    }
    c->lip = s->cfg.ip;
    memcpy(c->lmac, s->cfg.mac, 6);
    c->lmss = s->mss_local;
    c->rip = rip;
    c->rport = rport;
    c->lport = lport;
    c->rto = s->tun.rto_init_ns;
    c->mss = 536;
    c->ssthresh = 0x7fffffff;
    c->rcv_wscale = 0;
    if (s->tun.wscale)
        while (c->rcv_wscale < 14 && (c->rbuf_size >> c->rcv_wscale) > 65535)
            c->rcv_wscale++;
    uint64_t h = mix64(s->tun.isn_secret ^ ((uint64_t)rip << 32) ^
                       ((uint64_t)rport << 16) ^ lport ^
                       ((uint64_t)s->cfg.ip << 20));
    c->iss = (uint32_t)h + (uint32_t)(now(s) >> 12); /* RFC 6528 */
    uint32_t b = tuple_hash(s, rip, rport, lport);
    c->hnext = s->hash[b];
    s->hash[b] = c;
    c->lnext = s->conns;
    if (s->conns)
        s->conns->lprev = c;
    s->conns = c;
    s->nconns++;
    return c;
}

/* --------------------------------------------------------------- output */

static void emit(struct vfw_tcp_stack *s, size_t len)
{
    s->env.frame_out(s->env.opaque, s->tx, len);
}

static void eth_hdr(struct vfw_tcp_stack *s, const uint8_t *dmac,
                    const uint8_t *smac, uint16_t type)
{
    memcpy(s->tx, dmac, 6);
    memcpy(s->tx + 6, smac, 6);
    vfw_put16(s->tx + 12, type);
}

static void arp_send(struct vfw_tcp_stack *s, uint16_t op, const uint8_t *dmac,
                     const uint8_t *tha, uint32_t tip)
{
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (s->arp_passive)
        return;         /* ARP belongs to the netdev sharing the function */
    eth_hdr(s, dmac ? dmac : bcast, s->cfg.mac, VFW_ETH_P_ARP);
    uint8_t *a = s->tx + VFW_ETH_HLEN;
    vfw_put16(a, 1);
    vfw_put16(a + 2, VFW_ETH_P_IP);
    a[4] = 6;
    a[5] = 4;
    vfw_put16(a + 6, op);
    memcpy(a + 8, s->cfg.mac, 6);
    vfw_put32(a + 14, s->cfg.ip);
    if (tha)
        memcpy(a + 18, tha, 6);
    else
        memset(a + 18, 0, 6);
    vfw_put32(a + 24, tip);
    size_t len = VFW_ETH_HLEN + VFW_ARP_LEN;
    memset(s->tx + len, 0, 60 - len);   /* pad to the Ethernet minimum */
    s->st.arp_out++;
    emit(s, 60);
}

/*
 * Build and send one TCP segment. Payload comes from the conn's send ring
 * (seq .. seq+len) when c is given; `opts` are raw option bytes.
 */
static void send_raw(struct vfw_tcp_stack *s, const uint8_t *dmac,
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
    eth_hdr(s, dmac, c ? c->lmac : s->cfg.mac, VFW_ETH_P_IP);
    uint8_t *ip = s->tx + VFW_ETH_HLEN;
    ip[0] = 0x45;
    ip[1] = c ? c->tos : 0;
    vfw_put16(ip + 2, (uint16_t)iplen);
    vfw_put16(ip + 4, s->ip_id++);
    vfw_put16(ip + 6, 0x4000);            /* DF */
    ip[8] = 64;
    ip[9] = 6;
    ip[10] = ip[11] = 0;
    vfw_put32(ip + 12, sip);
    vfw_put32(ip + 16, dip);
    vfw_csum_store(ip + 10, vfw_csum_partial(ip, VFW_IP_HLEN, 0));
    uint8_t *th = ip + VFW_IP_HLEN;
    vfw_put16(th, sport);
    vfw_put16(th + 2, dport);
    vfw_put32(th + 4, seq);
    vfw_put32(th + 8, ack);
    th[12] = (uint8_t)((thl / 4) << 4);
    th[13] = flags;
    vfw_put16(th + 14, wnd);
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
    emit(s, flen);
}

/* Receive window to advertise (unscaled bytes); updates rcv_adv. */
static uint16_t rcv_window(struct vfw_tcp_conn *c, bool syn)
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
    uint16_t wnd = rcv_window(c, (flags & VFW_TH_SYN) != 0);
    if (flags & VFW_TH_ACK) {
        c->t_delack = 0;
        c->unacked_segs = 0;
        c->ack_now = false;
    }
    if ((flags & VFW_TH_SYN) ? c->retries > 0 :
        (VFW_SEQ_LT(seq, c->snd_max) && (len || (flags & VFW_TH_FIN))))
        s->st.retrans++;
    send_raw(s, c->rmac, c->rip, c->lport, c->rport, seq, c->rcv_nxt, flags,
             wnd, opts, optlen, c, len);
}

static void send_ack(struct vfw_tcp_conn *c)
{
    conn_send(c, c->snd_max, VFW_TH_ACK, 0, NULL, 0);
}

static size_t syn_opts(struct vfw_tcp_conn *c, uint8_t *o, bool synack)
{
    size_t n = 0;
    o[n++] = 2;
    o[n++] = 4;
    vfw_put16(o + n, c->lmss);
    n += 2;
    if (c->s->tun.wscale && (!synack || c->ws_ok)) {
        o[n++] = 1;
        o[n++] = 3;
        o[n++] = 3;
        o[n++] = c->rcv_wscale;
    }
    return n;
}

static void send_syn(struct vfw_tcp_conn *c)
{
    uint8_t o[TCP_OPT_MAX];
    bool synack = c->state == ST_SYN_RCVD;
    if (!synack && !c->s->tun.wscale)
        c->rcv_wscale = 0;
    size_t n = syn_opts(c, o, synack);
    conn_send(c, c->iss, synack ? (VFW_TH_SYN | VFW_TH_ACK) : VFW_TH_SYN, 0,
              o, n);
}

static uint64_t rtx_deadline(struct vfw_tcp_conn *c)
{
    return now(c->s) + c->rto;
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

static uint32_t data_end(const struct vfw_tcp_conn *c)
{
    return c->snd_end;
}

/* Send one segment starting at seq, at most maxlen bytes of data. */
static uint32_t send_data_seg(struct vfw_tcp_conn *c, uint32_t seq,
                              uint32_t maxlen, uint32_t *idx)
{
    uint32_t end = seg_end_for(c, seq, idx);
    uint32_t len = end - seq;
    if (len > c->mss)
        len = c->mss;
    if (len > maxlen)
        len = maxlen;
    uint8_t flags = VFW_TH_ACK;
    if (seq + len == data_end(c)) {
        flags |= VFW_TH_PSH;
        if (c->fin_queued)
            flags |= VFW_TH_FIN;
    }
    conn_send(c, seq, flags, len, NULL, 0);
    return len + ((flags & VFW_TH_FIN) ? 1 : 0);
}

static bool synchronized(const struct vfw_tcp_conn *c)
{
    return c->state >= ST_ESTABLISHED;
}

/* Transmit what the windows allow. */
static void tcp_output(struct vfw_tcp_conn *c)
{
    if (c->dead || !synchronized(c) || c->state == ST_TIME_WAIT)
        return;
    for (unsigned n = 0; n < MAX_SEG_BURST; n++) {
        uint32_t dend = data_end(c);
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
                    c->t_rtx = rtx_deadline(c);
                }
                return;
            }
            if (c->persist) {
                c->persist = false;
                c->t_rtx = 0;
            }
            sent = send_data_seg(c, c->snd_nxt, len, &c->rec_nxt);
        } else if (c->fin_queued && c->snd_nxt == dend) {
            conn_send(c, c->snd_nxt, VFW_TH_FIN | VFW_TH_ACK, 0, NULL, 0);
            sent = 1;
        } else {
            return;
        }
        if (VFW_SEQ_GEQ(c->snd_nxt, c->snd_max) && !c->rtt_active) {
            c->rtt_active = true;
            c->rtt_seq = c->snd_nxt;
            c->rtt_start = now(c->s);
        }
        c->snd_nxt += sent;
        if (VFW_SEQ_GT(c->snd_nxt, c->snd_max))
            c->snd_max = c->snd_nxt;
        if (!c->t_rtx)
            c->t_rtx = rtx_deadline(c);
    }
}

/* ------------------------------------------------------------- upcalls */

static void try_free(struct vfw_tcp_conn *c)
{
    if (!c->user_owned && (c->state == ST_CLOSED))
        conn_free(c);
}

/* The connection failed (RST, timeout). */
static void conn_fail(struct vfw_tcp_conn *c, int err)
{
    enum tstate was = c->state;
    c->state = ST_CLOSED;
    c->t_rtx = c->t_delack = c->t_misc = 0;
    if (c->user_owned) {
        if (was == ST_SYN_SENT || (was == ST_SYN_RCVD && !c->passive)) {
            c->user_owned = false;
            if (c->cb->connected)
                c->cb->connected(c, err, c->user);
        } else if (!c->closed_delivered) {
            c->closed_delivered = true;
            c->user_owned = false;
            if (c->cb->closed)
                c->cb->closed(c, err, c->user);
        }
        /* else: passive close already reported; the user still holds the
         * conn and releases it with close/abort. */
    }
    try_free(c);
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

static void maybe_eof(struct vfw_tcp_conn *c);

/* Offer in-order data to the user. */
static void deliver(struct vfw_tcp_conn *c)
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
    if (synchronized(c) && c->state != ST_TIME_WAIT) {
        uint32_t free_b = c->rbuf_size - c->rd - c->avail;
        uint32_t thresh = c->rbuf_size / 2;
        if (thresh > c->lmss)
            thresh = c->lmss;
        if (free_b >= adv_before + thresh && adv_before < c->rbuf_size / 2)
            send_ack(c);
    }
    maybe_eof(c);
}

/* Report the peer's FIN (closed, err 0) once all data was consumed. */
static void maybe_eof(struct vfw_tcp_conn *c)
{
    if (c->dead || !c->eof_pending || c->avail || c->closed_delivered ||
        !c->user_owned)
        return;
    c->closed_delivered = true;
    c->eof_pending = false;
    if (c->user_closed || c->state == ST_TIME_WAIT || c->state == ST_CLOSED)
        c->user_owned = false;
    if (c->cb->closed)
        c->cb->closed(c, 0, c->user);
    if (!c->dead)
        try_free(c);
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

/* ------------------------------------------------------------------ ARP */

static struct arp_ent *arp_find(struct vfw_tcp_stack *s, uint32_t ip)
{
    for (int i = 0; i < ARP_CACHE; i++)
        if (s->arp[i].state && s->arp[i].ip == ip)
            return &s->arp[i];
    return NULL;
}

static struct arp_ent *arp_slot(struct vfw_tcp_stack *s, uint32_t ip)
{
    struct arp_ent *e = arp_find(s, ip), *old = NULL;
    if (e)
        return e;
    for (int i = 0; i < ARP_CACHE; i++) {
        if (!s->arp[i].state)
            return &s->arp[i];
        if (!old || s->arp[i].stamp < old->stamp)
            old = &s->arp[i];
    }
    return old;
}

/* Make sure a pending entry exists for ip (resolution in progress). */
static void arp_want(struct vfw_tcp_stack *s, uint32_t ip)
{
    struct arp_ent *a = arp_find(s, ip);
    if (!a || a->state != 1) {
        if (a && a->state == 2)
            return;
        a = arp_slot(s, ip);
        a->ip = ip;
        a->state = 1;
        a->stamp = now(s);
    }
}

static void arp_learned(struct vfw_tcp_stack *s, uint32_t ip)
{
    struct arp_ent *e = arp_find(s, ip);
    for (struct vfw_tcp_conn *c = s->conns; c; c = c->lnext) {
        if (c->arp_wait && c->rip == ip && !c->dead) {
            memcpy(c->rmac, e->mac, 6);
            c->arp_wait = false;
            send_syn(c);
            c->t_rtx = rtx_deadline(c);
        }
    }
}

/* Record ip -> mac as valid now and start the SYNs waiting for it. */
static void neigh_learn(struct vfw_tcp_stack *s, uint32_t ip,
                        const uint8_t *mac)
{
    struct arp_ent *e = arp_slot(s, ip);
    e->ip = ip;
    memcpy(e->mac, mac, 6);
    e->state = 2;
    e->stamp = now(s);
    arp_learned(s, ip);
}

static void arp_input(struct vfw_tcp_stack *s, const uint8_t *f, size_t len)
{
    if (len < VFW_ETH_HLEN + VFW_ARP_LEN) {
        s->st.malformed++;
        return;
    }
    const uint8_t *a = f + VFW_ETH_HLEN;
    if (vfw_get16(a) != 1 || vfw_get16(a + 2) != VFW_ETH_P_IP || a[4] != 6 ||
        a[5] != 4) {
        s->st.malformed++;
        return;
    }
    s->st.arp_in++;
    uint16_t op = vfw_get16(a + 6);
    const uint8_t *sha = a + 8;
    uint32_t spa = vfw_get32(a + 14);
    uint32_t tpa = vfw_get32(a + 24);
    if (sha[0] & 1 || is_bcast_or_mcast_ip(spa) || spa == s->cfg.ip)
        return;
    struct arp_ent *e = arp_find(s, spa);
    bool learn = false;
    if (s->arp_passive) {
        /* The netdev answers; we only listen: learn whoever talks ARP to
         * our address, and keep entries we have up to date. */
        if (tpa == s->cfg.ip && !e)
            e = arp_slot(s, spa);
        learn = e != NULL;
    } else if (op == 1 && tpa == s->cfg.ip) {
        /* Request for us: learn the requester (RFC 826) and reply. */
        if (!e)
            e = arp_slot(s, spa);
        learn = true;
        arp_send(s, 2, sha, sha, spa);
    } else if (op == 2 && e) {
        learn = true;       /* only update entries we already have/asked */
    }
    if (learn) {
        bool was_pending = e->state == 1;
        e->ip = spa;
        memcpy(e->mac, sha, 6);
        e->state = 2;
        e->stamp = now(s);
        if (was_pending || op == 2 || s->arp_passive)
            arp_learned(s, spa);
    }
}

/* --------------------------------------------------------- TCP input */

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
        send_raw(s, g->smac, g->sip, g->dport, g->sport, g->ack, 0,
                 VFW_TH_RST, 0, NULL, 0, NULL, 0);
    } else {
        uint32_t sl = g->len + ((g->flags & VFW_TH_SYN) ? 1 : 0) +
                      ((g->flags & VFW_TH_FIN) ? 1 : 0);
        send_raw(s, g->smac, g->sip, g->dport, g->sport, 0, g->seq + sl,
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
            mss = vfw_get16(g->opt + i + 2);
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
    uint32_t dend = data_end(c);
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
        send_ack(c);
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
            rtt_sample(c, now(c->s) - c->rtt_start);
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
                send_data_seg(c, c->snd_una, c->mss, &idx);
                c->cwnd = c->cwnd > acked ? c->cwnd - acked : 0;
                if (acked >= c->mss)
                    c->cwnd += c->mss;
                if (c->cwnd < c->mss)
                    c->cwnd = c->mss;
                c->t_rtx = rtx_deadline(c);
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
            c->t_rtx = rtx_deadline(c);
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
            send_data_seg(c, c->snd_una, c->mss, &idx);
            c->rtt_active = false;
            c->cwnd = c->ssthresh + 3u * c->mss;
            c->t_rtx = rtx_deadline(c);
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
    c->t_misc = now(c->s) + c->s->tun.time_wait_ns;
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
                c->t_delack = now(c->s) + c->s->tun.delack_ns;
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
            rtt_sample(c, now(c->s) - c->rtt_start);
    }
    init_cc(c);
}

/* Finish segment processing: deliver, notify, transmit, acknowledge. */
static void after_segment(struct vfw_tcp_conn *c, bool newdata)
{
    if (!c->dead && newdata)
        deliver(c);
    if (!c->dead)
        maybe_eof(c);
    if (!c->dead)
        maybe_writable(c);
    if (!c->dead)
        tcp_output(c);
    if (!c->dead && c->ack_now && synchronized(c))
        send_ack(c);
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
                conn_fail(c, -ECONNREFUSED);
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
            send_ack(c);
            if (c->cb->connected)
                c->cb->connected(c, 0, c->user);
            if (!c->dead)
                after_segment(c, false);
        } else {
            /* Simultaneous open. */
            c->state = ST_SYN_RCVD;
            send_syn(c);
            c->t_rtx = rtx_deadline(c);
        }
        return;
    }

    if (c->state == ST_SYN_RCVD && (g->flags & VFW_TH_SYN) &&
        !(g->flags & VFW_TH_ACK) && g->seq == c->irs) {
        send_syn(c);                 /* peer retransmitted its SYN */
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
                c->t_misc = now(s) + s->tun.time_wait_ns;
            send_ack(c);
        }
        return;
    }
    /* 2. RST (RFC 5961 sec. 3). */
    if (g->flags & VFW_TH_RST) {
        if (g->seq != c->rcv_nxt) {
            send_ack(c);             /* challenge ACK */
            return;
        }
        conn_fail(c, -ECONNRESET);
        return;
    }
    /* 3. SYN in a synchronized state: challenge ACK (RFC 5961 sec. 4). */
    if (g->flags & VFW_TH_SYN) {
        send_ack(c);
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
        c->snd_una = g->ack;
        established(c, g);
        if (!c->passive) {
            /* Simultaneous open completes an active open. */
            if (c->cb->connected)
                c->cb->connected(c, 0, c->user);
        } else {
            struct listener *l = find_listener(s, c->lport);
            const struct vfw_tcp_cb *cb = NULL;
            void *cu = NULL;
            if (l)
                cb = l->accept(c, l->user, &cu);
            if (c->dead)
                return;
            if (!cb) {
                send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_nxt,
                         0, VFW_TH_RST, 0, NULL, 0, c, 0);
                c->state = ST_CLOSED;
                try_free(c);
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
            c->state = ST_FIN_WAIT_2, c->t_misc = now(s) + s->tun.fin_wait2_ns;
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
                try_free(c);
            return;
        }
        break;
    case ST_TIME_WAIT:
        if (g->flags & VFW_TH_FIN) {
            c->t_misc = now(s) + s->tun.time_wait_ns;
            send_ack(c);
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
    struct vfw_tcp_conn *c = conn_new(s, g->sip, g->sport, g->dport);
    if (!c) {
        send_rst_for(s, g);
        return;
    }
    (void)l;
    c->passive = true;
    memcpy(c->rmac, g->smac, 6);
    if (s->arp_passive)
        neigh_learn(s, g->sip, g->smac);
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
    send_syn(c);
    c->rtt_active = true;
    c->rtt_seq = c->snd_nxt;
    c->rtt_start = now(s);
    c->t_rtx = rtx_deadline(c);
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
    g.sip = vfw_get32(ip + 12);
    uint64_t sum = vfw_csum_pseudo(g.sip, vfw_get32(ip + 16), 6,
                                   (uint16_t)tlen);
    if (vfw_csum_fold(vfw_csum_partial(th, tlen, sum)) != 0xffff) {
        s->st.bad_csum++;
        return;
    }
    s->st.segs_in++;
    g.smac = f + 6;
    g.sport = vfw_get16(th);
    g.dport = vfw_get16(th + 2);
    g.seq = vfw_get32(th + 4);
    g.ack = vfw_get32(th + 8);
    g.flags = th[13] & 0x3f;
    g.wnd = vfw_get16(th + 14);
    g.opt = th + VFW_TCP_HLEN;
    g.optlen = thl - VFW_TCP_HLEN;
    g.data = th + thl;
    g.len = (uint32_t)(tlen - thl);
    if (!g.sport || !g.dport || is_bcast_or_mcast_ip(g.sip) ||
        (g.smac[0] & 1)) {
        s->st.malformed++;
        return;
    }
    if ((g.flags & VFW_TH_SYN) && (g.flags & VFW_TH_FIN)) {
        s->st.malformed++;
        return;
    }
    struct vfw_tcp_conn *c = conn_lookup(s, g.sip, g.sport, g.dport);
    /* a conn answers only at the address it started with; after
     * vfw_tcp_set_addr moved the stack, frames to an old address reach
     * only the conns that still use it */
    if (c && (c->lip != vfw_get32(ip + 16) || memcmp(c->lmac, f, 6)))
        c = NULL;
    if (!cur && !c)
        return;
    if (c && c->state == ST_TIME_WAIT && (g.flags & VFW_TH_SYN) &&
        !(g.flags & (VFW_TH_ACK | VFW_TH_RST)) &&
        VFW_SEQ_GT(g.seq, c->rcv_nxt) && !c->user_owned) {
        conn_free(c);                    /* new incarnation (RFC 6191-ish) */
        c = NULL;
    }
    if (c && c->state != ST_CLOSED) {
        conn_input(c, &g);
        return;
    }
    struct listener *l = find_listener(s, g.dport);
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
    size_t tot = vfw_get16(ip + 2);
    if ((ip[0] >> 4) != 4 || ihl < VFW_IP_HLEN || tot < ihl || tot > avail) {
        s->st.malformed++;
        return;
    }
    if (vfw_csum_fold(vfw_csum_partial(ip, ihl, 0)) != 0xffff) {
        s->st.bad_csum++;
        return;
    }
    bool cur = to_us && vfw_get32(ip + 16) == s->cfg.ip;
    if (!cur && !s->addr_moved)
        return;
    if (vfw_get16(ip + 6) & 0x3fff) {     /* MF or fragment offset */
        s->st.ip_frags++;
        return;
    }
    if (ip[9] != 6)
        return;
    tcp_input(s, f, ip, ihl, tot, cur);
}

/* ------------------------------------------------------------------ API */

struct vfw_tcp_stack *vfw_tcp_stack_new(const struct vfw_tcp_env *env,
                                        const struct vfw_tcp_config *cfg)
{
    if (!env || !cfg || !env->frame_out || !env->now_ns)
        return NULL;
    if (cfg->mtu < 576 || cfg->mtu > 9216 || !cfg->max_conns ||
        cfg->max_conns > 65536 || cfg->rcv_buf < 1024 ||
        cfg->rcv_buf > (1u << 30) || cfg->snd_buf < 1024 ||
        cfg->snd_buf > (1u << 30) || is_bcast_or_mcast_ip(cfg->ip) ||
        (cfg->mac[0] & 1))
        return NULL;
    struct vfw_tcp_stack *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->env = *env;
    s->cfg = *cfg;
    s->mss_local = (uint16_t)(cfg->mtu - VFW_IP_HLEN - VFW_TCP_HLEN);
    s->tx_size = VFW_ETH_HLEN + cfg->mtu + 64;
    s->tx = calloc(1, s->tx_size);
    uint32_t nb = 16;
    while (nb < cfg->max_conns * 2 && nb < (1u << 16))
        nb <<= 1;
    s->hash = calloc(nb, sizeof(*s->hash));
    s->hmask = nb - 1;
    if (!s->tx || !s->hash) {
        free(s->tx);
        free(s->hash);
        free(s);
        return NULL;
    }
    struct vfw_tcp_tunables *t = &s->tun;
    t->time_wait_ns = 1 * NS_PER_S;
    t->fin_wait2_ns = 30 * NS_PER_S;
    t->rto_init_ns = 1 * NS_PER_S;
    t->rto_min_ns = 200 * NS_PER_MS;
    t->rto_max_ns = 60 * NS_PER_S;
    t->delack_ns = 40 * NS_PER_MS;
    t->syn_retries = 5;
    t->data_retries = 8;
    t->ooo_max_ranges = 16;
    t->wscale = 1;
    uint64_t m = 0;
    for (int i = 0; i < 6; i++)
        m = (m << 8) | cfg->mac[i];
    t->isn_secret = mix64(m ^ ((uint64_t)cfg->ip << 16) ^ now(s));
    s->eph_next = (uint16_t)(mix64(t->isn_secret) % EPH_N);
    return s;
}

void vfw_tcp_stack_free(struct vfw_tcp_stack *s)
{
    if (!s)
        return;
    while (s->conns) {
        struct vfw_tcp_conn *c = s->conns;
        s->conns = c->lnext;
        conn_release(c);
    }
    while (s->zombies) {
        struct vfw_tcp_conn *c = s->zombies;
        s->zombies = c->lnext;
        conn_release(c);
    }
    free(s->hash);
    free(s->tx);
    free(s);
}

void vfw_tcp_get_tunables(const struct vfw_tcp_stack *s,
                          struct vfw_tcp_tunables *t)
{
    *t = s->tun;
}

int vfw_tcp_set_tunables(struct vfw_tcp_stack *s,
                         const struct vfw_tcp_tunables *t)
{
    if (!t->rto_min_ns || t->rto_min_ns > t->rto_max_ns ||
        t->rto_init_ns < t->rto_min_ns || t->rto_init_ns > t->rto_max_ns ||
        t->rto_max_ns > 3600 * NS_PER_S || !t->time_wait_ns ||
        t->time_wait_ns > 600 * NS_PER_S || !t->fin_wait2_ns ||
        t->fin_wait2_ns > 3600 * NS_PER_S || t->delack_ns > NS_PER_S ||
        t->syn_retries > 32 || t->data_retries > 32 ||
        !t->ooo_max_ranges || t->ooo_max_ranges > MAX_OOO || t->wscale > 1)
        return -EINVAL;
    s->tun = *t;
    return 0;
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
    uint16_t type = vfw_get16(frame + 12);
    stack_enter(s);
    if (type == VFW_ETH_P_ARP && (to_us || to_bc))
        arp_input(s, frame, len);
    else if (type == VFW_ETH_P_IP && (to_us || s->addr_moved))
        ip_input(s, frame, len, to_us);
    stack_leave(s);
}

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
                maybe_eof(c);
            }
            if (!c->dead)
                try_free(c);
            return;
        }
        if (c->state == ST_FIN_WAIT_2) {
            s->st.timeouts++;
            send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_max, 0,
                     VFW_TH_RST, 0, NULL, 0, c, 0);
            conn_fail(c, -ETIMEDOUT);
            return;
        }
    }
    if (c->t_delack && t >= c->t_delack) {
        c->t_delack = 0;
        if (synchronized(c))
            send_ack(c);
    }
    if (!c->t_rtx || t < c->t_rtx)
        return;
    c->t_rtx = 0;
    if (c->persist) {
        /* Zero-window probe: an old sequence number elicits an ACK; if the
         * window is open but smaller than the next record, send what fits. */
        if (c->snd_wnd && VFW_SEQ_LT(c->snd_nxt, data_end(c))) {
            c->persist = false;
            uint32_t sent = send_data_seg(c, c->snd_nxt, c->snd_wnd,
                                          &c->rec_nxt);
            c->snd_nxt += sent;
            if (VFW_SEQ_GT(c->snd_nxt, c->snd_max))
                c->snd_max = c->snd_nxt;
            c->t_rtx = rtx_deadline(c);
            return;
        }
        send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_una - 1,
                 c->rcv_nxt, VFW_TH_ACK, rcv_window(c, false), NULL, 0,
                 c, 0);
        c->rto = c->rto * 2 > s->tun.rto_max_ns ? s->tun.rto_max_ns
                                                : c->rto * 2;
        c->t_rtx = rtx_deadline(c);
        return;
    }
    uint32_t limit = (c->state == ST_SYN_SENT || c->state == ST_SYN_RCVD) ?
                     s->tun.syn_retries : s->tun.data_retries;
    if (++c->retries > limit) {
        s->st.timeouts++;
        if (c->state == ST_SYN_RCVD && c->passive) {
            c->state = ST_CLOSED;
            try_free(c);
            return;
        }
        if (synchronized(c))
            send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_max, 0,
                     VFW_TH_RST, 0, NULL, 0, c, 0);
        conn_fail(c, (c->state == ST_SYN_SENT && c->arp_wait) ?
                  -EHOSTUNREACH : -ETIMEDOUT);
        return;
    }
    c->rto = c->rto * 2 > s->tun.rto_max_ns ? s->tun.rto_max_ns : c->rto * 2;
    c->rtt_active = false;
    if (c->state == ST_SYN_SENT) {
        if (c->arp_wait) {
            arp_want(s, c->rip);
            arp_send(s, 1, NULL, NULL, c->rip);
        }
        else
            send_syn(c);
        c->t_rtx = rtx_deadline(c);
        return;
    }
    if (c->state == ST_SYN_RCVD) {
        send_syn(c);
        c->t_rtx = rtx_deadline(c);
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
    tcp_output(c);
    c->snd_wnd = save_wnd;
    if (!c->t_rtx && c->snd_una != c->snd_max)
        c->t_rtx = rtx_deadline(c);
}

void vfw_tcp_poll(struct vfw_tcp_stack *s)
{
    uint64_t t = now(s);
    stack_enter(s);
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
    stack_leave(s);
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

int vfw_tcp_listen(struct vfw_tcp_stack *s, uint16_t port,
                   vfw_tcp_accept_fn accept, void *listen_user)
{
    if (!port || !accept)
        return -EINVAL;
    if (find_listener(s, port))
        return -EADDRINUSE;
    if (s->nlis >= MAX_LISTEN)
        return -ENOSPC;
    s->lis[s->nlis].port = port;
    s->lis[s->nlis].accept = accept;
    s->lis[s->nlis].user = listen_user;
    s->nlis++;
    return 0;
}

void vfw_tcp_unlisten(struct vfw_tcp_stack *s, uint16_t port)
{
    for (unsigned i = 0; i < s->nlis; i++) {
        if (s->lis[i].port == port) {
            s->lis[i] = s->lis[--s->nlis];
            return;
        }
    }
}

struct vfw_tcp_conn *vfw_tcp_connect(struct vfw_tcp_stack *s, uint32_t rip,
                                     uint16_t rport, uint16_t lport,
                                     const struct vfw_tcp_cb *cb, void *user,
                                     int *err)
{
    return vfw_tcp_connect_tos(s, rip, rport, lport, 0, cb, user, err);
}

void vfw_tcp_set_tos(struct vfw_tcp_conn *c, uint8_t tos)
{
    if (c)
        c->tos = tos & 0xfc;                  /* ECN bits are not ours */
}

struct vfw_tcp_conn *vfw_tcp_connect_tos(struct vfw_tcp_stack *s, uint32_t rip,
                                         uint16_t rport, uint16_t lport,
                                         uint8_t tos,
                                         const struct vfw_tcp_cb *cb,
                                         void *user, int *err)
{
    int e = 0;
    struct vfw_tcp_conn *c = NULL;
    stack_enter(s);
    if (!cb || !rport || is_bcast_or_mcast_ip(rip) || rip == s->cfg.ip) {
        e = -EINVAL;
        goto out;
    }
    if (lport) {
        if (conn_lookup(s, rip, rport, lport) || find_listener(s, lport)) {
            e = -EADDRINUSE;
            goto out;
        }
    } else {
        for (uint32_t i = 0; i < EPH_N; i++) {
            uint16_t p = (uint16_t)(EPH_LO + (s->eph_next++ % EPH_N));
            if (!lport_in_use(s, p)) {
                lport = p;
                break;
            }
        }
        if (!lport) {
            e = -EADDRINUSE;
            goto out;
        }
    }
    if (s->arp_passive) {
        /* no ARP of our own: the next hop must be known already */
        const struct arp_ent *a = arp_find(s, rip);
        if (!a || a->state != 2) {
            e = -EHOSTUNREACH;
            goto out;
        }
    }
    c = conn_new(s, rip, rport, lport);
    if (!c) {
        e = -ENOBUFS;
        goto out;
    }
    c->cb = cb;
    c->user = user;
    c->user_owned = true;
    c->tos = tos & 0xfc;
    c->state = ST_SYN_SENT;
    c->mss = s->mss_local;
    c->snd_una = c->iss;
    c->snd_nxt = c->iss + 1;
    c->snd_max = c->snd_nxt;
    c->snd_end = c->snd_nxt;
    c->recover = c->iss;
    c->rtt_active = true;
    c->rtt_seq = c->snd_nxt;
    c->rtt_start = now(s);
    struct arp_ent *a = arp_find(s, rip);
    /* passive: entries do not age (we cannot re-resolve; the driver keeps
     * them current with vfw_tcp_neigh_set) */
    if (a && a->state == 2 &&
        (s->arp_passive || now(s) - a->stamp < ARP_TTL_NS)) {
        memcpy(c->rmac, a->mac, 6);
        send_syn(c);
    } else {
        bool pending = a && a->state == 1;
        if (a && a->state == 2)
            a->state = 1;               /* stale: resolve again */
        arp_want(s, rip);
        c->arp_wait = true;
        if (!pending)                   /* one request per resolution */
            arp_send(s, 1, NULL, NULL, rip);
    }
    c->t_rtx = rtx_deadline(c);
out:
    stack_leave(s);
    if (err)
        *err = e;
    return c;
}

/* `len` bytes just written at the send buffer's tail form one record
 * (one FPDU): account them, remember the record end, and send. */
static void commit_record(struct vfw_tcp_conn *c, size_t len)
{
    struct vfw_tcp_stack *s = c->s;

    c->sbuf_len += (uint32_t)len;
    c->snd_end += (uint32_t)len;
    c->rec[(c->rec_head + c->rec_cnt) % c->rec_cap] = c->snd_end;
    c->rec_cnt++;
    stack_enter(s);
    tcp_output(c);
    stack_leave(s);
}

int vfw_tcp_send_record(struct vfw_tcp_conn *c, const uint8_t *data,
                        size_t len)
{
    if (c->dead || !(c->state == ST_ESTABLISHED ||
                     c->state == ST_CLOSE_WAIT) || c->fin_queued)
        return -ENOTCONN;
    if (len > c->mss)
        return -EMSGSIZE;
    if (!len)
        return 0;
    if (c->sbuf_size - c->sbuf_len < len || c->rec_cnt >= c->rec_cap) {
        c->want_writable = true;
        return -EAGAIN;
    }
    uint32_t off = (c->sbuf_head + c->sbuf_len) % c->sbuf_size;
    uint32_t first = c->sbuf_size - off;
    if (first > len)
        first = (uint32_t)len;
    memcpy(c->sbuf + off, data, first);
    memcpy(c->sbuf, data + first, len - first);
    commit_record(c, len);
    return 0;
}

uint8_t *vfw_tcp_send_reserve(struct vfw_tcp_conn *c, size_t len)
{
    if (c->dead || !(c->state == ST_ESTABLISHED ||
                     c->state == ST_CLOSE_WAIT) || c->fin_queued ||
        !len || len > c->mss || c->sbuf_size - c->sbuf_len < len ||
        c->rec_cnt >= c->rec_cap)
        return NULL;
    uint32_t off = (c->sbuf_head + c->sbuf_len) % c->sbuf_size;
    if (c->sbuf_size - off < len)
        return NULL;                    /* would wrap: copy path */
    return c->sbuf + off;
}

int vfw_tcp_send_commit(struct vfw_tcp_conn *c, size_t len)
{
    if (c->dead || !(c->state == ST_ESTABLISHED ||
                     c->state == ST_CLOSE_WAIT) || c->fin_queued)
        return -ENOTCONN;
    if (len > c->mss || c->sbuf_size - c->sbuf_len < len ||
        c->rec_cnt >= c->rec_cap)
        return -EINVAL;
    if (!len)
        return 0;
    commit_record(c, len);
    return 0;
}

size_t vfw_tcp_send_space(const struct vfw_tcp_conn *c)
{
    if (c->dead || !(c->state == ST_ESTABLISHED ||
                     c->state == ST_CLOSE_WAIT) || c->fin_queued ||
        c->rec_cnt >= c->rec_cap)
        return 0;
    return c->sbuf_size - c->sbuf_len;
}

uint16_t vfw_tcp_mss(const struct vfw_tcp_conn *c)
{
    return c->mss;
}

void vfw_tcp_recv_resume(struct vfw_tcp_conn *c)
{
    struct vfw_tcp_stack *s = c->s;
    stack_enter(s);
    deliver(c);
    if (!c->dead && c->ack_now && synchronized(c) &&
        c->state != ST_TIME_WAIT)
        send_ack(c);
    stack_leave(s);
}

void vfw_tcp_close(struct vfw_tcp_conn *c)
{
    struct vfw_tcp_stack *s = c->s;
    if (c->dead)
        return;
    stack_enter(s);
    switch (c->state) {
    case ST_ESTABLISHED:
        c->user_closed = true;
        c->fin_queued = true;
        c->state = ST_FIN_WAIT_1;
        tcp_output(c);
        break;
    case ST_CLOSE_WAIT:
        c->user_closed = true;
        c->fin_queued = true;
        c->state = ST_LAST_ACK;
        if (c->closed_delivered)
            c->user_owned = false;
        tcp_output(c);
        break;
    case ST_CLOSED:
    case ST_SYN_SENT:
    case ST_SYN_RCVD:
        if (c->state == ST_SYN_RCVD)
            send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_nxt, 0,
                     VFW_TH_RST, 0, NULL, 0, c, 0);
        c->user_owned = false;
        c->state = ST_CLOSED;
        conn_free(c);
        break;
    default:
        /* Already closing (FIN_WAIT_*, CLOSING, LAST_ACK, TIME_WAIT). */
        c->user_closed = true;
        if (c->closed_delivered)
            c->user_owned = false;
        try_free(c);
        break;
    }
    stack_leave(s);
}

void vfw_tcp_abort(struct vfw_tcp_conn *c)
{
    struct vfw_tcp_stack *s = c->s;
    if (c->dead)
        return;
    stack_enter(s);
    if (synchronized(c) && c->state != ST_TIME_WAIT)
        send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_max, 0,
                 VFW_TH_RST, 0, NULL, 0, c, 0);
    c->user_owned = false;
    c->state = ST_CLOSED;
    conn_free(c);
    stack_leave(s);
}

void vfw_tcp_conn_addr(const struct vfw_tcp_conn *c, uint32_t *lip,
                       uint16_t *lport, uint32_t *rip, uint16_t *rport)
{
    if (lip)
        *lip = c->lip;
    if (lport)
        *lport = c->lport;
    if (rip)
        *rip = c->rip;
    if (rport)
        *rport = c->rport;
}

void vfw_tcp_stats(const struct vfw_tcp_stack *s, struct vfw_tcp_stats *st)
{
    *st = s->st;
}

uint32_t vfw_tcp_active_conns(const struct vfw_tcp_stack *s)
{
    uint32_t n = 0;

    for (const struct vfw_tcp_conn *c = s->conns; c; c = c->lnext) {
        if (c->state != ST_TIME_WAIT && c->state != ST_CLOSED)
            n++;
    }
    return n;
}

/* ------------------------------------------- sharing with a netdev (2.0) */

void vfw_tcp_set_arp_passive(struct vfw_tcp_stack *s, int on)
{
    if (s)
        s->arp_passive = on != 0;
}

int vfw_tcp_neigh_set(struct vfw_tcp_stack *s, uint32_t ip,
                      const uint8_t mac[6])
{
    static const uint8_t zero[6];
    if (!s || !mac || is_bcast_or_mcast_ip(ip) || ip == s->cfg.ip ||
        (mac[0] & 1) || memcmp(mac, zero, 6) == 0)
        return -EINVAL;
    stack_enter(s);
    neigh_learn(s, ip, mac);      /* may send the SYNs waiting for it */
    stack_leave(s);
    return 0;
}

int vfw_tcp_set_addr(struct vfw_tcp_stack *s, const uint8_t mac[6],
                     uint32_t ip, uint16_t mtu)
{
    if (!s || !mac || mtu < 576 || mtu > 9216 || is_bcast_or_mcast_ip(ip) ||
        (mac[0] & 1))
        return -EINVAL;
    /* the frame buffer only grows: live conns keep their (older) MSS */
    size_t need = VFW_ETH_HLEN + (size_t)mtu + 64;
    if (need > s->tx_size) {
        uint8_t *tx = calloc(1, need);
        if (!tx)
            return -ENOMEM;
        free(s->tx);
        s->tx = tx;
        s->tx_size = need;
    }
    if (memcmp(s->cfg.mac, mac, 6) || s->cfg.ip != ip)
        s->addr_moved = s->nconns != 0 || s->addr_moved;
    memcpy(s->cfg.mac, mac, 6);
    s->cfg.ip = ip;
    s->cfg.mtu = mtu;
    s->mss_local = (uint16_t)(mtu - VFW_IP_HLEN - VFW_TCP_HLEN);
    return 0;
}

/*
 * Steering decision for the device: an untagged IPv4/TCP frame to our MAC
 * and IP for one of our listeners or connections (TIME_WAIT included), or
 * to the old address of a conn that started before vfw_tcp_set_addr. Reads
 * at most the Ethernet, IP and the first 4 TCP header bytes, each only
 * after checking len; no checksum (the stack checks on input). A first
 * fragment whose ports match is ours too (the stack drops it) so the guest
 * never sees a segment of an offloaded connection.
 */
int vfw_tcp_wants(const struct vfw_tcp_stack *s, const uint8_t *frame,
                  size_t len)
{
    if (!s || !frame || len < VFW_ETH_HLEN + VFW_IP_HLEN)
        return 0;
    if (vfw_get16(frame + 12) != VFW_ETH_P_IP || (frame[0] & 1))
        return 0;
    const uint8_t *ip = frame + VFW_ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0xf) * 4;
    if ((ip[0] >> 4) != 4 || ihl < VFW_IP_HLEN || ip[9] != 6 ||
        len < VFW_ETH_HLEN + ihl + 4 || (vfw_get16(ip + 6) & 0x1fff))
        return 0;
    uint32_t sip = vfw_get32(ip + 12), dip = vfw_get32(ip + 16);
    const uint8_t *th = ip + ihl;
    uint16_t sport = vfw_get16(th), dport = vfw_get16(th + 2);
    bool cur = dip == s->cfg.ip && memcmp(frame, s->cfg.mac, 6) == 0;
    if (!cur && !s->addr_moved)
        return 0;
    struct vfw_tcp_stack *ms = (struct vfw_tcp_stack *)s; /* lookup only */
    const struct vfw_tcp_conn *c = conn_lookup(ms, sip, sport, dport);
    if (c && c->lip == dip && memcmp(c->lmac, frame, 6) == 0)
        return 1;
    return cur && find_listener(ms, dport) != NULL;
}
