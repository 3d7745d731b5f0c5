/* Conformance: frames in, expected decisions out, for every feature of the
 * switch: parsing, ports (link, VLAN access/trunk, spoof check, trust, QoS
 * trust), FDB (static, learning, flooding, hairpin), every ACL match field
 * and action, priorities, counters, and rejection of invalid configuration
 * with the tables left unchanged. */
#include "testlib.h"

#define VF(n) VSW_PORT_VF(n)
static const uint8_t MAC_UP[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t MAC_VF[4][6] = {
    {0x02, 0, 0, 0, 1, 0}, {0x02, 0, 0, 0, 1, 1}, {0x02, 0, 0, 0, 1, 2}, {0x02, 0, 0, 0, 1, 3}};
static const uint8_t BCAST[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t UNKNOWN[6] = {0x02, 0, 0, 0, 9, 9};

static vsw_switch *sw;
static uint8_t fb[2048];
static size_t fl;

static unsigned send(unsigned port, const tframe *f, vsw_decision *d)
{
    fl = tf_build(f, fb);
    return vsw_process(sw, port, fb, fl, 0, d);
}

static tframe frm(const uint8_t *src, const uint8_t *dst)
{
    tframe f;
    tf_default(&f);
    memcpy(f.src, src, 6);
    memcpy(f.dst, dst, 6);
    return f;
}

static vsw_switch *fresh(void)
{
    vsw_config c = { .num_vfs = 4 };
    vsw_switch *s = vsw_create(&c);
    for (int i = 0; i < 4; i++) {
        vsw_fdb_add(s, MAC_VF[i], 0, VF(i), NULL);
        vsw_port_cfg pc;
        vsw_port_get(s, VF(i), &pc);
        memcpy(pc.mac, MAC_VF[i], 6);
        vsw_port_set(s, VF(i), &pc, NULL);
    }
    return s;
}

static void test_parse(void)
{
    vsw_pkt p;
    uint8_t b[128];
    tframe f;
    tf_default(&f);
    size_t n = tf_build(&f, b);
    CHECK_EQ(vsw_parse(b, 13, &p), -EINVAL);             /* runt */
    CHECK_EQ(vsw_parse(b, n, &p), 0);
    CHECK_EQ(p.ip_version, 4);
    CHECK_EQ(p.ip_proto, 17);
    CHECK_EQ(p.sport, 1000);
    CHECK_EQ(p.dport, 2000);
    CHECK(p.l4_valid);
    CHECK_EQ(vsw_parse(b, 14 + 19, &p), -EINVAL);        /* cut IPv4 header */
    b[14] = 0x44;                                          /* IHL 16 bytes */
    CHECK_EQ(vsw_parse(b, n, &p), -EINVAL);
    f.vid = 100; f.pcp = 5; f.proto = 6; f.tcp_flags = 0x12; f.dscp = 46;
    n = tf_build(&f, b);
    CHECK_EQ(vsw_parse(b, 16, &p), -EINVAL);             /* cut tag */
    CHECK_EQ(vsw_parse(b, n, &p), 0);
    CHECK(p.tagged && p.vid == 100 && p.pcp == 5 && p.l2_len == 18);
    CHECK_EQ(p.tcp_flags, 0x12);
    CHECK_EQ(p.dscp, 46);
    /* IPv4 non-first fragment: no L4 */
    f.vid = -1;
    n = tf_build(&f, b);
    b[14 + 6] = 0x00; b[14 + 7] = 0x10;
    CHECK_EQ(vsw_parse(b, n, &p), 0);
    CHECK(!p.l4_valid);
    /* IPv6 with a hop-by-hop header before UDP */
    tf_default(&f);
    f.ethertype = 0x86dd; f.dscp = 10;
    n = tf_build(&f, b);
    memmove(b + 14 + 48, b + 14 + 40, n - 54);
    b[14 + 6] = 0;                 /* next header: hop-by-hop */
    memset(b + 54, 0, 8);
    b[54] = 17;                    /* then UDP, hdr ext len 0 = 8 bytes */
    CHECK_EQ(vsw_parse(b, n + 8, &p), 0);
    CHECK(p.ip_version == 6 && p.ip_proto == 17 && p.l4_valid && p.dport == 2000 && p.dscp == 10);
    CHECK_EQ(vsw_parse(b, 14 + 39, &p), -EINVAL);        /* cut IPv6 header */
    /* unknown ethertype parses with L2 only */
    f.ethertype = 0x88cc;
    n = tf_build(&f, b);
    CHECK_EQ(vsw_parse(b, n, &p), 0);
    CHECK(p.ip_version == 0 && p.ethertype == 0x88cc);
}

static void test_ports_vlan(void)
{
    vsw_decision d;
    vsw_port_cfg pc;
    uint8_t out[2048];
    sw = fresh();
    /* forwarding VF0 -> VF1 (hairpin) */
    tframe f = frm(MAC_VF[0], MAC_VF[1]);
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VF(1)) && !d.flood && d.drop == VSW_DROP_NONE);
    /* not reflected to its own port */
    f = frm(MAC_VF[0], MAC_VF[0]);
    CHECK_EQ(send(VF(0), &f, &d), 0);
    CHECK_EQ(d.drop, VSW_DROP_NO_DEST);
    /* nonexistent and link-down ports */
    f = frm(MAC_VF[0], MAC_VF[1]);
    CHECK_EQ(send(VF(4), &f, &d), 0);
    CHECK_EQ(d.drop, VSW_DROP_LINK_DOWN);
    vsw_port_get(sw, VF(1), &pc);
    pc.link_up = false;
    CHECK_EQ(vsw_port_set(sw, VF(1), &pc, NULL), 0);
    CHECK_EQ(send(VF(0), &f, &d), 0);
    CHECK_EQ(d.drop, VSW_DROP_NO_DEST);                  /* egress down */
    f = frm(MAC_VF[1], MAC_VF[0]);
    CHECK_EQ(send(VF(1), &f, &d), 0);
    CHECK_EQ(d.drop, VSW_DROP_LINK_DOWN);                /* ingress down */
    pc.link_up = true;
    vsw_port_set(sw, VF(1), &pc, NULL);

    /* access VLAN 100 on VF0 and VF1; uplink trunk allowing 100 only */
    for (int i = 0; i < 2; i++) {
        vsw_port_get(sw, VF(i), &pc);
        pc.vlan_mode = VSW_VLAN_ACCESS;
        pc.pvid = 100;
        pc.pvid_pcp = 3;
        CHECK_EQ(vsw_port_set(sw, VF(i), &pc, NULL), 0);
        vsw_fdb_add(sw, MAC_VF[i], 100, VF(i), NULL);
    }
    /* PF, VF2, VF3: trunk with VLAN 0 (untagged) only */
    unsigned only0[3] = {VSW_PORT_PF, VF(2), VF(3)};
    for (int i = 0; i < 3; i++) {
        vsw_port_get(sw, only0[i], &pc);
        memset(pc.allowed, 0, sizeof(pc.allowed));
        pc.allowed[0] = 1;
        CHECK_EQ(vsw_port_set(sw, only0[i], &pc, NULL), 0);
    }
    vsw_port_get(sw, VSW_PORT_UPLINK, &pc);
    memset(pc.allowed, 0, sizeof(pc.allowed));
    pc.allowed[100 / 64] |= 1ull << (100 % 64);
    pc.native_vid = 0;
    CHECK_EQ(vsw_port_set(sw, VSW_PORT_UPLINK, &pc, NULL), 0);
    f = frm(MAC_VF[0], MAC_VF[1]);
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VF(1)) && d.vid == 100);
    size_t n = vsw_egress_frame(sw, &d, VF(1), fb, fl, out, sizeof(out));
    CHECK(n == fl && !memcmp(out, fb, fl));              /* access: untagged */
    f = frm(MAC_VF[0], UNKNOWN);                           /* unknown unicast */
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(d.flood && vsw_portset_has(&d.egress, VSW_PORT_UPLINK));
    CHECK(!vsw_portset_has(&d.egress, VF(1)));            /* VF1 untrusted */
    n = vsw_egress_frame(sw, &d, VSW_PORT_UPLINK, fb, fl, out, sizeof(out));
    CHECK_EQ(n, fl + 4);                                   /* tag inserted */
    CHECK(out[12] == 0x81 && out[13] == 0 && out[14] == (3 << 5) && out[15] == 100);
    CHECK(!memcmp(out + 16, fb + 12, fl - 12));
    f.vid = 100;                                           /* tagged from access VF */
    CHECK_EQ(send(VF(0), &f, &d), 0);
    CHECK_EQ(d.drop, VSW_DROP_VLAN);
    f.vid = 0;                                             /* priority tag is ok */
    CHECK_EQ(send(VF(0), &f, &d), 1);
    /* from the uplink: tagged 100 to VF1 -> stripped */
    f = frm(MAC_UP, MAC_VF[1]);
    f.vid = 100;
    CHECK_EQ(send(VSW_PORT_UPLINK, &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VF(1)));
    n = vsw_egress_frame(sw, &d, VF(1), fb, fl, out, sizeof(out));
    CHECK_EQ(n, fl - 4);
    CHECK(out[12] == 0x08 && out[13] == 0x00 && !memcmp(out + 12, fb + 16, fl - 16));
    CHECK_EQ(vsw_egress_frame(sw, &d, VF(1), fb, fl, out, 10), 0);   /* cap */
    f.vid = 200;                                           /* not allowed on trunk */
    CHECK_EQ(send(VSW_PORT_UPLINK, &f, &d), 0);
    CHECK_EQ(d.drop, VSW_DROP_VLAN);
    /* broadcast in VLAN 100 from the uplink: VF0, VF1 only (VF2 is VLAN 0) */
    f = frm(MAC_UP, BCAST);
    f.vid = 100;
    CHECK_EQ(send(VSW_PORT_UPLINK, &f, &d), 2);
    CHECK(vsw_portset_has(&d.egress, VF(0)) && vsw_portset_has(&d.egress, VF(1)) &&
          !vsw_portset_has(&d.egress, VF(2)) && !vsw_portset_has(&d.egress, VSW_PORT_UPLINK));
    /* untagged broadcast from VF2 (VLAN 0): PF, VF3, and the uplink whose
     * native VLAN is 0; not the access ports of VLAN 100 */
    f = frm(MAC_VF[2], BCAST);
    CHECK_EQ(send(VF(2), &f, &d), 3);
    CHECK(vsw_portset_has(&d.egress, VSW_PORT_PF) && vsw_portset_has(&d.egress, VF(3)) &&
          vsw_portset_has(&d.egress, VSW_PORT_UPLINK) && !vsw_portset_has(&d.egress, VF(0)));
    n = vsw_egress_frame(sw, &d, VSW_PORT_UPLINK, fb, fl, out, sizeof(out));
    CHECK(n == fl && !memcmp(out, fb, fl));                /* native: untagged */
    /* trunk keeps the tag; native VID leaves untagged */
    vsw_port_get(sw, VF(3), &pc);
    memset(pc.allowed, 0xff, sizeof(pc.allowed));
    CHECK_EQ(vsw_port_set(sw, VF(3), &pc, NULL), 0);
    f = frm(MAC_VF[0], BCAST);
    CHECK_EQ(send(VF(0), &f, &d), 3);                     /* VF1, uplink, VF3 (trunk all) */
    n = vsw_egress_frame(sw, &d, VF(3), fb, fl, out, sizeof(out));
    CHECK(n == fl + 4 && out[15] == 100);
    pc.native_vid = 100;                                   /* now 100 is native on VF3 */
    CHECK_EQ(vsw_port_set(sw, VF(3), &pc, NULL), 0);
    n = vsw_egress_frame(sw, &d, VF(3), fb, fl, out, sizeof(out));
    CHECK(n == fl && !memcmp(out, fb, fl));
    vsw_destroy(sw);
}

static void test_spoof_trust_tc(void)
{
    vsw_decision d;
    vsw_port_cfg pc;
    sw = fresh();
    vsw_port_get(sw, VF(0), &pc);
    pc.spoofchk = true;
    vsw_port_set(sw, VF(0), &pc, NULL);
    tframe f = frm(MAC_VF[2], MAC_VF[1]);                 /* VF0 claims VF2's MAC */
    CHECK_EQ(send(VF(0), &f, &d), 0);
    CHECK_EQ(d.drop, VSW_DROP_SPOOF);
    f = frm(MAC_VF[0], MAC_VF[1]);
    CHECK_EQ(send(VF(0), &f, &d), 1);
    f = frm(BCAST, MAC_VF[1]);                              /* multicast source */
    CHECK_EQ(send(VF(2), &f, &d), 0);
    CHECK_EQ(d.drop, VSW_DROP_SPOOF);
    /* trust: trusted VF3 receives unknown unicast, VF1 does not */
    vsw_port_get(sw, VF(3), &pc);
    pc.trust = true;
    vsw_port_set(sw, VF(3), &pc, NULL);
    f = frm(MAC_VF[0], UNKNOWN);
    CHECK_EQ(send(VF(0), &f, &d), 2);
    CHECK(vsw_portset_has(&d.egress, VF(3)) && vsw_portset_has(&d.egress, VSW_PORT_UPLINK) &&
          !vsw_portset_has(&d.egress, VF(1)));
    /* traffic classes */
    vsw_port_get(sw, VF(1), &pc);
    pc.default_tc = 2;
    vsw_port_set(sw, VF(1), &pc, NULL);
    f = frm(MAC_VF[1], MAC_VF[2]);
    f.vid = 0; f.pcp = 6; f.dscp = 46;
    send(VF(1), &f, &d);
    CHECK_EQ(d.tc, 2);
    pc.qos_trust = VSW_TRUST_PCP;
    pc.pcp_to_tc[6] = 5;
    vsw_port_set(sw, VF(1), &pc, NULL);
    send(VF(1), &f, &d);
    CHECK_EQ(d.tc, 5);
    pc.qos_trust = VSW_TRUST_DSCP;
    pc.dscp_to_tc[46] = 7;
    vsw_port_set(sw, VF(1), &pc, NULL);
    send(VF(1), &f, &d);
    CHECK_EQ(d.tc, 7);
    f.ethertype = 0x0806;                                   /* not IP: default */
    send(VF(1), &f, &d);
    CHECK_EQ(d.tc, 2);
    vsw_error e;
    pc.dscp_to_tc[1] = 8;
    CHECK_EQ(vsw_port_set(sw, VF(1), &pc, &e), -EINVAL);
    CHECK(strstr(e.msg, "dscp_to_tc") != NULL);
    send(VF(1), &f, &d);
    CHECK_EQ(d.tc, 2);                                      /* unchanged */
    vsw_destroy(sw);
}

/* vsw_frame_tc: the class vsw_process gives the frame (trust PCP, DSCP,
 * an ACL's set_tc), -1 for a frame it would drop, and nothing changes:
 * the port's counters, the rules' counters and the learned FDB stay. */
static vsw_rule R0(void);

static void test_frame_tc(void)
{
    vsw_decision d;
    vsw_port_cfg pc;
    vsw_error e;
    sw = fresh();
    vsw_port_get(sw, VF(1), &pc);
    pc.default_tc = 2;
    pc.qos_trust = VSW_TRUST_DSCP;
    pc.dscp_to_tc[46] = 7;
    pc.dscp_to_tc[10] = 3;
    pc.learn = true;
    pc.spoofchk = true;
    vsw_port_set(sw, VF(1), &pc, NULL);
    tframe f = frm(MAC_VF[1], MAC_VF[2]);
    f.dscp = 46;
    fl = tf_build(&f, fb);
    vsw_port_counters before, after;
    vsw_port_counters_get(sw, VF(1), &before);
    CHECK_EQ(vsw_frame_tc(sw, VF(1), fb, fl, 0), 7);
    f.dscp = 10;
    fl = tf_build(&f, fb);
    CHECK_EQ(vsw_frame_tc(sw, VF(1), fb, fl, 0), 3);
    send(VF(1), &f, &d);
    CHECK_EQ(d.tc, 3);
    tframe s = frm(MAC_VF[2], MAC_VF[0]);                 /* spoofed source */
    fl = tf_build(&s, fb);
    CHECK_EQ(vsw_frame_tc(sw, VF(1), fb, fl, 0), -1);
    CHECK_EQ(vsw_frame_tc(sw, VF(1), fb, 10, 0), -1);      /* malformed */
    CHECK_EQ(vsw_frame_tc(sw, 99, fb, fl, 0), -1);         /* no such port */
    vsw_port_counters_get(sw, VF(1), &after);
    CHECK_EQ(after.rx_packets, before.rx_packets + 1);      /* the send only */
    CHECK_EQ(after.drops[VSW_DROP_SPOOF], before.drops[VSW_DROP_SPOOF]);
    CHECK_EQ(after.drops[VSW_DROP_MALFORMED], before.drops[VSW_DROP_MALFORMED]);
    /* no learning from a peek: an unknown source MAC on the uplink is
     * not learned (a frame to it still floods) */
    static const uint8_t NEWMAC[6] = {0x02, 0, 0, 0, 7, 7};
    vsw_port_get(sw, VSW_PORT_UPLINK, &pc);
    pc.learn = true;
    vsw_port_set(sw, VSW_PORT_UPLINK, &pc, NULL);
    tframe u = frm(NEWMAC, MAC_VF[0]);
    fl = tf_build(&u, fb);
    CHECK(vsw_frame_tc(sw, VSW_PORT_UPLINK, fb, fl, 0) >= 0);
    tframe back = frm(MAC_VF[0], NEWMAC);
    send(VF(0), &back, &d);
    CHECK(d.flood);                                         /* not learned */
    send(VSW_PORT_UPLINK, &u, &d);                          /* learns */
    send(VF(0), &back, &d);
    CHECK(!d.flood);
    /* an ACL: set_tc 5 for UDP, drop for port 53; counters untouched */
    vsw_rule rs[2];
    rs[0] = R0(); rs[0].priority = 1; rs[0].match = VSW_M_DPORT;
    rs[0].dport_lo = rs[0].dport_hi = 53; rs[0].flags |= VSW_ACTF_COUNT;
    rs[1] = R0(); rs[1].priority = 2; rs[1].verdict = VSW_ACT_PERMIT;
    rs[1].match = VSW_M_IP_PROTO; rs[1].ip_proto = 17;
    rs[1].flags |= VSW_ACTF_SET_TC | VSW_ACTF_COUNT; rs[1].set_tc = 5;
    CHECK_EQ(vsw_acl_set(sw, rs, 2, &e), 0);
    f = frm(MAC_VF[1], MAC_VF[2]);
    f.dscp = 46;
    fl = tf_build(&f, fb);
    CHECK_EQ(vsw_frame_tc(sw, VF(1), fb, fl, 0), 5);
    send(VF(1), &f, &d);
    CHECK_EQ(d.tc, 5);
    f.dport = 53;
    fl = tf_build(&f, fb);
    CHECK_EQ(vsw_frame_tc(sw, VF(1), fb, fl, 0), -1);
    uint64_t p = 0, by = 0;
    CHECK_EQ(vsw_rule_counters_get(sw, 0, &p, &by), 0);
    CHECK_EQ(p, 0);
    CHECK_EQ(vsw_rule_counters_get(sw, 1, &p, &by), 0);
    CHECK_EQ(p, 1);                                         /* the send */
    vsw_destroy(sw);
}

static void test_fdb(void)
{
    vsw_decision d;
    sw = fresh();
    /* learning on the uplink */
    static const uint8_t R[6] = {0x02, 0, 0, 0, 7, 7};
    tframe f = frm(MAC_VF[0], R);
    CHECK_EQ(send(VF(0), &f, &d), 1);                       /* unknown: uplink */
    CHECK(d.flood);
    f = frm(R, MAC_VF[0]);
    CHECK_EQ(send(VSW_PORT_UPLINK, &f, &d), 1);             /* learns R */
    f = frm(MAC_VF[0], R);
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(!d.flood && vsw_portset_has(&d.egress, VSW_PORT_UPLINK));
    f.vid = 5;                                               /* other VLAN: not learned */
    send(VF(0), &f, &d);
    CHECK(d.flood);
    vsw_fdb_flush_learned(sw);
    f.vid = -1;
    send(VF(0), &f, &d);
    CHECK(d.flood);
    /* VFs do not learn: VF1 sends from R, still unknown */
    f = frm(R, MAC_VF[0]);
    send(VF(1), &f, &d);
    f = frm(MAC_VF[0], R);
    send(VF(0), &f, &d);
    CHECK(d.flood);
    /* static entries: add, override learned, delete */
    CHECK_EQ(vsw_fdb_add(sw, R, 0, VF(2), NULL), 0);
    CHECK_EQ(vsw_fdb_lookup_static(sw, R, 0), (int)VF(2));
    f = frm(R, MAC_VF[0]);
    send(VSW_PORT_UPLINK, &f, &d);                          /* would learn R on uplink */
    f = frm(MAC_VF[0], R);
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VF(2)));
    vsw_error e;
    CHECK_EQ(vsw_fdb_del(sw, R, 0, NULL), 0);
    CHECK_EQ(vsw_fdb_del(sw, R, 0, &e), -ENOENT);
    CHECK_EQ(vsw_fdb_add(sw, R, 4096, VF(0), &e), -EINVAL);
    CHECK_EQ(vsw_fdb_add(sw, R, 0, 99, &e), -EINVAL);
    CHECK_EQ(vsw_fdb_lookup_static(sw, R, 0), -1);
    /* learned entries age out */
    vsw_config c = { .num_vfs = 1, .fdb_age_ns = 1000 };
    vsw_switch *s2 = vsw_create(&c);
    f = frm(R, BCAST);
    fl = tf_build(&f, fb);
    vsw_process(s2, VSW_PORT_UPLINK, fb, fl, 10, &d);
    f = frm(MAC_VF[0], R);
    fl = tf_build(&f, fb);
    vsw_process(s2, VF(0), fb, fl, 500, &d);
    CHECK(!d.flood);
    vsw_process(s2, VF(0), fb, fl, 2000, &d);
    CHECK(d.flood);
    vsw_destroy(s2);
    /* learned table capacity: full of live entries -> no more learning;
     * once they age out, room is made again */
    vsw_config c3 = { .num_vfs = 1, .fdb_learn_max = 2, .fdb_age_ns = 1000 };
    s2 = vsw_create(&c3);
    uint8_t L[3][6] = {{2, 0, 0, 8, 0, 1}, {2, 0, 0, 8, 0, 2}, {2, 0, 0, 8, 0, 3}};
    for (int i = 0; i < 3; i++) {
        f = frm(L[i], BCAST);
        fl = tf_build(&f, fb);
        vsw_process(s2, VSW_PORT_UPLINK, fb, fl, 100, &d);
    }
    for (int i = 0; i < 3; i++) {
        f = frm(MAC_VF[0], L[i]);
        fl = tf_build(&f, fb);
        vsw_process(s2, VF(0), fb, fl, 200, &d);
        CHECK_EQ(d.flood, i == 2);            /* the third did not fit */
    }
    f = frm(L[2], BCAST);
    fl = tf_build(&f, fb);
    vsw_process(s2, VSW_PORT_UPLINK, fb, fl, 5000, &d);   /* others expired */
    f = frm(MAC_VF[0], L[2]);
    fl = tf_build(&f, fb);
    vsw_process(s2, VF(0), fb, fl, 5001, &d);
    CHECK(!d.flood && vsw_portset_has(&d.egress, VSW_PORT_UPLINK));
    vsw_destroy(s2);
    vsw_destroy(sw);
}

/* A MAC flood on the wire (every frame a new source, issue 33's SYN flood
 * from forged addresses): once the learned table is full of live entries,
 * a new address is refused without work until the oldest entry can have
 * aged out; the entries learned before stay, and room is made again when
 * they expire. Before, every refused frame compacted the whole table. */
static void test_fdb_mac_flood(void)
{
    vsw_decision d;
    uint8_t fb[2048];
    vsw_config c = { .num_vfs = 1, .fdb_learn_max = 64, .fdb_age_ns = 1000000 };
    vsw_switch *s = vsw_create(&c);
    CHECK(s != NULL);
    if (!s)
        return;
    vsw_port_cfg pc;
    vsw_port_get(s, VSW_PORT_UPLINK, &pc);
    pc.learn = true;
    CHECK_EQ(vsw_port_set(s, VSW_PORT_UPLINK, &pc, NULL), 0);
    uint8_t m[6] = {0x02, 0x5f, 0, 0, 0, 0};
    const unsigned flood = 20000;
    for (unsigned i = 0; i < 64 + flood; i++) {
        m[2] = (uint8_t)(i >> 16);
        m[3] = (uint8_t)(i >> 8);
        m[4] = (uint8_t)i;
        tframe f = frm(m, BCAST);
        size_t fl = tf_build(&f, fb);
        /* the first 64 at t=100, the flood over the next 500 us: nothing
         * learned has aged out by its end */
        vsw_process(s, VSW_PORT_UPLINK, fb, fl, i < 64 ? 100 : 100 + i * 25, &d);
    }
    vsw_learn_stats st;
    vsw_fdb_learn_stats(s, &st);
    CHECK_EQ(st.entries, 64);
    CHECK_EQ(st.not_learned, flood);
    CHECK(st.compactions <= 1);
    /* the first address learned is still known: a frame to it is not flooded */
    m[2] = m[3] = m[4] = 0;
    tframe t = frm(MAC_VF[0], m);
    size_t tl = tf_build(&t, fb);
    vsw_process(s, VF(0), fb, tl, 600000, &d);
    CHECK(!d.flood && vsw_portset_has(&d.egress, VSW_PORT_UPLINK));
    /* after the age, a new address is learned again */
    uint8_t n[6] = {0x02, 0x5e, 0, 0, 0, 1};
    tframe f = frm(n, BCAST);
    size_t fl = tf_build(&f, fb);
    vsw_process(s, VSW_PORT_UPLINK, fb, fl, 100 + 2000000, &d);
    vsw_fdb_learn_stats(s, &st);
    CHECK_EQ(st.entries, 1);
    CHECK_EQ(st.not_learned, flood);
    vsw_destroy(s);
}

/* ---- ACL ---- */
static vsw_rule R0(void)
{
    vsw_rule r;
    memset(&r, 0, sizeof(r));
    r.verdict = VSW_ACT_DROP;
    r.flags = VSW_ACTF_COUNT;
    return r;
}

/* install one rule, check that frame `hit` matches it and `miss` does not */
static void acl_case2(const char *what, vsw_rule r, unsigned port, const tframe *hit,
                      unsigned miss_port, const tframe *miss)
{
    vsw_error e;
    vsw_decision d;
    int rc = vsw_acl_set(sw, &r, 1, &e);
    CHECK_EQ(rc, 0);
    if (rc)
        fprintf(stderr, "%s: %s\n", what, e.msg);
    send(port, hit, &d);
    if (d.rule != 0 || d.drop != VSW_DROP_ACL)
        fprintf(stderr, "%s: hit did not match\n", what);
    CHECK(d.rule == 0 && d.drop == VSW_DROP_ACL);
    send(miss_port, miss, &d);
    if (d.rule != -1)
        fprintf(stderr, "%s: miss matched\n", what);
    CHECK(d.rule == -1 && d.drop == VSW_DROP_NONE);
}

static void acl_case(const char *what, vsw_rule r, unsigned port, const tframe *hit,
                     const tframe *miss)
{
    acl_case2(what, r, port, hit, port, miss);
}

static void test_acl_fields(void)
{
    sw = fresh();
    tframe a = frm(MAC_VF[0], MAC_VF[1]), b;
    vsw_rule r;

    r = R0(); r.match = VSW_M_IN_PORT; r.in_port = VF(0);
    b = frm(MAC_VF[2], MAC_VF[1]);
    acl_case2("in_port", r, VF(0), &a, VF(2), &b);

    r = R0(); r.match = VSW_M_OUT_PORT; r.out_port = VF(1);
    b = frm(MAC_VF[0], MAC_VF[2]);
    acl_case("out_port", r, VF(0), &a, &b);
    r.out_port = VSW_PORT_FLOOD;
    b = frm(MAC_VF[0], BCAST);
    acl_case("out_port flood", r, VF(0), &b, &a);

    r = R0(); r.match = VSW_M_SRC_MAC;
    memcpy(r.src_mac, MAC_VF[0], 6);
    memset(r.src_mac_mask, 0xff, 6);
    b = frm(MAC_VF[3], MAC_VF[1]);
    acl_case("src mac", r, VF(0), &a, &b);
    r = R0(); r.match = VSW_M_DST_MAC;                      /* OUI mask */
    memcpy(r.dst_mac, MAC_VF[1], 3);
    memset(r.dst_mac_mask, 0xff, 3);
    b = frm(MAC_VF[0], (const uint8_t[6]){0x06, 0, 0, 0, 1, 1});
    acl_case("dst mac oui", r, VF(0), &a, &b);

    r = R0(); r.match = VSW_M_VLAN; r.vid = 7;
    tframe t7 = a; t7.vid = 7;
    acl_case("vlan", r, VF(0), &t7, &a);
    r = R0(); r.match = VSW_M_ETHERTYPE; r.ethertype = 0x86dd;
    b = a; b.ethertype = 0x86dd;
    acl_case("ethertype", r, VF(0), &b, &a);

    r = R0(); r.match = VSW_M_SRC_IP; r.ip_version = 4;
    r.src_ip[0] = 10; r.src_plen = 8;
    b = a; b.src_ip[0] = 11;
    acl_case("src v4 /8", r, VF(0), &a, &b);
    r = R0(); r.match = VSW_M_DST_IP; r.ip_version = 4;
    r.dst_ip[0] = 10; r.dst_ip[3] = 2; r.dst_plen = 32;
    b = a; b.dst_ip[3] = 3;
    acl_case("dst v4 /32", r, VF(0), &a, &b);
    tframe v6 = a, v6b;
    v6.ethertype = 0x86dd;
    memset(v6.dst_ip, 0, 16);
    v6.dst_ip[0] = 0x20; v6.dst_ip[1] = 0x01; v6.dst_ip[2] = 0x0d; v6.dst_ip[3] = 0xb8;
    v6.dst_ip[8] = 0x80; v6.dst_ip[15] = 1;
    v6b = v6; v6b.dst_ip[8] = 0x00;
    r = R0(); r.match = VSW_M_DST_IP; r.ip_version = 6;
    memcpy(r.dst_ip, v6.dst_ip, 9); r.dst_ip[8] = 0x80; r.dst_plen = 65;
    acl_case("dst v6 /65", r, VF(0), &v6, &v6b);
    r = R0(); r.match = VSW_M_IP_VERSION; r.ip_version = 6;
    acl_case("ip version", r, VF(0), &v6, &a);

    r = R0(); r.match = VSW_M_IP_PROTO; r.ip_proto = 6;
    b = a; b.proto = 6;
    acl_case("proto", r, VF(0), &b, &a);
    r = R0(); r.match = VSW_M_DPORT; r.dport_lo = 1999; r.dport_hi = 2001;
    b = a; b.dport = 2002;
    acl_case("dport range", r, VF(0), &a, &b);
    b.dport = 1998;
    acl_case("dport range lo", r, VF(0), &a, &b);
    r = R0(); r.match = VSW_M_SPORT; r.sport_lo = 1000; r.sport_hi = 1000;
    b = a; b.sport = 1001;
    acl_case("sport exact", r, VF(0), &a, &b);
    b = a; b.ethertype = 0x0806;                            /* no L4: port rule misses */
    r.sport_lo = 0; r.sport_hi = 65535;
    acl_case("sport needs L4", r, VF(0), &a, &b);
    r = R0(); r.match = VSW_M_DSCP; r.dscp = 46; r.dscp_mask = 63;
    b = a; b.dscp = 46;
    acl_case("dscp", r, VF(0), &b, &a);
    r = R0(); r.match = VSW_M_TCP_FLAGS; r.tcp_flags = 0x02; r.tcp_flags_mask = 0x12;
    b = a; b.proto = 6; b.tcp_flags = 0x02;                 /* SYN */
    tframe c = b; c.tcp_flags = 0x12;                        /* SYN-ACK */
    acl_case("tcp syn", r, VF(0), &b, &c);
    acl_case("tcp flags not udp", r, VF(0), &b, &a);
    vsw_destroy(sw);
}

static void test_acl_actions(void)
{
    sw = fresh();
    vsw_decision d;
    vsw_error e;
    tframe a = frm(MAC_VF[0], MAC_VF[1]);
    vsw_rule rs[4];
    /* priorities: lower value first; equal value: lower index first */
    rs[0] = R0(); rs[0].priority = 5; rs[0].verdict = VSW_ACT_PERMIT;
    rs[0].match = VSW_M_IN_PORT; rs[0].in_port = VF(0);
    rs[0].flags |= VSW_ACTF_SET_TC | VSW_ACTF_MIRROR; rs[0].set_tc = 6; rs[0].mirror_port = VF(3);
    rs[1] = R0(); rs[1].priority = 1; rs[1].match = VSW_M_DPORT;
    rs[1].dport_lo = rs[1].dport_hi = 53;
    rs[2] = R0(); rs[2].priority = 5; rs[2].match = VSW_M_IP_PROTO; rs[2].ip_proto = 17;
    CHECK_EQ(vsw_acl_set(sw, rs, 3, &e), 0);
    CHECK_EQ(send(VF(0), &a, &d), 2);
    CHECK_EQ(d.rule, 0);
    CHECK_EQ(d.tc, 6);
    CHECK(vsw_portset_has(&d.egress, VF(1)) && vsw_portset_has(&d.egress, VF(3)));
    CHECK_EQ(d.mirror_port, VF(3));
    uint8_t out[256];
    CHECK(vsw_egress_frame(sw, &d, VF(3), fb, fl, out, sizeof(out)) == fl && !memcmp(out, fb, fl));
    a.dport = 53;
    CHECK_EQ(send(VF(0), &a, &d), 0);
    CHECK(d.rule == 1 && d.drop == VSW_DROP_ACL);
    a.dport = 2000;
    tframe b = frm(MAC_VF[2], MAC_VF[1]);
    CHECK_EQ(send(VF(2), &b, &d), 0);
    CHECK_EQ(d.rule, 2);
    /* counters */
    uint64_t p = 0, by = 0;
    CHECK_EQ(vsw_rule_counters_get(sw, 0, &p, &by), 0);
    CHECK(p == 1 && by == 60);
    CHECK_EQ(vsw_rule_counters_get(sw, 1, &p, &by), 0);
    CHECK_EQ(p, 1);
    vsw_port_counters pc;
    vsw_port_counters_get(sw, VF(0), &pc);
    CHECK(pc.rx_packets == 2 && pc.rx_bytes == 120 && pc.drops[VSW_DROP_ACL] == 1);
    vsw_port_counters_get(sw, VF(3), &pc);
    CHECK(pc.tx_packets == 1 && pc.tx_bytes == 60);
    vsw_port_counters_get(sw, VF(2), &pc);
    CHECK_EQ(pc.drops[VSW_DROP_ACL], 1);
    /* meter action: 1 packet burst at 1 pps */
    vsw_meter_cfg mc = { .mode = VSW_METER_PPS, .rate = 1, .burst = 1 };
    CHECK_EQ(vsw_meter_set(sw, 9, &mc, &e), 0);
    rs[3] = R0(); rs[3].verdict = VSW_ACT_PERMIT; rs[3].flags = VSW_ACTF_METER; rs[3].meter = 9;
    CHECK_EQ(vsw_acl_set(sw, &rs[3], 1, &e), 0);
    CHECK_EQ(send(VF(2), &b, &d), 1);
    CHECK_EQ(send(VF(2), &b, &d), 0);
    CHECK_EQ(d.drop, VSW_DROP_METER);
    vsw_meter_counters m;
    vsw_meter_counters_get(sw, 9, &m);
    CHECK(m.pass_packets == 1 && m.drop_packets == 1 && m.drop_bytes == 60);
    vsw_destroy(sw);
}

static void test_acl_invalid(void)
{
    sw = fresh();
    vsw_error e;
    vsw_decision d;
    vsw_rule good = R0();
    good.match = VSW_M_IP_PROTO; good.ip_proto = 17;
    CHECK_EQ(vsw_acl_set(sw, &good, 1, &e), 0);
    tframe a = frm(MAC_VF[0], MAC_VF[1]);
    send(VF(0), &a, &d);
    uint32_t gen = d.acl_gen;
    CHECK_EQ(d.rule, 0);
    struct { const char *name, *msg; int code; vsw_rule r; } bad[20];
    int nb = 0;
#define BAD(nm, m, c) do { bad[nb].name = nm; bad[nb].msg = m; bad[nb].code = c; \
        bad[nb].r = R0(); } while (0)
    BAD("plen", "prefix length", -EINVAL);
    bad[nb].r.match = VSW_M_SRC_IP; bad[nb].r.ip_version = 4; bad[nb].r.src_plen = 33; nb++;
    BAD("host bits", "beyond", -EINVAL);
    bad[nb].r.match = VSW_M_DST_IP; bad[nb].r.ip_version = 4; bad[nb].r.dst_ip[3] = 1;
    bad[nb].r.dst_plen = 24; nb++;
    BAD("ipver", "ip_version", -EINVAL);
    bad[nb].r.match = VSW_M_DST_IP; bad[nb].r.ip_version = 5; nb++;
    BAD("range", "inverted", -EINVAL);
    bad[nb].r.match = VSW_M_DPORT; bad[nb].r.dport_lo = 10; bad[nb].r.dport_hi = 9; nb++;
    BAD("verdict", "verdict", -EINVAL);
    bad[nb].r.verdict = 7; nb++;
    BAD("flags", "action", -EINVAL);
    bad[nb].r.flags = 1u << 20; nb++;
    BAD("tc", "traffic class", -EINVAL);
    bad[nb].r.flags = VSW_ACTF_SET_TC; bad[nb].r.set_tc = 8; nb++;
    BAD("mirror", "mirror", -EINVAL);
    bad[nb].r.flags = VSW_ACTF_MIRROR; bad[nb].r.mirror_port = 77; nb++;
    BAD("meter", "meter", -EINVAL);
    bad[nb].r.flags = VSW_ACTF_METER; bad[nb].r.meter = 0; nb++;
    BAD("redirect", "redirect port", -EINVAL);
    bad[nb].r.flags = VSW_ACTF_REDIRECT; bad[nb].r.redirect_port = 6; nb++;
    BAD("redirect drop", "cannot redirect", -EINVAL);
    bad[nb].r.verdict = VSW_ACT_DROP; bad[nb].r.flags = VSW_ACTF_REDIRECT;
    bad[nb].r.redirect_port = VF(1); nb++;
    BAD("in_port", "in_port", -EINVAL);
    bad[nb].r.match = VSW_M_IN_PORT; bad[nb].r.in_port = 6; nb++;
    BAD("vlan", "VLAN", -EINVAL);
    bad[nb].r.match = VSW_M_VLAN; bad[nb].r.vid = 4096; nb++;
    BAD("match", "unknown match", -EINVAL);
    bad[nb].r.match = 1u << 30; nb++;
    BAD("push pop", "push and pop", -EINVAL);
    bad[nb].r.flags = VSW_ACTF_VLAN_PUSH | VSW_ACTF_VLAN_POP; bad[nb].r.vlan_vid = 10; nb++;
    BAD("push vid 0", "VLAN push", -EINVAL);
    bad[nb].r.flags = VSW_ACTF_VLAN_PUSH; nb++;
    BAD("push vid 4095", "VLAN push", -EINVAL);
    bad[nb].r.flags = VSW_ACTF_VLAN_PUSH; bad[nb].r.vlan_vid = 4095; nb++;
    BAD("push pcp 8", "VLAN push", -EINVAL);
    bad[nb].r.flags = VSW_ACTF_VLAN_PUSH; bad[nb].r.vlan_vid = 10; bad[nb].r.vlan_pcp = 8; nb++;
    for (int i = 0; i < nb; i++) {
        vsw_rule set[3] = {good, good, bad[i].r};
        memset(&e, 0, sizeof(e));
        int rc = vsw_acl_set(sw, set, 3, &e);
        CHECK_EQ(rc, bad[i].code);
        CHECK_EQ(e.rule, 2);
        if (!strstr(e.msg, bad[i].msg))
            fprintf(stderr, "%s: message '%s'\n", bad[i].name, e.msg);
        CHECK(strstr(e.msg, bad[i].msg) != NULL);
        CHECK_EQ(vsw_acl_check(set, 3, vsw_num_ports(sw), NULL), bad[i].code);
    }
    vsw_rule *many = calloc(VSW_ACL_MAX_RULES + 1, sizeof(vsw_rule));
    CHECK_EQ(vsw_acl_set(sw, many, VSW_ACL_MAX_RULES + 1, &e), -E2BIG);
    CHECK(strstr(e.msg, "at most") != NULL);
    free(many);
    send(VF(0), &a, &d);
    CHECK(d.acl_gen == gen && d.rule == 0 && d.drop == VSW_DROP_ACL);  /* unchanged */
    /* meter config errors */
    vsw_meter_cfg mc = { .mode = VSW_METER_BPS, .rate = 1000, .burst = 100, .parent = 50 };
    CHECK_EQ(vsw_meter_set(sw, 1, &mc, &e), -EINVAL);
    CHECK(strstr(e.msg, "parent") != NULL);
    mc.parent = 0;
    CHECK_EQ(vsw_meter_set(sw, 1, &mc, &e), 0);
    mc.parent = 1;
    CHECK_EQ(vsw_meter_set(sw, 2, &mc, &e), 0);
    CHECK_EQ(vsw_meter_set(sw, 1, &(vsw_meter_cfg){ .rate = 1, .burst = 1, .parent = 2 }, &e), -EINVAL);
    CHECK(strstr(e.msg, "loop") != NULL);
    CHECK_EQ(vsw_meter_set(sw, 3, &(vsw_meter_cfg){ .rate = 0, .burst = 1 }, &e), -EINVAL);
    CHECK_EQ(vsw_meter_del(sw, 1, &e), -EINVAL);           /* still a parent */
    CHECK_EQ(vsw_meter_del(sw, 2, &e), 0);
    CHECK_EQ(vsw_meter_del(sw, 2, &e), -ENOENT);
    vsw_sched_cfg sc;
    vsw_sched_cfg_default(&sc);
    sc.tc[3].weight = 0;
    CHECK_EQ(vsw_sched_set(sw, VF(0), &sc, &e), -EINVAL);
    vsw_destroy(sw);
}

/* Switchdev's slow path for the VFs and the uplink: no static FDB entry
 * for a VF, every VF's and the wire's misses to the PF (the representors),
 * no learning from the wire. */
static void slow_path_everywhere(void)
{
    vsw_port_cfg pc;
    vsw_error e;
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(vsw_fdb_del(sw, MAC_VF[i], 0, NULL), 0);
        vsw_port_get(sw, VF(i), &pc);
        pc.miss_port = VSW_PORT_PF;
        CHECK_EQ(vsw_port_set(sw, VF(i), &pc, &e), 0);
    }
    vsw_port_get(sw, VSW_PORT_UPLINK, &pc);
    pc.miss_port = VSW_PORT_PF;
    pc.learn = false;
    CHECK_EQ(vsw_port_set(sw, VSW_PORT_UPLINK, &pc, &e), 0);
}

/* Switchdev forwarding: a VF's and the uplink's frames that no static FDB
 * entry names go to the PF (the representors' slow path) instead of
 * flooding; the PF, as the uplink representor, sends to the wire only;
 * static FDB entries (bridge offload) forward in the switch; an ACL
 * redirect (tc mirred) overrides all of it.  Back to the defaults, the
 * switch floods again. */
static void test_switchdev_forwarding(void)
{
    sw = fresh();
    vsw_decision d;
    vsw_error e;
    vsw_port_cfg pc;
    /* slow path everywhere: nothing in the static FDB */
    slow_path_everywhere();
    vsw_port_get(sw, VSW_PORT_PF, &pc);
    pc.miss_port = VSW_PORT_UPLINK;
    pc.fdb_off = true;
    CHECK_EQ(vsw_port_set(sw, VSW_PORT_PF, &pc, &e), 0);
    /* unicast to another VF, broadcast, unknown: PF alone, one copy */
    const uint8_t *dsts[3] = { MAC_VF[1], BCAST, UNKNOWN };
    for (int i = 0; i < 3; i++) {
        tframe f = frm(MAC_VF[0], dsts[i]);
        CHECK_EQ(send(VF(0), &f, &d), 1);
        CHECK(vsw_portset_has(&d.egress, VSW_PORT_PF) && !d.flood);
    }
    /* from the wire: to the PF too, even to a VF's MAC */
    tframe w = frm(MAC_UP, MAC_VF[2]);
    CHECK_EQ(send(VSW_PORT_UPLINK, &w, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VSW_PORT_PF));
    /* the PF (uplink representor) sends to the wire, whatever the FDB says */
    CHECK_EQ(vsw_fdb_add(sw, MAC_VF[3], 0, VF(3), NULL), 0);
    tframe p = frm(MAC_UP, MAC_VF[3]);
    CHECK_EQ(send(VSW_PORT_PF, &p, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VSW_PORT_UPLINK));
    p = frm(MAC_UP, BCAST);
    CHECK_EQ(send(VSW_PORT_PF, &p, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VSW_PORT_UPLINK));
    /* a static (bridge-offloaded) entry forwards VF -> VF in the switch */
    tframe f = frm(MAC_VF[0], MAC_VF[3]);
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VF(3)));
    /* redirect: VF0's UDP to port 2000 goes to VF2, the rest as before;
     * a redirect to a link-down port drops, to itself too */
    vsw_trule t;
    memset(&t, 0, sizeof(t));
    t.cookie = 77;
    t.scope = VF(0);
    t.rule = R0();
    t.rule.verdict = VSW_ACT_PERMIT;
    t.rule.match = VSW_M_DPORT;
    t.rule.dport_lo = t.rule.dport_hi = 2000;
    t.rule.flags = VSW_ACTF_REDIRECT | VSW_ACTF_COUNT;
    t.rule.redirect_port = VF(2);
    CHECK_EQ(vsw_rule_add(sw, &t, &e), 0);
    vsw_trule got;
    CHECK_EQ(vsw_rule_get(sw, 77, &got), 0);
    CHECK_EQ(got.rule.redirect_port, VF(2));
    f = frm(MAC_VF[0], MAC_VF[1]);
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VF(2)) && !vsw_portset_has(&d.egress, VSW_PORT_PF));
    f.dport = 2001;
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VSW_PORT_PF));
    uint64_t np = 0, nb = 0;
    CHECK_EQ(vsw_rule_stats(sw, 77, &np, &nb), 0);
    CHECK_EQ(np, 1);
    /* the redirect ignores VLAN membership: VF2 an access port of VLAN 7 */
    vsw_port_get(sw, VF(2), &pc);
    pc.vlan_mode = VSW_VLAN_ACCESS;
    pc.pvid = 7;
    CHECK_EQ(vsw_port_set(sw, VF(2), &pc, &e), 0);
    f.dport = 2000;
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VF(2)));
    pc.link_up = false;
    CHECK_EQ(vsw_port_set(sw, VF(2), &pc, &e), 0);
    CHECK_EQ(send(VF(0), &f, &d), 0);
    CHECK_EQ(d.drop, VSW_DROP_NO_DEST);
    /* miss_port validation: itself, or a port that does not exist */
    vsw_port_get(sw, VF(1), &pc);
    pc.miss_port = VF(1);
    CHECK_EQ(vsw_port_set(sw, VF(1), &pc, &e), -EINVAL);
    CHECK(strstr(e.msg, "miss port") != NULL);
    pc.miss_port = VF(4);
    CHECK_EQ(vsw_port_set(sw, VF(1), &pc, &e), -EINVAL);
    /* legacy again: defaults flood */
    vsw_port_cfg_default(&pc);
    CHECK_EQ(pc.miss_port, VSW_PORT_ANY);
    CHECK(!pc.fdb_off);
    memcpy(pc.mac, MAC_VF[1], 6);
    CHECK_EQ(vsw_port_set(sw, VF(1), &pc, &e), 0);
    f = frm(MAC_VF[1], BCAST);
    CHECK(send(VF(1), &f, &d) >= 2 && d.flood);
    vsw_destroy(sw);
}

/* The 802.1Q tag at b[12..15] is (pcp, vid). */
static int has_tag(const uint8_t *b, unsigned pcp, unsigned vid)
{
    unsigned tci = (unsigned)b[14] << 8 | b[15];
    return b[12] == 0x81 && b[13] == 0x00 && tci == (pcp << 13 | vid);
}

/* VLAN push / pop rules (tc vlan push/pop on a representor or the uplink)
 * in a switchdev-like switch: the frame is forwarded in its new VLAN (the
 * FDB asked again), leaves tagged / untagged, a tag it had stays inside a
 * pushed one, a pop of an untagged frame changes nothing, the mirror and a
 * redirect get the changed frame; bad rules are refused and change
 * nothing. */
static void test_vlan_push_pop(void)
{
    sw = fresh();
    vsw_decision d;
    vsw_error e;
    uint8_t out[256];
    size_t n;
    slow_path_everywhere();
    /* the wire's MAC is known in VLAN 10 only, VF1's untagged only */
    CHECK_EQ(vsw_fdb_add(sw, MAC_UP, 10, VSW_PORT_UPLINK, &e), 0);
    CHECK_EQ(vsw_fdb_add(sw, MAC_VF[1], 0, VF(1), &e), 0);
    tframe f = frm(MAC_VF[0], MAC_UP);
    CHECK_EQ(send(VF(0), &f, &d), 1);       /* untagged: a miss, to the PF */
    CHECK(vsw_portset_has(&d.egress, VSW_PORT_PF) && d.vlan_act == VSW_VLAN_ACT_NONE);

    vsw_trule t;
    memset(&t, 0, sizeof(t));
    t.cookie = 1;
    t.scope = VF(0);
    t.rule = R0();
    t.rule.verdict = VSW_ACT_PERMIT;
    t.rule.flags = VSW_ACTF_VLAN_PUSH | VSW_ACTF_COUNT;
    t.rule.vlan_vid = 10;
    t.rule.vlan_pcp = 3;
    CHECK_EQ(vsw_rule_add(sw, &t, &e), 0);
    vsw_trule got;
    CHECK_EQ(vsw_rule_get(sw, 1, &got), 0);
    CHECK(got.rule.vlan_vid == 10 && got.rule.vlan_pcp == 3);
    /* push: forwarded in VLAN 10, to the wire, tagged 10 priority 3 */
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VSW_PORT_UPLINK));
    CHECK(d.vlan_act == VSW_VLAN_ACT_PUSH && d.vid == 10 && d.pcp == 3);
    n = vsw_egress_frame(sw, &d, VSW_PORT_UPLINK, fb, fl, out, sizeof(out));
    CHECK_EQ(n, fl + 4);
    CHECK(!memcmp(out, fb, 12) && has_tag(out, 3, 10) && !memcmp(out + 16, fb + 12, fl - 12));
    /* a tagged frame (VLAN 5) keeps its tag inside the pushed one */
    tframe g = f;
    g.vid = 5;
    g.pcp = 1;
    CHECK_EQ(send(VF(0), &g, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VSW_PORT_UPLINK) && d.vid == 10);
    n = vsw_egress_frame(sw, &d, VSW_PORT_UPLINK, fb, fl, out, sizeof(out));
    CHECK_EQ(n, fl + 4);
    CHECK(has_tag(out, 3, 10) && has_tag(out + 4, 1, 5) && !memcmp(out + 16, fb + 12, fl - 12));
    uint64_t np = 0, nb = 0;
    CHECK_EQ(vsw_rule_stats(sw, 1, &np, &nb), 0);
    CHECK_EQ(np, 2);
    /* with a mirror to VF3: its copy is the pushed frame too */
    t.rule.flags |= VSW_ACTF_MIRROR;
    t.rule.mirror_port = VF(3);
    CHECK_EQ(vsw_rule_replace(sw, &t, &e), 0);
    CHECK_EQ(send(VF(0), &f, &d), 2);
    CHECK(vsw_portset_has(&d.egress, VF(3)) && d.mirror_port == VF(3));
    n = vsw_egress_frame(sw, &d, VF(3), fb, fl, out, sizeof(out));
    CHECK(n == fl + 4 && has_tag(out, 3, 10) && !memcmp(out + 16, fb + 12, fl - 12));
    /* a redirect keeps its port; the frame leaves VF2 (a trunk) tagged */
    t.rule.flags = VSW_ACTF_VLAN_PUSH | VSW_ACTF_COUNT | VSW_ACTF_REDIRECT;
    t.rule.redirect_port = VF(2);
    CHECK_EQ(vsw_rule_replace(sw, &t, &e), 0);
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VF(2)));
    n = vsw_egress_frame(sw, &d, VF(2), fb, fl, out, sizeof(out));
    CHECK(n == fl + 4 && has_tag(out, 3, 10));
    /* without the push the frame is back on the slow path, untagged */
    t.rule.flags = VSW_ACTF_COUNT;
    CHECK_EQ(vsw_rule_replace(sw, &t, &e), 0);
    CHECK_EQ(send(VF(0), &f, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VSW_PORT_PF) && d.vlan_act == VSW_VLAN_ACT_NONE);
    CHECK_EQ(vsw_egress_frame(sw, &d, VSW_PORT_PF, fb, fl, out, sizeof(out)), fl);

    /* pop on the uplink: VLAN 10 from the wire reaches VF1 untagged */
    tframe w = frm(MAC_UP, MAC_VF[1]);
    w.vid = 10;
    CHECK_EQ(send(VSW_PORT_UPLINK, &w, &d), 1);     /* no rule: (VF1, 10) misses */
    CHECK(vsw_portset_has(&d.egress, VSW_PORT_PF));
    memset(&t, 0, sizeof(t));
    t.cookie = 2;
    t.scope = VSW_PORT_UPLINK;
    t.rule = R0();
    t.rule.verdict = VSW_ACT_PERMIT;
    t.rule.flags = VSW_ACTF_VLAN_POP | VSW_ACTF_COUNT;
    CHECK_EQ(vsw_rule_add(sw, &t, &e), 0);
    CHECK_EQ(send(VSW_PORT_UPLINK, &w, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VF(1)) && d.vlan_act == VSW_VLAN_ACT_POP && d.vid == 0);
    n = vsw_egress_frame(sw, &d, VF(1), fb, fl, out, sizeof(out));
    CHECK_EQ(n, fl - 4);
    CHECK(!memcmp(out, fb, 12) && !memcmp(out + 12, fb + 16, fl - 16));
    /* an untagged frame: nothing to pop, forwarded as it is, counted */
    tframe u = frm(MAC_UP, MAC_VF[1]);
    CHECK_EQ(send(VSW_PORT_UPLINK, &u, &d), 1);
    CHECK(vsw_portset_has(&d.egress, VF(1)) && d.vlan_act == VSW_VLAN_ACT_NONE);
    n = vsw_egress_frame(sw, &d, VF(1), fb, fl, out, sizeof(out));
    CHECK(n == fl && !memcmp(out, fb, fl));
    CHECK_EQ(vsw_rule_stats(sw, 2, &np, &nb), 0);
    CHECK_EQ(np, 2);
    /* the mirror of a popped frame has no tag */
    t.rule.flags |= VSW_ACTF_MIRROR;
    t.rule.mirror_port = VF(3);
    CHECK_EQ(vsw_rule_replace(sw, &t, &e), 0);
    CHECK_EQ(send(VSW_PORT_UPLINK, &w, &d), 2);
    n = vsw_egress_frame(sw, &d, VF(3), fb, fl, out, sizeof(out));
    CHECK(n == fl - 4 && !memcmp(out + 12, fb + 16, fl - 16));

    /* refused: push with pop, VID 0 / 4095, priority 8; nothing changes */
    vsw_trule bad = t;
    bad.cookie = 3;
    bad.rule.flags = VSW_ACTF_VLAN_PUSH | VSW_ACTF_VLAN_POP;
    bad.rule.vlan_vid = 10;
    CHECK_EQ(vsw_rule_add(sw, &bad, &e), -EINVAL);
    CHECK(strstr(e.msg, "push and pop") != NULL);
    uint16_t vids[3] = {0, 4095, 10};
    uint8_t pcps[3] = {0, 0, 8};
    for (int i = 0; i < 3; i++) {
        bad.rule.flags = VSW_ACTF_VLAN_PUSH;
        bad.rule.vlan_vid = vids[i];
        bad.rule.vlan_pcp = pcps[i];
        CHECK_EQ(vsw_rule_add(sw, &bad, &e), -EINVAL);
        bad.cookie = 2;
        CHECK_EQ(vsw_rule_replace(sw, &bad, &e), -EINVAL);
        bad.cookie = 3;
    }
    CHECK_EQ(vsw_rule_get(sw, 3, &got), -ENOENT);
    CHECK_EQ(vsw_rule_get(sw, 2, &got), 0);
    CHECK(got.rule.flags & VSW_ACTF_VLAN_POP);
    CHECK_EQ(send(VSW_PORT_UPLINK, &w, &d), 2);     /* still pops */
    CHECK(d.vlan_act == VSW_VLAN_ACT_POP);
    vsw_destroy(sw);
}

int main(void)
{
    test_parse();
    test_ports_vlan();
    test_spoof_trust_tc();
    test_frame_tc();
    test_fdb();
    test_fdb_mac_flood();
    test_acl_fields();
    test_acl_actions();
    test_acl_invalid();
    test_switchdev_forwarding();
    test_vlan_push_pop();
    return t_done();
}
