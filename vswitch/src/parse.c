/* parse.c - Ethernet / 802.1Q / IPv4 / IPv6 / L4 header parsing, and the
 * classifier key built from a parsed frame.  Frames are guest- and
 * wire-controlled: every read is bounds-checked against `len`. */
#include "vsw_internal.h"
#include <string.h>

static uint16_t rd16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }

static void parse_l4(const uint8_t *l4, size_t room, vsw_pkt *p)
{
    switch (p->ip_proto) {
    case 6:  /* TCP */
        if (room < 20)
            return;
        p->tcp_flags = l4[13];
        /* fall through */
    case 17: /* UDP */
    case 132:/* SCTP */
    case 136:/* UDP-Lite */
        if (room < 4)
            return;
        p->sport = rd16(l4);
        p->dport = rd16(l4 + 2);
        p->l4_valid = 1;
        break;
    default:
        break;
    }
}

/* IPv6 extension headers we skip to find the transport header. */
static int ipv6_ext(uint8_t nh)
{
    return nh == 0 || nh == 43 || nh == 60 || nh == 135 || nh == 139 || nh == 140;
}

int vsw_parse(const uint8_t *f, size_t len, vsw_pkt *p)
{
    memset(p, 0, sizeof(*p));
    if (len < 14)
        return -EINVAL;
    memcpy(p->dst, f, 6);
    memcpy(p->src, f + 6, 6);
    size_t off = 12;
    uint16_t et = rd16(f + off);
    if (et == 0x8100) {
        if (len < 18)
            return -EINVAL;
        uint16_t tci = rd16(f + 14);
        p->tagged = 1;
        p->pcp = (uint8_t)(tci >> 13);
        p->vid = tci & 0xfff;
        off += 4;
        et = rd16(f + off);
    }
    off += 2;
    p->ethertype = et;
    p->l2_len = (uint16_t)off;
    const uint8_t *ip = f + off;
    size_t room = len - off;
    if (et == 0x0800) {
        if (room < 20)
            return -EINVAL;
        unsigned ihl = (ip[0] & 0xf) * 4u;
        if ((ip[0] >> 4) != 4 || ihl < 20 || room < ihl)
            return -EINVAL;
        p->ip_version = 4;
        p->dscp = ip[1] >> 2;
        p->ip_proto = ip[9];
        /* one 8-byte store each (the zeroed rest included): vsw_key_build
         * reads the addresses 8 bytes at a time, and a load spanning a
         * 4-byte store and an older one cannot be served by store
         * forwarding (it waits for both to reach the cache) */
        uint64_t a = 0;
        memcpy(&a, ip + 12, 4);
        memcpy(p->src_ip, &a, 8);
        memcpy(&a, ip + 16, 4);
        memcpy(p->dst_ip, &a, 8);
        uint16_t frag = rd16(ip + 6);
        if ((frag & 0x1fff) == 0)          /* first fragment or unfragmented */
            parse_l4(ip + ihl, room - ihl, p);
    } else if (et == 0x86dd) {
        if (room < 40 || (ip[0] >> 4) != 6)
            return -EINVAL;
        p->ip_version = 6;
        p->dscp = (uint8_t)(((ip[0] & 0xf) << 2) | (ip[1] >> 6));
        memcpy(p->src_ip, ip + 8, 16);
        memcpy(p->dst_ip, ip + 24, 16);
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
            p->ip_proto = nh;
            if ((fo & 0xfff8) != 0)
                return 0;                  /* not the first fragment */
        }
        p->ip_proto = nh;
        if (!ipv6_ext(nh) && room >= o)
            parse_l4(ip + o, room - o, p);
    }
    return 0;
}

static uint64_t be_u64(const uint8_t *b)
{
    uint64_t x;
    memcpy(&x, b, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

void vsw_key_build(vsw_key *k, const vsw_pkt *p, unsigned in_port,
                   unsigned out_port, uint16_t vid)
{
    uint64_t op = out_port == VSW_PORT_FLOOD ? 0xfe : (out_port & 0xff);
    uint64_t flags = ((uint64_t)(p->ip_version != 0) << 7) | ((uint64_t)p->l4_valid << 6);
    k->w[0] = ((uint64_t)(in_port & 0xff) << 56) | (op << 48) |
              ((uint64_t)vid << 32) | ((uint64_t)p->ethertype << 16) |
              ((uint64_t)p->ip_proto << 8) | flags | p->ip_version;
    uint64_t sp = p->l4_valid ? p->sport : 0, dp = p->l4_valid ? p->dport : 0;
    k->w[1] = (vsw_mac48(p->src) << 16) | sp;
    k->w[2] = (vsw_mac48(p->dst) << 16) | dp;
    k->w[3] = be_u64(p->dst_ip);
    k->w[4] = be_u64(p->src_ip);
    k->w[5] = be_u64(p->dst_ip + 8);
    k->w[6] = be_u64(p->src_ip + 8);
    k->w[7] = ((uint64_t)(p->l4_valid && p->ip_proto == 6 ? p->tcp_flags : 0) << 56) |
              ((uint64_t)p->dscp << 48);
}
