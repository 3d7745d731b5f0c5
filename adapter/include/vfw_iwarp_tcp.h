/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_iwarp_tcp.h - glue between the iWARP engine (vfw_engine.h) and the
 * adapter's own TCP (vfw_tcp.h): active connect and passive listen that
 * hand established TCP connections to the engine as CEPs.
 *
 * Events: the engine raises VFW_CM_CONNECT_REQUEST (passive, after the MPA
 * Request arrived; answer with vfw_accept/vfw_reject on ev->cep_id),
 * VFW_CM_ESTABLISHED, VFW_CM_CONNECT_ERROR (also for a failed TCP open,
 * with qp_id set), VFW_CM_REJECTED, VFW_CM_CLOSED.
 */
#ifndef VFW_IWARP_TCP_H
#define VFW_IWARP_TCP_H

#include "vfw_engine.h"
#include "vfw_tcp.h"

/* Active open to rip:rport; on TCP establishment the MPA Request with `p`
 * is sent for `qp_id`. 0 or -errno. */
int vfw_iwarp_tcp_connect(struct vfw_engine *e, struct vfw_tcp_stack *s,
                          uint32_t rip, uint16_t rport, uint32_t qp_id,
                          const struct vfw_conn_param *p);
/* As vfw_iwarp_tcp_connect, from local port lport (0: the stack picks);
 * *lport_used (may be NULL) gets the port used. */
int vfw_iwarp_tcp_connect_from(struct vfw_engine *e, struct vfw_tcp_stack *s,
                               uint32_t rip, uint16_t rport, uint16_t lport,
                               uint32_t qp_id, const struct vfw_conn_param *p,
                               uint16_t *lport_used);
/* Accept iWARP connections on `port`. */
int vfw_iwarp_tcp_listen(struct vfw_engine *e, struct vfw_tcp_stack *s,
                         uint16_t port);

#endif /* VFW_IWARP_TCP_H */
