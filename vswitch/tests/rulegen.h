/* rulegen.h - random ACL rule sets and frames that hit them, shared by the
 * property test, the fuzz seeds and the benchmark.  Include after
 * testlib.h (uses rnd()/rndn()/tframe). */
#ifndef RULEGEN_H
#define RULEGEN_H

enum rg_mode {
    RG_RANDOM,   /* every field, odd masks and ranges, small value domains  */
    RG_TENANT,   /* realistic tenant ACLs: per-VF, dst prefix, proto, port  */
    RG_CROSS,    /* half src-only, half dst-only: forces several trees      */
};

static const uint8_t rg_macs[4][6] = {
    {0x02, 0, 0, 0, 0, 0x10}, {0x02, 0, 0, 0, 0, 0x11},
    {0x02, 0, 0, 0, 1, 0x12}, {0x04, 0, 0, 0, 0, 0x13},
};
static const uint16_t rg_vids[3] = {0, 10, 20};
static const uint16_t rg_ets[3] = {0x0800, 0x86dd, 0x0806};
static const uint8_t rg_protos[3] = {6, 17, 1};

static inline void rg_prefix(uint8_t *ip, unsigned plen, unsigned bytes)
{
    for (unsigned b = plen; b < bytes * 8; b++)
        ip[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
}

static inline void rg_rand_ip(uint8_t *ip, unsigned ver)
{
    memset(ip, 0, 16);
    if (ver == 4) {
        ip[0] = (uint8_t)(10 + rndn(3)); ip[1] = (uint8_t)rndn(4);
        ip[2] = (uint8_t)rndn(256); ip[3] = (uint8_t)rndn(256);
    } else {
        ip[0] = 0x20; ip[1] = 0x01; ip[2] = 0x0d; ip[3] = 0xb8;
        ip[4] = (uint8_t)rndn(3);
        for (int i = 5; i < 16; i++)
            ip[i] = (uint8_t)(rndn(4) ? 0 : rnd());
        ip[15] = (uint8_t)rnd();
    }
}

static inline void rg_rule(vsw_rule *r, enum rg_mode mode, unsigned nports)
{
    memset(r, 0, sizeof(*r));
    r->priority = rndn(1000);
    r->verdict = (uint8_t)rndn(2);
    r->flags = VSW_ACTF_COUNT;
    if (rndn(4) == 0) {
        r->flags |= VSW_ACTF_SET_TC;
        r->set_tc = (uint8_t)rndn(8);
    }
    if (mode == RG_TENANT) {
        r->match = VSW_M_IN_PORT | VSW_M_DST_IP;
        r->in_port = (uint16_t)(2 + rndn(nports - 2));
        r->ip_version = rndn(5) ? 4 : 6;
        rg_rand_ip(r->dst_ip, r->ip_version);
        r->dst_plen = (uint8_t)(r->ip_version == 4 ? 16 + rndn(17) : 48 + rndn(81));
        rg_prefix(r->dst_ip, r->dst_plen, 16);
        if (rndn(3) == 0) {
            r->match |= VSW_M_SRC_IP;
            rg_rand_ip(r->src_ip, r->ip_version);
            r->src_plen = (uint8_t)(r->ip_version == 4 ? 8 + rndn(17) : 32 + rndn(33));
            rg_prefix(r->src_ip, r->src_plen, 16);
        }
        if (rndn(4)) {
            r->match |= VSW_M_IP_PROTO;
            r->ip_proto = rndn(2) ? 6 : 17;
            unsigned k = rndn(10);
            if (k < 6) {
                r->match |= VSW_M_DPORT;
                r->dport_lo = r->dport_hi = (uint16_t)(1 + rndn(20000));
            } else if (k < 8) {
                r->match |= VSW_M_DPORT;
                r->dport_lo = (uint16_t)(1024 + rndn(30000));
                r->dport_hi = (uint16_t)(r->dport_lo + rndn(2000));
            }
        }
        if (rndn(20) == 0) {
            r->match |= VSW_M_DSCP;
            r->dscp = (uint8_t)rndn(64);
            r->dscp_mask = 63;
        }
        return;
    }
    if (mode == RG_CROSS) {
        r->ip_version = 4;
        int src = rndn(2);
        r->match = src ? VSW_M_SRC_IP : VSW_M_DST_IP;
        uint8_t *ip = src ? r->src_ip : r->dst_ip;
        rg_rand_ip(ip, 4);
        if (src) r->src_plen = 32; else r->dst_plen = 32;
        if (rndn(2)) {
            r->match |= VSW_M_DPORT;
            r->dport_lo = (uint16_t)rndn(4000);
            r->dport_hi = (uint16_t)(r->dport_lo + rndn(100));
        }
        return;
    }
    /* RG_RANDOM */
    if (rndn(10) < 3) { r->match |= VSW_M_IN_PORT; r->in_port = (uint16_t)rndn(nports < 10 ? nports : 10); }
    if (rndn(20) < 3) {
        r->match |= VSW_M_OUT_PORT;
        unsigned k = rndn(4);
        r->out_port = (uint16_t)(k == 3 ? VSW_PORT_FLOOD : 2 + k);
    }
    for (int s = 0; s < 2; s++) {
        if (rndn(20) >= 3)
            continue;
        uint8_t *mac = s ? r->dst_mac : r->src_mac, *m = s ? r->dst_mac_mask : r->src_mac_mask;
        r->match |= s ? VSW_M_DST_MAC : VSW_M_SRC_MAC;
        memcpy(mac, rg_macs[rndn(4)], 6);
        unsigned k = rndn(3);
        for (int i = 0; i < 6; i++) {
            m[i] = k == 0 ? 0xff : k == 1 ? (i < 3 ? 0xff : 0) : (uint8_t)rnd();
            mac[i] &= m[i];
        }
    }
    if (rndn(5) == 0) { r->match |= VSW_M_VLAN; r->vid = rg_vids[rndn(3)]; }
    if (rndn(5) == 0) { r->match |= VSW_M_ETHERTYPE; r->ethertype = rg_ets[rndn(3)]; }
    if (rndn(2)) {
        r->ip_version = rndn(10) < 7 ? 4 : 6;
        unsigned bits = r->ip_version == 4 ? 32 : 128;
        r->match |= VSW_M_IP_VERSION;
        for (int s = 0; s < 2; s++) {
            if (rndn(2))
                continue;
            r->match |= s ? VSW_M_DST_IP : VSW_M_SRC_IP;
            uint8_t *ip = s ? r->dst_ip : r->src_ip;
            rg_rand_ip(ip, r->ip_version);
            unsigned pl = rndn(bits + 1);
            if (s) r->dst_plen = (uint8_t)pl; else r->src_plen = (uint8_t)pl;
            rg_prefix(ip, pl, 16);
        }
    }
    if (rndn(5) < 2) { r->match |= VSW_M_IP_PROTO; r->ip_proto = rg_protos[rndn(3)]; }
    for (int s = 0; s < 2; s++) {
        if (rndn(10) >= (s ? 4u : 2u))
            continue;
        r->match |= s ? VSW_M_DPORT : VSW_M_SPORT;
        uint16_t lo = (uint16_t)rndn(3000), hi;
        unsigned k = rndn(4);
        hi = k == 0 ? lo : k == 3 ? 65535 : (uint16_t)(lo + rndn(2000));
        if (s) { r->dport_lo = lo; r->dport_hi = hi; } else { r->sport_lo = lo; r->sport_hi = hi; }
    }
    if (rndn(10) == 0) {
        r->match |= VSW_M_DSCP;
        r->dscp_mask = rndn(2) ? 63 : (uint8_t)(rnd() & 63);
        r->dscp = (uint8_t)(rnd() & r->dscp_mask);
    }
    if (rndn(10) == 0) {
        r->match |= VSW_M_TCP_FLAGS;
        r->tcp_flags_mask = (uint8_t)rnd();
        r->tcp_flags = (uint8_t)(rnd() & r->tcp_flags_mask);
        if (r->match & VSW_M_IP_PROTO)
            r->ip_proto = 6;
    }
    /* keep catch-all-ish rules at the bottom, or one of them would decide
     * every frame and the comparison would say little */
    if (__builtin_popcount(r->match) < 3)
        r->priority = 1000 + rndn(100);
}

/* A frame on in_port that satisfies rule r where it can (or random if r is
 * NULL).  dst MAC comes from rg_macs (the test programs some into the FDB)
 * unless the rule fixes it. */
static inline void rg_frame(const vsw_rule *r, tframe *f, unsigned *in_port, unsigned nports)
{
    tf_default(f);
    static const vsw_rule none;
    if (!r)
        r = &none;
    *in_port = (r->match & VSW_M_IN_PORT) ? r->in_port : rndn(nports < 10 ? nports : 10);
    memcpy(f->src, rg_macs[rndn(4)], 6);
    memcpy(f->dst, rg_macs[rndn(4)], 6);
    if (rndn(8) == 0)
        memset(f->dst, 0xff, 6);
    for (int s = 0; s < 2; s++) {
        if (!(r->match & (s ? VSW_M_DST_MAC : VSW_M_SRC_MAC)))
            continue;
        const uint8_t *mac = s ? r->dst_mac : r->src_mac, *m = s ? r->dst_mac_mask : r->src_mac_mask;
        uint8_t *o = s ? f->dst : f->src;
        for (int i = 0; i < 6; i++)
            o[i] = (uint8_t)((mac[i] & m[i]) | (o[i] & ~m[i]));
        if (!s)
            f->src[0] &= 0xfe;   /* a multicast source would be dropped */
    }
    unsigned vid = (r->match & VSW_M_VLAN) ? r->vid : rg_vids[rndn(3)];
    f->vid = vid ? (int)vid : -1;
    f->pcp = (uint8_t)rndn(8);
    unsigned ver = r->ip_version ? r->ip_version : (rndn(10) < 7 ? 4 : 6);
    f->ethertype = ver == 4 ? 0x0800 : 0x86dd;
    if (r->match & VSW_M_ETHERTYPE)
        f->ethertype = r->ethertype;
    else if (!r->ip_version && rndn(10) == 0)
        f->ethertype = 0x0806;
    rg_rand_ip(f->src_ip, ver);
    rg_rand_ip(f->dst_ip, ver);
    for (int s = 0; s < 2; s++) {
        if (!(r->match & (s ? VSW_M_DST_IP : VSW_M_SRC_IP)))
            continue;
        const uint8_t *ip = s ? r->dst_ip : r->src_ip;
        unsigned pl = s ? r->dst_plen : r->src_plen;
        uint8_t *o = s ? f->dst_ip : f->src_ip;
        for (unsigned b = 0; b < pl; b++) {
            uint8_t bit = (uint8_t)(0x80 >> (b % 8));
            o[b / 8] = (uint8_t)((o[b / 8] & ~bit) | (ip[b / 8] & bit));
        }
    }
    f->proto = (r->match & VSW_M_IP_PROTO) ? r->ip_proto : rg_protos[rndn(3)];
    if (r->match & VSW_M_TCP_FLAGS)
        f->proto = 6;
    f->sport = (uint16_t)rndn(5000);
    f->dport = (uint16_t)rndn(5000);
    if (r->match & VSW_M_SPORT)
        f->sport = (uint16_t)(r->sport_lo + rndn((unsigned)(r->sport_hi - r->sport_lo) + 1));
    if (r->match & VSW_M_DPORT)
        f->dport = (uint16_t)(r->dport_lo + rndn((unsigned)(r->dport_hi - r->dport_lo) + 1));
    f->dscp = (uint8_t)rndn(64);
    if (r->match & VSW_M_DSCP)
        f->dscp = (uint8_t)((r->dscp & r->dscp_mask) | (f->dscp & ~r->dscp_mask & 63));
    f->tcp_flags = (uint8_t)rnd();
    if (r->match & VSW_M_TCP_FLAGS)
        f->tcp_flags = (uint8_t)((r->tcp_flags & r->tcp_flags_mask) |
                                 (f->tcp_flags & ~r->tcp_flags_mask));
    f->payload = rndn(3) ? 18 : rndn(200);
}
#endif
