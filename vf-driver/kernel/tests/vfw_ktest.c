// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfw_ktest: kernel-verbs smoke test for an iWARP device through rdma_cm
 * (kernel PD, CQ with IB_POLL_WORKQUEUE -> req_notify_cq + EQ COMP, kernel
 * QP post_send/post_recv, poll_cq). insmod runs one test and fails the
 * load with the error if anything goes wrong.
 *   server: insmod vfw_ktest.ko server=1 addr=10.9.0.1 port=7999 iters=N
 *   client: insmod vfw_ktest.ko addr=10.9.0.1 port=7999 iters=N
 * The server echoes every message; the client checks each echo; then both
 * move the QP to ERR and check that a Send posted there completes with
 * WR_FLUSH_ERR (what ib_drain_qp needs). Options: direct=1 busy-polls
 * (IB_POLL_DIRECT, no CQ events), delay_ms=N delays the client's first Send.
 *
 * Not built by lab/build-modules.sh. Build it against the guest kernel like
 * the drivers (make -C /lib/modules/$KVER/build M=$PWD modules inside the
 * image chroot); a second copy (vfw_ktest2.c: #include "vfw_ktest.c") lets
 * server and client run in one guest, e.g. VF0 in the init netns and VF1
 * moved to netns b:
 *   insmod vfw_ktest.ko server=1 addr=10.9.0.1 &
 *   ip netns exec b insmod vfw_ktest2.ko addr=10.9.0.1
 */
#include <linux/module.h>
#include <linux/inet.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/nsproxy.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

static bool server;
module_param(server, bool, 0444);
static char *addr = "10.9.0.1";
module_param(addr, charp, 0444);
static int port = 7999;
module_param(port, int, 0444);
static int iters = 50;
module_param(iters, int, 0444);
static int delay_ms;	/* client: wait this long after ESTABLISHED */
module_param(delay_ms, int, 0444);
static int rd = 1;	/* responder_resources = initiator_depth */
module_param(rd, int, 0444);
static int minlen = 1;	/* message lengths minlen..MSG */
module_param(minlen, int, 0444);
static int inline_mode;	/* 0: every other Send inline, 1: all, 2: none */
module_param(inline_mode, int, 0444);
static bool direct;	/* IB_POLL_DIRECT: busy-poll, no CQ notification */
module_param(direct, bool, 0444);

#define MSG 64
#define TMO (30 * HZ)

struct kt {
	struct rdma_cm_id *id, *child;
	struct completion cm_done;
	int cm_event, cm_status;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	void *buf;		/* [0]: send, [1]: recv */
	dma_addr_t dma;
	struct ib_cqe scqe, rcqe;
	struct completion sdone, rdone;
	int sstatus, rstatus;
	u32 rlen;
};

static struct kt kt;

static int kt_cm(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	pr_info("vfw_ktest: cm event %d status %d\n", ev->event, ev->status);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		kt.child = id;
	kt.cm_event = ev->event;
	kt.cm_status = ev->status;
	complete(&kt.cm_done);
	return 0;
}

static int wait_cm(int want)
{
	if (!wait_for_completion_timeout(&kt.cm_done, TMO))
		return -ETIMEDOUT;
	reinit_completion(&kt.cm_done);
	if (kt.cm_event != want) {
		pr_err("vfw_ktest: cm event %d (status %d), wanted %d\n",
		       kt.cm_event, kt.cm_status, want);
		return -EPROTO;
	}
	return 0;
}

static void s_done(struct ib_cq *cq, struct ib_wc *wc)
{
	kt.sstatus = wc->status;
	complete(&kt.sdone);
}

static void r_done(struct ib_cq *cq, struct ib_wc *wc)
{
	kt.rstatus = wc->status;
	kt.rlen = wc->byte_len;
	complete(&kt.rdone);
}

static int post_recv(void)
{
	struct ib_sge sge = { .addr = kt.dma + MSG, .length = MSG,
			      .lkey = kt.pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_cqe = &kt.rcqe, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(kt.qp, &wr, NULL);
}

static int post_send(u32 len, bool inl)
{
	struct ib_sge sge = { .addr = kt.dma, .length = len,
			      .lkey = kt.pd->local_dma_lkey };
	struct ib_send_wr wr = { .wr_cqe = &kt.scqe, .sg_list = &sge, .num_sge = 1,
				 .opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED };

	if (inl) {	/* inline SGEs carry kernel virtual addresses */
		sge.addr = (uintptr_t)kt.buf;
		wr.send_flags |= IB_SEND_INLINE;
	}
	return ib_post_send(kt.qp, &wr, NULL);
}

static bool wait_done(struct completion *c, unsigned long tmo)
{
	unsigned long end = jiffies + tmo;

	if (!direct)
		return wait_for_completion_timeout(c, tmo);
	while (!try_wait_for_completion(c)) {
		ib_process_cq_direct(kt.cq, -1);
		if (time_after(jiffies, end))
			return false;
		usleep_range(500, 1000);
	}
	complete(c);	/* try_wait consumed it; wait_wc reinits */
	return true;
}

static int wait_wc(struct completion *c, int *status, const char *what)
{
	if (!wait_done(c, TMO)) {
		pr_err("vfw_ktest: %s completion timed out\n", what);
		return -ETIMEDOUT;
	}
	reinit_completion(c);
	if (*status) {
		pr_err("vfw_ktest: %s completion status %d\n", what, *status);
		return -EIO;
	}
	return 0;
}

static int setup_qp(struct rdma_cm_id *id)
{
	struct ib_qp_init_attr qa = {};
	int err;

	kt.pd = ib_alloc_pd(id->device, 0);
	if (IS_ERR(kt.pd))
		return PTR_ERR(kt.pd);
	kt.cq = ib_alloc_cq(id->device, NULL, 16, 0,
			    direct ? IB_POLL_DIRECT : IB_POLL_WORKQUEUE);
	if (IS_ERR(kt.cq))
		return PTR_ERR(kt.cq);
	qa.send_cq = kt.cq;
	qa.recv_cq = kt.cq;
	qa.qp_type = IB_QPT_RC;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = MSG;
	err = rdma_create_qp(id, kt.pd, &qa);
	if (err)
		return err;
	kt.qp = id->qp;
	kt.buf = dma_alloc_coherent(id->device->dma_device, 2 * MSG, &kt.dma, GFP_KERNEL);
	if (!kt.buf)
		return -ENOMEM;
	return post_recv();
}

static int run(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct rdma_conn_param cp = { .responder_resources = rd, .initiator_depth = rd };
	struct rdma_cm_id *cid;
	int err, i;

	if (!in4_pton(addr, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	kt.id = rdma_create_id(current->nsproxy->net_ns, kt_cm, NULL, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(kt.id))
		return PTR_ERR(kt.id);
	if (server) {
		err = rdma_bind_addr(kt.id, (struct sockaddr *)&sin);
		if (!err)
			err = rdma_listen(kt.id, 4);
		if (!err)
			err = wait_cm(RDMA_CM_EVENT_CONNECT_REQUEST);
		if (err)
			return err;
		cid = kt.child;
		err = setup_qp(cid);
		if (!err)
			err = rdma_accept(cid, &cp);
		if (!err)
			err = wait_cm(RDMA_CM_EVENT_ESTABLISHED);
	} else {
		cid = kt.id;
		err = rdma_resolve_addr(cid, NULL, (struct sockaddr *)&sin, 5000);
		if (!err)
			err = wait_cm(RDMA_CM_EVENT_ADDR_RESOLVED);
		if (!err)
			err = rdma_resolve_route(cid, 5000);
		if (!err)
			err = wait_cm(RDMA_CM_EVENT_ROUTE_RESOLVED);
		if (!err)
			err = setup_qp(cid);
		if (!err)
			err = rdma_connect(cid, &cp);
		if (!err)
			err = wait_cm(RDMA_CM_EVENT_ESTABLISHED);
	}
	if (err)
		return err;
	pr_info("vfw_ktest: connected on %s, qp %u\n", dev_name(&cid->device->dev),
		kt.qp->qp_num);
	if (!server && delay_ms)
		msleep(delay_ms);
	for (i = 0; i < iters; i++) {
		u8 *s = kt.buf, *r = (u8 *)kt.buf + MSG;
		u32 len = minlen + (i * 7) % (MSG - minlen + 1);
		bool inl = inline_mode == 1 || (inline_mode == 0 && (i & 1));

		if (server) {
			err = wait_wc(&kt.rdone, &kt.rstatus, "recv");
			if (err)
				return err;
			len = kt.rlen;
			memcpy(s, r, len);
			err = post_recv();
			if (!err)
				err = post_send(len, inl);
			if (!err)
				err = wait_wc(&kt.sdone, &kt.sstatus, "send");
		} else {
			memset(s, 'a' + i % 26, len);
			s[0] = i;
			err = post_send(len, inl);
			if (!err)
				err = wait_wc(&kt.sdone, &kt.sstatus, "send");
			if (!err)
				err = wait_wc(&kt.rdone, &kt.rstatus, "recv");
			if (!err && (kt.rlen != len || memcmp(s, r, len))) {
				pr_err("vfw_ktest: echo %d differs (len %u/%u)\n",
				       i, kt.rlen, len);
				err = -EBADMSG;
			}
			if (!err)
				err = post_recv();
		}
		if (err)
			return err;
	}
	pr_info("vfw_ktest: %d messages OK\n", iters);
	if (!server)
		rdma_disconnect(cid);
	err = wait_cm(RDMA_CM_EVENT_DISCONNECTED);
	if (err)
		return err;
	/* what ib_drain_qp relies on: a WR posted in ERR completes flushed */
	{
		struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

		err = ib_modify_qp(kt.qp, &a, IB_QP_STATE);
		if (!err)
			err = post_send(8, false);
		if (!err && !wait_done(&kt.sdone, 10 * HZ))
			err = -ETIMEDOUT;
		if (!err && kt.sstatus != IB_WC_WR_FLUSH_ERR)
			err = -EPROTO;
		pr_info("vfw_ktest: send after ERR: err %d status %d\n", err,
			kt.sstatus);
	}
	return err;
}

static void cleanup(void)
{
	struct rdma_cm_id *cid = server ? kt.child : kt.id;

	/* the QP first: the device may still place data into the buffer */
	if (kt.qp)
		rdma_destroy_qp(cid);
	if (kt.buf)
		dma_free_coherent(cid->device->dma_device, 2 * MSG, kt.buf, kt.dma);
	if (kt.cq && !IS_ERR(kt.cq))
		ib_free_cq(kt.cq);
	if (kt.pd && !IS_ERR(kt.pd))
		ib_dealloc_pd(kt.pd);
	if (kt.child)
		rdma_destroy_id(kt.child);
	if (kt.id && !IS_ERR(kt.id))
		rdma_destroy_id(kt.id);
}

static int __init kt_init(void)
{
	int err;

	init_completion(&kt.cm_done);
	init_completion(&kt.sdone);
	init_completion(&kt.rdone);
	kt.scqe.done = s_done;
	kt.rcqe.done = r_done;
	err = run();
	pr_info("vfw_ktest: %s result %d\n", server ? "server" : "client", err);
	cleanup();
	pr_info("vfw_ktest: cleaned up\n");
	return err;
}

static void __exit kt_exit(void)
{
}

module_init(kt_init);
module_exit(kt_exit);
MODULE_LICENSE("GPL");
