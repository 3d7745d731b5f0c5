/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_api.c - the adapter's offloaded TCP/IPv4 stack (the TOE), see
 * vfw_tcp.h: the stack object and its tunables, listen, connect, send,
 * receive resume, close and abort, addresses and counters.
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
 * The stack's files and what they share: tcp_internal.h. Frames in and
 * vfw_tcp_wants: tcp_input.c; vfw_tcp_poll: tcp_timer.c; the neighbour
 * calls: tcp_arp.c.
 *
 * Trust and bounds: the caller is the device (the engine, on a guest's
 * behalf), so every argument is checked: configs and tunables against
 * fixed ranges (MTU 576..9216, buffers 1 KiB..1 GiB, max_conns <= 65536,
 * RTOs <= 1 h), ports and addresses (no broadcast/multicast peer, not our
 * own IP), records whole and <= mss. At most MAX_LISTEN listeners; an
 * ephemeral port search tries each of the EPH_N ports at most once.
 *
 * Re-entrancy: upcalls may call send/close/abort/recv_resume; each entry
 * point that can reach an upcall brackets itself with toe_stack_enter /
 * toe_stack_leave (tcp_conn.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_internal.h"

#define EPH_LO         49152u
#define EPH_N          16384u

struct vfw_tcp_stack *vfw_tcp_stack_new(const struct vfw_tcp_env *env,
                                        const struct vfw_tcp_config *cfg)
{
    if (!env || !cfg || !env->frame_out || !env->now_ns)
        return NULL;
    if (cfg->mtu < 576 || cfg->mtu > 9216 || !cfg->max_conns ||
        cfg->max_conns > 65536 || cfg->rcv_buf < 1024 ||
        cfg->rcv_buf > (1u << 30) || cfg->snd_buf < 1024 ||
        cfg->snd_buf > (1u << 30) || toe_is_bcast_or_mcast_ip(cfg->ip) ||
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
    t->isn_secret = toe_mix64(m ^ ((uint64_t)cfg->ip << 16) ^ toe_now(s));
    s->eph_next = (uint16_t)(toe_mix64(t->isn_secret) % EPH_N);
    return s;
}

void vfw_tcp_stack_free(struct vfw_tcp_stack *s)
{
    if (!s)
        return;
    while (s->conns) {
        struct vfw_tcp_conn *c = s->conns;
        s->conns = c->lnext;
        toe_conn_release(c);
    }
    while (s->zombies) {
        struct vfw_tcp_conn *c = s->zombies;
        s->zombies = c->lnext;
        toe_conn_release(c);
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

int vfw_tcp_listen(struct vfw_tcp_stack *s, uint16_t port,
                   vfw_tcp_accept_fn accept, void *listen_user)
{
    return vfw_tcp_listen_backlog(s, port, VFW_TCP_DEF_BACKLOG, accept,
                                  listen_user);
}

int vfw_tcp_listen_backlog(struct vfw_tcp_stack *s, uint16_t port,
                           uint32_t backlog, vfw_tcp_accept_fn accept,
                           void *listen_user)
{
    if (!port || !accept || !backlog || backlog > 65536)
        return -EINVAL;
    if (toe_find_listener(s, port))
        return -EADDRINUSE;
    if (s->nlis >= MAX_LISTEN)
        return -ENOSPC;
    struct listener *l = &s->lis[s->nlis];
    memset(l, 0, sizeof(*l));
    l->port = port;
    l->backlog = backlog;
    l->accept = accept;
    l->user = listen_user;
    s->nlis++;
    return 0;
}

void vfw_tcp_unlisten(struct vfw_tcp_stack *s, uint16_t port)
{
    unsigned i = 0;
    while (i < s->nlis && s->lis[i].port != port)
        i++;
    if (i == s->nlis)
        return;
    /* Its half-open conns go with it: nobody could accept them (the
     * peer's ACK gets a RST either way) and they count against this
     * listener only. One walk of the FIFO, each conn at most once;
     * freeing a half-open conn makes no upcall, so lis[i] stays put. */
    toe_stack_enter(s);
    struct vfw_tcp_conn *c = s->syn_head;
    while (c) {
        struct vfw_tcp_conn *next = c->snext;
        if (c->lport == port)
            toe_conn_free(c);
        c = next;
    }
    s->lis[i] = s->lis[--s->nlis];
    toe_stack_leave(s);
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
    toe_stack_enter(s);
    if (!cb || !rport || toe_is_bcast_or_mcast_ip(rip) || rip == s->cfg.ip) {
        e = -EINVAL;
        goto out;
    }
    if (lport) {
        if (toe_conn_lookup(s, rip, rport, lport) ||
            toe_find_listener(s, lport)) {
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
        const struct arp_ent *a = toe_arp_find(s, rip);
        if (!a || a->state != 2) {
            e = -EHOSTUNREACH;
            goto out;
        }
    }
    c = toe_conn_new(s, rip, rport, lport, true);
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
    c->rtt_start = toe_now(s);
    struct arp_ent *a = toe_arp_find(s, rip);
    /* passive: entries do not age (we cannot re-resolve; the driver keeps
     * them current with vfw_tcp_neigh_set) */
    if (a && a->state == 2 &&
        (s->arp_passive || toe_now(s) - a->stamp < ARP_TTL_NS)) {
        memcpy(c->rmac, a->mac, 6);
        toe_send_syn(c);
    } else {
        bool pending = a && a->state == 1;
        if (a && a->state == 2)
            a->state = 1;               /* stale: resolve again */
        toe_arp_want(s, rip);
        c->arp_wait = true;
        if (!pending)                   /* one request per resolution */
            toe_arp_send(s, 1, NULL, NULL, rip);
    }
    c->t_rtx = toe_rtx_deadline(c);
out:
    toe_stack_leave(s);
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
    toe_stack_enter(s);
    toe_output(c);
    toe_stack_leave(s);
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
    toe_stack_enter(s);
    toe_deliver(c);
    if (!c->dead && c->ack_now && toe_synchronized(c) &&
        c->state != ST_TIME_WAIT)
        toe_send_ack(c);
    toe_stack_leave(s);
}

void vfw_tcp_close(struct vfw_tcp_conn *c)
{
    struct vfw_tcp_stack *s = c->s;
    if (c->dead)
        return;
    toe_stack_enter(s);
    switch (c->state) {
    case ST_ESTABLISHED:
        c->user_closed = true;
        c->fin_queued = true;
        c->state = ST_FIN_WAIT_1;
        toe_output(c);
        break;
    case ST_CLOSE_WAIT:
        c->user_closed = true;
        c->fin_queued = true;
        c->state = ST_LAST_ACK;
        if (c->closed_delivered)
            c->user_owned = false;
        toe_output(c);
        break;
    case ST_CLOSED:
    case ST_SYN_SENT:
    case ST_SYN_RCVD:
        if (c->state == ST_SYN_RCVD)
            toe_send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_nxt, 0,
                         VFW_TH_RST, 0, NULL, 0, c, 0);
        c->user_owned = false;
        c->state = ST_CLOSED;
        toe_conn_free(c);
        break;
    default:
        /* Already closing (FIN_WAIT_*, CLOSING, LAST_ACK, TIME_WAIT). */
        c->user_closed = true;
        if (c->closed_delivered)
            c->user_owned = false;
        toe_try_free(c);
        break;
    }
    toe_stack_leave(s);
}

void vfw_tcp_abort(struct vfw_tcp_conn *c)
{
    struct vfw_tcp_stack *s = c->s;
    if (c->dead)
        return;
    toe_stack_enter(s);
    if (toe_synchronized(c) && c->state != ST_TIME_WAIT)
        toe_send_raw(s, c->rmac, c->rip, c->lport, c->rport, c->snd_max, 0,
                     VFW_TH_RST, 0, NULL, 0, c, 0);
    c->user_owned = false;
    c->state = ST_CLOSED;
    toe_conn_free(c);
    toe_stack_leave(s);
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
    st->half_open = s->nsyn;
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

int vfw_tcp_set_addr(struct vfw_tcp_stack *s, const uint8_t mac[6],
                     uint32_t ip, uint16_t mtu)
{
    if (!s || !mac || mtu < 576 || mtu > 9216 || toe_is_bcast_or_mcast_ip(ip) ||
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
