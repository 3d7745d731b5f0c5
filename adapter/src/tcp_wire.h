/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_wire.h - internal helpers of the offloaded TCP/IPv4 stack: byte order,
 * Internet checksum (RFC 1071), header offsets. Header-only, no state.
 */
#ifndef VFW_TCP_WIRE_H
#define VFW_TCP_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VFW_ETH_HLEN     14
#define VFW_ETH_P_IP     0x0800
#define VFW_ETH_P_ARP    0x0806
#define VFW_IP_HLEN      20
#define VFW_TCP_HLEN     20
#define VFW_ARP_LEN      28

#define VFW_TH_FIN 0x01
#define VFW_TH_SYN 0x02
#define VFW_TH_RST 0x04
#define VFW_TH_PSH 0x08
#define VFW_TH_ACK 0x10
#define VFW_TH_URG 0x20

static inline uint16_t vfw_get16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t vfw_get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
           ((uint32_t)p[2] << 8) | p[3];
}

static inline void vfw_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void vfw_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/*
 * One's complement sum in native byte order (RFC 1071 sec. 2(B)): the folded
 * result stored back with memcpy in native order is correct on either
 * endianness. Every call but the last must cover an even number of bytes.
 */
static inline uint64_t vfw_csum_partial(const uint8_t *p, size_t len,
                                        uint64_t sum)
{
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        sum += v;
        if (sum < v)
            sum++;
        p += 8;
        len -= 8;
    }
    if (len >= 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        sum += v;
        if (sum < v)
            sum++;
        p += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        sum += v;
        if (sum < v)
            sum++;
        p += 2;
        len -= 2;
    }
    if (len) {
        uint16_t v = 0;
        memcpy(&v, p, 1);
        sum += v;
        if (sum < v)
            sum++;
    }
    return sum;
}

static inline uint16_t vfw_csum_fold(uint64_t sum)
{
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffffu) + (sum >> 16);
    sum = (sum & 0xffffu) + (sum >> 16);
    sum = (sum & 0xffffu) + (sum >> 16);
    return (uint16_t)sum;
}

/* Sum of the TCP/UDP pseudo header (addresses in host order). */
static inline uint64_t vfw_csum_pseudo(uint32_t src, uint32_t dst,
                                       uint8_t proto, uint16_t len)
{
    uint8_t ph[12];
    vfw_put32(ph, src);
    vfw_put32(ph + 4, dst);
    ph[8] = 0;
    ph[9] = proto;
    vfw_put16(ph + 10, len);
    return vfw_csum_partial(ph, sizeof(ph), 0);
}

/* Store ~fold(sum) into a 16-bit checksum field (native order, see above). */
static inline void vfw_csum_store(uint8_t *field, uint64_t sum)
{
    uint16_t c = (uint16_t)~vfw_csum_fold(sum);
    memcpy(field, &c, 2);
}

/* Sequence number arithmetic (RFC 1982 style). */
#define VFW_SEQ_LT(a, b)  ((int32_t)((uint32_t)(a) - (uint32_t)(b)) < 0)
#define VFW_SEQ_LEQ(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) <= 0)
#define VFW_SEQ_GT(a, b)  ((int32_t)((uint32_t)(a) - (uint32_t)(b)) > 0)
#define VFW_SEQ_GEQ(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) >= 0)

#endif /* VFW_TCP_WIRE_H */
