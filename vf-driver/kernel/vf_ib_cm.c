// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf RDMA: the iw_cm provider (listen, connect, accept, reject)
 * and the connection events of the device.
 *
 * The device runs TCP and MPA; a connection is a "cep" the device names
 * (CONNECT's reply, CONNECT_REQUEST's obj). Its events come through the
 * EQ (vf_ib_cmd.c) and reach this file in EQ order on an ordered
 * workqueue; every CEP transition and every upcall happens under
 * cm_lock. iw_cm BUG()s on an event in a wrong state, so each CEP keeps
 * the state iw_cm has seen and an event is delivered only where iw_cm
 * accepts it:
 *
 *   passive: REQ_PENDING --accept--> ACCEPTED --ESTABLISHED--> ESTABLISHED
 *   active:  CONN_SENT --CONNECT_REPLY(0)--> ESTABLISHED
 *   ESTABLISHED --DISCONNECT--> DISCONNECTED; any --CLOSE--> freed
 *   DEAD: iw_cm got its final event (or never will); the device id is
 *         kept until the device's CLOSE (or until it reuses the id)
 *
 * The final upcall of a CEP: CONNECT_REPLY(error) in CONN_SENT,
 * ESTABLISHED + CLOSE in ACCEPTED (iw_cm's documented sequence for a peer
 * that closes at once), CLOSE in ESTABLISHED/DISCONNECTED. It is given
 * on the device's CLOSE, or by the driver when the QP is destroyed, so
 * iw_cm always drops its QP and cm_id references.
 *
 * iw_cm gets a driver key, not a pointer, as provider_data: a request it
 * still holds may have died (CLOSE) in between, and accept/reject must
 * then find nothing rather than freed memory.
 *
 * Ports: the device's TCP shares the guest's port space, so each
 * listener and active connection reserves its port by binding (not
 * listening) a kernel TCP socket, as iwpmd does, for its whole life.
 */
#include <net/inet_ecn.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/in.h>
#include <linux/inetdevice.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <net/neighbour.h>
#include <net/route.h>
#include <net/sock.h>

#include "vfwarp/vfwarp_regs.h"
#include "vf_ib.h"

enum vfw_cep_state {
	CEP_REQ_PENDING,
	CEP_ACCEPTED,
	CEP_CONN_SENT,
	CEP_ESTABLISHED,
	CEP_DISCONNECTED,
	CEP_DEAD,
};

struct vfw_cep {
	u32 id;				/* device's */
	u32 key;			/* iw_cm's provider_data */
	u32 seq_start;			/* EQ events before this are an older cep's */
	enum vfw_cep_state state;
	struct iw_cm_id *cm_id;		/* with a reference (add_ref) */
	struct vfw_qp *qp;
	struct sockaddr_in laddr, raddr;
	struct socket *port_sock;	/* active: the reserved local port */
};

/*
 * A listener is "dormant" while the function has no IPv4 address (the
 * device listens only once SET_ADDR gave it one): rdma_cm's wildcard
 * listen covers every RDMA device and fails as a whole if one device
 * refuses, so an address-less VF accepts the listen and starts it when
 * the address comes (vfw_ib_cm_addr_changed).
 */
struct vfw_listener {
	struct list_head node;		/* dev->lsn_list */
	u32 id;				/* device's, when active */
	bool active;
	__be32 ip;
	u16 port, backlog;
	struct iw_cm_id *cm_id;
	struct socket *port_sock;
};

#define VFW_RTR_WRITE_READ	(2 | 4)	/* VFW_RTR_WRITE | VFW_RTR_READ */

/*
 * Peer-to-peer mode (RFC 6581 RTR) as the connection initiator, on by
 * default. Without it the responder may not send before the initiator's
 * first FPDU (RFC 5044), and perftest's ib_write_lat -R hangs (measured:
 * 285 s timeout without, 70 s pass with). Linux siw as responder reads the
 * RTR only after its MPA Reply has gone out (siw_accept), so the device
 * holds its first FPDU, the RTR included, 20 ms after the Reply (the RNIC's
 * initiator settle time). As responder the device accepts either mode.
 */
static bool peer_to_peer = true;
module_param(peer_to_peer, bool, 0644);
MODULE_PARM_DESC(peer_to_peer, "request MPA peer-to-peer mode (RTR) when connecting");
#define VFW_NEIGH_TRIES		50	/* x 100 ms: ARP under TCG is slow */

/* ---- helpers ------------------------------------------------------------ */

static int cm_errno(u8 status)
{
	switch (status) {
	case VFW_CM_S_OK:
		return 0;
	case VFW_CM_S_REFUSED:
		return -ECONNREFUSED;
	case VFW_CM_S_TIMEOUT:
		return -ETIMEDOUT;
	case VFW_CM_S_UNREACH:
		return -ETIMEDOUT;	/* iw_cm knows only the four */
	default:
		return -ECONNRESET;
	}
}

static void sin_set(struct sockaddr_in *s, const u8 ip[4], u16 port)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	memcpy(&s->sin_addr.s_addr, ip, 4);
	s->sin_port = htons(port);
}

/* The IPv4 address iw_cm names, also for an IPv6 wildcard (rdma_cm's
 * "listen on every device" uses :: when not v6-only). */
static int cm_addr4(const struct sockaddr_storage *ss, struct sockaddr_in *out)
{
	if (ss->ss_family == AF_INET) {
		*out = *(const struct sockaddr_in *)ss;
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		if (ipv6_addr_any(&s6->sin6_addr)) {
			memset(out, 0, sizeof(*out));
			out->sin_family = AF_INET;
			out->sin_port = s6->sin6_port;
			return 0;
		}
		if (ipv6_addr_v4mapped(&s6->sin6_addr)) {
			memset(out, 0, sizeof(*out));
			out->sin_family = AF_INET;
			out->sin_port = s6->sin6_port;
			out->sin_addr.s_addr = s6->sin6_addr.s6_addr32[3];
			return 0;
		}
	}
	return -EAFNOSUPPORT;
}

/* Reserve ip:port (port 0: any) in the guest's TCP port space; returns
 * the port in *port. SO_REUSEADDR so that several reservations (two
 * listens of rdma_cm on the same port, one per device) coexist, while a
 * guest socket that binds or listens there without it fails. */
static int port_reserve(struct vfw_ib_dev *dev, __be32 ip, u16 *port,
			struct socket **out)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct socket *sock;
	int err;

	err = sock_create_kern(dev_net(dev->netdev), AF_INET, SOCK_STREAM,
			       IPPROTO_TCP, &sock);
	if (err)
		return err;
	sock->sk->sk_reuse = SK_CAN_REUSE;
	sin.sin_addr.s_addr = ip;
	sin.sin_port = htons(*port);
	err = kernel_bind(sock, (struct sockaddr *)&sin, sizeof(sin));
	if (err)
		goto err;
	err = kernel_getsockname(sock, (struct sockaddr *)&sin);
	if (err < 0)
		goto err;
	*port = ntohs(sin.sin_port);
	*out = sock;
	return 0;
err:
	sock_release(sock);
	return err;
}

/* Next hop MAC for rip from the kernel's routing and neighbour tables;
 * asks ARP and waits a little when the entry is not valid yet. */
static int resolve_dmac(struct vfw_ib_dev *dev, __be32 lip, __be32 rip,
			u8 dmac[ETH_ALEN])
{
	struct net *net = dev_net(dev->netdev);
	int tries;

	for (tries = 0; tries < VFW_NEIGH_TRIES; tries++) {
		struct flowi4 fl4 = {
			.daddr = rip,
			.saddr = lip,
			.flowi4_proto = IPPROTO_TCP,
		};
		struct neighbour *n;
		struct rtable *rt;
		bool ok = false;

		rt = ip_route_output_key(net, &fl4);
		if (IS_ERR(rt))
			return -EHOSTUNREACH;
		if (rt->dst.dev != dev->netdev) {
			ibdev_dbg(&dev->ibdev, "%pI4 is not reached through %s\n",
				  &rip, netdev_name(dev->netdev));
			ip_rt_put(rt);
			return -ENETUNREACH;
		}
		n = dst_neigh_lookup(&rt->dst, &fl4.daddr);
		if (!n) {
			ip_rt_put(rt);
			return -ENOMEM;
		}
		if (READ_ONCE(n->nud_state) & NUD_VALID) {
			neigh_ha_snapshot(dmac, n, dev->netdev);
			ok = is_valid_ether_addr(dmac);
		} else {
			neigh_event_send(n, NULL);
		}
		neigh_release(n);
		ip_rt_put(rt);
		if (ok)
			return 0;
		msleep(100);
	}
	return -EHOSTUNREACH;
}

/* Private data goes to the device in a coherent buffer it reads during
 * the command. */
struct vfw_pdata {
	void *va;
	dma_addr_t dma;
	size_t len;
};

static int pdata_get(struct vfw_ib_dev *dev, struct vfw_pdata *p,
		     const void *data, size_t len)
{
	p->len = len;
	p->va = NULL;
	p->dma = 0;
	if (!len)
		return 0;
	if (len > dev->lim.max_pdata - 4)	/* the device adds the v2 header */
		return -EINVAL;
	p->va = dma_alloc_coherent(&dev->pdev->dev, len, &p->dma, GFP_KERNEL);
	if (!p->va)
		return -ENOMEM;
	memcpy(p->va, data, len);
	return 0;
}

static void pdata_put(struct vfw_ib_dev *dev, struct vfw_pdata *p)
{
	if (p->va)
		dma_free_coherent(&dev->pdev->dev, p->len, p->va, p->dma);
	p->va = NULL;
}

/* ---- CEP bookkeeping (cm_lock held) ---------------------------------- */

static struct vfw_cep *cep_alloc(struct vfw_ib_dev *dev)
{
	struct vfw_cep *cep = kzalloc(sizeof(*cep), GFP_KERNEL);
	int err;

	if (!cep)
		return NULL;
	err = xa_alloc_cyclic(&dev->cep_keys, &cep->key, cep,
			      XA_LIMIT(1, INT_MAX), &dev->next_cep_key,
			      GFP_KERNEL);
	if (err < 0) {
		kfree(cep);
		return NULL;
	}
	return cep;
}

static void cep_upcall(struct vfw_ib_dev *dev, struct vfw_cep *cep,
		       enum iw_cm_event_type type, int status,
		       const void *pdata, u16 plen, u8 ord, u8 ird)
{
	struct iw_cm_event ev = {
		.event = type,
		.status = status,
		.provider_data = (void *)(uintptr_t)cep->key,
		.private_data = (void *)pdata,
		.private_data_len = min_t(u16, plen, U8_MAX),
		.ord = ord,
		.ird = ird,
	};

	if (!cep->cm_id)
		return;
	memcpy(&ev.local_addr, &cep->laddr, sizeof(cep->laddr));
	memcpy(&ev.remote_addr, &cep->raddr, sizeof(cep->raddr));
	ibdev_dbg(&dev->ibdev, "cep %u: iw_cm event %d status %d\n", cep->id,
		  type, status);
	cep->cm_id->event_handler(cep->cm_id, &ev);
}

/* No more upcalls: drop what the CEP holds; its device id stays known
 * (DEAD) until the device's CLOSE or a reuse of the id. */
static void cep_detach(struct vfw_ib_dev *dev, struct vfw_cep *cep)
{
	if (cep->cm_id) {
		cep->cm_id->rem_ref(cep->cm_id);
		cep->cm_id = NULL;
	}
	if (cep->qp) {
		if (cep->qp->cep == cep)
			cep->qp->cep = NULL;
		cep->qp = NULL;
	}
	if (cep->port_sock) {
		sock_release(cep->port_sock);
		cep->port_sock = NULL;
	}
	if (cep->key) {
		xa_erase(&dev->cep_keys, cep->key);
		cep->key = 0;
	}
	cep->state = CEP_DEAD;
}

static void cep_free(struct vfw_ib_dev *dev, struct vfw_cep *cep)
{
	cep_detach(dev, cep);
	if (xa_load(&dev->ceps, cep->id) == cep)
		xa_erase(&dev->ceps, cep->id);
	kfree(cep);
}

/* The connection is gone: give iw_cm the final event its state allows. */
static void cep_finish(struct vfw_ib_dev *dev, struct vfw_cep *cep, int err)
{
	switch (cep->state) {
	case CEP_CONN_SENT:
		cep_upcall(dev, cep, IW_CM_EVENT_CONNECT_REPLY,
			   err ? err : -ECONNRESET, NULL, 0, 0, 0);
		break;
	case CEP_ACCEPTED:
		cep_upcall(dev, cep, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0, 0, 0);
		fallthrough;
	case CEP_ESTABLISHED:
	case CEP_DISCONNECTED:
		if (cep->qp)
			cep->qp->state = IB_QPS_ERR;
		cep_upcall(dev, cep, IW_CM_EVENT_CLOSE, err, NULL, 0, 0, 0);
		break;
	case CEP_REQ_PENDING:	/* iw_cm will accept (-ECONNRESET) or reject */
	case CEP_DEAD:
		break;
	}
	cep_detach(dev, cep);
}

/* The device gave out `id` again: whatever we still hold under it is an
 * older connection the device has forgotten. */
static void cep_replace(struct vfw_ib_dev *dev, u32 id)
{
	struct vfw_cep *old = xa_load(&dev->ceps, id);

	if (!old)
		return;
	if (old->state != CEP_DEAD)
		ibdev_warn(&dev->ibdev, "cep %u reused while still connected (state %d)\n",
			   id, old->state);
	cep_finish(dev, old, -ECONNRESET);
	cep_free(dev, old);
}

static struct vfw_cep *cep_by_key(struct vfw_ib_dev *dev, void *provider_data)
{
	unsigned long key = (uintptr_t)provider_data;

	return key ? xa_load(&dev->cep_keys, key) : NULL;
}

static void reject_hw(struct vfw_ib_dev *dev, u32 cep_id, const void *pdata,
		      u8 plen)
{
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_REJECT };
	struct vfw_pdata pd;
	int err;

	if (pdata_get(dev, &pd, pdata, plen))
		plen = 0;
	cmd.u.reject.cep = cep_id;
	cmd.u.reject.pdata_len = pd.va ? plen : 0;
	cmd.u.reject.pdata_addr = pd.va ? pd.dma : 0;
	err = vfw_ib_cmd(dev, &cmd);
	pdata_put(dev, &pd);
	if (err)
		ibdev_dbg(&dev->ibdev, "reject cep %u: %d\n", cep_id, err);
}

/* ---- events ------------------------------------------------------------- */

static void ev_connect_request(struct vfw_ib_dev *dev, struct vfw_cm_evt *evt)
{
	const struct vfw_eqe *e = &evt->eqe;
	struct vfw_listener *lsn = xa_load(&dev->listeners, e->obj2);
	struct iw_cm_event ev = {};
	struct vfw_cep *cep;
	int ret;

	cep_replace(dev, e->obj);
	if (!lsn) {	/* unlistened meanwhile */
		reject_hw(dev, e->obj, NULL, 0);
		return;
	}
	cep = cep_alloc(dev);
	if (!cep) {
		reject_hw(dev, e->obj, NULL, 0);
		return;
	}
	cep->id = e->obj;
	cep->seq_start = evt->seq;
	cep->state = CEP_REQ_PENDING;
	sin_set(&cep->laddr, e->lip, e->lport);
	sin_set(&cep->raddr, e->rip, e->rport);
	if (xa_err(xa_store(&dev->ceps, cep->id, cep, GFP_KERNEL))) {
		xa_erase(&dev->cep_keys, cep->key);
		kfree(cep);
		reject_hw(dev, e->obj, NULL, 0);
		return;
	}
	ev.event = IW_CM_EVENT_CONNECT_REQUEST;
	ev.status = 0;
	memcpy(&ev.local_addr, &cep->laddr, sizeof(cep->laddr));
	memcpy(&ev.remote_addr, &cep->raddr, sizeof(cep->raddr));
	ev.provider_data = (void *)(uintptr_t)cep->key;
	ev.private_data = e->pdata_len ? evt->pdata : NULL;
	ev.private_data_len = min_t(u16, e->pdata_len, U8_MAX);
	ev.ord = e->ord;
	ev.ird = e->ird;
	ibdev_dbg(&dev->ibdev, "cep %u: connect request %pI4:%u -> %pI4:%u\n",
		  cep->id, &cep->raddr.sin_addr, e->rport, &cep->laddr.sin_addr,
		  e->lport);
	ret = lsn->cm_id->event_handler(lsn->cm_id, &ev);
	if (ret) {	/* iw_cm's backlog is exhausted: we must reject */
		reject_hw(dev, cep->id, NULL, 0);
		cep_detach(dev, cep);
	}
}

static void cm_handle(struct vfw_ib_dev *dev, struct vfw_cm_evt *evt)
{
	const struct vfw_eqe *e = &evt->eqe;
	struct vfw_cep *cep;

	if (e->type == VFW_EQE_CONNECT_REQUEST) {
		ev_connect_request(dev, evt);
		return;
	}
	cep = xa_load(&dev->ceps, e->obj);
	if (!cep || (s32)(evt->seq - cep->seq_start) < 0) {
		ibdev_dbg(&dev->ibdev, "event %u for unknown cep %u\n", e->type,
			  e->obj);
		return;
	}
	switch (e->type) {
	case VFW_EQE_CONNECT_REPLY:
		if (cep->state != CEP_CONN_SENT)
			break;
		if (e->status == VFW_CM_S_OK) {
			cep->state = CEP_ESTABLISHED;
			if (cep->qp)
				cep->qp->state = IB_QPS_RTS;
			cep_upcall(dev, cep, IW_CM_EVENT_CONNECT_REPLY, 0,
				   e->pdata_len ? evt->pdata : NULL,
				   e->pdata_len, e->ord, e->ird);
		} else {
			cep_upcall(dev, cep, IW_CM_EVENT_CONNECT_REPLY,
				   cm_errno(e->status),
				   e->pdata_len ? evt->pdata : NULL,
				   e->pdata_len, 0, 0);
			cep_detach(dev, cep);
		}
		break;
	case VFW_EQE_ESTABLISHED:
		if (cep->state != CEP_ACCEPTED)
			break;
		cep->state = CEP_ESTABLISHED;
		if (cep->qp)
			cep->qp->state = IB_QPS_RTS;
		cep_upcall(dev, cep, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0,
			   e->ord, e->ird);
		break;
	case VFW_EQE_DISCONNECT:
		if (cep->state != CEP_ESTABLISHED)
			break;
		cep->state = CEP_DISCONNECTED;
		cep_upcall(dev, cep, IW_CM_EVENT_DISCONNECT, 0, NULL, 0, 0, 0);
		break;
	case VFW_EQE_CLOSE:
		cep_finish(dev, cep, cm_errno(e->status));
		cep_free(dev, cep);
		break;
	}
}

/* Run queued CM events (cm_lock held); with `bounded`, only those the
 * device wrote before EQ position `before`. */
static void cm_run(struct vfw_ib_dev *dev, bool bounded, u32 before)
{
	struct vfw_cm_evt *evt;

	lockdep_assert_held(&dev->cm_lock);
	for (;;) {
		spin_lock_irq(&dev->cm_evt_lock);
		evt = list_first_entry_or_null(&dev->cm_evts, struct vfw_cm_evt,
					       node);
		if (evt && bounded && (s32)(evt->seq - before) >= 0)
			evt = NULL;
		if (evt)
			list_del(&evt->node);
		spin_unlock_irq(&dev->cm_evt_lock);
		if (!evt)
			break;
		cm_handle(dev, evt);
		kfree(evt);
	}
}

void vfw_ib_cm_work(struct work_struct *work)
{
	struct vfw_ib_dev *dev = container_of(work, struct vfw_ib_dev, cm_work);

	mutex_lock(&dev->cm_lock);
	cm_run(dev, false, 0);
	mutex_unlock(&dev->cm_lock);
}

/* destroy_qp or modify_qp(ERR): the device has destroyed or errored the
 * QP and reset its connection. Deliver what the device already said,
 * then iw_cm's final event if the device has not, so iw_cm lets go of
 * the QP and of the cm_id (iw_destroy_cm_id waits for both). Not with
 * cm_lock held. */
void vfw_ib_cm_qp_gone(struct vfw_ib_dev *dev, struct vfw_qp *qp)
{
	mutex_lock(&dev->cm_lock);
	vfw_ib_eq_poll(dev);
	cm_run(dev, false, 0);
	if (qp->cep)
		cep_finish(dev, qp->cep, -ECONNRESET);
	mutex_unlock(&dev->cm_lock);
}

/* Remove: the EQ is off and iw_cm has let go of every id (the core
 * removed its clients); free what the device never closed. */
void vfw_ib_cm_fini(struct vfw_ib_dev *dev)
{
	struct vfw_listener *lsn;
	struct vfw_cep *cep;
	unsigned long i;

	flush_workqueue(dev->cm_wq);
	mutex_lock(&dev->cm_lock);
	cm_run(dev, false, 0);
	xa_for_each(&dev->ceps, i, cep) {
		cep_finish(dev, cep, -ECONNRESET);
		cep_free(dev, cep);
	}
	while ((lsn = list_first_entry_or_null(&dev->lsn_list,
					       struct vfw_listener, node))) {
		if (lsn->active)
			xa_erase(&dev->listeners, lsn->id);
		list_del(&lsn->node);
		sock_release(lsn->port_sock);
		kfree(lsn);
	}
	mutex_unlock(&dev->cm_lock);
}

/* ---- iw_cm verbs ---------------------------------------------------------- */

static void vfw_iw_add_ref(struct ib_qp *ibqp)
{
	refcount_inc(&to_vqp(ibqp)->iw_refs);
}

static void vfw_iw_rem_ref(struct ib_qp *ibqp)
{
	struct vfw_qp *qp = to_vqp(ibqp);

	if (refcount_dec_and_test(&qp->iw_refs))
		complete(&qp->iw_free);
}

/* Called by iw_cm under its spinlock: no sleeping. */
static struct ib_qp *vfw_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct vfw_qp *qp = xa_load(&to_vdev(ibdev)->qps, qpn);

	return qp ? &qp->ibqp : NULL;
}

static u8 clamp_ord_ird(struct vfw_ib_dev *dev, u32 v)
{
	return clamp_t(u32, v, 1, dev->lim.max_ord_ird);
}

static int vfw_iw_connect(struct iw_cm_id *cm_id, struct iw_cm_conn_param *p)
{
	struct vfw_ib_dev *dev = to_vdev(cm_id->device);
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_CONNECT };
	struct vfw_rcmd_connect *c = &cmd.u.connect;
	struct sockaddr_in l, r;
	struct socket *sock = NULL;
	struct vfw_pdata pd = {};
	struct vfw_cep *cep;
	struct vfw_qp *qp;
	u8 dmac[ETH_ALEN];
	u16 lport;
	u32 before;
	int err;

	if (cm_addr4(&cm_id->m_local_addr, &l) || cm_addr4(&cm_id->m_remote_addr, &r))
		return -EAFNOSUPPORT;
	if (!r.sin_addr.s_addr || !r.sin_port)
		return -EINVAL;
	if (!l.sin_addr.s_addr)
		l.sin_addr.s_addr = dev->cur_ip;
	qp = xa_load(&dev->qps, p->qpn);
	if (!qp)
		return -EINVAL;
	err = resolve_dmac(dev, l.sin_addr.s_addr, r.sin_addr.s_addr, dmac);
	if (err)
		return err;
	/* rdma_cm's port when the guest's TCP lets us have it, else any */
	lport = ntohs(l.sin_port);
	err = lport ? port_reserve(dev, l.sin_addr.s_addr, &lport, &sock) : -EINVAL;
	if (err) {
		lport = 0;
		err = port_reserve(dev, l.sin_addr.s_addr, &lport, &sock);
		if (err)
			return err;
	}
	err = pdata_get(dev, &pd, p->private_data, p->private_data_len);
	if (err)
		goto err_sock;

	mutex_lock(&dev->cm_lock);
	cep = cep_alloc(dev);
	if (!cep) {
		err = -ENOMEM;
		goto err_unlock;
	}
	c->qp = qp->id;
	memcpy(c->lip, &l.sin_addr.s_addr, 4);
	memcpy(c->rip, &r.sin_addr.s_addr, 4);
	c->lport = lport;
	c->rport = ntohs(r.sin_port);
	ether_addr_copy(c->dmac, dmac);
	c->vlan = 0;
	c->mss = 0;
	c->ord = min_t(u32, p->ord, dev->lim.max_ord_ird);
	c->ird = clamp_ord_ird(dev, p->ird);
	c->mpa_rev = 2;
	c->flags = peer_to_peer ? VFW_CONN_F_P2P : 0;
	c->rtr_mask = peer_to_peer ? VFW_RTR_WRITE_READ : 0;
	/* rdma_set_option(RDMA_OPTION_ID_TOS): the connection's DSCP, by
	 * which the adapter's switch puts its frames in a traffic class */
	c->tos = cm_id->tos_set ? cm_id->tos & ~INET_ECN_MASK : 0;
	c->pdata_len = pd.len;
	c->pdata_addr = pd.va ? pd.dma : 0;
	/* The device frees a cep id when it reports CLOSE (or a failed
	 * CONNECT_REPLY); whatever it wrote before this command belongs to
	 * older connections. */
	before = vfw_ib_eq_prod(dev);
	err = vfw_ib_cmd(dev, &cmd);
	if (err) {
		xa_erase(&dev->cep_keys, cep->key);
		kfree(cep);
		goto err_unlock;
	}
	vfw_ib_eq_poll(dev);
	cm_run(dev, true, before);
	cep_replace(dev, c->cep);
	cep->id = c->cep;
	cep->seq_start = before;
	cep->state = CEP_CONN_SENT;
	cep->laddr = l;
	cep->laddr.sin_port = htons(c->lport_used ? c->lport_used : lport);
	cep->raddr = r;
	cep->port_sock = sock;
	sock = NULL;
	err = xa_err(xa_store(&dev->ceps, cep->id, cep, GFP_KERNEL));
	if (err) {
		/* The device connects a QP nobody will hear about: abort it. */
		cep_detach(dev, cep);
		kfree(cep);
		vfw_ib_qp_to_error(dev, qp);
		goto err_unlock;
	}
	cep->cm_id = cm_id;
	cm_id->add_ref(cm_id);
	cm_id->provider_data = (void *)(uintptr_t)cep->key;
	cep->qp = qp;
	qp->cep = cep;
	mutex_unlock(&dev->cm_lock);
	pdata_put(dev, &pd);
	ibdev_dbg(&dev->ibdev, "cep %u: connect %pI4:%u -> %pI4:%u qp %u\n",
		  cep->id, &l.sin_addr, lport, &r.sin_addr, ntohs(r.sin_port),
		  qp->id);
	return 0;

err_unlock:
	mutex_unlock(&dev->cm_lock);
	pdata_put(dev, &pd);
err_sock:
	if (sock)
		sock_release(sock);
	return err;
}

static int vfw_iw_accept(struct iw_cm_id *cm_id, struct iw_cm_conn_param *p)
{
	struct vfw_ib_dev *dev = to_vdev(cm_id->device);
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_ACCEPT };
	struct vfw_rcmd_accept *a = &cmd.u.accept;
	struct vfw_pdata pd = {};
	struct vfw_cep *cep;
	struct vfw_qp *qp;
	int err;

	mutex_lock(&dev->cm_lock);
	cep = cep_by_key(dev, cm_id->provider_data);
	if (!cep || cep->state != CEP_REQ_PENDING) {
		err = -ECONNRESET;	/* the peer went away meanwhile */
		goto out;
	}
	qp = xa_load(&dev->qps, p->qpn);
	err = qp ? pdata_get(dev, &pd, p->private_data, p->private_data_len) :
		   -EINVAL;
	if (err)
		goto fail;
	a->cep = cep->id;
	a->qp = qp->id;
	a->ord = min_t(u32, p->ord, dev->lim.max_ord_ird);
	a->ird = clamp_ord_ird(dev, p->ird);
	a->mpa_rev = 0;			/* as the peer asked */
	a->flags = VFW_CONN_F_P2P;
	a->rtr_mask = VFW_RTR_WRITE_READ;
	a->tos = cm_id->tos_set ? cm_id->tos & ~INET_ECN_MASK : 0;
	a->pdata_len = pd.len;
	a->pdata_addr = pd.va ? pd.dma : 0;
	err = vfw_ib_cmd(dev, &cmd);
	pdata_put(dev, &pd);
	if (err)
		goto fail;
	cep->state = CEP_ACCEPTED;
	cep->cm_id = cm_id;
	cm_id->add_ref(cm_id);
	cep->qp = qp;
	qp->cep = cep;
	goto out;

fail:
	/* iw_cm goes back to IDLE and will not reject: do it here */
	reject_hw(dev, cep->id, NULL, 0);
	cep_detach(dev, cep);
out:
	mutex_unlock(&dev->cm_lock);
	return err;
}

static int vfw_iw_reject(struct iw_cm_id *cm_id, const void *pdata, u8 plen)
{
	struct vfw_ib_dev *dev = to_vdev(cm_id->device);
	struct vfw_cep *cep;

	mutex_lock(&dev->cm_lock);
	cep = cep_by_key(dev, cm_id->provider_data);
	if (cep) {
		switch (cep->state) {
		case CEP_REQ_PENDING:
			reject_hw(dev, cep->id, pdata, plen);
			cep_detach(dev, cep);
			break;
		case CEP_ACCEPTED:
			/* iw_cm destroys an id it accepted before ESTABLISHED
			 * (state DESTROYING: ESTABLISHED would BUG): abort the
			 * connection, deliver nothing more. */
			if (cep->qp)
				vfw_ib_qp_to_error(dev, cep->qp);
			cep_detach(dev, cep);
			break;
		default:
			break;
		}
	}
	mutex_unlock(&dev->cm_lock);
	return 0;
}

/* Start lsn in the device (cm_lock held). */
static int listener_start(struct vfw_ib_dev *dev, struct vfw_listener *lsn)
{
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_LISTEN };
	int err;

	memcpy(cmd.u.listen.ip, &lsn->ip, 4);
	cmd.u.listen.port = lsn->port;
	cmd.u.listen.backlog = lsn->backlog;
	err = vfw_ib_cmd(dev, &cmd);
	if (err)
		return err;
	lsn->id = cmd.u.listen.listener;
	err = xa_insert(&dev->listeners, lsn->id, lsn, GFP_KERNEL);
	if (err) {
		struct vfw_rcmd un = { .opcode = VFW_RCMD_UNLISTEN };

		ibdev_err(&dev->ibdev, "device returned listener id %u twice\n",
			  lsn->id);
		un.u.unlisten.listener = lsn->id;
		vfw_ib_cmd(dev, &un);
		return -EIO;
	}
	lsn->active = true;
	ibdev_dbg(&dev->ibdev, "listener %u on %pI4:%u\n", lsn->id, &lsn->ip,
		  lsn->port);
	return 0;
}

static void listener_stop(struct vfw_ib_dev *dev, struct vfw_listener *lsn)
{
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_UNLISTEN };
	int err;

	if (!lsn->active)
		return;
	/* after this, requests for it are rejected (ev_connect_request) */
	xa_erase(&dev->listeners, lsn->id);
	lsn->active = false;
	cmd.u.unlisten.listener = lsn->id;
	err = vfw_ib_cmd(dev, &cmd);
	if (err)
		ibdev_dbg(&dev->ibdev, "unlisten %u: %d\n", lsn->id, err);
}

/* The function's address changed (vf_ib_main.c, after SET_ADDR). */
void vfw_ib_cm_addr_changed(struct vfw_ib_dev *dev, __be32 ip)
{
	struct vfw_listener *lsn;
	int err;

	mutex_lock(&dev->cm_lock);
	dev->cur_ip = ip;
	if (ip) {
		list_for_each_entry(lsn, &dev->lsn_list, node) {
			if (lsn->active || (lsn->ip && lsn->ip != ip))
				continue;
			err = listener_start(dev, lsn);
			if (err)
				ibdev_warn(&dev->ibdev, "listen %pI4:%u: %d\n",
					   &lsn->ip, lsn->port, err);
		}
	}
	mutex_unlock(&dev->cm_lock);
}

static int vfw_iw_create_listen(struct iw_cm_id *cm_id, int backlog)
{
	struct vfw_ib_dev *dev = to_vdev(cm_id->device);
	struct vfw_listener *lsn;
	struct sockaddr_in l;
	u16 port;
	int err;

	if (cm_addr4(&cm_id->m_local_addr, &l))
		return -EAFNOSUPPORT;
	port = ntohs(l.sin_port);
	if (!port)
		return -EINVAL;
	lsn = kzalloc(sizeof(*lsn), GFP_KERNEL);
	if (!lsn)
		return -ENOMEM;
	err = port_reserve(dev, l.sin_addr.s_addr, &port, &lsn->port_sock);
	if (err) {
		ibdev_dbg(&dev->ibdev, "listen %pI4:%u: port taken (%d)\n",
			  &l.sin_addr, port, err);
		kfree(lsn);
		return err;
	}
	lsn->ip = l.sin_addr.s_addr;
	lsn->port = port;
	lsn->backlog = clamp_t(int, backlog, 1, dev->lim.max_conn);
	lsn->cm_id = cm_id;
	mutex_lock(&dev->cm_lock);
	err = dev->cur_ip ? listener_start(dev, lsn) : 0;
	if (err) {
		mutex_unlock(&dev->cm_lock);
		sock_release(lsn->port_sock);
		kfree(lsn);
		return err;
	}
	list_add_tail(&lsn->node, &dev->lsn_list);
	cm_id->provider_data = lsn;
	mutex_unlock(&dev->cm_lock);
	return 0;
}

static int vfw_iw_destroy_listen(struct iw_cm_id *cm_id)
{
	struct vfw_ib_dev *dev = to_vdev(cm_id->device);
	struct vfw_listener *lsn = cm_id->provider_data;

	if (!lsn)
		return 0;
	mutex_lock(&dev->cm_lock);
	listener_stop(dev, lsn);
	list_del(&lsn->node);
	cm_id->provider_data = NULL;
	mutex_unlock(&dev->cm_lock);
	sock_release(lsn->port_sock);
	kfree(lsn);
	return 0;
}

const struct ib_device_ops vfw_ib_cm_ops = {
	.iw_add_ref = vfw_iw_add_ref,
	.iw_rem_ref = vfw_iw_rem_ref,
	.iw_get_qp = vfw_iw_get_qp,
	.iw_connect = vfw_iw_connect,
	.iw_accept = vfw_iw_accept,
	.iw_reject = vfw_iw_reject,
	.iw_create_listen = vfw_iw_create_listen,
	.iw_destroy_listen = vfw_iw_destroy_listen,
};
