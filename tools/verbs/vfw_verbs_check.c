// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vfw_verbs_check: data integrity and memory protection over one RC QP,
 * driven through rdma_cm (librdmacm + libibverbs), for any iWARP (or other)
 * verbs device; written for the vfwarp VF but uses nothing vfwarp-specific
 * except the optional foreign-doorbell check (see ring_foreign()).
 *
 *   server:  vfw_verbs_check -s ADDR [-p PORT] [-S SEED] [-t SECS] [-T SECS]
 *   client:  vfw_verbs_check -c ADDR [-p PORT] [-S SEED] [-t SECS] [-D]
 *   stream:  vfw_verbs_check -c ADDR [-p PORT] [-S SEED] -L SECS [-z SIZE] [-r MB/S]
 *
 * The client drives; the server follows commands sent as SEND messages over
 * the same QP (struct msg), strictly in lockstep, so each side always knows
 * which receive the peer's next message will consume (iWARP has no RNR
 * retry: a SEND without a posted receive kills the connection).
 *
 * Data cases (one connection): SEND/RECV, RDMA WRITE and RDMA READ of
 * seeded pseudo-random bytes at a list of sizes, at offset 0 and at
 * unaligned offsets. Both sides derive the expected bytes from the seed and
 * the case number; the receiving side checks every byte, and that every
 * byte of its buffer outside the target range still holds the canary.
 *
 * Protection cases (a fresh connection each; the QP dies): WRITE and READ
 * with a foreign STag, a deregistered STag, an offset crossing / beyond the
 * MR end, and an MR lacking the remote right. The requester must see the
 * error (READ: IBV_WC_REM_ACCESS_ERR; WRITE: asynchronously, the peer's
 * Terminate puts the QP in ERROR: QP_FATAL event / flushed WRs), its QP must
 * end in ERROR, and the target memory must be unchanged; the server checks
 * the latter and that its own QP went to ERROR, and reports its verdict on
 * the next connection.
 *
 * Stream (-L SECS, issue 33): for SECS seconds, RDMA WRITEs and READs of
 * SIZE bytes (default 256 KiB) alternate on one connection, every byte of
 * each checked, and the bytes moved per second reported: a throughput
 * figure whose data is verified. Four seeded patterns of SIZE bytes are
 * computed once on both sides; WRITE n carries pattern (n/2) % 4 with n
 * stamped in its first 8 bytes into one target the server compares after
 * each WRITE, READ n fetches one of four static slots of the server into
 * one sink the client compares. Consecutive transfers to a target carry
 * different patterns, so a segment not placed (stale bytes) is a mismatch;
 * 4 KiB of canary on each side of a target must stay. The comparison is
 * memcmp against the precomputed patterns, so the figure is the device's
 * and the wire's, not the byte generator's. Every half second or so a line
 * "tick T0 T1 BYTES" (CLOCK_REALTIME seconds, bytes verified between them)
 * lets a caller compare windows of the same run, e.g. with and without a
 * hostile neighbour (tests/lab/test_hostile_vf.py). One "PASS stream (...)" line
 * (or "FAIL stream ..." at the first bad transfer), then the usual summary.
 * With -r MB/S the stream is paced (CLOCK_MONOTONIC: no transfer starts
 * before its bytes are due at that rate): a rate the hosts sustain even when
 * the machine is loaded, so that a window below it is the device's doing and
 * not the CPU's (tests comparing windows on a shared machine).
 *
 * Output: one "PASS <case>" / "FAIL <case>: why" line per case and
 * "N passed, M failed"; exit status 1 on any failure, 2 on a setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define SLACK     (16u << 10)
#define BUF_LEN   ((4u << 20) + SLACK)
#define PROT_OFF  (1u << 20)        /* protection MR inside the data buffer */
#define PROT_LEN  (64u << 10)
#define BAD_LEN   4096u             /* length of the forbidden WRITE / READ */

enum wr_ids { WR_CTL_RECV = 1, WR_DATA_RECV, WR_CTL_SEND, WR_DATA_SEND, WR_RDMA };

enum cmds {
	CMD_SEND_PREP = 1, CMD_SEND_CHECK, CMD_WRITE_PREP, CMD_WRITE_CHECK,
	CMD_READ_PREP, CMD_PROT_PREP, CMD_VERDICT, CMD_PROBE, CMD_DB_PREP,
	CMD_DB_CHECK, CMD_QUIT, CMD_STREAM_PREP, CMD_STREAM_CHECK, CMD_REPLY = 100,
};

enum prot_kind { PK_FOREIGN, PK_INVALID, PK_OOB_CROSS, PK_OOB_BEYOND, PK_NORIGHT, PK_N };
static const char *const pk_name[PK_N] = {
	"foreign-stag", "deregistered-stag", "oob-crossing-end", "oob-beyond-end",
	"missing-right",
};

struct msg {
	uint32_t op, kind;          /* CMD_*; prot kind; for replies: the cmd */
	uint32_t status;            /* reply: 0 ok, else failed (text says why) */
	uint32_t rkey, rkey_data, rkey_ctl;
	uint64_t size, off, addr, len, bad_off, case_id;
	char text[160];
};

struct conn {
	struct rdma_event_channel *ch;  /* client: own channel; server: listener's */
	struct rdma_cm_id *id;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint32_t sq_posted;         /* SQ WQEs posted (the provider's producer index) */
	int fatal;                  /* async QP error event seen */
	bool disconnected;
	bool data_wc_valid;
	struct ibv_wc data_wc;
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t *data;
	struct ibv_mr *data_mr, *ctl_mr;
	struct msg *ctl_rx, *ctl_tx;
	uint64_t seed;
	double op_secs;
	int verbose;
	uint8_t *pat[4];            /* stream patterns, pat_size bytes each */
	uint64_t pat_size;
} g;

/* Stream layout in the data buffer (both sides): READ slots at k * size,
 * the WRITE target (server) / READ sink (client) at STREAM_TGT, with
 * STREAM_GUARD bytes of canary before and after it. */
#define STREAM_MAX   (512u << 10)
#define STREAM_TGT   ((2u << 20) + 4096)
#define STREAM_GUARD 4096u

static int npass, nfail;

/* ---- helpers ------------------------------------------------------------ */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void vlog(const char *fmt, ...)
{
	va_list ap;

	if (!g.verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "# ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* The bytes of case `id`: a stream both sides derive from the seed. */
struct gen { uint64_t s, w; unsigned left; };

static void gen_init(struct gen *gn, uint64_t case_id)
{
	gn->s = g.seed ^ (case_id * 0xD1B54A32D192ED03ull);
	gn->left = 0;
}

static uint8_t gen_byte(struct gen *gn)
{
	if (!gn->left) {
		gn->w = splitmix(&gn->s);
		gn->left = 8;
	}
	gn->left--;
	return (uint8_t)(gn->w >> (gn->left * 8));
}

static void fill_data(uint8_t *p, uint64_t n, uint64_t case_id)
{
	struct gen gn;

	gen_init(&gn, case_id);
	for (uint64_t i = 0; i < n; i++)
		p[i] = gen_byte(&gn);
}

/* Returns the first mismatching offset or UINT64_MAX. */
static uint64_t check_data(const uint8_t *p, uint64_t n, uint64_t case_id)
{
	struct gen gn;

	gen_init(&gn, case_id);
	for (uint64_t i = 0; i < n; i++)
		if (p[i] != gen_byte(&gn))
			return i;
	return UINT64_MAX;
}

/* Canary: depends on the offset, so a shifted copy of it is noticed too. */
static inline uint8_t canary(uint64_t i)
{
	return (uint8_t)((i * 0x9Eu) ^ (i >> 9) ^ 0x5Au);
}

static void fill_canary(void)
{
	for (uint64_t i = 0; i < BUF_LEN; i++)
		g.data[i] = canary(i);
}

/* First offset outside [skip, skip+n) that lost its canary, or UINT64_MAX. */
static uint64_t check_canary(uint64_t skip, uint64_t n)
{
	for (uint64_t i = 0; i < BUF_LEN; i++) {
		if (i == skip && n) {
			i += n - 1;
			continue;
		}
		if (g.data[i] != canary(i))
			return i;
	}
	return UINT64_MAX;
}

/* The four stream patterns of `size` bytes, computed once: a word at a time
 * from the seed (both sides derive the same). */
static int stream_patterns(uint64_t size)
{
	if (size == g.pat_size)
		return 0;
	for (int k = 0; k < 4; k++) {
		uint64_t st = g.seed ^ (0x5EED0000ull + k) * 0xD1B54A32D192ED03ull;

		free(g.pat[k]);
		g.pat[k] = malloc(size + 8);
		if (!g.pat[k])
			return -1;
		for (uint64_t i = 0; i < size; i += 8) {
			uint64_t w = splitmix(&st);

			memcpy(g.pat[k] + i, &w, 8);
		}
	}
	g.pat_size = size;
	return 0;
}

/* The canary guards around the stream target intact: first bad offset or
 * UINT64_MAX. */
static uint64_t stream_guards(uint64_t size)
{
	uint64_t ranges[2] = { STREAM_TGT - STREAM_GUARD, STREAM_TGT + size };

	for (int r = 0; r < 2; r++)
		for (uint64_t i = ranges[r]; i < ranges[r] + STREAM_GUARD; i++)
			if (g.data[i] != canary(i))
				return i;
	return UINT64_MAX;
}

/* Target bytes against pattern k with `stamp` in its first 8 bytes
 * (UINT64_MAX: no stamp): "" or why not. */
static const char *stream_compare(uint64_t size, int k, uint64_t stamp, char *why, size_t n)
{
	const uint8_t *t = g.data + STREAM_TGT;
	uint64_t got, b;

	memcpy(&got, t, 8);
	if (stamp != UINT64_MAX && got != stamp) {
		snprintf(why, n, "stamp %" PRIu64 ", expected %" PRIu64, got, stamp);
		return why;
	}
	if (memcmp(t + 8, g.pat[k] + 8, size - 8) ||
	    (stamp == UINT64_MAX && memcmp(t, g.pat[k], 8))) {
		for (b = stamp != UINT64_MAX ? 8 : 0; b < size && t[b] == g.pat[k][b]; b++)
			;
		snprintf(why, n, "data mismatch at offset %" PRIu64 " of %" PRIu64, b, size);
		return why;
	}
	b = stream_guards(size);
	if (b != UINT64_MAX) {
		snprintf(why, n, "canary overwritten at buffer offset %" PRIu64, b);
		return why;
	}
	return "";
}

static void drain_async(struct conn *c)
{
	struct ibv_async_event ev;

	while (ibv_get_async_event(g.ctx, &ev) == 0) {
		bool ours = c && c->qp && ev.element.qp == c->qp;

		vlog("async event %s%s\n", ibv_event_type_str(ev.event_type),
		     ours ? " (our QP)" : "");
		if (ours && (ev.event_type == IBV_EVENT_QP_FATAL ||
			     ev.event_type == IBV_EVENT_QP_REQ_ERR ||
			     ev.event_type == IBV_EVENT_QP_ACCESS_ERR))
			c->fatal = ev.event_type;
		ibv_ack_async_event(&ev);
	}
}

/* Next CM event on `ch` within `secs` (NULL on timeout). */
static struct rdma_cm_event *cm_event(struct rdma_event_channel *ch, double secs)
{
	struct rdma_cm_event *ev;
	double end = now() + secs;

	for (;;) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		int ms = (int)((end - now()) * 1000);

		if (rdma_get_cm_event(ch, &ev) == 0)
			return ev;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return NULL;
		if (ms <= 0)
			return NULL;
		poll(&pfd, 1, ms > 200 ? 200 : ms);
	}
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct rdma_cm_event *pending_req;

/* Wait for an event of `type` for `id` (others are noted and acked). */
static int cm_wait(struct conn *c, enum rdma_cm_event_type type, double secs)
{
	double end = now() + secs;

	while (now() < end) {
		struct rdma_cm_event *ev = cm_event(c->ch, end - now());
		enum rdma_cm_event_type t;
		int st;

		if (!ev)
			break;
		t = ev->event;
		st = ev->status;
		vlog("cm event %s status %d\n", rdma_event_str(t), st);
		if (t == RDMA_CM_EVENT_DISCONNECTED)
			c->disconnected = true;
		if (t == RDMA_CM_EVENT_CONNECT_REQUEST && type != t && !pending_req) {
			/* server: the next connection, early; keep it */
			pending_req = ev;
			continue;
		}
		rdma_ack_cm_event(ev);
		if (t == type)
			return 0;
		if (t == RDMA_CM_EVENT_ADDR_ERROR || t == RDMA_CM_EVENT_ROUTE_ERROR ||
		    t == RDMA_CM_EVENT_CONNECT_ERROR || t == RDMA_CM_EVENT_UNREACHABLE ||
		    t == RDMA_CM_EVENT_REJECTED) {
			fprintf(stderr, "cm: %s (status %d) while waiting for %s\n",
				rdma_event_str(t), st, rdma_event_str(type));
			return -1;
		}
	}
	return -1;
}

/* Resources per device: PD and MRs once, reused by every connection. */
static int dev_setup(struct ibv_context *ctx)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	if (g.ctx) {
		if (g.ctx != ctx) {
			fprintf(stderr, "connection on another device context\n");
			return -1;
		}
		return 0;
	}
	g.ctx = ctx;
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	g.pd = ibv_alloc_pd(ctx);
	if (!g.pd) {
		perror("ibv_alloc_pd");
		return -1;
	}
	g.data_mr = ibv_reg_mr(g.pd, g.data, BUF_LEN, acc);
	g.ctl_mr = ibv_reg_mr(g.pd, g.ctl_rx, 2 * sizeof(struct msg), acc);
	if (!g.data_mr || !g.ctl_mr) {
		perror("ibv_reg_mr");
		return -1;
	}
	vlog("device %s, data rkey 0x%x\n", ibv_get_device_name(ctx->device), g.data_mr->rkey);
	return 0;
}

static int qp_setup(struct conn *c)
{
	struct ibv_qp_init_attr a = { 0 };

	c->scq = ibv_create_cq(g.ctx, 32, NULL, NULL, 0);
	c->rcq = ibv_create_cq(g.ctx, 32, NULL, NULL, 0);
	if (!c->scq || !c->rcq) {
		perror("ibv_create_cq");
		return -1;
	}
	a.send_cq = c->scq;
	a.recv_cq = c->rcq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, g.pd, &a)) {
		perror("rdma_create_qp");
		return -1;
	}
	c->qp = c->id->qp;
	return 0;
}

static int post_recv(struct conn *c, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = ibv_post_recv(c->qp, &wr, &bad);

	if (rc)
		fprintf(stderr, "ibv_post_recv: %s\n", strerror(rc));
	return rc ? -1 : 0;
}

static int post_ctl_recv(struct conn *c)
{
	return post_recv(c, WR_CTL_RECV, g.ctl_rx, sizeof(struct msg), g.ctl_mr->lkey);
}

static int post_send(struct conn *c, uint64_t wr_id, enum ibv_wr_opcode op, void *buf,
		     uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int rc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	rc = ibv_post_send(c->qp, &wr, &bad);
	if (rc) {
		fprintf(stderr, "ibv_post_send: %s\n", strerror(rc));
		return -1;
	}
	c->sq_posted++;
	return 0;
}

/* One completion from `cq` within `secs`: 1 got, 0 timeout, -1 poll error. */
static int poll_one(struct conn *c, struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	double end = now() + secs;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return -1;
		if (n == 1) {
			if (wc->status != IBV_WC_SUCCESS)
				vlog("wc wr_id %" PRIu64 " status %s\n", wc->wr_id,
				     ibv_wc_status_str(wc->status));
			return 1;
		}
		drain_async(c);
		if (now() > end)
			return 0;
		usleep(200);
	}
}

/* Send completion of the WR just posted; returns its status or -1 on timeout. */
static int wait_send(struct conn *c, double secs)
{
	struct ibv_wc wc;

	if (poll_one(c, c->scq, &wc, secs) != 1)
		return -1;
	return wc.status;
}

static int send_msg(struct conn *c, const struct msg *m)
{
	int st;

	*g.ctl_tx = *m;
	if (post_send(c, WR_CTL_SEND, IBV_WR_SEND, g.ctl_tx, sizeof(*m), g.ctl_mr->lkey, 0, 0))
		return -1;
	st = wait_send(c, g.op_secs);
	if (st) {
		fprintf(stderr, "control SEND: %s\n",
			st < 0 ? "timeout" : ibv_wc_status_str(st));
		return -1;
	}
	return 0;
}

/*
 * The next control message; data receive completions on the way are kept in
 * c->data_wc. 1 got (the caller reposts the receive), 0 timeout, -1 flushed
 * or failed (status in *st if not NULL).
 */
static int recv_msg(struct conn *c, struct msg *m, double secs, int *st)
{
	double end = now() + secs;
	struct ibv_wc wc;

	for (;;) {
		int r = poll_one(c, c->rcq, &wc, end - now());

		if (r <= 0)
			return r;
		if (wc.wr_id == WR_DATA_RECV) {
			c->data_wc = wc;
			c->data_wc_valid = true;
			continue;
		}
		if (st)
			*st = wc.status;
		if (wc.status != IBV_WC_SUCCESS)
			return -1;
		if (wc.byte_len != sizeof(*m)) {
			fprintf(stderr, "control message of %u bytes\n", wc.byte_len);
			return -1;
		}
		*m = *g.ctl_rx;
		return 1;
	}
}

/* Client: command, then its reply (the control receive reposted). */
static int rpc(struct conn *c, struct msg *m)
{
	uint32_t op = m->op;

	if (send_msg(c, m))
		return -1;
	if (recv_msg(c, m, g.op_secs * 2, NULL) != 1) {
		fprintf(stderr, "no reply to command %u\n", op);
		return -1;
	}
	if (post_ctl_recv(c))
		return -1;
	if (m->op != CMD_REPLY || m->kind != op) {
		fprintf(stderr, "bad reply %u/%u to command %u\n", m->op, m->kind, op);
		return -1;
	}
	return 0;
}

static void conn_close(struct conn *c)
{
	if (!c->id)
		return;
	if (!c->disconnected) {
		rdma_disconnect(c->id);
		cm_wait(c, RDMA_CM_EVENT_DISCONNECTED, 5);
	}
	drain_async(c);
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->scq)
		ibv_destroy_cq(c->scq);
	if (c->rcq)
		ibv_destroy_cq(c->rcq);
	rdma_destroy_id(c->id);
	c->id = NULL;
	c->qp = NULL;
	c->scq = c->rcq = NULL;
}

static int qp_state(struct conn *c)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(c->qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

/* ---- server ------------------------------------------------------------- */

struct verdict { uint32_t status; uint64_t bad_off; char text[160]; };

static void reply(struct conn *c, uint32_t cmd, uint32_t status, uint64_t bad,
		  const char *fmt, ...)
{
	struct msg r = { .op = CMD_REPLY, .kind = cmd, .status = status, .bad_off = bad,
			 .addr = (uintptr_t)g.data, .len = BUF_LEN,
			 .rkey = g.data_mr->rkey, .rkey_data = g.data_mr->rkey,
			 .rkey_ctl = g.ctl_mr->rkey };
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(r.text, sizeof(r.text), fmt, ap);
		va_end(ap);
	}
	send_msg(c, &r);
}

static int check_region(uint64_t off, uint64_t n, uint64_t case_id, uint64_t *bad,
			char *why, size_t whylen)
{
	uint64_t b = check_data(g.data + off, n, case_id);

	if (b != UINT64_MAX) {
		*bad = b;
		snprintf(why, whylen, "data mismatch at offset %" PRIu64 " (byte %u)",
			 b, g.data[off + b]);
		return 1;
	}
	b = check_canary(off, n);
	if (b != UINT64_MAX) {
		*bad = b;
		snprintf(why, whylen, "canary overwritten at buffer offset %" PRIu64, b);
		return 1;
	}
	return 0;
}

/*
 * The WRITE crossing the MR end (BAD_LEN bytes at MR end - BAD_LEN / 2) is
 * carried in several DDP segments, and DDP (RFC 5041) validates and places
 * each tagged segment on its own: segments wholly inside the MR may be placed
 * before the one crossing the end is refused. So: nothing outside the MR may
 * change, and what changed inside it must be the WRITE's own bytes at their
 * own place. Returns the first bad offset or UINT64_MAX; *placed counts the
 * bytes placed inside the MR.
 */
static uint64_t check_crossing(uint64_t *placed)
{
	uint64_t end = PROT_OFF + PROT_LEN, start = end - BAD_LEN / 2;
	struct gen gn;

	*placed = 0;
	gen_init(&gn, 9000 + PK_OOB_CROSS);
	for (uint64_t i = 0; i < BUF_LEN; i++) {
		uint8_t want = i >= start && i < end ? gen_byte(&gn) : 0;

		if (g.data[i] == canary(i))
			continue;
		if (i >= start && i < end && g.data[i] == want) {
			(*placed)++;
			continue;
		}
		return i;
	}
	return UINT64_MAX;
}

/*
 * A protection case on the server: set up the target MR, reply, then wait for
 * the QP to go to ERROR and check that the whole buffer kept its canary.
 */
static void serve_prot(struct conn *c, const struct msg *m, struct verdict *v)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr;
	struct msg r = { .op = CMD_REPLY, .kind = CMD_PROT_PREP,
			 .rkey_data = g.data_mr->rkey, .rkey_ctl = g.ctl_mr->rkey };
	bool write = m->size == 1, saw_err = false, probe = false;
	int st = 0, qs;
	double end;
	uint64_t b, placed = 0;

	memset(v, 0, sizeof(*v));
	fill_canary();
	if (m->kind == PK_NORIGHT)
		acc &= write ? ~IBV_ACCESS_REMOTE_WRITE : ~IBV_ACCESS_REMOTE_READ;
	mr = ibv_reg_mr(g.pd, g.data + PROT_OFF, PROT_LEN, acc);
	if (!mr) {
		v->status = 1;
		snprintf(v->text, sizeof(v->text), "server: ibv_reg_mr: %s", strerror(errno));
		r.status = 1;
		send_msg(c, &r);
		return;
	}
	r.addr = (uintptr_t)(g.data + PROT_OFF);
	r.len = PROT_LEN;
	r.rkey = mr->rkey;
	if (m->kind == PK_INVALID) {
		/* The peer gets the STag of an MR that no longer exists. */
		if (ibv_dereg_mr(mr)) {
			v->status = 1;
			snprintf(v->text, sizeof(v->text), "server: ibv_dereg_mr failed");
		}
		mr = NULL;
	}
	if (post_ctl_recv(c) || send_msg(c, &r)) {
		v->status = 1;
		snprintf(v->text, sizeof(v->text), "server: reply failed");
		goto out;
	}
	/* Evidence of ERROR: the QP_FATAL event or the flush of our receive. */
	end = now() + g.op_secs;
	while (now() < end && !(saw_err && c->fatal)) {
		struct msg pm;
		int rr = recv_msg(c, &pm, 0.2, &st);

		if (rr == 1) {
			probe = true;    /* the QP still delivered a message */
			post_ctl_recv(c);
		} else if (rr < 0) {
			saw_err = true;
		}
		if (c->fatal)
			saw_err = true;
		if (saw_err && !c->fatal && now() > end - g.op_secs / 2)
			break;       /* flushed; the event need not come */
	}
	/* The client's probe SEND follows the violation: it must not be
	 * delivered even after the error was reported. */
	end = now() + 1;
	while (now() < end) {
		struct ibv_wc wc;

		if (ibv_poll_cq(c->rcq, 1, &wc) == 1 && wc.status == IBV_WC_SUCCESS)
			probe = true;
		usleep(1000);
	}
	qs = qp_state(c);
	if (m->kind == PK_OOB_CROSS && write)
		b = check_crossing(&placed);
	else
		b = check_canary(0, 0);
	if (b != UINT64_MAX)
		snprintf(v->text, sizeof(v->text),
			 "target memory changed at buffer offset %" PRIu64 " (prot MR at %u)",
			 b, PROT_OFF);
	else if (probe)
		snprintf(v->text, sizeof(v->text), "server QP delivered a SEND after the violation");
	else if (!saw_err)
		snprintf(v->text, sizeof(v->text), "server QP did not go to ERROR");
	else if (qs != IBV_QPS_ERR)
		snprintf(v->text, sizeof(v->text), "server QP state %d, not ERROR", qs);
	else
		snprintf(v->text, sizeof(v->text),
			 "server: target unchanged%s, QP ERROR (%s%s%s)",
			 placed ? " outside the MR, in-bounds segments placed" : "",
			 c->fatal ? ibv_event_type_str(c->fatal) : "",
			 c->fatal && st ? ", " : "", st ? ibv_wc_status_str(st) : "");
	v->status = b != UINT64_MAX || probe || !saw_err || qs != IBV_QPS_ERR;
	v->bad_off = b;
out:
	if (mr)
		ibv_dereg_mr(mr);
}

/* Serve one connection until QUIT (returns 1), disconnect or error (0). */
static int serve_conn(struct conn *c, struct verdict *v)
{
	struct msg m;
	char why[160];
	uint64_t bad = 0;

	for (;;) {
		int r = recv_msg(c, &m, 600, NULL);

		if (r != 1) {
			vlog("server: connection ended (%d)\n", r);
			return 0;
		}
		if (m.op == CMD_SEND_PREP) {
			fill_canary();
			c->data_wc_valid = false;
			if (m.off > BUF_LEN || m.size > BUF_LEN - m.off ||
			    post_recv(c, WR_DATA_RECV, g.data + m.off, (uint32_t)m.size,
				      g.data_mr->lkey))
				return 0;
		}
		if (m.op == CMD_PROT_PREP) {
			serve_prot(c, &m, v);
			printf("server: prot %s %s: %s\n", m.size == 1 ? "write" : "read",
			       m.kind < PK_N ? pk_name[m.kind] : "?", v->text);
			return 0;
		}
		if (post_ctl_recv(c))
			return 0;
		if (m.op == CMD_STREAM_PREP) {
			if (m.size < 8 || m.size > STREAM_MAX || m.size % 8 || stream_patterns(m.size)) {
				reply(c, m.op, 1, 0, "bad stream size %" PRIu64, m.size);
				continue;
			}
			fill_canary();
			for (int k = 0; k < 4; k++)
				memcpy(g.data + k * m.size, g.pat[k], m.size);
			reply(c, m.op, 0, 0, NULL);
			continue;
		}
		if (m.op == CMD_STREAM_CHECK) {
			const char *bad_why = m.size != g.pat_size ? "stream not prepared" :
				stream_compare(m.size, (int)(m.case_id & 3), m.off, why, sizeof(why));

			if (bad_why[0])
				reply(c, m.op, 1, 0, "write %" PRIu64 ": %s", m.off, bad_why);
			else
				reply(c, m.op, 0, 0, NULL);
			continue;
		}
		if (m.off > BUF_LEN || m.size > BUF_LEN - m.off) {
			reply(c, m.op, 1, 0, "bad size/offset");
			continue;
		}
		switch (m.op) {
		case CMD_SEND_PREP:
			reply(c, m.op, 0, 0, NULL);
			break;
		case CMD_SEND_CHECK:
			if (!c->data_wc_valid) {
				reply(c, m.op, 1, 0, "no receive completion");
			} else if (c->data_wc.status != IBV_WC_SUCCESS) {
				reply(c, m.op, 1, 0, "receive completed with %s",
				      ibv_wc_status_str(c->data_wc.status));
			} else if (c->data_wc.byte_len != m.size) {
				reply(c, m.op, 1, 0, "received %u bytes, expected %" PRIu64,
				      c->data_wc.byte_len, m.size);
			} else if (check_region(m.off, m.size, m.case_id, &bad, why, sizeof(why))) {
				reply(c, m.op, 1, bad, "%s", why);
			} else {
				reply(c, m.op, 0, 0, NULL);
			}
			c->data_wc_valid = false;
			break;
		case CMD_WRITE_PREP:
			fill_canary();
			reply(c, m.op, 0, 0, NULL);
			break;
		case CMD_WRITE_CHECK:
			if (check_region(m.off, m.size, m.case_id, &bad, why, sizeof(why)))
				reply(c, m.op, 1, bad, "%s", why);
			else
				reply(c, m.op, 0, 0, NULL);
			break;
		case CMD_READ_PREP:
			fill_canary();
			fill_data(g.data + m.off, m.size, m.case_id);
			reply(c, m.op, 0, 0, NULL);
			break;
		case CMD_DB_PREP:
			fill_canary();
			c->data_wc_valid = false;
			reply(c, m.op, 0, 0, NULL);
			break;
		case CMD_DB_CHECK:
			/* Nothing may have arrived between PREP and CHECK. */
			bad = check_canary(0, 0);
			if (c->data_wc_valid)
				reply(c, m.op, 1, 0, "unexpected receive completion");
			else if (bad != UINT64_MAX)
				reply(c, m.op, 1, bad, "memory changed at offset %" PRIu64, bad);
			else
				reply(c, m.op, 0, 0, NULL);
			break;
		case CMD_VERDICT:
			reply(c, m.op, v->status, v->bad_off, "%s", v->text);
			memset(v, 0, sizeof(*v));
			snprintf(v->text, sizeof(v->text), "no protection case ran");
			v->status = 1;
			break;
		case CMD_QUIT:
			reply(c, m.op, 0, 0, NULL);
			return 1;
		default:
			/* e.g. CMD_PROBE: must never arrive (the QP is in ERROR) */
			reply(c, m.op, 1, 0, "unexpected command %u", m.op);
			break;
		}
	}
}

static int resolve(const char *host, const char *port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	int rc = getaddrinfo(host, port, &hints, &ai);

	if (rc) {
		fprintf(stderr, "%s: %s\n", host, gai_strerror(rc));
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

static int run_server(const char *host, const char *port, double idle)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lid;
	struct sockaddr_storage ss;
	struct verdict v = { .status = 1, .text = "no protection case ran" };
	int quit = 0;

	if (!ch || resolve(host, port, &ss))
		return 2;
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	if (rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&ss) || rdma_listen(lid, 4)) {
		perror("server listen");
		return 2;
	}
	if (!lid->verbs || dev_setup(lid->verbs))
		return 2;
	printf("server: listening on %s:%s (%s)\n", host, port,
	       ibv_get_device_name(lid->verbs->device));
	fflush(stdout);
	while (!quit) {
		struct rdma_cm_event *ev = pending_req ? pending_req : cm_event(ch, idle);
		struct rdma_conn_param cp = { .initiator_depth = 1, .responder_resources = 1 };
		struct conn c = { .ch = ch };

		pending_req = NULL;
		if (!ev) {
			fprintf(stderr, "server: no connection for %.0f s\n", idle);
			return 2;
		}
		if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			vlog("server: cm event %s ignored\n", rdma_event_str(ev->event));
			rdma_ack_cm_event(ev);
			continue;
		}
		c.id = ev->id;
		rdma_ack_cm_event(ev);
		if (qp_setup(&c) || post_ctl_recv(&c) || rdma_accept(c.id, &cp) ||
		    cm_wait(&c, RDMA_CM_EVENT_ESTABLISHED, 30)) {
			fprintf(stderr, "server: accept failed\n");
			conn_close(&c);
			continue;
		}
		quit = serve_conn(&c, &v);
		conn_close(&c);
		fflush(stdout);
	}
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	printf("server: done\n");
	return 0;
}

/* ---- client ------------------------------------------------------------- */

static struct sockaddr_storage srv_addr;

static int connect_to(struct conn *c)
{
	struct rdma_conn_param cp = { .initiator_depth = 1, .responder_resources = 1,
				      .retry_count = 7 };

	memset(c, 0, sizeof(*c));
	c->ch = rdma_create_event_channel();
	if (!c->ch)
		return -1;
	fcntl(c->ch->fd, F_SETFL, fcntl(c->ch->fd, F_GETFL) | O_NONBLOCK);
	if (rdma_create_id(c->ch, &c->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&srv_addr, 5000) ||
	    cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED, 10) ||
	    rdma_resolve_route(c->id, 5000) ||
	    cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED, 10) ||
	    dev_setup(c->id->verbs) || qp_setup(c) || post_ctl_recv(c) ||
	    rdma_connect(c->id, &cp) || cm_wait(c, RDMA_CM_EVENT_ESTABLISHED, 30)) {
		fprintf(stderr, "client: connect failed\n");
		return -1;
	}
	return 0;
}

static void conn_free(struct conn *c)
{
	conn_close(c);
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	c->ch = NULL;
}

static void result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s", ok ? "PASS" : "FAIL", name);
	if (fmt) {
		printf(ok ? " (" : ": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		if (ok)
			printf(")");
	}
	printf("\n");
	fflush(stdout);
	if (ok)
		npass++;
	else
		nfail++;
}

static const uint64_t sizes[] = {
	1, 2, 3, 7, 64, 4095, 4096, 4097, 65536, (1u << 20) + 13, 4u << 20,
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

enum dop { OP_SEND, OP_WRITE, OP_READ };
static const char *const dop_name[] = { "send", "write", "read" };

/* One data case; returns false if the connection is no longer usable. */
static bool data_case(struct conn *c, enum dop op, unsigned si, int variant)
{
	static const enum ibv_wr_opcode wop[] = { IBV_WR_SEND, IBV_WR_RDMA_WRITE,
						  IBV_WR_RDMA_READ };
	static const uint32_t prep[] = { CMD_SEND_PREP, CMD_WRITE_PREP, CMD_READ_PREP };
	uint64_t n = sizes[si];
	uint64_t coff = variant ? 3 + 517 * si : 0;      /* unaligned, < SLACK */
	uint64_t soff = variant ? 4097 + 7 * si : 0;
	uint64_t id = 1000 * (op + 1) + 10 * si + variant;
	struct msg m = { .op = prep[op], .size = n, .off = soff, .case_id = id };
	char name[64], why[160];
	uint64_t bad;
	int st;

	snprintf(name, sizeof(name), "%s %" PRIu64 "%s", dop_name[op], n,
		 variant ? " unaligned" : "");
	if (rpc(c, &m))
		goto broken;
	if (m.status) {
		result(false, name, "server: %s", m.text);
		return true;
	}
	if (op == OP_READ)
		fill_canary();
	else
		fill_data(g.data + coff, n, id);
	if (post_send(c, op == OP_SEND ? WR_DATA_SEND : WR_RDMA, wop[op], g.data + coff,
		      (uint32_t)n, g.data_mr->lkey, m.addr + soff, m.rkey))
		goto broken;
	st = wait_send(c, g.op_secs);
	if (st) {
		result(false, name, "%s completion: %s", dop_name[op],
		       st < 0 ? "timeout" : ibv_wc_status_str(st));
		return false;
	}
	if (op == OP_READ) {
		/* the reader checks its sink: data, and canary around it */
		if (check_region(coff, n, id, &bad, why, sizeof(why)))
			result(false, name, "%s", why);
		else
			result(true, name, NULL);
		return true;
	}
	/* WRITE: the SEND after it arrives only after the WRITE was placed */
	m = (struct msg){ .op = op == OP_SEND ? CMD_SEND_CHECK : CMD_WRITE_CHECK,
			  .size = n, .off = soff, .case_id = id };
	if (rpc(c, &m))
		goto broken;
	if (m.status)
		result(false, name, "server: %s", m.text);
	else
		result(true, name, NULL);
	return true;
broken:
	result(false, name, "control exchange failed");
	return false;
}

/*
 * A forbidden WRITE / READ on a fresh connection, then a second connection
 * for the server's verdict (target memory, its QP state).
 */
static void prot_case(enum prot_kind k, bool write)
{
	struct conn c;
	struct msg m = { .op = CMD_PROT_PREP, .kind = k, .size = write };
	char name[64], why[200] = "", how[200] = "";
	uint64_t raddr, len = BAD_LEN, b;
	uint32_t rkey;
	int st, qs = -1, probe_st = -1;
	bool flushed = false, probe = false;
	double end;

	snprintf(name, sizeof(name), "prot %s %s", write ? "write" : "read", pk_name[k]);
	if (connect_to(&c)) {
		result(false, name, "connect failed");
		conn_free(&c);
		return;
	}
	if (send_msg(&c, &m) || recv_msg(&c, &m, g.op_secs * 2, NULL) != 1 ||
	    m.op != CMD_REPLY || m.kind != CMD_PROT_PREP || post_ctl_recv(&c)) {
		result(false, name, "control exchange failed");
		conn_free(&c);
		return;
	}
	if (m.status) {
		result(false, name, "server: set-up failed");
		conn_free(&c);
		return;
	}
	raddr = m.addr;
	rkey = m.rkey;
	switch (k) {
	case PK_FOREIGN: {
		uint64_t s = g.seed ^ 0xF0F0F0F0ull;

		do
			rkey = (uint32_t)splitmix(&s);
		while (rkey == m.rkey || rkey == m.rkey_data || rkey == m.rkey_ctl);
		break;
	}
	case PK_OOB_CROSS:
		raddr = m.addr + m.len - BAD_LEN / 2;
		break;
	case PK_OOB_BEYOND:
		raddr = m.addr + m.len + 64;
		len = 64;
		break;
	default:
		break;
	}
	if (write)
		fill_data(g.data, len, 9000 + k);
	else
		fill_canary();
	vlog("%s: %s %" PRIu64 " bytes at 0x%" PRIx64 " rkey 0x%x (MR 0x%" PRIx64
	     "+%" PRIu64 " rkey 0x%x)\n", name, write ? "WRITE" : "READ", len, raddr, rkey,
	     m.addr, m.len, m.rkey);
	if (post_send(&c, WR_RDMA, write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, g.data,
		      (uint32_t)len, g.data_mr->lkey, raddr, rkey)) {
		result(false, name, "post failed");
		conn_free(&c);
		return;
	}
	st = wait_send(&c, g.op_secs);
	if (st < 0)
		snprintf(why, sizeof(why), "%s did not complete", write ? "WRITE" : "READ");
	else if (!write && st != IBV_WC_REM_ACCESS_ERR)
		snprintf(why, sizeof(why), "READ completed with %s, expected %s",
			 ibv_wc_status_str(st), ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	if (write && st == IBV_WC_SUCCESS) {
		/* a SEND behind the WRITE: the server must never deliver it */
		struct msg pm = { .op = CMD_PROBE };

		*g.ctl_tx = pm;
		probe = !post_send(&c, WR_CTL_SEND, IBV_WR_SEND, g.ctl_tx, sizeof(pm),
				   g.ctl_mr->lkey, 0, 0);
	}
	/* The QP must reach ERROR: QP_FATAL and/or our receive flushed. */
	end = now() + g.op_secs;
	while (now() < end) {
		struct ibv_wc wc;

		if (ibv_poll_cq(c.rcq, 1, &wc) == 1) {
			if (wc.status == IBV_WC_SUCCESS)
				snprintf(why, sizeof(why), "a message arrived after the violation");
			else
				flushed = true;
		}
		if (ibv_poll_cq(c.scq, 1, &wc) == 1 && wc.wr_id == WR_CTL_SEND)
			probe_st = wc.status;
		drain_async(&c);
		qs = qp_state(&c);
		if (qs == IBV_QPS_ERR && (c.fatal || flushed) && (!probe || probe_st >= 0))
			break;
		usleep(1000);
	}
	if (!why[0] && !(c.fatal || flushed))
		snprintf(why, sizeof(why), "no QP error event and nothing flushed");
	else if (!why[0] && qs != IBV_QPS_ERR)
		snprintf(why, sizeof(why), "QP state %d, not ERROR", qs);
	if (!write && !why[0]) {
		b = check_canary(0, 0);
		if (b != UINT64_MAX)
			snprintf(why, sizeof(why), "READ sink changed at offset %" PRIu64, b);
	}
	snprintf(how, sizeof(how), "%s %s; QP ERROR:%s%s%s%s", write ? "WRITE" : "READ",
		 st < 0 ? "timeout" : ibv_wc_status_str(st),
		 c.fatal ? " " : "", c.fatal ? ibv_event_type_str(c.fatal) : "",
		 flushed ? " recv flushed" : "",
		 probe ? (probe_st < 0 ? "; probe SEND pending" :
			  probe_st ? "; probe SEND flushed" : "; probe SEND sent") : "");
	conn_free(&c);

	m = (struct msg){ .op = CMD_VERDICT };
	if (connect_to(&c) || rpc(&c, &m)) {
		result(false, name, "%s%sno verdict from the server", why, why[0] ? "; " : "");
	} else if (why[0] || m.status) {
		result(false, name, "%s%s%s", why, why[0] && m.status ? "; " : "",
		       m.status ? m.text : "");
	} else {
		result(true, name, "%s; %s", how, m.text);
	}
	conn_free(&c);
}

/* ---- a foreign doorbell (vfwarp-specific) -------------------------------- */

static char *read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	size_t cap = 1 << 16, len = 0, n;
	char *s = malloc(cap);

	if (!f || !s)
		exit(3);
	while ((n = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 4096) {
			cap *= 2;
			s = realloc(s, cap);
			if (!s)
				exit(3);
		}
	}
	s[len] = 0;
	fclose(f);
	return s;
}

/*
 * The attacker (a separate process, exec'd fresh): opens its own context on
 * the device, which maps its own doorbell page -- the only write-only shared
 * mapping of /dev/infiniband/uverbs* that appears on open -- and rings the SQ
 * doorbell of another process's QP through it. The device must refuse it
 * (the page is not the QP's) and count DB_REFUSED.
 */
static int ring_foreign(const char *dev, uint32_t qpn, uint32_t pi)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	char *before, *after, *line, *save = NULL;
	unsigned long start = 0;
	int found = 0;

	alarm(30);
	before = read_maps();
	for (int i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), dev))
			ctx = ibv_open_device(l[i]);
	if (!ctx) {
		fprintf(stderr, "attacker: cannot open %s\n", dev);
		return 3;
	}
	after = read_maps();
	for (line = strtok_r(after, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, " -w-s ") || !strstr(line, "/dev/infiniband/uverbs") ||
		    strstr(before, line))
			continue;
		found++;
		sscanf(line, "%lx-", &start);
	}
	if (found != 1) {
		fprintf(stderr, "attacker: %d candidate doorbell mappings, want 1\n", found);
		return 3;
	}
	/* SQ doorbell at +0: qp | pi << 16 (vfwarp_rdma.h), little endian */
	*(volatile uint32_t *)start = htole32(qpn | (pi & 0xffff) << 16);
	__sync_synchronize();
	printf("attacker: rang the SQ doorbell of QP %u (pi %u) through its own page at 0x%lx\n",
	       qpn, pi, start);
	ibv_close_device(ctx);
	ibv_free_device_list(l);
	free(before);
	free(after);
	return 0;
}

/*
 * The device counter db_refused of port 1: sysfs hw_counters, or (in a
 * network namespace, where sysfs shows the compat device without them) the
 * same value from `rdma statistic show link DEV/1` (iproute2).
 */
static long read_counter(const char *dev)
{
	char path[256], cmd[256], line[4096];
	FILE *f;
	long v = -1;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/db_refused", dev);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
		return v;
	}
	snprintf(cmd, sizeof(cmd), "rdma statistic show link %s/1 2>/dev/null", dev);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " db_refused ");

		if (p && sscanf(p + strlen(" db_refused "), "%ld", &v) != 1)
			v = -1;
	}
	pclose(f);
	return v;
}

static void db_case(struct conn *c)
{
	const char *name = "doorbell foreign-qp";
	const char *dev = ibv_get_device_name(g.ctx->device);
	char qpn[16], pi[16];
	struct msg m = { .op = CMD_DB_PREP };
	struct ibv_wc wc;
	long before, after;
	int status = -1, qs;
	pid_t pid;
	double end;

	if (rpc(c, &m) || m.status) {
		result(false, name, "control exchange failed");
		return;
	}
	before = read_counter(dev);
	if (before < 0) {
		result(false, name, "cannot read the db_refused counter of %s", dev);
		return;
	}
	/* A WQE index the device would accept as in range from our own page:
	 * the slot after the last one posted. */
	snprintf(qpn, sizeof(qpn), "%u", c->qp->qp_num);
	snprintf(pi, sizeof(pi), "%u", (c->sq_posted + 1) & 0xffff);
	fflush(stdout);
	/* posix_spawn (vfork-like): no copy-on-write of our registered memory */
	{
		char *args[] = { "vfw_verbs_check", "--ring-foreign-db", (char *)dev, qpn, pi,
				 NULL };

		if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ))
			pid = -1;
	}
	end = now() + 60;
	while (pid > 0 && now() < end && waitpid(pid, &status, WNOHANG) == 0)
		usleep(10000);
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		if (pid > 0 && status == -1) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		result(false, name, "attacker process failed (status 0x%x)", status);
		return;
	}
	/* the victim QP must not have executed anything */
	if (poll_one(c, c->scq, &wc, 2) != 0) {
		result(false, name, "victim SQ produced a completion (wr_id %" PRIu64 " %s)",
		       wc.wr_id, ibv_wc_status_str(wc.status));
		return;
	}
	if (ibv_poll_cq(c->rcq, 1, &wc) != 0) {
		result(false, name, "victim RQ produced a completion");
		return;
	}
	qs = qp_state(c);
	after = read_counter(dev);
	m = (struct msg){ .op = CMD_DB_CHECK };
	if (rpc(c, &m)) {
		result(false, name, "victim QP no longer works after the foreign doorbell");
		return;
	}
	if (m.status)
		result(false, name, "server: %s", m.text);
	else if (qs != IBV_QPS_RTS)
		result(false, name, "victim QP state %d, not RTS", qs);
	else if (after <= before)
		result(false, name, "db_refused did not grow (%ld -> %ld)", before, after);
	else
		result(true, name, "refused, db_refused %ld -> %ld, victim QP intact",
		       before, after);
}

/* ---- stream: verified throughput ---------------------------------------- */

/* WRITEs and READs of `size` bytes alternating for `secs`; false if the
 * connection broke. */
static bool stream_case(struct conn *c, double secs, uint64_t size, double pace_mbs)
{
	struct msg m = { .op = CMD_STREAM_PREP, .size = size };
	uint64_t n = 0, bytes = 0, writes = 0, reads = 0, tick_bytes = 0;
	double t0, t, tick0, next;
	char why[160];
	int st;

	if (stream_patterns(size)) {
		result(false, "stream", "out of memory");
		return true;
	}
	if (rpc(c, &m) || m.status) {
		result(false, "stream", "server: %s", m.status ? m.text : "no reply to PREP");
		return !m.status;
	}
	fill_canary();
	for (int k = 0; k < 4; k++)
		memcpy(g.data + k * size, g.pat[k], size);
	t0 = now();
	next = t0;
	tick0 = wall();
	for (; now() - t0 < secs; n++) {
		int k = (int)((n / 2) & 3);

		/* paced: each transfer starts one transfer time after the
		 * last one's slot, or now if that is later; a late transfer is
		 * not made up for by a burst */
		if (pace_mbs > 0) {
			double w = next - now();

			if (w > 0) {
				struct timespec ts = { (time_t)w, (long)((w - (time_t)w) * 1e9) };

				nanosleep(&ts, NULL);
			}
			next = (w > 0 ? next : now()) + size / (pace_mbs * 1e6);
			if (now() - t0 >= secs)
				break;
		}
		bool write = !(n & 1);
		uint64_t raddr = m.addr + (write ? STREAM_TGT : k * size);
		uint8_t *local = g.data + (write ? k * size : STREAM_TGT);
		struct msg ck;

		if (write)
			memcpy(local, &n, 8);      /* the stamp; slot k's last WRITE is done */
		if (post_send(c, WR_RDMA, write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, local,
			      (uint32_t)size, g.data_mr->lkey, raddr, m.rkey))
			goto broken;
		st = wait_send(c, g.op_secs);
		if (st) {
			result(false, "stream", "%s %" PRIu64 " completion: %s",
			       write ? "write" : "read", n,
			       st < 0 ? "timeout" : ibv_wc_status_str(st));
			return false;
		}
		if (write) {
			ck = (struct msg){ .op = CMD_STREAM_CHECK, .size = size, .off = n,
					   .case_id = (uint64_t)k };
			if (rpc(c, &ck))
				goto broken;
			if (ck.status) {
				result(false, "stream", "server: %s", ck.text);
				return true;
			}
			writes++;
		} else {
			if (stream_compare(size, k, UINT64_MAX, why, sizeof(why))[0]) {
				result(false, "stream", "read %" PRIu64 ": %s", n, why);
				return true;
			}
			reads++;
		}
		bytes += size;
		tick_bytes += size;
		if (wall() - tick0 >= 0.5) {
			double w = wall();

			printf("tick %.3f %.3f %" PRIu64 "\n", tick0, w, tick_bytes);
			tick0 = w;
			tick_bytes = 0;
		}
	}
	t = now() - t0;
	printf("stream: %" PRIu64 " writes, %" PRIu64 " reads of %" PRIu64 " bytes verified "
	       "in %.2f s: %.3f MB/s\n", writes, reads, size, t, bytes / t / 1e6);
	result(true, "stream", "%" PRIu64 " transfers, every byte checked", writes + reads);
	return true;
broken:
	result(false, "stream", "control exchange failed after %" PRIu64 " transfers", n);
	return false;
}

/* ---- main ---------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: vfw_verbs_check -s ADDR | -c ADDR [-p PORT] [-S SEED] [-t OP_SECS]\n"
		"                       [-T IDLE_SECS] [-D] [-P] [-v] [-L SECS [-z SIZE] [-r MB/S]]\n"
		"  -s ADDR  server, listening on ADDR      -c ADDR  client of the server at ADDR\n"
		"  -S SEED  data seed (same on both sides)  -D  also the foreign-doorbell check\n"
		"  -P       skip the protection cases       -v  verbose (stderr)\n"
		"  -L SECS  only the verified stream (WRITE/READ) for SECS, SIZE bytes each\n"
		"  -r MB/S  pace the stream at MB/S (10^6 bytes per second)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *srv = NULL, *cli = NULL, *port = "7471";
	double idle = 300;
	bool db = false, prot = true;
	double stream = 0, pace = 0;
	uint64_t ssize = 256u << 10;
	struct conn c;
	struct msg m;
	int opt;

	if (argc == 5 && !strcmp(argv[1], "--ring-foreign-db"))
		return ring_foreign(argv[2], (uint32_t)strtoul(argv[3], NULL, 0),
				    (uint32_t)strtoul(argv[4], NULL, 0));
	g.seed = 1;
	g.op_secs = 60;
	while ((opt = getopt(argc, argv, "s:c:p:S:t:T:DPvL:z:r:")) != -1) {
		switch (opt) {
		case 's': srv = optarg; break;
		case 'c': cli = optarg; break;
		case 'p': port = optarg; break;
		case 'S': g.seed = strtoull(optarg, NULL, 0); break;
		case 't': g.op_secs = atof(optarg); break;
		case 'T': idle = atof(optarg); break;
		case 'D': db = true; break;
		case 'P': prot = false; break;
		case 'v': g.verbose = 1; break;
		case 'L': stream = atof(optarg); break;
		case 'z': ssize = strtoull(optarg, NULL, 0); break;
		case 'r': pace = atof(optarg); break;
		default: usage();
		}
	}
	if (!srv == !cli || g.op_secs <= 0 || stream < 0 || pace < 0 ||
	    ssize < 8 || ssize > STREAM_MAX || ssize % 8)
		usage();
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	g.data = aligned_alloc(4096, BUF_LEN);
	g.ctl_rx = aligned_alloc(4096, 4096);
	if (!g.data || !g.ctl_rx)
		return 2;
	memset(g.ctl_rx, 0, 4096);
	g.ctl_tx = g.ctl_rx + 1;
	fill_canary();
	if (srv)
		return run_server(srv, port, idle);

	if (resolve(cli, port, &srv_addr))
		return 2;
	if (connect_to(&c)) {
		conn_free(&c);
		printf("0 passed, 1 failed (cannot connect)\n");
		return 2;
	}
	printf("client: connected to %s:%s via %s, seed %" PRIu64 "\n", cli, port,
	       ibv_get_device_name(g.ctx->device), g.seed);
	if (stream > 0) {
		if (!stream_case(&c, stream, ssize, pace)) {
			conn_free(&c);
			printf("%d passed, %d failed (connection lost)\n", npass, nfail);
			return 1;
		}
		db = prot = false;
		goto quit;
	}
	for (int op = OP_SEND; op <= OP_READ; op++) {
		for (unsigned si = 0; si < NSIZES; si++) {
			for (int var = 0; var < 2; var++) {
				if (data_case(&c, op, si, var))
					continue;
				conn_free(&c);
				if (connect_to(&c)) {
					conn_free(&c);
					printf("%d passed, %d failed (connection lost)\n",
					       npass, nfail + 1);
					return 1;
				}
			}
		}
	}
	if (db)
		db_case(&c);
quit:
	conn_free(&c);
	if (prot) {
		for (int w = 1; w >= 0; w--)
			for (int k = 0; k < PK_N; k++)
				prot_case(k, w);
	}
	m = (struct msg){ .op = CMD_QUIT };
	if (connect_to(&c) || rpc(&c, &m))
		result(false, "quit", "server did not acknowledge QUIT");
	conn_free(&c);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
