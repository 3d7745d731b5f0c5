/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rnic_cm.c - the guest-id side of connection management: listeners and
 * connections of a function (one slot table, the guest's "listener" and
 * "cep" ids), their TCP connections on the function's offloaded TCP
 * (vfw_tcp.h) handed to the engine's CEPs, and the engine's CM events
 * turned into EQEs. The engine side (CEPs, the MPA handshake, a TCP conn
 * as the LLP, the upcalls into the engine) is iwarp/cm.c's.
 *
 * Why not vfw_iwarp_tcp_listen/connect_from: their accept upcall hands the
 * engine a CEP without saying which listener took it or the 4-tuple, and
 * an active connection has no CEP until TCP is up; the event queue must
 * name the listener (CONNECT_REQUEST obj2), the addresses, and give the
 * driver a connection id at CONNECT time. So the function keeps its own
 * link objects on the engine's link head (struct vfw_cm_tcp), with the
 * same lifetime rules as cm.c's: one link per TCP connection, freed on
 * the final closed upcall or on abort.
 *
 * Slot lifetime = TCP connection lifetime. The guest's view:
 *   active:  CONNECT -> CONNECT_REPLY (status OK: connected; else the cep
 *            id is free) ... [DISCONNECT] ... CLOSE (cep free)
 *   passive: CONNECT_REQUEST -> ACCEPT -> ESTABLISHED ... CLOSE,
 *            or -> REJECT (cep free when the command completes).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include "rnic_internal.h"
#include "../iwarp/vfw_iwarp.h"

struct rnic_link {
    struct vfw_cm_tcp t;          /* first: the LLP's conn, the TCP
                                     callbacks' user (iwarp/cm.c) */
    struct rnic_fn *fs;
    uint32_t slot;
    struct vfw_conn_param *param;   /* active: for the MPA Request */
};
_Static_assert(offsetof(struct rnic_link, t) == 0, "link head first");

static uint8_t cm_status(int err)
{
    switch (err) {
    case 0: return VFW_CM_S_OK;
    case -ECONNREFUSED: return VFW_CM_S_REFUSED;
    case -ETIMEDOUT: return VFW_CM_S_TIMEOUT;
    case -EHOSTUNREACH: case -ENETUNREACH: return VFW_CM_S_UNREACH;
    case -ECONNABORTED: return VFW_CM_S_TERMINATE;
    default: return VFW_CM_S_RESET;
    }
}

static void put_ip(uint8_t b[4], uint32_t ip)
{
    b[0] = (uint8_t)(ip >> 24);
    b[1] = (uint8_t)(ip >> 16);
    b[2] = (uint8_t)(ip >> 8);
    b[3] = (uint8_t)ip;
}

static void conn_event(struct rnic_fn *fs, struct rnic_conn *s, uint8_t type,
                       uint8_t status, uint32_t ord, uint32_t ird,
                       uint8_t rev, const uint8_t *pdata, uint16_t plen)
{
    struct vfw_eqe ev = {
        .type = type, .status = status,
        .ord = (uint8_t)(ord > 255 ? 255 : ord),
        .ird = (uint8_t)(ird > 255 ? 255 : ird),
        .obj = s->id,
        .obj2 = type == VFW_EQE_CONNECT_REQUEST ? s->listener : s->qp,
        .lport = s->lport, .rport = s->rport, .mpa_rev = rev,
    };
    put_ip(ev.lip, s->lip);
    put_ip(ev.rip, s->rip);
    rnic_eq_post(fs, &ev, pdata, plen);
}

static struct rnic_conn *slot_alloc(struct rnic_fn *fs, uint8_t kind)
{
    for (uint32_t i = 1; i <= VFW_RDMA_HW_CONN; i++) {
        struct rnic_conn *s = &fs->conn[i];
        if (s->kind != CONN_FREE)
            continue;
        memset(s, 0, sizeof(*s));
        s->fs = fs;
        s->id = i;
        s->kind = kind;
        if (i > fs->conn_hi)
            fs->conn_hi = i;
        fs->used.conn++;
        return s;
    }
    return NULL;
}

static struct rnic_conn *slot_get(struct rnic_fn *fs, uint32_t id,
                                  uint8_t kind)
{
    if (id < 1 || id > VFW_RDMA_HW_CONN || fs->conn[id].kind != kind)
        return NULL;
    return &fs->conn[id];
}

static void listener_unpend(struct rnic_fn *fs, struct rnic_conn *s)
{
    if (!s->backlog)          /* passive: "backlog" marks it counted */
        return;
    s->backlog = 0;
    struct rnic_conn *l = slot_get(fs, s->listener, CONN_LISTEN);
    if (l && l->pending)
        l->pending--;
}

static void slot_free(struct rnic_fn *fs, struct rnic_conn *s)
{
    if (s->kind == CONN_PASSIVE)
        listener_unpend(fs, s);
    if (s->ecep && s->ecep <= fs->ecep_max && fs->ecep_map[s->ecep] == s->id)
        fs->ecep_map[s->ecep] = 0;
    if (s->qp && s->qp <= VFW_RDMA_HW_QP && fs->qp[s->qp] &&
        fs->qp[s->qp]->conn == s->id)
        fs->qp[s->qp]->conn = 0;
    s->kind = CONN_FREE;
    s->link = NULL;
    fs->used.conn--;
}

/* The TCP connection of slot s is gone (err as vfw_tcp.h). */
static void link_end(struct rnic_link *l, int err)
{
    struct rnic_fn *fs = l->fs;
    struct rnic_conn *s = &fs->conn[l->slot];
    if (s->link == l) {
        if (!fs->resetting) {
            if (s->kind == CONN_ACTIVE &&
                (s->st == CS_TCP || s->st == CS_MPA))
                conn_event(fs, s, VFW_EQE_CONNECT_REPLY,
                           err ? cm_status(err) : VFW_CM_S_RESET, 0, 0, 0,
                           NULL, 0);
            else if (s->st == CS_REQ || s->st == CS_ACCEPTING ||
                     s->st == CS_UP)
                conn_event(fs, s, VFW_EQE_CLOSE, cm_status(err), 0, 0, 0,
                           NULL, 0);
        }
        slot_free(fs, s);
    }
    free(l->param);
    free(l);
}

/* ---- the function's TCP connections as the engine's LLP ------------------ */
/* llp->abort: the RST went out, no TCP upcall follows */
static void link_aborted(struct vfw_cm_tcp *t)
{
    link_end((struct rnic_link *)t, -ECONNRESET);
}

static void map_ecep(struct rnic_fn *fs, struct rnic_conn *s, uint32_t ecep)
{
    s->ecep = ecep;
    if (ecep && ecep <= fs->ecep_max)
        fs->ecep_map[ecep] = s->id;
}

static void cb_connected(struct vfw_tcp_conn *c, int err, void *user)
{
    struct rnic_link *l = user;
    struct rnic_fn *fs = l->fs;
    struct rnic_conn *s = &fs->conn[l->slot];
    (void)c;
    if (err < 0) {
        link_end(l, err);         /* conn invalid after this upcall */
        return;
    }
    uint32_t ecep = 0;
    s->st = CS_MPA;
    int rc = vfw_cep_create(fs->e, &vfw_cm_tcp_llp, l, 1, &ecep);
    if (rc == 0) {
        l->t.cep = ecep;
        map_ecep(fs, s, ecep);
        rc = vfw_connect(fs->e, ecep, s->qp, l->param);
    }
    if (rc) {
        if (ecep)
            vfw_cep_release(fs->e, ecep);
        vfw_tcp_abort(l->t.c);
        link_end(l, -ECONNRESET);
    }
}

static void cb_closed(struct vfw_tcp_conn *c, int err, void *user)
{
    struct rnic_link *l = user;
    struct rnic_fn *fs = l->fs;
    struct rnic_conn *s = &fs->conn[l->slot];
    (void)c;
    bool final = err < 0 || l->t.close_called;
    if (!final && s->link == l && s->st == CS_UP)
        conn_event(fs, s, VFW_EQE_DISCONNECT, VFW_CM_S_OK, 0, 0, 0, NULL, 0);
    vfw_cm_tcp_closed(&l->t, err);
    link_end(l, err);
}

static const struct vfw_tcp_cb rnic_tcp_cb = { cb_connected, vfw_cm_tcp_recv,
                                               vfw_cm_tcp_writable, cb_closed };

static const struct vfw_tcp_cb *on_accept(struct vfw_tcp_conn *c,
                                          void *listen_user, void **conn_user)
{
    struct rnic_conn *ls = listen_user;
    struct rnic_fn *fs = ls->fs;
    if (ls->kind != CONN_LISTEN || ls->pending >= ls->backlog ||
        fs->used.conn >= fs->r->quota[fs->fn].conn)
        return NULL;              /* RST */
    struct rnic_link *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    struct rnic_conn *s = slot_alloc(fs, CONN_PASSIVE);
    if (!s) {
        free(l);
        return NULL;
    }
    uint32_t ecep;
    if (vfw_cep_create(fs->e, &vfw_cm_tcp_llp, l, 0, &ecep)) {
        slot_free(fs, s);
        free(l);
        return NULL;
    }
    l->t.e = fs->e;
    l->t.c = c;
    l->t.cep = ecep;
    l->t.aborted = link_aborted;
    l->fs = fs;
    l->slot = s->id;
    s->link = l;
    s->st = CS_MPA;
    s->listener = ls->id;
    s->backlog = 1;               /* counted in the listener's pending */
    ls->pending++;
    vfw_tcp_conn_addr(c, &s->lip, &s->lport, &s->rip, &s->rport);
    map_ecep(fs, s, ecep);
    *conn_user = l;
    return &rnic_tcp_cb;
}

/* ---- engine events ----------------------------------------------------- */
static struct rnic_conn *by_ecep(struct rnic_fn *fs, uint32_t ecep)
{
    if (ecep < 1 || ecep > fs->ecep_max || !fs->ecep_map[ecep])
        return NULL;
    struct rnic_conn *s = &fs->conn[fs->ecep_map[ecep]];
    return s->kind == CONN_ACTIVE || s->kind == CONN_PASSIVE ? s : NULL;
}

static void unbind_qp(struct rnic_fn *fs, struct rnic_conn *s)
{
    if (s->qp && s->qp <= VFW_RDMA_HW_QP && fs->qp[s->qp] &&
        fs->qp[s->qp]->conn == s->id)
        fs->qp[s->qp]->conn = 0;
}

void rnic_cm_event(void *opaque, const struct vfw_cm_event *ev)
{
    struct rnic_fn *fs = opaque;
    if (fs->resetting)
        return;
    if (ev->type == VFW_CM_TERMINATE) {
        struct vfw_qp_info in;
        struct vfw_eqe e = { .type = VFW_EQE_QP_ERROR,
                             .status = VFW_CM_S_TERMINATE, .obj = ev->qp_id };
        struct rnic_conn *s = by_ecep(fs, ev->cep_id);
        e.obj2 = s ? s->id : 0;
        if (vfw_qp_query(fs->e, ev->qp_id, &in) == 0) {
            const struct vfw_term_info *t = in.term_rcvd.valid
                                            ? &in.term_rcvd : &in.term_sent;
            e.term_layer = t->layer;
            e.term_etype = t->etype;
            e.term_ecode = t->ecode;
        }
        rnic_eq_post(fs, &e, NULL, 0);
        return;
    }
    struct rnic_conn *s = by_ecep(fs, ev->cep_id);
    if (!s)
        return;     /* CLOSED and link-level failures: see link_end */
    switch (ev->type) {
    case VFW_CM_CONNECT_REQUEST:
        if (s->kind != CONN_PASSIVE || s->st != CS_MPA)
            return;
        s->st = CS_REQ;
        conn_event(fs, s, VFW_EQE_CONNECT_REQUEST, VFW_CM_S_OK, ev->ord,
                   ev->ird, ev->mpa_rev, ev->pdata, ev->pdata_len);
        break;
    case VFW_CM_ESTABLISHED:
        if (s->kind == CONN_ACTIVE && s->st == CS_MPA) {
            s->st = CS_UP;
            conn_event(fs, s, VFW_EQE_CONNECT_REPLY, VFW_CM_S_OK, ev->ord,
                       ev->ird, ev->mpa_rev, ev->pdata, ev->pdata_len);
        } else if (s->kind == CONN_PASSIVE && s->st == CS_ACCEPTING) {
            s->st = CS_UP;
            conn_event(fs, s, VFW_EQE_ESTABLISHED, VFW_CM_S_OK, ev->ord,
                       ev->ird, ev->mpa_rev, NULL, 0);
        }
        fs->db_pending = true;    /* WQEs may wait for RTS */
        rnic_kick(fs);
        break;
    case VFW_CM_REJECTED:
    case VFW_CM_CONNECT_ERROR:
        if (s->kind == CONN_ACTIVE && (s->st == CS_TCP || s->st == CS_MPA)) {
            conn_event(fs, s, VFW_EQE_CONNECT_REPLY,
                       ev->type == VFW_CM_REJECTED ? VFW_CM_S_REFUSED
                                                   : cm_status(ev->err),
                       ev->ord, ev->ird, ev->mpa_rev, ev->pdata,
                       ev->pdata_len);
            s->st = CS_SILENT;
            unbind_qp(fs, s);
        } else if (s->st == CS_REQ || s->st == CS_ACCEPTING) {
            conn_event(fs, s, VFW_EQE_CLOSE, cm_status(ev->err), 0, 0, 0,
                       NULL, 0);
            s->st = CS_SILENT;
            listener_unpend(fs, s);
            unbind_qp(fs, s);
        }
        break;
    default:
        break;
    }
}

/* ---- commands ----------------------------------------------------------- */
int rnic_cm_listen(struct rnic_fn *fs, uint32_t ip, uint16_t port,
                   uint16_t backlog, uint32_t *id)
{
    struct rnic_conn *s = slot_alloc(fs, CONN_LISTEN);
    if (!s)
        return -ENOSPC;
    s->backlog = backlog;
    s->lip = ip;
    s->lport = port;
    /* the backlog bounds both the unaccepted CONNECT_REQUESTs (pending,
     * on_accept) and the half-open TCP connections a SYN makes, which
     * hold no buffers and yield to newer SYNs (vfw_tcp.h): a flood costs
     * the function at most `backlog` small structs, never a conn slot of
     * its quota or an established connection (issue 33) */
    int rc = vfw_tcp_listen_backlog(fs->tcp, port, backlog, on_accept, s);
    if (rc) {
        slot_free(fs, s);
        return rc;
    }
    *id = s->id;
    return 0;
}

int rnic_cm_unlisten(struct rnic_fn *fs, uint32_t id)
{
    struct rnic_conn *s = slot_get(fs, id, CONN_LISTEN);
    if (!s)
        return -ENOENT;
    vfw_tcp_unlisten(fs->tcp, s->lport);
    /* requests already taken stay; they no longer count against it */
    for (uint32_t i = 1; i <= fs->conn_hi; i++)
        if (fs->conn[i].kind == CONN_PASSIVE && fs->conn[i].listener == id)
            fs->conn[i].backlog = 0;
    slot_free(fs, s);
    return 0;
}

int rnic_cm_connect(struct rnic_fn *fs, const struct vfw_rcmd_connect *c,
                    const struct vfw_conn_param *p, uint32_t *cep,
                    uint16_t *lport_used)
{
    struct rnic_qp *q = fs->qp[c->qp];
    struct vfw_qp_info in;
    if (q->conn || vfw_qp_query(fs->e, c->qp, &in) || in.state != VFW_QPS_IDLE)
        return -EISCONN;
    uint32_t rip = (uint32_t)c->rip[0] << 24 | (uint32_t)c->rip[1] << 16 |
                   (uint32_t)c->rip[2] << 8 | c->rip[3];
    struct rnic_link *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->param = malloc(sizeof(*l->param));
    struct rnic_conn *s = l->param ? slot_alloc(fs, CONN_ACTIVE) : NULL;
    if (!s) {
        free(l->param);
        free(l);
        return -ENOSPC;
    }
    *l->param = *p;
    l->t.e = fs->e;
    l->t.aborted = link_aborted;
    l->fs = fs;
    l->slot = s->id;
    /* the next hop comes from the driver's neighbour table (ARP is the
     * netdev's) */
    int err = vfw_tcp_neigh_set(fs->tcp, rip, c->dmac);
    if (!err) {
        l->t.c = vfw_tcp_connect_tos(fs->tcp, rip, c->rport, c->lport,
                                     c->tos, &rnic_tcp_cb, l, &err);
        if (!l->t.c && !err)
            err = -ENOMEM;
    }
    if (err) {
        slot_free(fs, s);
        free(l->param);
        free(l);
        return err;
    }
    s->link = l;
    s->st = CS_TCP;
    s->qp = c->qp;
    q->conn = s->id;
    vfw_tcp_conn_addr(l->t.c, &s->lip, &s->lport, &s->rip, &s->rport);
    *cep = s->id;
    *lport_used = s->lport;
    return 0;
}

int rnic_cm_accept(struct rnic_fn *fs, uint32_t cep, uint32_t qp, uint8_t tos,
                   const struct vfw_conn_param *p)
{
    struct rnic_conn *s = slot_get(fs, cep, CONN_PASSIVE);
    if (!s || s->st == CS_SILENT || s->st == CS_MPA)
        return -ENOENT;
    if (s->st != CS_REQ)
        return -EISCONN;
    struct rnic_qp *q = qp >= 1 && qp <= VFW_RDMA_HW_QP ? fs->qp[qp] : NULL;
    struct vfw_qp_info in;
    if (!q)
        return -ENOENT;
    if (q->conn || vfw_qp_query(fs->e, qp, &in) || in.state != VFW_QPS_IDLE)
        return -EISCONN;
    /* bind before the engine call: ESTABLISHED may come from inside it */
    s->st = CS_ACCEPTING;
    s->qp = qp;
    q->conn = s->id;
    int rc = vfw_accept(fs->e, s->ecep, qp, p);
    if (rc) {
        if (s->kind == CONN_PASSIVE && s->st == CS_ACCEPTING) {
            s->st = CS_REQ;
            s->qp = 0;
        }
        if (q->conn == cep)
            q->conn = 0;
        return rc;
    }
    if (s->link) {
        vfw_tcp_set_tos(s->link->t.c, tos);
    }
    listener_unpend(fs, s);
    return 0;
}

int rnic_cm_reject(struct rnic_fn *fs, uint32_t cep, const uint8_t *pdata,
                   uint16_t len)
{
    struct rnic_conn *s = slot_get(fs, cep, CONN_PASSIVE);
    if (!s || s->st == CS_SILENT || s->st == CS_MPA)
        return -ENOENT;
    if (s->st != CS_REQ)
        return -EISCONN;
    int rc = vfw_reject(fs->e, s->ecep, pdata, len);
    if (rc)
        return rc;
    /* the cep id is the guest's no more; the slot goes with the TCP conn */
    if (s->kind == CONN_PASSIVE) {
        s->st = CS_SILENT;
        listener_unpend(fs, s);
    }
    return 0;
}

bool rnic_cm_any(const struct rnic_fn *fs)
{
    for (uint32_t i = 1; i <= fs->conn_hi; i++)
        if (fs->conn[i].kind != CONN_FREE)
            return true;
    return false;
}

bool rnic_cm_handshaking(const struct rnic_fn *fs)
{
    for (uint32_t i = 1; i <= fs->conn_hi; i++) {
        const struct rnic_conn *s = &fs->conn[i];
        if ((s->kind == CONN_ACTIVE || s->kind == CONN_PASSIVE) &&
            (s->st == CS_MPA || s->st == CS_REQ || s->st == CS_ACCEPTING))
            return true;
    }
    return false;
}

void rnic_cm_teardown(struct rnic_fn *fs)
{
    if (!fs->conn)
        return;
    for (uint32_t i = 1; i <= fs->conn_hi; i++) {
        struct rnic_conn *s = &fs->conn[i];
        if (s->kind == CONN_LISTEN) {
            if (fs->tcp)
                vfw_tcp_unlisten(fs->tcp, s->lport);
            slot_free(fs, s);
        } else if (s->kind != CONN_FREE && s->link) {
            struct rnic_link *l = s->link;
            /* the engine forgets the conn, the peer gets a RST */
            if (l->t.cep && fs->e)
                vfw_cep_release(fs->e, l->t.cep);
            vfw_tcp_abort(l->t.c);
            link_end(l, -ECONNRESET);
        } else if (s->kind != CONN_FREE) {
            slot_free(fs, s);
        }
    }
}
