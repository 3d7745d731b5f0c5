/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_tcp.h - the adapter's offloaded TCP/IPv4 stack (the "TOE").
 *
 * This is the contract between the TCP offload (tcp*.c) and the iWARP
 * layers above it (MPA/DDP/RDMAP). The stack owns Ethernet framing, ARP and
 * IPv4 for its own addresses; it never touches guest memory. Everything it
 * needs from the outside comes through struct vfw_tcp_env, so it runs
 * natively in tests, benchmarks and the fuzzer, and inside the QEMU device.
 *
 * Single-threaded: every call, and every callback, happens on the caller's
 * thread. Callbacks may call back into the stack (send, close), but must not
 * destroy the stack from inside a callback.
 *
 * Record semantics (for MPA FPDU alignment, RFC 5044 sec. 8): the iWARP layer
 * hands whole FPDUs with vfw_tcp_send_record(). A record is at most
 * vfw_tcp_mss() bytes, is accepted whole or not at all, and starts a new TCP
 * segment, so that on first transmission every segment carries exactly one
 * FPDU. Retransmissions may coalesce, which RFC 5044 allows.
 */
#ifndef VFW_TCP_H
#define VFW_TCP_H

#include <stddef.h>
#include <stdint.h>

struct vfw_tcp_stack;
struct vfw_tcp_conn;

/* Where the stack meets the world. All function pointers are required. */
struct vfw_tcp_env {
    void *opaque;
    /* Emit one Ethernet frame (no FCS). The stack keeps ownership of buf. */
    void (*frame_out)(void *opaque, const uint8_t *frame, size_t len);
    /* Monotonic clock in nanoseconds (simulated time in tests). */
    uint64_t (*now_ns)(void *opaque);
};

struct vfw_tcp_config {
    uint8_t  mac[6];
    uint32_t ip;          /* IPv4, host byte order */
    uint16_t mtu;         /* IP MTU, e.g. 1500; MSS derives from it */
    uint32_t rcv_buf;     /* per-connection receive window in bytes */
    uint32_t snd_buf;     /* per-connection send buffer in bytes */
    uint32_t max_conns;   /* hard bound on live connections */
};

/* Per-connection upcalls. `user` is the pointer given at connect/accept. */
struct vfw_tcp_cb {
    /* Active open finished (established) or failed (err < 0, -errno). */
    void (*connected)(struct vfw_tcp_conn *c, int err, void *user);
    /*
     * In-order bytes arrived. Return how many were consumed (0..len); bytes
     * not consumed stay queued and are offered again, with more, on the next
     * delivery or after vfw_tcp_recv_resume(). Consumed bytes reopen the
     * receive window.
     */
    size_t (*recv)(struct vfw_tcp_conn *c, const uint8_t *data, size_t len,
                   void *user);
    /* Send space opened after a vfw_tcp_send_record() returned -EAGAIN. */
    void (*writable)(struct vfw_tcp_conn *c, void *user);
    /* The connection is over: peer FIN after our close, or failure
     * (err < 0: -ECONNRESET, -ETIMEDOUT, -ECONNREFUSED). A peer FIN while we
     * are still open is reported with err 0 too; the callee then calls
     * vfw_tcp_close() or vfw_tcp_abort(). After a failure the conn is invalid
     * once the upcall returns: drop every pointer to it. */
    void (*closed)(struct vfw_tcp_conn *c, int err, void *user);
};

/* A listener's accept upcall: return the callbacks and user pointer to use
 * for the new connection, or NULL to refuse (RST). */
typedef const struct vfw_tcp_cb *(*vfw_tcp_accept_fn)(
    struct vfw_tcp_conn *c, void *listen_user, void **conn_user);

struct vfw_tcp_stack *vfw_tcp_stack_new(const struct vfw_tcp_env *env,
                                        const struct vfw_tcp_config *cfg);
void vfw_tcp_stack_free(struct vfw_tcp_stack *s);

/* Feed one received Ethernet frame (any kind; non-matching ones ignored). */
void vfw_tcp_input(struct vfw_tcp_stack *s, const uint8_t *frame, size_t len);
/* Drive timers (retransmission, delayed ACK, TIME_WAIT). Call at least every
 * vfw_tcp_next_timer_ns() or on a fixed tick. */
void vfw_tcp_poll(struct vfw_tcp_stack *s);
/* Absolute time of the next timer event, or UINT64_MAX if none. */
uint64_t vfw_tcp_next_timer_ns(const struct vfw_tcp_stack *s);

int vfw_tcp_listen(struct vfw_tcp_stack *s, uint16_t port,
                   vfw_tcp_accept_fn accept, void *listen_user);
/* The same with a backlog (1..65536): the most half-open connections
 * (SYN answered, handshake not complete) the listener keeps. A SYN
 * beyond it drops the listener's oldest half-open connection silently
 * (its peer's ACK then gets a RST); established connections are never
 * touched. A half-open connection costs no buffers (they are allocated
 * when the handshake completes) and is freed after tun.syn_retries
 * SYN-ACK retransmissions. vfw_tcp_listen uses VFW_TCP_DEF_BACKLOG.
 * vfw_tcp_unlisten drops the listener's half-open connections. */
#define VFW_TCP_DEF_BACKLOG 128
int vfw_tcp_listen_backlog(struct vfw_tcp_stack *s, uint16_t port,
                           uint32_t backlog, vfw_tcp_accept_fn accept,
                           void *listen_user);
void vfw_tcp_unlisten(struct vfw_tcp_stack *s, uint16_t port);
/* Active open; lport 0 picks an ephemeral port. Returns NULL and sets *err. */
struct vfw_tcp_conn *vfw_tcp_connect(struct vfw_tcp_stack *s, uint32_t rip,
                                     uint16_t rport, uint16_t lport,
                                     const struct vfw_tcp_cb *cb, void *user,
                                     int *err);
/* The same with the IPv4 TOS byte (DSCP << 2 | ECN 0) every segment of
 * the connection carries, its SYN included: the adapter's switch
 * classifies the connection's frames by it (rdma_cm's
 * RDMA_OPTION_ID_TOS, issue 17). */
struct vfw_tcp_conn *vfw_tcp_connect_tos(struct vfw_tcp_stack *s, uint32_t rip,
                                         uint16_t rport, uint16_t lport,
                                         uint8_t tos,
                                         const struct vfw_tcp_cb *cb,
                                         void *user, int *err);
/* A connection's TOS from now on (an accepted one: its SYN-ACK had 0). */
void vfw_tcp_set_tos(struct vfw_tcp_conn *c, uint8_t tos);

/* Queue one record (see top). 0 on success, -EAGAIN if no room now,
 * -EMSGSIZE if len > mss, -ENOTCONN if not established. */
int vfw_tcp_send_record(struct vfw_tcp_conn *c, const uint8_t *data,
                        size_t len);
/* Zero-copy records (additive; vfw_tcp_send_record() is unchanged):
 * vfw_tcp_send_reserve() returns a contiguous span of len bytes (1..mss) at
 * the tail of the send buffer, or NULL when send_record(len) would not
 * succeed right now or the free space wraps (then use send_record, which
 * also arms the writable upcall). Fill it, then vfw_tcp_send_commit(c, n)
 * (n <= len) queues those n bytes as one record exactly like a successful
 * vfw_tcp_send_record(). No other call on the stack in between. */
uint8_t *vfw_tcp_send_reserve(struct vfw_tcp_conn *c, size_t len);
int vfw_tcp_send_commit(struct vfw_tcp_conn *c, size_t len);
/* Bytes of send buffer free now. */
size_t vfw_tcp_send_space(const struct vfw_tcp_conn *c);
uint16_t vfw_tcp_mss(const struct vfw_tcp_conn *c);
/* Re-offer queued received bytes (after the recv upcall consumed less). */
void vfw_tcp_recv_resume(struct vfw_tcp_conn *c);

/* Orderly close: FIN after queued data. The closed upcall follows exactly
 * once (err 0 when both FINs are exchanged, < 0 on failure); the conn is
 * invalid after it returns. Abort: RST now, no upcall, the conn is invalid
 * as soon as vfw_tcp_abort() returns. */
void vfw_tcp_close(struct vfw_tcp_conn *c);
void vfw_tcp_abort(struct vfw_tcp_conn *c);

/* Addressing of a connection (host byte order). */
void vfw_tcp_conn_addr(const struct vfw_tcp_conn *c, uint32_t *lip,
                       uint16_t *lport, uint32_t *rip, uint16_t *rport);

struct vfw_tcp_stats {
    uint64_t segs_in, segs_out, retrans, dup_acks, bad_csum, rst_out,
             drops_no_conn, ooo_queued;
    /* Added by the TCP owner (additive, appended): frames dropped for bad
     * lengths/headers, IPv4 fragments dropped, ARP frames in/out, connection
     * attempts refused because max_conns live connections exist, segments
     * dropped because the bounded out-of-order queue was full, timeouts. */
    uint64_t malformed, ip_frags, arp_in, arp_out, conn_limit, ooo_dropped,
             timeouts;
    /* Gauges (appended, issue 33): what the stack holds now, not totals.
     * half_open: passive connections in SYN_RCVD (a SYN was answered, the
     * handshake is not complete); buf_bytes: bytes of connection buffers
     * allocated (send ring + receive buffer + record ring of each conn). */
    uint64_t half_open, buf_bytes;
    /* Half-open connections dropped to make room: a SYN beyond its
     * listener's backlog, or any new connection at max_conns, displaces
     * the oldest half-open one (counter). */
    uint64_t syn_dropped;
};
void vfw_tcp_stats(const struct vfw_tcp_stack *s, struct vfw_tcp_stats *st);

/* Connections not yet fully closed, TIME_WAIT not counted. After a passive
 * close (closed upcall for the peer's FIN, then vfw_tcp_close()) there is no
 * further upcall; 0 here means every FIN we sent, and so every byte before
 * it, was acknowledged. A caller that must not stop while data is in flight
 * (a tool exiting, a function reset) waits for 0. */
uint32_t vfw_tcp_active_conns(const struct vfw_tcp_stack *s);

/*
 * Tunables (added by the TCP owner; additive). vfw_tcp_stack_new() applies
 * the defaults shown; change them with get, modify, set. Times in ns.
 * vfw_tcp_set_tunables() returns -EINVAL for out-of-range values.
 */
struct vfw_tcp_tunables {
    uint64_t time_wait_ns;   /* TIME_WAIT length, default 1 s (short) */
    uint64_t fin_wait2_ns;   /* FIN_WAIT_2 limit, default 30 s */
    uint64_t rto_init_ns;    /* RFC 6298 initial RTO, default 1 s */
    uint64_t rto_min_ns;     /* default 200 ms (as Linux) */
    uint64_t rto_max_ns;     /* default 60 s */
    uint64_t delack_ns;      /* delayed ACK, default 40 ms */
    uint32_t syn_retries;    /* SYN / SYN-ACK retransmissions, default 5 */
    uint32_t data_retries;   /* data retransmissions before -ETIMEDOUT, 8 */
    uint32_t ooo_max_ranges; /* out-of-order holes kept, 1..64, default 16 */
    uint32_t wscale;         /* 1: offer/accept window scaling (default) */
    /* Secret mixed into ISNs and ephemeral ports (RFC 6528). The default is
     * derived from mac/ip/clock and is NOT unpredictable: the device glue
     * should set it from a real RNG. */
    uint64_t isn_secret;
};
void vfw_tcp_get_tunables(const struct vfw_tcp_stack *s,
                          struct vfw_tcp_tunables *t);
int vfw_tcp_set_tunables(struct vfw_tcp_stack *s,
                         const struct vfw_tcp_tunables *t);

/*
 * Lifetime details (clarification by the TCP owner, no API change):
 * - A passive connection is handed to the accept upcall once the three-way
 *   handshake completes (ESTABLISHED); data in the completing segment is
 *   delivered after accept returns. Refused (NULL) → RST.
 * - A failed active open is reported only through connected(err < 0)
 *   (-ECONNREFUSED on RST, -ETIMEDOUT, -EHOSTUNREACH without ARP reply); the
 *   conn is invalid once that upcall returns. closed is never called for it.
 * - Each connection gets at most one closed upcall. The peer's FIN is
 *   reported (closed, err 0) only after every received byte was consumed.
 *   If it came while we were still open (passive close), the conn stays
 *   valid (send allowed) until the callee calls vfw_tcp_close() or
 *   vfw_tcp_abort(); it is invalid when that returns, with no further upcall,
 *   even if the connection later fails. If vfw_tcp_close() comes first, the
 *   conn stays valid (recv may still deliver) until the closed upcall.
 * - vfw_tcp_close() before the connection is established acts like
 *   vfw_tcp_abort() (no upcall).
 * - vfw_tcp_connect() errors: -ENOBUFS when max_conns are live and none
 *   is in TIME_WAIT or half-open (either yields its slot), -EADDRINUSE,
 *   -EINVAL. Zero-length records are accepted and send nothing.
 * - A passive connection gets its buffers when the handshake completes,
 *   just before the accept upcall; if they cannot be allocated it is
 *   reset (RST) with no upcall (issue 33: a SYN costs no buffers).
 */

/*
 * Sharing a function with a netdev (2.0 device; additive). The stack then
 * uses the function's MAC and IP, and ARP belongs to the netdev:
 * - arp_passive (vfw_tcp_set_arp_passive): the stack never sends ARP
 *   requests or replies; it learns next hops from ARP frames it is shown,
 *   from vfw_tcp_neigh_set(), and from the source MAC of a SYN to one of
 *   its listeners. An active open to an unknown next hop fails with
 *   -EHOSTUNREACH.
 * - vfw_tcp_wants(): is this frame for one of the stack's listeners or
 *   connections (TIME_WAIT included)? The device steers such frames to the
 *   stack and all others to the netdev's RX ring.
 */
/* Semantics as implemented (engine owner, issue 14):
 * - passive: entries learned (ARP request/reply whose target is our IP,
 *   updates of known entries, a listener's SYN, neigh_set) never age; a
 *   connect to an IP without a valid entry fails synchronously (NULL,
 *   *err = -EHOSTUNREACH, no conn made). A resolution already under way
 *   when passive mode starts sends no further requests; neigh_set
 *   completes it (the SYN leaves inside the call).
 * - neigh_set: -EINVAL for ip 0/broadcast/multicast/our own, or a
 *   multicast or all-zero MAC. May emit frames (waiting SYNs).
 * - set_addr: the transmit buffer only grows; listeners stay; conns keep
 *   their MAC, IP and MSS and are still matched on input at that old
 *   address (and vfw_tcp_wants says yes for them).
 * - wants: 1 only for an untagged IPv4/TCP frame (first fragment or
 *   unfragmented) to our unicast MAC and IP whose 4-tuple is a conn in any
 *   state or whose port is a listener's; no checksum check; reads at most
 *   14 + IHL + 4 bytes, each after checking len. */
void vfw_tcp_set_arp_passive(struct vfw_tcp_stack *s, int on);
int vfw_tcp_neigh_set(struct vfw_tcp_stack *s, uint32_t ip,
                      const uint8_t mac[6]);
/* Change the stack's MAC, IPv4 address (host order) and IP MTU; existing
 * connections keep the values they started with. -EINVAL on bad values. */
int vfw_tcp_set_addr(struct vfw_tcp_stack *s, const uint8_t mac[6],
                     uint32_t ip, uint16_t mtu);
int vfw_tcp_wants(const struct vfw_tcp_stack *s, const uint8_t *frame,
                  size_t len);
/* The same match, and what kind of frame it is (issue 33): CONN when the
 * 4-tuple is a synchronized connection (ESTABLISHED onwards, TIME_WAIT
 * included), SETUP when it is a listener's port or a connection still in
 * its handshake (SYN_SENT, SYN_RCVD), NO when the frame is not ours. A
 * SYN flood is all SETUP: the device admits SETUP frames into part of its
 * input queue only, so a flood cannot crowd out the connections' segments.
 * vfw_tcp_wants() is (vfw_tcp_wants_kind() != VFW_TCP_WANT_NO). */
enum { VFW_TCP_WANT_NO = 0, VFW_TCP_WANT_SETUP = 1, VFW_TCP_WANT_CONN = 2 };
int vfw_tcp_wants_kind(const struct vfw_tcp_stack *s, const uint8_t *frame,
                       size_t len);

#endif /* VFW_TCP_H */
