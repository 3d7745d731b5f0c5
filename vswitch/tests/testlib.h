/* testlib.h - a tiny test harness: CHECK counts, the last line printed is
 * "N passed, M failed", the exit status is non-zero on any failure. */
#ifndef TESTLIB_H
#define TESTLIB_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <errno.h>
#include "vswitch.h"

static int t_pass, t_fail;
#define CHECK(c) do { if (c) t_pass++; else { t_fail++; \
    fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
    if (_a == _b) t_pass++; else { t_fail++; \
    fprintf(stderr, "FAIL %s:%d: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, \
            #a, #b, _a, _b); } } while (0)
static inline int t_done(void)
{
    printf("%d passed, %d failed\n", t_pass, t_fail);
    return t_fail ? 1 : 0;
}

/* deterministic PRNG (xorshift64*) */
static uint64_t t_rng = 88172645463325252ull;
static inline uint64_t rnd(void)
{
    t_rng ^= t_rng >> 12; t_rng ^= t_rng << 25; t_rng ^= t_rng >> 27;
    return t_rng * 2685821657736338717ull;
}
static inline unsigned rndn(unsigned n) { return n ? (unsigned)(rnd() % n) : 0; }

/* ---- frame builder ---- */
typedef struct tframe {
    uint8_t dst[6], src[6];
    int     vid;            /* -1: untagged */
    uint8_t pcp;
    uint16_t ethertype;     /* 0x0800, 0x86dd, other */
    uint8_t ip_version;     /* derived from ethertype if 0 */
    uint8_t src_ip[16], dst_ip[16];
    uint8_t proto, dscp, tcp_flags;
    uint16_t sport, dport;
    size_t  payload;
} tframe;

static inline void tf_default(tframe *f)
{
    memset(f, 0, sizeof(*f));
    static const uint8_t d[6] = {0x02, 0, 0, 0, 0, 0x02}, s[6] = {0x02, 0, 0, 0, 0, 0x01};
    memcpy(f->dst, d, 6);
    memcpy(f->src, s, 6);
    f->vid = -1;
    f->ethertype = 0x0800;
    f->proto = 17;
    f->src_ip[0] = 10; f->src_ip[3] = 1;
    f->dst_ip[0] = 10; f->dst_ip[3] = 2;
    f->sport = 1000;
    f->dport = 2000;
    f->payload = 18;
}

static inline size_t tf_build(const tframe *f, uint8_t *b)
{
    size_t o = 0;
    memcpy(b, f->dst, 6); memcpy(b + 6, f->src, 6); o = 12;
    if (f->vid >= 0) {
        b[o++] = 0x81; b[o++] = 0;
        uint16_t tci = (uint16_t)((f->pcp << 13) | f->vid);
        b[o++] = (uint8_t)(tci >> 8); b[o++] = (uint8_t)tci;
    }
    b[o++] = (uint8_t)(f->ethertype >> 8); b[o++] = (uint8_t)f->ethertype;
    size_t l4len = f->proto == 6 ? 20 : 8;
    if (f->ethertype == 0x0800) {
        uint8_t *ip = b + o;
        memset(ip, 0, 20);
        ip[0] = 0x45; ip[1] = (uint8_t)(f->dscp << 2);
        size_t tot = 20 + l4len + f->payload;
        ip[2] = (uint8_t)(tot >> 8); ip[3] = (uint8_t)tot; ip[8] = 64; ip[9] = f->proto;
        memcpy(ip + 12, f->src_ip, 4); memcpy(ip + 16, f->dst_ip, 4);
        o += 20;
    } else if (f->ethertype == 0x86dd) {
        uint8_t *ip = b + o;
        memset(ip, 0, 40);
        ip[0] = (uint8_t)(0x60 | (f->dscp >> 2)); ip[1] = (uint8_t)((f->dscp & 3) << 6);
        size_t pl = l4len + f->payload;
        ip[4] = (uint8_t)(pl >> 8); ip[5] = (uint8_t)pl; ip[6] = f->proto; ip[7] = 64;
        memcpy(ip + 8, f->src_ip, 16); memcpy(ip + 24, f->dst_ip, 16);
        o += 40;
    } else {
        memset(b + o, 0xab, 46);
        return o + 46;
    }
    uint8_t *l4 = b + o;
    memset(l4, 0, l4len);
    l4[0] = (uint8_t)(f->sport >> 8); l4[1] = (uint8_t)f->sport;
    l4[2] = (uint8_t)(f->dport >> 8); l4[3] = (uint8_t)f->dport;
    if (f->proto == 6) { l4[12] = 0x50; l4[13] = f->tcp_flags; }
    o += l4len;
    memset(b + o, 0x5a, f->payload);
    return o + f->payload;
}
#endif
