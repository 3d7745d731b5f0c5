/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iwarp_tcp.c - a vfw_tcp_conn as the engine's LLP (struct vfw_llp_ops),
 * with the connection lifetimes of vfw_tcp.h mapped onto CEPs: one link
 * object per TCP connection, freed on the final closed upcall or on abort.
 */
#include <errno.h>
#include <stdlib.h>
#include "vfw_iwarp.h"
#include "vfw_iwarp_tcp.h"

struct link {
    struct vfw_engine *e;
    struct vfw_tcp_conn *c;
    uint32_t cep, qp;
    bool active, close_called;
    struct vfw_conn_param param;
};

static int l_send(void *o, const uint8_t *d, size_t n)
{
    return vfw_tcp_send_record(((struct link *)o)->c, d, n);
}
static size_t l_space(void *o) { return vfw_tcp_send_space(((struct link *)o)->c); }
static uint16_t l_mss(void *o) { return vfw_tcp_mss(((struct link *)o)->c); }
static void l_resume(void *o) { vfw_tcp_recv_resume(((struct link *)o)->c); }
static void l_close(void *o)
{
    struct link *l = o;
    l->close_called = true;
    vfw_tcp_close(l->c);
}
static void l_abort(void *o)
{
    struct link *l = o;
    vfw_tcp_abort(l->c);
    free(l);            /* no upcall follows an abort */
}
static uint8_t *l_reserve(void *o, size_t n)
{
    return vfw_tcp_send_reserve(((struct link *)o)->c, n);
}
static int l_commit(void *o, size_t n)
{
    return vfw_tcp_send_commit(((struct link *)o)->c, n);
}
static const struct vfw_llp_ops tcp_llp = { l_send, l_space, l_mss, l_resume,
                                            l_close, l_abort, l_reserve,
                                            l_commit };

static void cb_connected(struct vfw_tcp_conn *c, int err, void *user)
{
    struct link *l = user;
    (void)c;
    if (err < 0) {
        vfw_cm_emit(l->e, VFW_CM_CONNECT_ERROR, 0, l->qp, err, NULL, 0);
        free(l);
        return;
    }
    int rc = vfw_cep_create(l->e, &tcp_llp, l, 1, &l->cep);
    if (rc == 0)
        rc = vfw_connect(l->e, l->cep, l->qp, &l->param);
    if (rc) {
        if (l->cep)
            vfw_cep_release(l->e, l->cep);
        vfw_cm_emit(l->e, VFW_CM_CONNECT_ERROR, 0, l->qp, rc, NULL, 0);
        vfw_tcp_abort(l->c);
        free(l);
    }
}

static size_t cb_recv(struct vfw_tcp_conn *c, const uint8_t *d, size_t n,
                      void *user)
{
    struct link *l = user;
    (void)c;
    return vfw_llp_recv(l->e, l->cep, d, n);
}

static void cb_writable(struct vfw_tcp_conn *c, void *user)
{
    struct link *l = user;
    (void)c;
    vfw_llp_writable(l->e, l->cep);
}

static void cb_closed(struct vfw_tcp_conn *c, int err, void *user)
{
    struct link *l = user;
    (void)c;
    bool final = err < 0 || l->close_called;
    vfw_llp_closed(l->e, l->cep, err);
    if (!final) {
        /* Peer FIN while open: the engine answered with llp->close. The
         * TCP stack reports a connection's end once, so this close is the
         * last word on the conn: finish the CEP now. */
        vfw_llp_closed(l->e, l->cep, 0);
    }
    free(l);
}

static const struct vfw_tcp_cb tcp_cb = { cb_connected, cb_recv, cb_writable,
                                          cb_closed };

int vfw_iwarp_tcp_connect_from(struct vfw_engine *e, struct vfw_tcp_stack *s,
                               uint32_t rip, uint16_t rport, uint16_t lport,
                               uint32_t qp_id, const struct vfw_conn_param *p,
                               uint16_t *lport_used)
{
    if (!e || !s || !p || !vfw_qp_get(e, qp_id))
        return -EINVAL;
    struct link *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->e = e;
    l->qp = qp_id;
    l->active = true;
    l->param = *p;
    int err = 0;
    l->c = vfw_tcp_connect(s, rip, rport, lport, &tcp_cb, l, &err);
    if (!l->c) {
        free(l);
        return err ? err : -ENOMEM;
    }
    /* the SYN is only queued: no upcall has run, the conn is still ours */
    if (lport_used)
        vfw_tcp_conn_addr(l->c, NULL, lport_used, NULL, NULL);
    return 0;
}

int vfw_iwarp_tcp_connect(struct vfw_engine *e, struct vfw_tcp_stack *s,
                          uint32_t rip, uint16_t rport, uint32_t qp_id,
                          const struct vfw_conn_param *p)
{
    return vfw_iwarp_tcp_connect_from(e, s, rip, rport, 0, qp_id, p, NULL);
}

static const struct vfw_tcp_cb *on_accept(struct vfw_tcp_conn *c,
                                          void *listen_user, void **conn_user)
{
    struct vfw_engine *e = listen_user;
    struct link *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->e = e;
    l->c = c;
    if (vfw_cep_create(e, &tcp_llp, l, 0, &l->cep)) {
        free(l);
        return NULL;
    }
    *conn_user = l;
    return &tcp_cb;
}

int vfw_iwarp_tcp_listen(struct vfw_engine *e, struct vfw_tcp_stack *s,
                         uint16_t port)
{
    if (!e || !s)
        return -EINVAL;
    return vfw_tcp_listen(s, port, on_accept, e);
}
