/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_wire.h - internal helpers of the offloaded TCP/IPv4 stack: Internet
 * checksum (RFC 1071), header offsets (byte order: vfw_bytes.h).
 * Header-only, no state.
 */
#ifndef VFW_TCP_WIRE_H
#define VFW_TCP_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vfw_bytes.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

/*
 * One's complement sum in native byte order (RFC 1071 sec. 2(B)): the folded
 * result stored back with memcpy in native order is correct on either
 * endianness. Every call but the last must cover an even number of bytes.
 */
#if defined(__x86_64__)
/* AVX2 bulk of vfw_csum_partial: 32-bit words zero-extended into 64-bit
 * lanes (exact for < 2^32 words per lane); returns the plain sum of all
 * 32-bit words of the first len & ~31 bytes. */
__attribute__((target("avx2")))
static inline uint64_t vfw_csum_words_avx2(const uint8_t *p, size_t len)
{
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
    __m256i lo2 = _mm256_setzero_si256(), hi2 = _mm256_setzero_si256();
    const __m256i m = _mm256_set1_epi64x(0xffffffffll);
    for (; len >= 64; len -= 64, p += 64) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
        __m256i u = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
        lo = _mm256_add_epi64(lo, _mm256_and_si256(v, m));
        hi = _mm256_add_epi64(hi, _mm256_srli_epi64(v, 32));
        lo2 = _mm256_add_epi64(lo2, _mm256_and_si256(u, m));
        hi2 = _mm256_add_epi64(hi2, _mm256_srli_epi64(u, 32));
    }
    if (len >= 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
        lo = _mm256_add_epi64(lo, _mm256_and_si256(v, m));
        hi = _mm256_add_epi64(hi, _mm256_srli_epi64(v, 32));
    }
    __m256i s = _mm256_add_epi64(_mm256_add_epi64(lo, hi),
                                 _mm256_add_epi64(lo2, hi2));
    uint64_t w[4];
    _mm256_storeu_si256((__m256i *)(void *)w, s);
    return w[0] + w[1] + w[2] + w[3];
}
#endif

static inline uint64_t vfw_csum_partial(const uint8_t *p, size_t len,
                                        uint64_t sum)
{
#if defined(__x86_64__)
    if (len >= 128 && len < (1ull << 34) && __builtin_cpu_supports("avx2")) {
        uint64_t t = vfw_csum_words_avx2(p, len);
        /* fold the exact 64-bit total to 33 bits (2^32 == 1 here) */
        t = (t & 0xffffffffu) + (t >> 32);
        p += len & ~(size_t)31;
        len &= 31;
        sum += t;
        if (sum < t)
            sum++;
    }
#endif
    /* Bulk: 32-bit words into four 64-bit accumulators (no carry chain;
     * exact for < 2^32 words each), folded into `sum` with end-around
     * carry. Same one's complement sum as 16-bit words (RFC 1071 sec. 2). */
    if (len >= 64) {
        uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        while (len >= 16) {
            uint64_t v, u;
            memcpy(&v, p, 8);
            memcpy(&u, p + 8, 8);
            a0 += v & 0xffffffffu;
            a1 += v >> 32;
            a2 += u & 0xffffffffu;
            a3 += u >> 32;
            p += 16;
            len -= 16;
        }
        uint64_t t = (a0 & 0xffffffffu) + (a1 & 0xffffffffu) +
                     (a2 & 0xffffffffu) + (a3 & 0xffffffffu);
        uint64_t h = (a0 >> 32) + (a1 >> 32) + (a2 >> 32) + (a3 >> 32);
        /* each word-position value 2^32 ≡ 1 in the folded sum */
        t += h;
        sum += t;
        if (sum < t)
            sum++;
    }
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
    vfw_st_be32(ph, src);
    vfw_st_be32(ph + 4, dst);
    ph[8] = 0;
    ph[9] = proto;
    vfw_st_be16(ph + 10, len);
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
