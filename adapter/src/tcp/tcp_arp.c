/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_arp.c - ARP (RFC 826) and the neighbour cache of the offloaded TCP
 * stack (vfw_tcp.h): replies to requests for our IP, resolves next hops
 * for active opens (one request per resolution, retried on the SYN's RTO
 * schedule by tcp_timer.c), and starts the SYNs that waited for an answer.
 * With a netdev sharing the function (vfw_tcp_set_arp_passive) the stack
 * sends no ARP and only learns.
 *
 * Trust: ARP frames come from the wire. The length, hardware and protocol
 * types are checked before any field is read; a multicast sender, a
 * broadcast/multicast/zero or our own sender IP is ignored; entries are
 * learned only from requests to our IP and from replies to requests we
 * sent (passive: any ARP to our IP, and updates of entries we have).
 * Bounds: ARP_CACHE entries, the oldest evicted; entries age after
 * ARP_TTL_NS (not in passive mode, where the driver keeps them current).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "tcp_internal.h"

void toe_arp_send(struct vfw_tcp_stack *s, uint16_t op, const uint8_t *dmac,
                  const uint8_t *tha, uint32_t tip)
{
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (s->arp_passive)
        return;         /* ARP belongs to the netdev sharing the function */
    toe_eth_hdr(s, dmac ? dmac : bcast, s->cfg.mac, VFW_ETH_P_ARP);
    uint8_t *a = s->tx + VFW_ETH_HLEN;
    vfw_st_be16(a, 1);
    vfw_st_be16(a + 2, VFW_ETH_P_IP);
    a[4] = 6;
    a[5] = 4;
    vfw_st_be16(a + 6, op);
    memcpy(a + 8, s->cfg.mac, 6);
    vfw_st_be32(a + 14, s->cfg.ip);
    if (tha)
        memcpy(a + 18, tha, 6);
    else
        memset(a + 18, 0, 6);
    vfw_st_be32(a + 24, tip);
    size_t len = VFW_ETH_HLEN + VFW_ARP_LEN;
    memset(s->tx + len, 0, 60 - len);   /* pad to the Ethernet minimum */
    s->st.arp_out++;
    toe_emit(s, 60);
}

struct arp_ent *toe_arp_find(struct vfw_tcp_stack *s, uint32_t ip)
{
    for (int i = 0; i < ARP_CACHE; i++)
        if (s->arp[i].state && s->arp[i].ip == ip)
            return &s->arp[i];
    return NULL;
}

static struct arp_ent *arp_slot(struct vfw_tcp_stack *s, uint32_t ip)
{
    struct arp_ent *e = toe_arp_find(s, ip), *old = NULL;
    if (e)
        return e;
    for (int i = 0; i < ARP_CACHE; i++) {
        if (!s->arp[i].state)
            return &s->arp[i];
        if (!old || s->arp[i].stamp < old->stamp)
            old = &s->arp[i];
    }
    return old;
}

/* Make sure a pending entry exists for ip (resolution in progress). */
void toe_arp_want(struct vfw_tcp_stack *s, uint32_t ip)
{
    struct arp_ent *a = toe_arp_find(s, ip);
    if (!a || a->state != 1) {
        if (a && a->state == 2)
            return;
        a = arp_slot(s, ip);
        a->ip = ip;
        a->state = 1;
        a->stamp = toe_now(s);
    }
}

static void arp_learned(struct vfw_tcp_stack *s, uint32_t ip)
{
    struct arp_ent *e = toe_arp_find(s, ip);
    for (struct vfw_tcp_conn *c = s->conns; c; c = c->lnext) {
        if (c->arp_wait && c->rip == ip && !c->dead) {
            memcpy(c->rmac, e->mac, 6);
            c->arp_wait = false;
            toe_send_syn(c);
            c->t_rtx = toe_rtx_deadline(c);
        }
    }
}

/* Record ip -> mac as valid now and start the SYNs waiting for it. */
void toe_neigh_learn(struct vfw_tcp_stack *s, uint32_t ip,
                     const uint8_t *mac)
{
    struct arp_ent *e = arp_slot(s, ip);
    e->ip = ip;
    memcpy(e->mac, mac, 6);
    e->state = 2;
    e->stamp = toe_now(s);
    arp_learned(s, ip);
}

void toe_arp_input(struct vfw_tcp_stack *s, const uint8_t *f, size_t len)
{
    if (len < VFW_ETH_HLEN + VFW_ARP_LEN) {
        s->st.malformed++;
        return;
    }
    const uint8_t *a = f + VFW_ETH_HLEN;
    if (vfw_ld_be16(a) != 1 || vfw_ld_be16(a + 2) != VFW_ETH_P_IP || a[4] != 6 ||
        a[5] != 4) {
        s->st.malformed++;
        return;
    }
    s->st.arp_in++;
    uint16_t op = vfw_ld_be16(a + 6);
    const uint8_t *sha = a + 8;
    uint32_t spa = vfw_ld_be32(a + 14);
    uint32_t tpa = vfw_ld_be32(a + 24);
    if (sha[0] & 1 || toe_is_bcast_or_mcast_ip(spa) || spa == s->cfg.ip)
        return;
    struct arp_ent *e = toe_arp_find(s, spa);
    bool learn = false;
    if (s->arp_passive) {
        /* The netdev answers; we only listen: learn whoever talks ARP to
         * our address, and keep entries we have up to date. */
        if (tpa == s->cfg.ip && !e)
            e = arp_slot(s, spa);
        learn = e != NULL;
    } else if (op == 1 && tpa == s->cfg.ip) {
        /* Request for us: learn the requester (RFC 826) and reply. */
        if (!e)
            e = arp_slot(s, spa);
        learn = true;
        toe_arp_send(s, 2, sha, sha, spa);
    } else if (op == 2 && e) {
        learn = true;       /* only update entries we already have/asked */
    }
    if (learn) {
        bool was_pending = e->state == 1;
        e->ip = spa;
        memcpy(e->mac, sha, 6);
        e->state = 2;
        e->stamp = toe_now(s);
        if (was_pending || op == 2 || s->arp_passive)
            arp_learned(s, spa);
    }
}

/* Sharing the function with a netdev (2.0 device, see vfw_tcp.h). */

void vfw_tcp_set_arp_passive(struct vfw_tcp_stack *s, int on)
{
    if (s)
        s->arp_passive = on != 0;
}

int vfw_tcp_neigh_set(struct vfw_tcp_stack *s, uint32_t ip,
                      const uint8_t mac[6])
{
    static const uint8_t zero[6];
    if (!s || !mac || toe_is_bcast_or_mcast_ip(ip) || ip == s->cfg.ip ||
        (mac[0] & 1) || memcmp(mac, zero, 6) == 0)
        return -EINVAL;
    toe_stack_enter(s);
    toe_neigh_learn(s, ip, mac);  /* may send the SYNs waiting for it */
    toe_stack_leave(s);
    return 0;
}
