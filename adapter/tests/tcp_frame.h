/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_frame.h - an Ethernet/IPv4/TCP frame built from its fields, for the
 * tests and the fuzz targets that feed the adapter's TCP. Written apart
 * from src/tcp/tcp_output.c's own segment builder on purpose: input crafted by the
 * code under test would share its mistakes.
 */
#ifndef TCP_FRAME_H
#define TCP_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tcp/tcp_wire.h"

/* Write the frame into `f` (54 + optlen + plen bytes; optlen a multiple of
 * 4, at most 40) with correct IPv4 and TCP checksums; returns its length. */
static inline size_t tcp_frame(uint8_t *f, const uint8_t dmac[6],
                               const uint8_t smac[6], uint32_t sip,
                               uint32_t dip, uint16_t sport, uint16_t dport,
                               uint32_t seq, uint32_t ack, uint8_t flags,
                               uint16_t wnd, const uint8_t *opt,
                               size_t optlen, const uint8_t *pl, size_t plen)
{
    size_t tl = 20 + optlen + plen;
    uint8_t *ip = f + 14, *t = ip + 20;

    memcpy(f, dmac, 6);
    memcpy(f + 6, smac, 6);
    vfw_st_be16(f + 12, 0x0800);
    memset(ip, 0, 20);
    ip[0] = 0x45;
    vfw_st_be16(ip + 2, (uint16_t)(20 + tl));
    ip[8] = 64;
    ip[9] = 6;
    vfw_st_be32(ip + 12, sip);
    vfw_st_be32(ip + 16, dip);
    vfw_csum_store(ip + 10, vfw_csum_partial(ip, 20, 0));
    memset(t, 0, 20);
    vfw_st_be16(t, sport);
    vfw_st_be16(t + 2, dport);
    vfw_st_be32(t + 4, seq);
    vfw_st_be32(t + 8, ack);
    t[12] = (uint8_t)(((20 + optlen) / 4) << 4);
    t[13] = flags;
    vfw_st_be16(t + 14, wnd);
    if (optlen)
        memcpy(t + 20, opt, optlen);
    if (plen)
        memcpy(t + 20 + optlen, pl, plen);
    vfw_csum_store(t + 16, vfw_csum_partial(t, tl,
                   vfw_csum_pseudo(sip, dip, 6, (uint16_t)tl)));
    return 34 + tl;
}

#endif /* TCP_FRAME_H */
