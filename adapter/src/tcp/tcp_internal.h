/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_internal.h - private state of the offloaded TCP/IPv4 stack (vfw_tcp.h),
 * shared by the tcp_*.c files only: the stack and connection structures,
 * the small helpers every file uses (inline here), and the functions one
 * file offers the others. A function not declared here is static to its
 * file. Shared names start with toe_ (the public API is vfw_tcp_*), never
 * tcp_: lwIP exports tcp_output, tcp_input and more, and the lwIP spike
 * (tools/spike_lwip.c) links both stacks into one program.
 *
 * The stack, split the way Linux splits its TCP:
 *   tcp_api.c     the stack object, tunables, listen/connect, send, close
 *   tcp_conn.c    connection table: allocation, lookup, free and zombies,
 *                 the upcalls that end a connection
 *   tcp_input.c   frames in: Ethernet/IPv4/TCP checks, the state machine on
 *                 receive, ACK processing and congestion control,
 *                 out-of-order ranges, delivery; vfw_tcp_wants
 *   tcp_output.c  segments out: build, checksum, transmit what the windows
 *                 allow, cut at record ends; the advertised window
 *   tcp_timer.c   retransmission, persist, delayed ACK, TIME_WAIT and
 *                 FIN_WAIT_2 timers
 *   tcp_arp.c     ARP and the neighbour cache
 *   tcp_wire.h    byte order, Internet checksum, header offsets (also used
 *                 by the tests and the fuzzer)
 *
 * Buffers: the send side is a byte ring plus a ring of record ends; segments
 * are always cut at record ends (first transmission and retransmission), so
 * every segment carries at most one FPDU. The receive side is a linear
 * buffer so in-order data is always offered to the recv upcall contiguously;
 * it is compacted when the consumed prefix grows.
 *
 * Bounds: every table has a fixed size (ARP_CACHE neighbours, MAX_LISTEN
 * listeners, MAX_OOO out-of-order ranges per connection, cfg.max_conns
 * connections). Memory is allocated only when the stack is made, when a
 * connection is made (struct only), when it is synchronized (snd_buf +
 * rcv_buf + a record ring, tcp_conn.c: at connect for an active open, at
 * the handshake's last ACK for a passive one) and when vfw_tcp_set_addr()
 * grows the transmit buffer; never per segment.
 *
 * Half-open connections (issue 33): a SYN to a listener costs the struct
 * only, and there are at most the listener's backlog of them; they sit in
 * one FIFO (syn_head..syn_tail, oldest first) so that a SYN beyond the
 * backlog, or any new conn at max_conns, drops the oldest half-open one
 * instead of being refused: a flood displaces only its own half-open
 * connections, and a real peer's SYN after the flood always gets in. An
 * established connection is never dropped for a SYN.
 */
#ifndef VFW_TCP_INTERNAL_H
#define VFW_TCP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vfw_tcp.h"
#include "tcp_wire.h"

#define NS_PER_MS      1000000ull
#define NS_PER_S       1000000000ull
#define ARP_CACHE      16
#define ARP_TTL_NS     (60 * NS_PER_S)
#define MAX_LISTEN     64
#define MAX_OOO        64

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
    uint32_t backlog;         /* most half-open conns at once */
    uint32_t nsyn;            /* half-open conns now (in the SYN FIFO) */
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
    struct vfw_tcp_conn *snext;   /* SYN FIFO (half-open passive conns) */
    struct vfw_tcp_conn *sprev;
    bool in_synq;
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
    struct vfw_tcp_conn *syn_head;  /* half-open conns, oldest first */
    struct vfw_tcp_conn *syn_tail;
    uint32_t nconns;
    uint32_t nsyn;                  /* conns in the SYN FIFO */
    uint32_t depth;
    uint16_t ip_id;
    uint16_t eph_next;
    uint16_t mss_local;
    bool arp_passive;             /* ARP is the netdev's: never send it */
    bool addr_moved;              /* set_addr changed MAC or IP once */
    uint8_t *tx;                  /* one frame */
    size_t tx_size;
};

/* ------------------------------------------- small helpers (every file) */

static inline uint64_t toe_now(struct vfw_tcp_stack *s)
{
    return s->env.now_ns(s->env.opaque);
}

static inline uint64_t toe_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static inline uint32_t toe_tuple_hash(const struct vfw_tcp_stack *s,
                                      uint32_t rip, uint16_t rport,
                                      uint16_t lport)
{
    uint64_t h = toe_mix64(((uint64_t)rip << 32) ^ ((uint64_t)rport << 16) ^
                           lport ^ s->tun.isn_secret);
    return (uint32_t)h & s->hmask;
}

static inline bool toe_is_bcast_or_mcast_ip(uint32_t ip)
{
    return ip == 0 || ip == 0xffffffffu || (ip >> 28) == 0xe;
}

static inline void toe_stack_enter(struct vfw_tcp_stack *s)
{
    s->depth++;
}

static inline bool toe_synchronized(const struct vfw_tcp_conn *c)
{
    return c->state >= ST_ESTABLISHED;
}

static inline uint32_t toe_data_end(const struct vfw_tcp_conn *c)
{
    return c->snd_end;
}

static inline uint64_t toe_rtx_deadline(struct vfw_tcp_conn *c)
{
    return toe_now(c->s) + c->rto;
}

static inline void toe_emit(struct vfw_tcp_stack *s, size_t len)
{
    s->env.frame_out(s->env.opaque, s->tx, len);
}

static inline void toe_eth_hdr(struct vfw_tcp_stack *s, const uint8_t *dmac,
                               const uint8_t *smac, uint16_t type)
{
    memcpy(s->tx, dmac, 6);
    memcpy(s->tx + 6, smac, 6);
    vfw_st_be16(s->tx + 12, type);
}

/* ------------------------------------------------------------ tcp_conn.c */

/* Leave a stack call; the outermost one releases the zombies. */
void toe_stack_leave(struct vfw_tcp_stack *s);
/* Free a conn's memory at once (stack teardown; else toe_conn_free). */
void toe_conn_release(struct vfw_tcp_conn *c);
/* Unlink from the hash and list; release now or when the stack unwinds. */
void toe_conn_free(struct vfw_tcp_conn *c);
/* The conn of a 4-tuple (our IP not compared: callers check c->lip). */
struct vfw_tcp_conn *toe_conn_lookup(struct vfw_tcp_stack *s, uint32_t rip,
                                     uint16_t rport, uint16_t lport);
struct listener *toe_find_listener(struct vfw_tcp_stack *s, uint16_t port);
/* A new conn in the table (state CLOSED), or NULL at max_conns / ENOMEM.
 * At max_conns a TIME_WAIT conn is reaped, else the oldest half-open one
 * dropped. With bufs false the buffers wait for toe_conn_bufs (passive
 * opens: a SYN must not cost them). */
struct vfw_tcp_conn *toe_conn_new(struct vfw_tcp_stack *s, uint32_t rip,
                                  uint16_t rport, uint16_t lport, bool bufs);
/* Allocate a conn's send ring, receive buffer and record ring (once);
 * -ENOMEM on failure (the conn is unchanged). */
int toe_conn_bufs(struct vfw_tcp_conn *c);
/* A passive conn in SYN_RCVD joins the SYN FIFO of the stack and counts
 * against listener l's backlog; it leaves when it is synchronized or
 * freed. */
void toe_synq_add(struct vfw_tcp_conn *c, struct listener *l);
void toe_synq_unlink(struct vfw_tcp_conn *c);
/* Drop the oldest half-open conn (of port lport; 0: of any listener).
 * False if there is none. */
bool toe_synq_drop_oldest(struct vfw_tcp_stack *s, uint16_t lport);
/* Free a CLOSED conn the user no longer holds. */
void toe_try_free(struct vfw_tcp_conn *c);
/* The connection failed (RST, timeout): one upcall, then free. */
void toe_conn_fail(struct vfw_tcp_conn *c, int err);
/* Report the peer's FIN (closed, err 0) once all data was consumed. */
void toe_maybe_eof(struct vfw_tcp_conn *c);

/* ----------------------------------------------------------- tcp_input.c */

/* Offer in-order data to the user (also vfw_tcp_recv_resume). */
void toe_deliver(struct vfw_tcp_conn *c);

/* ---------------------------------------------------------- tcp_output.c */

/* Build and send one TCP segment; payload from c's send ring if c. */
void toe_send_raw(struct vfw_tcp_stack *s, const uint8_t *dmac,
                  uint32_t dip, uint16_t sport, uint16_t dport,
                  uint32_t seq, uint32_t ack, uint8_t flags, uint16_t wnd,
                  const uint8_t *opts, size_t optlen,
                  const struct vfw_tcp_conn *c, uint32_t len);
/* Receive window to advertise (unscaled bytes); updates rcv_adv. */
uint16_t toe_rcv_window(struct vfw_tcp_conn *c, bool syn);
void toe_send_ack(struct vfw_tcp_conn *c);
/* SYN (SYN_SENT) or SYN-ACK (SYN_RCVD) with our options. */
void toe_send_syn(struct vfw_tcp_conn *c);
/* One segment from seq, at most maxlen bytes, cut at the next record end;
 * returns the sequence space it used (FIN included). */
uint32_t toe_send_data_seg(struct vfw_tcp_conn *c, uint32_t seq,
                           uint32_t maxlen, uint32_t *idx);
/* Transmit what the windows allow. */
void toe_output(struct vfw_tcp_conn *c);

/* ------------------------------------------------------------- tcp_arp.c */

/* Send an ARP request (op 1; broadcast when dmac is NULL) or reply (op 2);
 * nothing in passive mode. */
void toe_arp_send(struct vfw_tcp_stack *s, uint16_t op, const uint8_t *dmac,
                  const uint8_t *tha, uint32_t tip);
struct arp_ent *toe_arp_find(struct vfw_tcp_stack *s, uint32_t ip);
/* Make sure a pending entry exists for ip (resolution in progress). */
void toe_arp_want(struct vfw_tcp_stack *s, uint32_t ip);
/* Record ip -> mac as valid now and start the SYNs waiting for it. */
void toe_neigh_learn(struct vfw_tcp_stack *s, uint32_t ip,
                     const uint8_t *mac);
void toe_arp_input(struct vfw_tcp_stack *s, const uint8_t *f, size_t len);

#endif /* VFW_TCP_INTERNAL_H */
