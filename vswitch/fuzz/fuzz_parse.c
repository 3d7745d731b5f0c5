/* libFuzzer target: frames from the wire or a guest.  Parses the frame and
 * runs it through a configured switch (VLAN access/trunk ports, spoof
 * check, a few ACL rules, a meter) and the egress rewrite, checking the
 * output invariants, and vsw_frame_tc against vsw_process. */
#include "vswitch.h"
#include <stdlib.h>
#include <string.h>

static vsw_switch *sw;
static uint64_t now;

static void setup(void)
{
    vsw_config c = { .num_vfs = 4 };
    sw = vsw_create(&c);
    vsw_port_cfg pc;
    vsw_port_get(sw, VSW_PORT_VF(0), &pc);
    pc.vlan_mode = VSW_VLAN_ACCESS; pc.pvid = 100; pc.spoofchk = true;
    pc.mac[0] = 2; pc.mac[5] = 1;
    pc.qos_trust = VSW_TRUST_DSCP;
    pc.meter = 1;
    vsw_port_set(sw, VSW_PORT_VF(0), &pc, NULL);
    vsw_port_get(sw, VSW_PORT_VF(1), &pc);
    pc.native_vid = 100; pc.qos_trust = VSW_TRUST_PCP; pc.trust = true;
    vsw_port_set(sw, VSW_PORT_VF(1), &pc, NULL);
    vsw_meter_cfg mc = { .mode = VSW_METER_BPS, .rate = 1000000000ull, .burst = 10000 };
    vsw_meter_set(sw, 1, &mc, NULL);
    static const uint8_t m[6] = {2, 0, 0, 0, 0, 2};
    vsw_fdb_add(sw, m, 100, VSW_PORT_VF(1), NULL);
    vsw_rule r[5];
    memset(r, 0, sizeof(r));
    r[0].match = VSW_M_DPORT; r[0].dport_lo = 10; r[0].dport_hi = 1000; r[0].verdict = VSW_ACT_DROP;
    r[1].match = VSW_M_SRC_IP; r[1].ip_version = 6; r[1].src_ip[0] = 0x20; r[1].src_plen = 8;
    r[1].flags = VSW_ACTF_MIRROR | VSW_ACTF_COUNT; r[1].mirror_port = VSW_PORT_PF;
    r[2].match = VSW_M_TCP_FLAGS; r[2].tcp_flags = 2; r[2].tcp_flags_mask = 2;
    r[2].flags = VSW_ACTF_SET_TC; r[2].set_tc = 7;
    /* VLAN push (VID 300) and pop with a mirror: whatever the frame, the
     * rewrite must stay within len + 4 and write the VLAN decided */
    r[3].match = VSW_M_IP_PROTO; r[3].ip_proto = 17;
    r[3].flags = VSW_ACTF_VLAN_PUSH | VSW_ACTF_MIRROR; r[3].vlan_vid = 300; r[3].vlan_pcp = 2;
    r[3].mirror_port = VSW_PORT_VF(2);
    r[4].match = VSW_M_IP_PROTO; r[4].ip_proto = 1;
    r[4].flags = VSW_ACTF_VLAN_POP | VSW_ACTF_MIRROR; r[4].mirror_port = VSW_PORT_VF(2);
    if (vsw_acl_set(sw, r, 5, NULL))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sw)
        setup();
    if (size < 1)
        return 0;
    unsigned port = data[0] % 8;          /* includes nonexistent ports */
    const uint8_t *f = data + 1;
    size_t len = size - 1;
    /* copy so ASan sees the exact frame bounds */
    uint8_t *frame = malloc(len ? len : 1);
    memcpy(frame, f, len);
    vsw_pkt p;
    int rc = vsw_parse(frame, len, &p);
    if (rc == 0 && (p.l2_len != 14 && p.l2_len != 18))
        abort();
    vsw_decision d;
    now += 1000;
    /* the class vsw_frame_tc foresees is the one vsw_process gives, or -1
     * for the drops before egress (the adapter's TX rings rely on it) */
    int ptc = vsw_frame_tc(sw, port, frame, len, now);
    unsigned n = vsw_process(sw, port, frame, len, now, &d);
    if ((n == 0) != (d.drop != VSW_DROP_NONE))
        abort();
    if (d.drop == VSW_DROP_NONE || d.drop == VSW_DROP_METER || d.drop == VSW_DROP_NO_DEST ?
        ptc != d.tc : ptc != -1)
        abort();
    if (rc != 0 && port < 6 && d.drop != VSW_DROP_MALFORMED && d.drop != VSW_DROP_LINK_DOWN)
        abort();
    for (unsigned e = 0; e < VSW_MAX_PORTS && n; e++) {
        if (!vsw_portset_has(&d.egress, e))
            continue;
        if (e == port && e != d.mirror_port)
            abort();                           /* never reflected */
        size_t cap = len + 4;
        uint8_t *out = malloc(cap);
        size_t ol = vsw_egress_frame(sw, &d, e, frame, len, out, cap);
        if (ol == 0 || ol > cap)
            abort();
        /* a tag written (inserted or kept) must carry the switch VID; a
         * stripped frame is 4 bytes shorter (QinQ inner tags pass as is) */
        int in_tagged = len >= 18 && frame[12] == 0x81 && frame[13] == 0x00;
        vsw_pkt q;
        if (d.vlan_act == VSW_VLAN_ACT_PUSH) {
            /* the frame whole after its MACs, and the pushed VLAN's tag
             * outside it unless the port leaves that VLAN untagged (the
             * mirror always gets it) */
            if (ol == len + 4 ? vsw_parse(out, ol, &q) != 0 || !q.tagged || q.vid != d.vid :
                ol != len || e == d.mirror_port)
                abort();
            if (memcmp(out + (ol - len) + 12, frame + 12, len - 12))
                abort();
            free(out);
            continue;
        }
        if (d.vlan_act == VSW_VLAN_ACT_POP && (!in_tagged || d.rule != 4))
            abort();                           /* nothing to pop, or not its rule */
        if (e == d.mirror_port && d.vlan_act == VSW_VLAN_ACT_POP && ol != len - 4)
            abort();
        if (e != d.mirror_port && ol == len + (in_tagged ? 0u : 4u) &&
            (vsw_parse(out, ol, &q) != 0 || !q.tagged || q.vid != d.vid))
            abort();
        if (e != d.mirror_port && ol != len + (in_tagged ? 0u : 4u) &&
            !(in_tagged ? ol == len - 4 : ol == len))
            abort();
        free(out);
    }
    free(frame);
    return 0;
}
