/* acl_compile.c - ACL rule validation, conversion of rules to the ternary
 * (value/mask) form over the classifier key, and the linear-scan reference
 * classifier.  The decision trees are built in acl_tree.c. */
#include "vsw_internal.h"
#include <stdlib.h>
#include <string.h>

static uint64_t be_bytes(const uint8_t *b, int n)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x = (x << 8) | b[i];
    return x;
}

/* Top `len` bits set of a 64-bit word (len 0..64). */
static uint64_t top_mask(unsigned len)
{
    return len == 0 ? 0 : len >= 64 ? ~0ull : ~0ull << (64 - len);
}

static int check_prefix(const uint8_t *ip, unsigned plen, unsigned ver,
                        const char *which, int idx, vsw_error *err)
{
    unsigned bits = ver == 4 ? 32 : 128;
    if (plen > bits)
        return vsw_err(err, -EINVAL, idx, "rule %d: %s prefix length %u > %u",
                       idx, which, plen, bits);
    for (unsigned b = plen; b < bits; b++)
        if (ip[b / 8] & (0x80 >> (b % 8)))
            return vsw_err(err, -EINVAL, idx,
                           "rule %d: %s address has bits set beyond /%u",
                           idx, which, plen);
    return 0;
}

/* Prefix approximation of [lo, hi] in 16 bits: the common leading bits.
 * Returns 1 if the approximation is exact. */
static int range_prefix(uint16_t lo, uint16_t hi, uint64_t *val, uint64_t *mask)
{
    unsigned d = (unsigned)(lo ^ hi), m = 0xffff;
    while (d) {
        m = (m << 1) & 0xffff;
        d >>= 1;
    }
    *mask = m;
    *val = lo & m;
    return (lo & ~m & 0xffff) == 0 && ((hi | m) & 0xffff) == 0xffff;
}

int vsw_rule_convert(const vsw_rule *r, int idx, unsigned num_ports,
                     vsw_crule *c, vsw_error *err)
{
    memset(c, 0, sizeof(*c));
    uint32_t mt = r->match;
    if (mt & ~(uint32_t)VSW_M_ALL)
        return vsw_err(err, -EINVAL, idx, "rule %d: unknown match bits 0x%x",
                       idx, mt & ~(uint32_t)VSW_M_ALL);
    if (r->verdict > VSW_ACT_MAX)
        return vsw_err(err, -EINVAL, idx, "rule %d: unknown verdict %u", idx,
                       r->verdict);
    if (r->flags & ~(uint32_t)VSW_ACTF_ALL)
        return vsw_err(err, -EINVAL, idx, "rule %d: unknown action flags 0x%x",
                       idx, r->flags & ~(uint32_t)VSW_ACTF_ALL);
    if ((r->flags & VSW_ACTF_SET_TC) && r->set_tc >= VSW_NUM_TC)
        return vsw_err(err, -EINVAL, idx, "rule %d: traffic class %u > 7", idx,
                       r->set_tc);
    if ((r->flags & VSW_ACTF_MIRROR) && r->mirror_port >= num_ports)
        return vsw_err(err, -EINVAL, idx, "rule %d: mirror port %u does not exist",
                       idx, r->mirror_port);
    if ((r->flags & VSW_ACTF_METER) && (r->meter == 0 || r->meter >= VSW_MAX_METERS))
        return vsw_err(err, -EINVAL, idx, "rule %d: meter id %u out of range",
                       idx, r->meter);
    if ((r->flags & VSW_ACTF_REDIRECT) && r->redirect_port >= num_ports)
        return vsw_err(err, -EINVAL, idx, "rule %d: redirect port %u does not exist",
                       idx, r->redirect_port);
    if ((r->flags & VSW_ACTF_REDIRECT) && r->verdict == VSW_ACT_DROP)
        return vsw_err(err, -EINVAL, idx, "rule %d: a dropping rule cannot redirect",
                       idx);
    if ((r->flags & VSW_ACTF_VLAN_PUSH) && (r->flags & VSW_ACTF_VLAN_POP))
        return vsw_err(err, -EINVAL, idx, "rule %d: VLAN push and pop together",
                       idx);
    if ((r->flags & VSW_ACTF_VLAN_PUSH) &&
        (r->vlan_vid < 1 || r->vlan_vid > 4094 || r->vlan_pcp > 7))
        return vsw_err(err, -EINVAL, idx,
                       "rule %d: VLAN push of VID %u priority %u (1..4094, 0..7)",
                       idx, r->vlan_vid, r->vlan_pcp);
    if (r->flags & VSW_ACTF_VLAN_PUSH)
        c->vlan_tci = (uint16_t)((unsigned)r->vlan_pcp << 13 | r->vlan_vid);
    c->verdict = r->verdict;
    c->flags = r->flags;
    c->set_tc = r->set_tc;
    c->mirror_port = r->mirror_port;
    c->meter = r->meter;
    c->redirect_port = r->redirect_port;
    c->index = (uint32_t)idx;
    c->exact = 1;

    int is_ip = 0, l4 = 0;
    if (mt & VSW_M_IN_PORT) {
        if (r->in_port >= num_ports)
            return vsw_err(err, -EINVAL, idx, "rule %d: in_port %u does not exist",
                           idx, r->in_port);
        c->v[0] |= (uint64_t)r->in_port << 56;
        c->m[0] |= 0xffull << 56;
    }
    if (mt & VSW_M_OUT_PORT) {
        unsigned op;
        if (r->out_port == VSW_PORT_FLOOD)
            op = 0xfe;
        else if (r->out_port < num_ports)
            op = r->out_port;
        else
            return vsw_err(err, -EINVAL, idx, "rule %d: out_port %u does not exist",
                           idx, r->out_port);
        c->v[0] |= (uint64_t)op << 48;
        c->m[0] |= 0xffull << 48;
    }
    if (mt & VSW_M_VLAN) {
        if (r->vid > 4095)
            return vsw_err(err, -EINVAL, idx, "rule %d: VLAN id %u > 4095", idx, r->vid);
        c->v[0] |= (uint64_t)r->vid << 32;
        c->m[0] |= 0xffffull << 32;
    }
    if (mt & VSW_M_ETHERTYPE) {
        c->v[0] |= (uint64_t)r->ethertype << 16;
        c->m[0] |= 0xffffull << 16;
    }
    if (mt & (VSW_M_SRC_MAC | VSW_M_DST_MAC)) {
        for (int s = 0; s < 2; s++) {
            if (!(mt & (s ? VSW_M_DST_MAC : VSW_M_SRC_MAC)))
                continue;
            const uint8_t *mac = s ? r->dst_mac : r->src_mac;
            const uint8_t *msk = s ? r->dst_mac_mask : r->src_mac_mask;
            uint64_t v = be_bytes(mac, 6), m = be_bytes(msk, 6);
            if (v & ~m)
                return vsw_err(err, -EINVAL, idx,
                               "rule %d: %s MAC has bits outside its mask", idx,
                               s ? "dst" : "src");
            c->v[1 + s] |= v << 16;
            c->m[1 + s] |= m << 16;
        }
    }
    if (mt & (VSW_M_SRC_IP | VSW_M_DST_IP | VSW_M_IP_VERSION)) {
        unsigned ver = r->ip_version;
        if (ver != 4 && ver != 6)
            return vsw_err(err, -EINVAL, idx, "rule %d: ip_version must be 4 or 6",
                           idx);
        c->v[0] |= ver;
        c->m[0] |= 0x0f;
        is_ip = 1;
        for (int s = 0; s < 2; s++) {
            if (!(mt & (s ? VSW_M_DST_IP : VSW_M_SRC_IP)))
                continue;
            const uint8_t *ip = s ? r->dst_ip : r->src_ip;
            unsigned plen = s ? r->dst_plen : r->src_plen;
            int rc = check_prefix(ip, plen, ver, s ? "dst" : "src", idx, err);
            if (rc)
                return rc;
            int hi = s ? VSW_KW_DIP_HI : VSW_KW_SIP_HI, lo = s ? VSW_KW_DIP_LO : VSW_KW_SIP_LO;
            c->v[hi] = be_bytes(ip, 8);
            c->v[lo] = ver == 6 ? be_bytes(ip + 8, 8) : 0;
            c->m[hi] = top_mask(plen);
            c->m[lo] = plen > 64 ? top_mask(plen - 64) : 0;
        }
    }
    if (mt & VSW_M_IP_PROTO) {
        c->v[0] |= (uint64_t)r->ip_proto << 8;
        c->m[0] |= 0xffull << 8;
        is_ip = 1;
    }
    if (mt & VSW_M_DSCP) {
        if (r->dscp > 63 || r->dscp_mask > 63 || (r->dscp & ~r->dscp_mask))
            return vsw_err(err, -EINVAL, idx, "rule %d: bad DSCP %u/%u", idx,
                           r->dscp, r->dscp_mask);
        c->v[7] |= (uint64_t)r->dscp << 48;
        c->m[7] |= (uint64_t)r->dscp_mask << 48;
        is_ip = 1;
    }
    if (mt & VSW_M_TCP_FLAGS) {
        if (r->tcp_flags & ~r->tcp_flags_mask)
            return vsw_err(err, -EINVAL, idx,
                           "rule %d: TCP flags have bits outside the mask", idx);
        if ((mt & VSW_M_IP_PROTO) && r->ip_proto != 6)
            return vsw_err(err, -EINVAL, idx,
                           "rule %d: TCP flags with ip_proto %u", idx, r->ip_proto);
        c->v[7] |= (uint64_t)r->tcp_flags << 56;
        c->m[7] |= (uint64_t)r->tcp_flags_mask << 56;
        c->v[0] |= 6ull << 8;
        c->m[0] |= 0xffull << 8;
        is_ip = l4 = 1;
    }
    for (int s = 0; s < 2; s++) {
        if (!(mt & (s ? VSW_M_DPORT : VSW_M_SPORT)))
            continue;
        uint16_t lo = s ? r->dport_lo : r->sport_lo, hi = s ? r->dport_hi : r->sport_hi;
        if (lo > hi)
            return vsw_err(err, -EINVAL, idx, "rule %d: %s port range %u-%u is inverted",
                           idx, s ? "dst" : "src", lo, hi);
        uint64_t v, m;
        if (!range_prefix(lo, hi, &v, &m)) {
            c->exact = 0;
            c->ranges |= (uint8_t)(1u << s);
        }
        if (s) { c->dp_lo = lo; c->dp_hi = hi; } else { c->sp_lo = lo; c->sp_hi = hi; }
        c->v[1 + s] |= v;
        c->m[1 + s] |= m;
        is_ip = l4 = 1;
    }
    if (is_ip) {
        c->v[0] |= 1ull << 7;
        c->m[0] |= 1ull << 7;
    }
    if (l4) {
        c->v[0] |= 1ull << 6;
        c->m[0] |= 1ull << 6;
    }
    return 0;
}

static int crule_cmp(const void *a, const void *b, const vsw_rule *rules)
{
    const vsw_crule *x = a, *y = b;
    uint32_t px = rules[x->index].priority, py = rules[y->index].priority;
    if (px != py)
        return px < py ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* qsort has no context argument in C11: a small merge sort instead. */
static void sort_rules(vsw_crule *a, vsw_crule *tmp, size_t n, const vsw_rule *rules)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_rules(a, tmp, h, rules);
    sort_rules(a + h, tmp, n - h, rules);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = crule_cmp(&a[j], &a[i], rules) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof(*a));
}

int vsw_acl_compile(const vsw_rule *rules, size_t n, unsigned num_ports,
                    vsw_acl **out, vsw_error *err)
{
    *out = NULL;
    if (n > VSW_ACL_MAX_RULES)
        return vsw_err(err, -E2BIG, -1, "%zu rules, at most %u supported", n,
                       VSW_ACL_MAX_RULES);
    if (n && !rules)
        return vsw_err(err, -EINVAL, -1, "NULL rule array");
    vsw_acl *a = calloc(1, sizeof(*a));
    if (!a)
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    a->nrules = n;
    a->rules = calloc(n ? n : 1, sizeof(vsw_crule));
    vsw_crule *tmp = calloc(n ? n : 1, sizeof(vsw_crule));
    if (!a->rules || !tmp) {
        free(tmp);
        vsw_acl_free(a);
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        int rc = vsw_rule_convert(&rules[i], (int)i, num_ports, &a->rules[i], err);
        if (rc) {
            free(tmp);
            vsw_acl_free(a);
            return rc;
        }
    }
    sort_rules(a->rules, tmp, n, rules);
    free(tmp);
    a->act = aligned_alloc(64, ((n ? n : 1) * sizeof(vsw_act) + 63) / 64 * 64);
    a->rank_of = malloc((n ? n : 1) * sizeof(uint32_t));
    a->nindex = n;
    if (!a->act || !a->rank_of) {
        vsw_acl_free(a);
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const vsw_crule *c = &a->rules[i];
        a->rank_of[c->index] = (uint32_t)i;
        vsw_act *r = &a->act[i];
        memset(r, 0, sizeof(*r));
        r->index = c->index;
        r->flags = c->flags;
        r->verdict = c->verdict;
        r->set_tc = c->set_tc;
        r->mirror_port = c->mirror_port;
        r->meter = c->meter;
        r->redirect_port = c->redirect_port;
    }
    a->bytes = sizeof(*a) + n * (sizeof(vsw_crule) + sizeof(vsw_act) +
                                 sizeof(uint32_t));
    if (vsw_acl_build_trees(a)) {
        vsw_acl_free(a);
        return vsw_err(err, -ENOMEM, -1, "out of memory building the classifier");
    }
    *out = a;
    return 0;
}

void vsw_acl_free(vsw_acl *a)
{
    if (!a)
        return;
    for (size_t t = 0; t < a->ntrees; t++) {
        vsw_tree *tr = &a->trees[t];
        if (tr->shared && --*tr->shared)
            continue;           /* another set still uses this tree */
        free(tr->shared);
        free(tr->mem);
        free(tr->port_root);
    }
    free(a->serial);
    free(a->rules);
    free(a->act);
    free(a->rank_of);
    free(a);
}

uint32_t vsw_acl_lookup_linear(const vsw_acl *a, const vsw_key *k)
{
    for (size_t i = 0; i < a->nrules; i++)
        if (vsw_crule_match(&a->rules[i], k))
            return (uint32_t)i;
    return UINT32_MAX;
}

int vsw_acl_check(const vsw_rule *rules, size_t n, unsigned num_ports,
                  vsw_error *err)
{
    vsw_acl *a;
    int rc = vsw_acl_compile(rules, n, num_ports, &a, err);
    vsw_acl_free(a);
    return rc;
}
