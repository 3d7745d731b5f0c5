// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vfw_soak: the mover of the soak (issue 33, `make soak`, tests/lab/test_soak.py).
 * Many RC QPs per process, each moving seeded pseudo-random bytes with
 * SEND, RDMA WRITE and RDMA READ, every byte checked by the side that
 * receives it, through faults: a QP that fails is drained (every WR it had
 * posted must complete, the outstanding ones flushed), reported, and
 * connected again. librdmacm + libibverbs only, nothing vfwarp-specific.
 *
 *   server:  vfw_soak -s ADDR [-p PORT] [-t SECS]
 *   client:  vfw_soak -c ADDR [-p PORT] -i ID [-q NQP] [-t SECS] [-S SEED]
 *
 * One process per VF (its network namespace picks the device). One event
 * loop: a CM channel, the device's async events and one completion channel
 * for every CQ, each CQ also polled at least every TICK_MS (a device that
 * is gone raises no completion event; the provider then flushes in
 * software on poll). Nothing busy-polls: 128 of these share one TCG vCPU.
 *
 * Protocol, per QP, strictly lockstep (iWARP has no RNR retry: a SEND
 * with no receive posted kills the connection, so each side keeps its
 * receives ahead of what the peer may send). Every message is a struct hdr,
 * a SEND may carry a payload after it:
 *   HELLO              -> ACK (the server's target address and rkey)
 *   SEND hdr+payload   -> server checks payload         -> ACK
 *   WRITE payload; SEND hdr -> server checks the region and the guard bytes
 *                         around it, restores the canary -> ACK
 *   SEND hdr (READ)    -> server fills a region of its READ area -> ACK;
 *                         client READs it into canary-filled memory and
 *                         checks the bytes and the guards
 *   BYE                -> ACK; then the client disconnects (the end of a run)
 * The payload of op `seq` of connection (client, qp, gen, pid) is a
 * splitmix64 stream both sides derive; the server learns the identity from
 * HELLO and checks seq order, so a lost, repeated or reordered message is
 * corruption too.
 *
 * Output, JSON lines on stdout: start, conn (established), qp_error (a QP
 * drained after a fault: its state, WRs outstanding, how many completed
 * flushed, whether all completed), corrupt (each bad op), stall, stats
 * (cumulative, every STATS_SECS) and summary (at exit). Exit 0 at the end
 * of the run, 3 when the device went away (FLR: the process is restarted
 * by its supervisor, the driver of the soak), 2 on set-up errors.
 *
 * VFW_SOAK_CORRUPT=N (tests of the checker only): the client flips one
 * byte of the payload of its N-th SEND or WRITE after generating it; the
 * server must count exactly that byte.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define HDR        64u
#define MAXLEN     (64u << 10)          /* largest payload of one op */
#define GUARD      64u                  /* canary bytes checked each side */
#define AREA       (MAXLEN + 2 * GUARD + 4096)  /* a WRITE or READ area */
#define RBUF       (HDR + MAXLEN)       /* a server receive buffer */
#define NRECV      2
#define NTX        2
#define MAGIC      0x76665341u          /* "vfSA" */
#define TICK_MS    250
#define STATS_SECS 10
#define OP_TIMEOUT 90.0                 /* an op unfinished after this: a stall */
#define DRAIN_SECS 30.0                 /* a failed QP's WRs must complete by then */
#define CONN_SECS  60.0

enum kind { K_HELLO = 1, K_SEND, K_WRITE, K_READ, K_BYE, K_ACK = 0x10 };

struct hdr {
	uint32_t magic, kind;
	uint64_t seq;
	uint32_t len, off;
	uint32_t client, qpi, gen, pid;
	uint64_t addr;
	uint32_t rkey, status;
	uint64_t bad;
};
_Static_assert(sizeof(struct hdr) <= HDR, "header");

enum qstate { Q_IDLE, Q_CONNECTING, Q_RUN, Q_DRAIN, Q_CLOSING, Q_DONE };

/*
 * One QP and its connection (client: a slot reconnected after faults;
 * server: one accepted connection). Buffer layout (one MR):
 *   [0, NRECV*rsz)           receives
 *   then NTX * (HDR+MAXLEN)  what we send (client: header+payload)
 *   then AREA                client: READ sink;  server: WRITE target
 *   then AREA                server: READ source
 */
struct q {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t rsz, len;
	enum qstate st;
	bool armed;
	uint32_t client, qpi, gen, pid;
	uint64_t key, seq;
	int outstanding;            /* WRs posted, not completed */
	/* client op in flight */
	int op, need_send, need_ack, phase;
	uint32_t oplen, roff, loff;
	uint64_t raddr;
	uint32_t rkey;
	double t_op, t_deadline, t_retry;
	int backoff;
	/* fault bookkeeping */
	int err_status, out_at_err, flushed, errs;
	const char *why;
	bool closing;               /* server: BYE seen, a disconnect is the end */
	unsigned txi;
};

static struct {
	bool server;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct sockaddr_storage dst;
	uint32_t client, nqp;
	uint64_t seed;
	double t0, end, next_stats;
	bool device_lost;
	volatile sig_atomic_t stop;
	long corrupt_at;            /* VFW_SOAK_CORRUPT */
	long data_ops;
	struct q **qs;
	unsigned nq, capq;
	/* counts */
	uint64_t ops[5], bytes[5], checked, bad, bad_ops, qp_errors, wr_flushed, not_flushed;
	uint64_t connects, connect_fail, reconnects, stalls;
	unsigned live;
} g;

static const char *const kname[] = { "", "hello", "send", "write", "read", "bye" };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One JSON line: "ev", the side, times, then the caller's fields. */
static void jlog(const char *ev, const char *fmt, ...)
{
	va_list ap;

	printf("{\"ev\":\"%s\",\"side\":\"%s\",\"pid\":%d,\"t\":%.3f,\"ts\":%.3f", ev,
	       g.server ? "server" : "client", getpid(), now() - g.t0, wall());
	if (fmt && *fmt) {
		printf(",");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("}\n");
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t stream_key(uint64_t seed, uint32_t client, uint32_t qpi, uint32_t gen,
			   uint32_t pid)
{
	uint64_t s = seed ^ ((uint64_t)client << 40) ^ ((uint64_t)qpi << 24) ^ gen;
	uint64_t k = splitmix(&s);

	s = k ^ pid;
	return splitmix(&s);
}

/* The bytes of op `seq`: fill, or count the bytes that differ. */
static void gen_fill(uint8_t *p, uint32_t n, uint64_t key, uint64_t seq)
{
	uint64_t s = key ^ (seq * 0xD1B54A32D192ED03ull), w = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!(i & 7))
			w = splitmix(&s);
		p[i] = (uint8_t)(w >> ((i & 7) * 8));
	}
}

static uint64_t gen_check(const uint8_t *p, uint32_t n, uint64_t key, uint64_t seq,
			  int64_t *first)
{
	uint64_t s = key ^ (seq * 0xD1B54A32D192ED03ull), w = 0, bad = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!(i & 7))
			w = splitmix(&s);
		if (p[i] != (uint8_t)(w >> ((i & 7) * 8))) {
			if (!bad && first)
				*first = i;
			bad++;
		}
	}
	return bad;
}

static inline uint8_t canary(uint32_t i)
{
	return (uint8_t)((i * 0x9Eu) ^ (i >> 9) ^ 0x5Au);
}

static void canary_fill(uint8_t *area, uint32_t from, uint32_t n)
{
	for (uint32_t i = from; i < from + n; i++)
		area[i] = canary(i);
}

static uint64_t canary_check(const uint8_t *area, uint32_t from, uint32_t n)
{
	uint64_t bad = 0;

	for (uint32_t i = from; i < from + n; i++)
		bad += area[i] != canary(i);
	return bad;
}

static uint8_t *rx_buf(struct q *q, unsigned i) { return q->buf + i * q->rsz; }
static uint8_t *tx_buf(struct q *q, unsigned i) { return q->buf + NRECV * q->rsz + i * RBUF; }
static uint8_t *area(struct q *q, unsigned i)
{
	return q->buf + NRECV * q->rsz + NTX * RBUF + i * AREA;
}

/* ---- device and QP set-up ---------------------------------------------- */

static int dev_setup(struct ibv_context *ctx)
{
	if (g.ctx)
		return g.ctx == ctx ? 0 : -1;
	g.ctx = ctx;
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	g.pd = ibv_alloc_pd(ctx);
	g.cc = ibv_create_comp_channel(ctx);
	if (!g.pd || !g.cc) {
		jlog("setup_error", "\"what\":\"pd/channel\",\"errno\":%d", errno);
		return -1;
	}
	fcntl(g.cc->fd, F_SETFL, fcntl(g.cc->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static struct q *q_new(void)
{
	struct q *q = calloc(1, sizeof(*q));

	if (!q)
		exit(2);
	if (g.nq == g.capq) {
		g.capq = g.capq ? 2 * g.capq : 16;
		g.qs = realloc(g.qs, g.capq * sizeof(*g.qs));
		if (!g.qs)
			exit(2);
	}
	g.qs[g.nq++] = q;
	q->rsz = g.server ? RBUF : HDR;
	q->client = UINT32_MAX;     /* server: unknown until HELLO */
	q->len = NRECV * q->rsz + NTX * RBUF + (g.server ? 2 : 1) * AREA;
	q->buf = aligned_alloc(4096, (q->len + 4095) & ~4095ul);
	if (!q->buf)
		exit(2);
	memset(q->buf, 0, q->len);
	canary_fill(area(q, 0), 0, AREA);
	return q;
}

static int post_recv(struct q *q, unsigned i)
{
	struct ibv_sge sge = { (uintptr_t)rx_buf(q, i), (uint32_t)q->rsz, q->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(q->qp, &wr, &bad))
		return -1;
	q->outstanding++;
	return 0;
}

/* wr_id: 100 + kind, so a completion says what it was */
static int post_send(struct q *q, enum ibv_wr_opcode op, void *p, uint32_t n, uint64_t raddr,
		     uint32_t rkey, int kind)
{
	struct ibv_sge sge = { (uintptr_t)p, n, q->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 100 + kind, .sg_list = &sge, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(q->qp, &wr, &bad))
		return -1;
	q->outstanding++;
	return 0;
}

static int qp_setup(struct q *q, struct rdma_cm_id *id)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_qp_init_attr a = { 0 };

	if (dev_setup(id->verbs))
		return -1;
	q->mr = ibv_reg_mr(g.pd, q->buf, q->len, acc);
	q->cq = ibv_create_cq(g.ctx, 16, q, g.cc, 0);
	if (!q->mr || !q->cq)
		return -1;
	a.send_cq = a.recv_cq = q->cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 8;
	a.cap.max_recv_wr = NRECV + 2;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, g.pd, &a))
		return -1;
	q->qp = id->qp;
	q->outstanding = 0;
	for (unsigned i = 0; i < NRECV; i++)
		if (post_recv(q, i))
			return -1;
	q->armed = !ibv_req_notify_cq(q->cq, 0);
	return 0;
}

/* Everything of the connection released; the slot stays (client). */
static void q_release(struct q *q)
{
	if (q->id && q->qp)
		rdma_destroy_qp(q->id);
	q->qp = NULL;
	if (q->cq)
		ibv_destroy_cq(q->cq);
	q->cq = NULL;
	if (q->mr)
		ibv_dereg_mr(q->mr);
	q->mr = NULL;
	if (q->id) {
		q->id->context = NULL;
		rdma_destroy_id(q->id);
	}
	q->id = NULL;
	q->outstanding = 0;
}

static int qp_state(struct q *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (!q->qp || ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

/* ---- faults ----------------------------------------------------------------- */

/* A fault seen on a running QP: from now on its WRs must all complete. */
static void q_fail(struct q *q, const char *why, int status)
{
	if (q->st != Q_RUN && q->st != Q_CONNECTING)
		return;
	if (q->st == Q_CONNECTING && !q->qp) {
		q->st = Q_IDLE;
		return;
	}
	q->why = why;
	q->err_status = status;
	q->out_at_err = q->outstanding;
	q->flushed = 0;
	q->errs = 0;
	q->st = Q_DRAIN;
	q->t_deadline = now() + DRAIN_SECS;
}

static void client_schedule(struct q *q)
{
	q->st = Q_IDLE;
	q->backoff = q->backoff ? (q->backoff < 8 ? q->backoff * 2 : 8) : 1;
	q->t_retry = now() + q->backoff;
}

/* The drained (or given up) QP reported, then released. */
static void q_report(struct q *q)
{
	bool all = q->outstanding == 0;

	g.qp_errors++;
	if (!all)
		g.not_flushed++;
	jlog("qp_error", "\"client\":%u,\"qp\":%u,\"gen\":%u,\"cpid\":%u,\"why\":\"%s\","
	     "\"status\":\"%s\",\"qp_state\":%d,\"outstanding_at_error\":%d,\"flushed\":%d,"
	     "\"other_errors\":%d,\"all_completed\":%s,\"drain_s\":%.2f",
	     q->client, q->qpi, q->gen, q->pid, q->why ? q->why : "",
	     q->err_status >= 0 ? ibv_wc_status_str(q->err_status) : "none", qp_state(q),
	     q->out_at_err, q->flushed, q->errs, all ? "true" : "false",
	     DRAIN_SECS - (q->t_deadline - now()));
	q_release(q);
	if (g.server)
		q->st = Q_DONE;
	else
		client_schedule(q);
}

/* ---- client ------------------------------------------------------------------ */

static void client_connect(struct q *q)
{
	q->t_deadline = now() + CONN_SECS;
	q->st = Q_CONNECTING;
	if (rdma_create_id(g.ch, &q->id, q, RDMA_PS_TCP) ||
	    rdma_resolve_addr(q->id, NULL, (struct sockaddr *)&g.dst, 5000)) {
		g.connect_fail++;
		if (q->id)
			rdma_destroy_id(q->id);
		q->id = NULL;
		client_schedule(q);
	}
}

static void next_op(struct q *q);

static void send_hdr(struct q *q, int kind, uint32_t len, uint32_t off, uint32_t extra)
{
	struct hdr *h = (struct hdr *)tx_buf(q, 0);

	*h = (struct hdr){ .magic = MAGIC, .kind = kind, .seq = q->seq, .len = len, .off = off,
			   .client = q->client, .qpi = q->qpi, .gen = q->gen, .pid = q->pid };
	if (post_send(q, IBV_WR_SEND, h, HDR + extra, 0, 0, kind))
		q_fail(q, "post_send", -1);
	else
		q->need_send++;
}

/* A length 1..MAXLEN, log-uniform, so small and large ops both happen. */
static uint32_t pick_len(uint64_t *s)
{
	unsigned bits = 1 + splitmix(s) % 16;

	return 1 + (uint32_t)(splitmix(s) % (1u << bits));
}

static void next_op(struct q *q)
{
	uint64_t s = q->key ^ (q->seq * 0x9E3779B97F4A7C15ull) ^ 0x5eed;

	q->need_send = q->need_ack = 0;
	q->phase = 0;
	q->t_op = now();
	if (g.stop || now() >= g.end) {
		q->op = K_BYE;
		q->need_ack = 1;
		send_hdr(q, K_BYE, 0, 0, 0);
		return;
	}
	q->op = K_SEND + (int)(splitmix(&s) % 3);
	q->oplen = pick_len(&s);
	q->roff = GUARD + (uint32_t)(splitmix(&s) % (AREA - 2 * GUARD - q->oplen + 1));
	q->loff = GUARD + (uint32_t)(splitmix(&s) % (AREA - 2 * GUARD - q->oplen + 1));
	q->need_ack = 1;
	if (q->op == K_READ) {
		send_hdr(q, K_READ, q->oplen, q->roff, 0);
		return;
	}
	uint8_t *pay = tx_buf(q, 0) + HDR;

	gen_fill(pay, q->oplen, q->key, q->seq);
	if (g.corrupt_at && ++g.data_ops == g.corrupt_at) {
		pay[q->oplen / 2] ^= 0x01;     /* the checker's test: one bad byte */
		jlog("corrupt_injected", "\"client\":%u,\"qp\":%u,\"seq\":%" PRIu64, q->client,
		     q->qpi, q->seq);
	}
	if (q->op == K_WRITE) {
		if (post_send(q, IBV_WR_RDMA_WRITE, pay, q->oplen, q->raddr + q->roff, q->rkey,
			      K_WRITE)) {
			q_fail(q, "post_write", -1);
			return;
		}
		q->need_send++;
		send_hdr(q, K_WRITE, q->oplen, q->roff, 0);
	} else {
		send_hdr(q, K_SEND, q->oplen, 0, q->oplen);
	}
}

static void note_bad(struct q *q, const char *what, uint64_t bad, int64_t first)
{
	g.bad += bad;
	g.bad_ops++;
	jlog("corrupt", "\"client\":%u,\"qp\":%u,\"gen\":%u,\"seq\":%" PRIu64 ",\"op\":\"%s\","
	     "\"len\":%u,\"bad_bytes\":%" PRIu64 ",\"first_bad\":%" PRId64, q->client, q->qpi,
	     q->gen, q->seq, what, q->oplen, bad, first);
}

/* The op's last piece arrived: check READ data, count, go on. */
static void client_progress(struct q *q)
{
	if (q->st != Q_RUN || q->need_send || q->need_ack)
		return;
	if (q->op == K_READ && q->phase == 0) {
		uint8_t *sink = area(q, 0);

		canary_fill(sink, q->loff - GUARD, q->oplen + 2 * GUARD);
		q->phase = 1;
		/* the server's READ source is its second area */
		if (post_send(q, IBV_WR_RDMA_READ, sink + q->loff, q->oplen,
			      q->raddr + AREA + q->roff,
			      q->rkey, K_READ)) {
			q_fail(q, "post_read", -1);
			return;
		}
		q->need_send = 1;
		return;
	}
	if (q->op == K_READ) {
		uint8_t *sink = area(q, 0);
		int64_t first = -1;
		uint64_t bad = gen_check(sink + q->loff, q->oplen, q->key, q->seq, &first);

		bad += canary_check(sink, q->loff - GUARD, GUARD) +
		       canary_check(sink, q->loff + q->oplen, GUARD);
		g.checked += q->oplen + 2 * GUARD;
		if (bad)
			note_bad(q, "read", bad, first);
	}
	if (q->op == K_BYE) {
		q->st = Q_CLOSING;
		q->t_deadline = now() + 10;
		rdma_disconnect(q->id);
		return;
	}
	if (q->op >= K_SEND && q->op <= K_READ) {
		g.ops[q->op]++;
		g.bytes[q->op] += q->oplen;
		q->seq++;
	}
	next_op(q);
}

static void client_ack(struct q *q, const struct hdr *h)
{
	if (h->magic != MAGIC || h->kind != K_ACK || h->seq != q->seq) {
		g.bad_ops++;
		jlog("corrupt", "\"client\":%u,\"qp\":%u,\"gen\":%u,\"seq\":%" PRIu64 ","
		     "\"op\":\"ack\",\"got_seq\":%" PRIu64 ",\"got_kind\":%u", q->client, q->qpi,
		     q->gen, q->seq, h->seq, h->kind);
		q_fail(q, "bad_ack", -1);
		return;
	}
	if (q->op == K_HELLO) {
		q->raddr = h->addr;
		q->rkey = h->rkey;
	}
	q->need_ack = 0;
}

/* ---- server ------------------------------------------------------------------ */

static void server_ack(struct q *q, const struct hdr *req)
{
	struct hdr *h = (struct hdr *)tx_buf(q, q->txi++ % NTX);

	*h = (struct hdr){ .magic = MAGIC, .kind = K_ACK, .seq = req->seq,
			   .addr = (uintptr_t)area(q, 0), .rkey = q->mr->rkey, .bad = req->bad };
	if (post_send(q, IBV_WR_SEND, h, HDR, 0, 0, K_ACK))
		q_fail(q, "post_ack", -1);
}

/* One request checked; 0 and the request in *out (to ACK), -1 on a fault. */
static int server_msg(struct q *q, const uint8_t *m, uint32_t n, struct hdr *out)
{
	struct hdr h;
	uint64_t bad = 0;
	int64_t first = -1;

	memcpy(&h, m, sizeof(h));
	if (n < HDR || h.magic != MAGIC || (h.kind != K_HELLO && h.seq != q->seq) ||
	    h.len > MAXLEN || (h.kind == K_SEND && n != HDR + h.len) ||
	    ((h.kind == K_WRITE || h.kind == K_READ) &&
	     (h.off < GUARD || h.off + h.len > AREA - GUARD))) {
		g.bad_ops++;
		jlog("corrupt", "\"client\":%u,\"qp\":%u,\"gen\":%u,\"seq\":%" PRIu64 ","
		     "\"op\":\"header\",\"bytes\":%u,\"kind\":%u,\"got_seq\":%" PRIu64,
		     q->client, q->qpi, q->gen, q->seq, n, h.kind, h.seq);
		q_fail(q, "bad_header", -1);
		return -1;
	}
	q->oplen = h.len;
	switch (h.kind) {
	case K_HELLO:
		q->client = h.client;
		q->qpi = h.qpi;
		q->gen = h.gen;
		q->pid = h.pid;
		q->key = stream_key(g.seed, h.client, h.qpi, h.gen, h.pid);
		q->seq = h.seq;
		jlog("conn", "\"client\":%u,\"qp\":%u,\"gen\":%u,\"cpid\":%u", q->client, q->qpi,
		     q->gen, q->pid);
		break;
	case K_SEND:
		bad = gen_check(m + HDR, h.len, q->key, h.seq, &first);
		g.checked += h.len;
		if (bad)
			note_bad(q, "send", bad, first);
		break;
	case K_WRITE: {
		uint8_t *t = area(q, 0);

		bad = gen_check(t + h.off, h.len, q->key, h.seq, &first);
		bad += canary_check(t, h.off - GUARD, GUARD) +
		       canary_check(t, h.off + h.len, GUARD);
		g.checked += h.len + 2 * GUARD;
		if (bad)
			note_bad(q, "write", bad, first);
		canary_fill(t, h.off, h.len);
		break;
	}
	case K_READ:
		gen_fill(area(q, 1) + h.off, h.len, q->key, h.seq);
		break;
	case K_BYE:
		q->closing = true;
		break;
	default:
		break;
	}
	if (h.kind >= K_SEND && h.kind <= K_READ) {
		g.ops[h.kind]++;
		g.bytes[h.kind] += h.len;
	}
	if (h.kind != K_HELLO)
		q->seq++;
	h.bad = bad;
	*out = h;
	return 0;
}

/* ---- completions ------------------------------------------------------------- */

static void on_wc(struct q *q, const struct ibv_wc *wc)
{
	q->outstanding--;
	if (q->st == Q_DRAIN || q->st == Q_CLOSING || q->st == Q_DONE) {
		if (wc->status == IBV_WC_WR_FLUSH_ERR)
			q->flushed++, g.wr_flushed++;
		else if (wc->status != IBV_WC_SUCCESS)
			q->errs++;
		return;
	}
	if (wc->status != IBV_WC_SUCCESS && g.server && q->closing) {
		/* after BYE: the client's disconnect flushes our receives (this
		 * completion may come before the DISCONNECTED event) */
		q->st = Q_CLOSING;
		q->t_deadline = now() + 10;
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		q_fail(q, "wc_error", wc->status);
		q->out_at_err++;        /* this WR was outstanding too */
		if (wc->status == IBV_WC_WR_FLUSH_ERR)
			q->flushed++, g.wr_flushed++;
		return;
	}
	if (wc->opcode & IBV_WC_RECV) {
		unsigned i = (unsigned)wc->wr_id;
		uint8_t copy[HDR];

		if (g.server) {
			/* checked in place, reposted, then ACKed: the client's next
			 * request follows our ACK. The HELLO may come before our
			 * ESTABLISHED event does (CONNECTING). */
			struct hdr req;

			if (server_msg(q, rx_buf(q, i), wc->byte_len, &req))
				return;
			if (post_recv(q, i)) {
				q_fail(q, "post_recv", -1);
				return;
			}
			server_ack(q, &req);
			return;
		}
		memcpy(copy, rx_buf(q, i), HDR);
		if (post_recv(q, i)) {
			q_fail(q, "post_recv", -1);
			return;
		}
		client_ack(q, (const struct hdr *)copy);
	} else if (!g.server) {
		q->need_send--;
	}
	if (!g.server)
		client_progress(q);
}

static void poll_q(struct q *q)
{
	struct ibv_wc wc[8];
	int n;

	if (!q->cq)
		return;
	do {
		n = ibv_poll_cq(q->cq, 8, wc);
		for (int i = 0; i < n && q->cq; i++)
			on_wc(q, &wc[i]);
	} while (n > 0 && q->cq);
	if (q->cq && !q->armed && !g.device_lost)
		q->armed = !ibv_req_notify_cq(q->cq, 0);
}

/* ---- CM events --------------------------------------------------------------- */

static void on_cm(struct rdma_cm_event *ev)
{
	struct q *q = ev->id->context;
	struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4,
				      .retry_count = 7 };

	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		g.device_lost = true;
		if (q)
			q_fail(q, "device_removal", -1);
		return;
	}
	if (g.server && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		q = q_new();
		q->id = ev->id;
		q->id->context = q;
		q->st = Q_CONNECTING;
		q->t_deadline = now() + CONN_SECS;
		if (qp_setup(q, ev->id) || rdma_accept(ev->id, &cp)) {
			jlog("accept_error", "\"errno\":%d", errno);
			rdma_reject(ev->id, NULL, 0);
			q_release(q);
			q->st = Q_DONE;
		}
		return;
	}
	if (!q)
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(q->id, 5000))
			goto failed;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (qp_setup(q, q->id) || rdma_connect(q->id, &cp))
			goto failed;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		q->st = Q_RUN;
		if (g.server)
			break;
		g.connects++;
		g.reconnects += q->gen > 0;
		q->backoff = 0;
		q->key = stream_key(g.seed, q->client, q->qpi, q->gen, q->pid);
		q->seq = 0;
		jlog("conn", "\"client\":%u,\"qp\":%u,\"gen\":%u", q->client, q->qpi, q->gen);
		q->op = K_HELLO;
		q->need_send = q->need_ack = 0;
		q->t_op = now();
		q->need_ack = 1;
		send_hdr(q, K_HELLO, 0, 0, 0);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (q->st == Q_CLOSING || (g.server && q->closing)) {
			q->st = Q_CLOSING;
			q->t_deadline = now();      /* released by the loop after a drain */
		} else {
			q_fail(q, "disconnected", -1);
		}
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (q->st == Q_RUN) {
			q_fail(q, rdma_event_str(ev->event), -1);
			break;
		}
		goto failed;
	default:
		break;
	}
	return;
failed:
	/* a connection that never ran: nothing was moved, so nothing to flush */
	g.connect_fail++;
	q->st = Q_IDLE;
	/* released (the id too) once the event is acked, by drain_cm */
	q->closing = true;
}

static void drain_cm(void)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(g.ch, &ev) == 0) {
		struct q *q = ev->id->context;
		bool req = g.server && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST;

		on_cm(ev);
		rdma_ack_cm_event(ev);
		if (!req && q && q->closing && q->st == Q_IDLE) {
			q->closing = false;
			q_release(q);
			if (g.server)
				q->st = Q_DONE;
			else
				client_schedule(q);
		}
	}
}

static void drain_async(void)
{
	struct ibv_async_event ev;

	if (!g.ctx)
		return;
	while (ibv_get_async_event(g.ctx, &ev) == 0) {
		enum ibv_event_type t = ev.event_type;
		struct q *q = NULL;

		if (t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR ||
		    t == IBV_EVENT_QP_ACCESS_ERR)
			q = ev.element.qp ? ev.element.qp->qp_context : NULL;
		ibv_ack_async_event(&ev);
		if (t == IBV_EVENT_DEVICE_FATAL)
			g.device_lost = true;
		for (unsigned i = 0; q && i < g.nq; i++)
			if (g.qs[i]->qp && g.qs[i]->qp == ev.element.qp)
				q_fail(g.qs[i], ibv_event_type_str(t), -1);
	}
	if (errno == EIO)
		g.device_lost = true;
}

static void drain_cc(void)
{
	struct ibv_cq *cq;
	void *ctx;

	if (!g.cc)
		return;
	while (ibv_get_cq_event(g.cc, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		((struct q *)ctx)->armed = false;
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		g.device_lost = true;   /* a disassociated channel */
}

/* ---- the loop ------------------------------------------------------------------ */

static void stats(const char *ev)
{
	jlog(ev, "\"client\":%d,\"ops_send\":%" PRIu64 ",\"ops_write\":%" PRIu64 ",\"ops_read\":%"
	     PRIu64 ",\"bytes_send\":%" PRIu64 ",\"bytes_write\":%" PRIu64 ",\"bytes_read\":%"
	     PRIu64 ",\"bytes_checked\":%" PRIu64 ",\"bytes_corrupt\":%" PRIu64
	     ",\"ops_corrupt\":%" PRIu64 ",\"qp_errors\":%" PRIu64 ",\"wr_flushed\":%" PRIu64
	     ",\"not_flushed\":%" PRIu64 ",\"connects\":%" PRIu64 ",\"connect_failures\":%"
	     PRIu64 ",\"reconnects\":%" PRIu64 ",\"stalls\":%" PRIu64 ",\"live\":%u",
	     g.server ? -1 : (int)g.client, g.ops[K_SEND], g.ops[K_WRITE], g.ops[K_READ],
	     g.bytes[K_SEND], g.bytes[K_WRITE], g.bytes[K_READ], g.checked, g.bad, g.bad_ops,
	     g.qp_errors, g.wr_flushed, g.not_flushed, g.connects, g.connect_fail, g.reconnects,
	     g.stalls, g.live);
}

static void step(struct q *q)
{
	double t = now();

	switch (q->st) {
	case Q_IDLE:
		if (g.server || g.device_lost || g.stop || t >= g.end || t < q->t_retry)
			break;
		client_connect(q);
		break;
	case Q_CONNECTING:
		if (t > q->t_deadline) {
			g.connect_fail++;
			jlog("connect_timeout", "\"client\":%u,\"qp\":%u,\"gen\":%u", q->client,
			     q->qpi, q->gen);
			q_release(q);
			if (g.server)
				q->st = Q_DONE;
			else
				client_schedule(q);
		}
		break;
	case Q_RUN:
		if (!g.server && t - q->t_op > OP_TIMEOUT) {
			g.stalls++;
			jlog("stall", "\"client\":%u,\"qp\":%u,\"gen\":%u,\"seq\":%" PRIu64
			     ",\"op\":\"%s\",\"need_send\":%d,\"need_ack\":%d", q->client, q->qpi,
			     q->gen, q->seq, kname[q->op], q->need_send, q->need_ack);
			q_fail(q, "stall", -1);
			rdma_disconnect(q->id);
		}
		break;
	case Q_DRAIN:
		if (q->outstanding == 0 || t > q->t_deadline) {
			q_report(q);
			if (!g.server)
				q->gen++;
		}
		break;
	case Q_CLOSING:
		/* a graceful end: the receives flush, that is no fault */
		if (q->outstanding == 0 || t > q->t_deadline) {
			q_release(q);
			q->st = Q_DONE;
		}
		break;
	case Q_DONE:
		break;
	}
}

static void on_signal(int sig)
{
	g.stop = 1;
}

static int resolve(const char *host, const char *port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;

	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: vfw_soak -s ADDR | -c ADDR -i ID [-q NQP] [-p PORT] [-t SECS] "
			"[-S SEED]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *srv = NULL, *cli = NULL, *port = "7480", *env;
	double secs = 60;
	struct sigaction sa = { .sa_handler = on_signal };
	int opt;

	g.seed = 1;
	g.nqp = 2;
	while ((opt = getopt(argc, argv, "s:c:p:i:q:t:S:")) != -1) {
		switch (opt) {
		case 's': srv = optarg; break;
		case 'c': cli = optarg; break;
		case 'p': port = optarg; break;
		case 'i': g.client = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'q': g.nqp = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 't': secs = atof(optarg); break;
		case 'S': g.seed = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!srv == !cli || !g.nqp || g.nqp > 64 || secs <= 0)
		usage();
	env = getenv("VFW_SOAK_CORRUPT");
	g.corrupt_at = env ? atol(env) : 0;
	g.server = srv != NULL;
	g.t0 = now();
	g.end = g.t0 + secs;
	g.next_stats = g.t0 + STATS_SECS;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	g.ch = rdma_create_event_channel();
	if (!g.ch)
		return 2;
	fcntl(g.ch->fd, F_SETFL, fcntl(g.ch->fd, F_GETFL) | O_NONBLOCK);
	if (resolve(srv ? srv : cli, port, &g.dst)) {
		fprintf(stderr, "cannot resolve %s\n", srv ? srv : cli);
		return 2;
	}
	jlog("start", "\"client\":%d,\"qps\":%u,\"secs\":%.0f,\"seed\":%" PRIu64,
	     g.server ? -1 : (int)g.client, g.server ? 0 : g.nqp, secs, g.seed);
	if (g.server) {
		if (rdma_create_id(g.ch, &g.listen, NULL, RDMA_PS_TCP) ||
		    rdma_bind_addr(g.listen, (struct sockaddr *)&g.dst) ||
		    rdma_listen(g.listen, 1024)) {
			jlog("setup_error", "\"what\":\"listen\",\"errno\":%d", errno);
			return 2;
		}
		if (dev_setup(g.listen->verbs))
			return 2;
	} else {
		for (uint32_t i = 0; i < g.nqp; i++) {
			struct q *q = q_new();

			q->client = g.client;
			q->qpi = i;
			q->pid = (uint32_t)getpid();
			q->st = Q_IDLE;
		}
	}
	for (;;) {
		struct pollfd p[3];
		int np = 0, live = 0;
		double t;

		drain_cm();
		drain_async();
		drain_cc();
		for (unsigned i = 0; i < g.nq; i++) {
			poll_q(g.qs[i]);
			step(g.qs[i]);
			live += g.qs[i]->st != Q_DONE && g.qs[i]->st != Q_IDLE;
		}
		g.live = live;
		/* a server's ended connections go (every fault makes new ones) */
		for (unsigned i = 0; g.server && i < g.nq; i++) {
			if (g.qs[i]->st != Q_DONE)
				continue;
			free(g.qs[i]->buf);
			free(g.qs[i]);
			g.qs[i--] = g.qs[--g.nq];
		}
		t = now();
		if (t >= g.next_stats) {
			stats("stats");
			g.next_stats = t + STATS_SECS;
		}
		/* the end: clients when every slot closed (or never connected
		 * again), servers on SIGTERM or when their time is up */
		if (!g.server && (g.stop || t >= g.end) && !live)
			break;
		if (g.server && (g.stop || t >= g.end))
			break;
		if (!g.server && g.device_lost && !live)
			break;
		p[np++] = (struct pollfd){ .fd = g.ch->fd, .events = POLLIN };
		if (g.ctx && !g.device_lost) {
			p[np++] = (struct pollfd){ .fd = g.ctx->async_fd, .events = POLLIN };
			p[np++] = (struct pollfd){ .fd = g.cc->fd, .events = POLLIN };
		}
		poll(p, np, TICK_MS);
	}
	stats("summary");
	if (g.device_lost)
		return 3;
	return 0;
}
