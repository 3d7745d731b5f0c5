/* parse.c - Ethernet / 802.1Q / IPv4 / IPv6 / L4 header parsing.  Frames
 * are guest- and wire-controlled: every read is bounds-checked against
 * `len`.  The data path parses straight into the classifier key
 * (vsw_parse_key: no intermediate vsw_pkt to fill and read back, about 50
 * instructions a frame); the public vsw_parse unpacks that key, so there
 * is one parser. */
#include "vsw_internal.h"
#include <string.h>

static uint16_t rd16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }

static uint32_t rd_be32(const uint8_t *b)
{
    uint32_t x;
    memcpy(&x, b, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap32(x);
#endif
    return x;
}

static uint64_t rd_be64(const uint8_t *b)
{
    uint64_t x;
    memcpy(&x, b, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

static void wr_be(uint8_t *b, uint64_t x, unsigned n)   /* n = 6 or 8 */
{
    for (unsigned i = 0; i < n; i++)
        b[i] = (uint8_t)(x >> (8 * (n - 1 - i)));
}

/* Ports (low 16 bits of w1/w2), TCP flags (w7) and VSW_K0_L4. */
static void parse_l4(const uint8_t *l4, size_t room, unsigned proto, vsw_key *k)
{
    switch (proto) {
    case 6:  /* TCP */
        if (room < 20)
            return;
        k->w[7] |= (uint64_t)l4[13] << 56;
        /* fall through */
    case 17: /* UDP */
    case 132:/* SCTP */
    case 136:/* UDP-Lite */
        if (room < 4)
            return;
        k->w[1] |= rd16(l4);
        k->w[2] |= rd16(l4 + 2);
        k->w[0] |= VSW_K0_L4;
        break;
    default:
        break;
    }
}

static void set_proto(vsw_key *k, unsigned proto)
{
    k->w[0] = (k->w[0] & ~0xff00ull) | (uint64_t)proto << 8;
}

/* IPv6 extension headers we skip to find the transport header. */
static int ipv6_ext(uint8_t nh)
{
    return nh == 0 || nh == 43 || nh == 60 || nh == 135 || nh == 139 || nh == 140;
}

int vsw_parse_key(const uint8_t *f, size_t len, vsw_key *k, vsw_l2 *l2)
{
    memset(k, 0, sizeof(*k));
    memset(l2, 0, sizeof(*l2));
    if (len < 14)
        return -EINVAL;
    k->w[2] = vsw_mac48(f) << 16;
    k->w[1] = vsw_mac48(f + 6) << 16;
    size_t off = 12;
    uint16_t et = rd16(f + off);
    if (et == 0x8100) {
        if (len < 18)
            return -EINVAL;
        uint16_t tci = rd16(f + 14);
        l2->tagged = 1;
        l2->pcp = (uint8_t)(tci >> 13);
        l2->vid = tci & 0xfff;
        off += 4;
        et = rd16(f + off);
    }
    off += 2;
    k->w[0] = (uint64_t)et << 16;
    l2->l2_len = (uint16_t)off;
    const uint8_t *ip = f + off;
    size_t room = len - off;
    if (et == 0x0800) {
        if (room < 20)
            return -EINVAL;
        unsigned ihl = (ip[0] & 0xf) * 4u;
        if ((ip[0] >> 4) != 4 || ihl < 20 || room < ihl)
            return -EINVAL;
        k->w[0] |= (uint64_t)ip[9] << 8 | VSW_K0_IP | 4;
        k->w[7] = (uint64_t)(ip[1] >> 2) << 48;
        k->w[VSW_KW_SIP_HI] = (uint64_t)rd_be32(ip + 12) << 32;
        k->w[VSW_KW_DIP_HI] = (uint64_t)rd_be32(ip + 16) << 32;
        uint16_t frag = rd16(ip + 6);
        if ((frag & 0x1fff) == 0)          /* first fragment or unfragmented */
            parse_l4(ip + ihl, room - ihl, ip[9], k);
    } else if (et == 0x86dd) {
        if (room < 40 || (ip[0] >> 4) != 6)
            return -EINVAL;
        k->w[0] |= VSW_K0_IP | 6;
        k->w[7] = (uint64_t)(((ip[0] & 0xf) << 2) | (ip[1] >> 6)) << 48;
        k->w[VSW_KW_SIP_HI] = rd_be64(ip + 8);
        k->w[VSW_KW_SIP_LO] = rd_be64(ip + 16);
        k->w[VSW_KW_DIP_HI] = rd_be64(ip + 24);
        k->w[VSW_KW_DIP_LO] = rd_be64(ip + 32);
        uint8_t nh = ip[6];
        size_t o = 40;
        for (int i = 0; i < 8 && ipv6_ext(nh); i++) {
            if (room < o + 8)
                return 0;                  /* transport header not reachable */
            uint8_t next = ip[o];
            if (nh == 44) {
                break;
            } else if (nh == 51) {
                o += (ip[o + 1] + 2u) * 4u;
            } else {
                o += (ip[o + 1] + 1u) * 8u;
            }
            nh = next;
        }
        if (nh == 44) {                    /* fragment header */
            if (room < o + 8)
                return 0;
            uint16_t fo = rd16(ip + o + 2);
            nh = ip[o];
            o += 8;
            set_proto(k, nh);
            if ((fo & 0xfff8) != 0)
                return 0;                  /* not the first fragment */
        }
        set_proto(k, nh);
        if (!ipv6_ext(nh) && room >= o)
            parse_l4(ip + o, room - o, nh, k);
    }
    return 0;
}

int vsw_parse(const uint8_t *f, size_t len, vsw_pkt *p)
{
    vsw_key k;
    vsw_l2 l2;
    int rc = vsw_parse_key(f, len, &k, &l2);
    memset(p, 0, sizeof(*p));
    wr_be(p->dst, k.w[2] >> 16, 6);
    wr_be(p->src, k.w[1] >> 16, 6);
    p->ethertype = (uint16_t)(k.w[0] >> 16);
    p->tagged = l2.tagged;
    p->pcp = l2.pcp;
    p->vid = l2.vid;
    p->l2_len = l2.l2_len;
    p->ip_version = (uint8_t)(k.w[0] & 15);
    p->dscp = (uint8_t)(k.w[7] >> 48 & 63);
    p->ip_proto = (uint8_t)(k.w[0] >> 8);
    p->l4_valid = !!(k.w[0] & VSW_K0_L4);
    p->tcp_flags = (uint8_t)(k.w[7] >> 56);
    wr_be(p->src_ip, k.w[VSW_KW_SIP_HI], 8);
    wr_be(p->src_ip + 8, k.w[VSW_KW_SIP_LO], 8);
    wr_be(p->dst_ip, k.w[VSW_KW_DIP_HI], 8);
    wr_be(p->dst_ip + 8, k.w[VSW_KW_DIP_LO], 8);
    p->sport = (uint16_t)k.w[1];
    p->dport = (uint16_t)k.w[2];
    return rc;
}
