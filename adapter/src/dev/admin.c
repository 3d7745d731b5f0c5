/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * admin.c - the PF admin queue and per-VF configuration store (see
 * vfw_admin.h and include/vfwarp/vfwarp_admin.h).
 *
 * Descriptors are decoded byte-wise (little endian) at the offsets of the
 * structs in vfwarp_admin.h, so the device model is right on any host.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "admin_internal.h"

#define D_OPCODE  offsetof(struct vfw_aq_desc, opcode)
#define D_FLAGS   offsetof(struct vfw_aq_desc, flags)
#define D_STATUS  offsetof(struct vfw_aq_desc, status)
#define D_VF      offsetof(struct vfw_aq_desc, vf)
#define D_U       offsetof(struct vfw_aq_desc, u)
#define P(type, field) (D_U + offsetof(struct type, field))

static void vf_cfg_default(struct vfw_vf_cfg *c)
{
    uint32_t gen = c->gen;

    memset(c, 0, sizeof(*c));
    c->spoofchk = true;
    c->link_state = VFW_LINK_STATE_AUTO;
    c->gen = gen + 1;
}

int vfw_admin_init(struct vfw_admin *a, const struct vfw_admin_ops *ops,
                   uint16_t total_vfs)
{
    memset(a, 0, sizeof(*a));
    if (!ops || !ops->dma_read || !ops->dma_write ||
        total_vfs > VFW_FUNC_MAX_VFS) {
        return -1;
    }
    a->ops = *ops;
    a->total_vfs = total_vfs;
    vfw_admin_reset(a);
    return 0;
}

void vfw_admin_reset(struct vfw_admin *a)
{
    a->base = 0;
    a->len = 0;
    a->head = a->tail = 0;
    a->status = 0;
    a->num_vfs = 0;
    for (unsigned i = 0; i < VFW_FUNC_MAX_VFS; i++) {
        vf_cfg_default(&a->vf[i]);
    }
}

void vfw_admin_set_num_vfs(struct vfw_admin *a, uint16_t num_vfs)
{
    uint16_t n = num_vfs < a->total_vfs ? num_vfs : a->total_vfs;

    /* VFs that went away forget their config (as a removed VF would),
     * their leaf in the rate tree too. */
    for (unsigned i = n; i < a->num_vfs && i < VFW_FUNC_MAX_VFS; i++) {
        vf_cfg_default(&a->vf[i]);
        admin_qos_vf_gone(a, i);
        if (a->ops.vf_cfg_changed) {
            a->ops.vf_cfg_changed(a->ops.opaque, i, &a->vf[i]);
        }
    }
    a->num_vfs = n;
}

bool vfw_admin_owns(uint64_t addr)
{
    return addr >= VFW_REGWIN_ADMINQ && addr < VFW_REGWIN_MBOX;
}

const struct vfw_vf_cfg *vfw_admin_vf_cfg(const struct vfw_admin *a,
                                          unsigned vf)
{
    return vf < a->total_vfs ? &a->vf[vf] : NULL;
}

struct vfw_vf_stats *vfw_admin_vf_stats(struct vfw_admin *a, unsigned vf)
{
    return vf < a->total_vfs ? &a->stats[vf] : NULL;
}

bool vfw_admin_read(const struct vfw_admin *a, uint64_t addr, unsigned size,
                    uint32_t *val)
{
    *val = 0;
    if (size != 4 || (addr & 3) || !vfw_admin_owns(addr)) {
        return false;
    }
    switch (addr) {
    case VFW_REG_AQ_BASE_LO:
        *val = (uint32_t)a->base;
        break;
    case VFW_REG_AQ_BASE_HI:
        *val = (uint32_t)(a->base >> 32);
        break;
    case VFW_REG_AQ_LEN:
        *val = a->len;
        break;
    case VFW_REG_AQ_HEAD:
        *val = a->head;
        break;
    case VFW_REG_AQ_TAIL:
        *val = a->tail;
        break;
    case VFW_REG_AQ_CTRL:
        *val = (a->status & VFW_AQ_STATUS_ENABLED) ? VFW_AQ_CTRL_ENABLE : 0;
        break;
    case VFW_REG_AQ_STATUS:
        *val = a->status;
        break;
    case VFW_REG_AQ_CMDS_OK:
        *val = a->cmds_ok;
        break;
    case VFW_REG_AQ_CMDS_ERR:
        *val = a->cmds_err;
        break;
    default:
        break;
    }
    return true;
}

static bool vf_ok(const struct vfw_admin *a, uint16_t vf)
{
    return vf < a->num_vfs && vf < a->total_vfs;
}

/* Does VF config `a` differ from `b` (gen aside)? */
static bool vf_cfg_differs(const struct vfw_vf_cfg *a,
                           const struct vfw_vf_cfg *b)
{
    return memcmp(a->mac, b->mac, 6) || a->vlan != b->vlan ||
           a->qos != b->qos || a->spoofchk != b->spoofchk ||
           a->trust != b->trust || a->link_state != b->link_state ||
           a->min_rate != b->min_rate || a->max_rate != b->max_rate ||
           memcmp(a->vlan_filter, b->vlan_filter, sizeof(a->vlan_filter)) ||
           a->rx_mode != b->rx_mode || a->mc_count != b->mc_count ||
           memcmp(a->mc, b->mc, sizeof(a->mc));
}

/* Commit `n` into VF `vf`'s config; bumps gen only if something changed. */
void admin_vf_commit(struct vfw_admin *a, uint16_t vf,
                      const struct vfw_vf_cfg *n)
{
    struct vfw_vf_cfg *c = &a->vf[vf];

    if (vf_cfg_differs(c, n)) {
        uint32_t gen = c->gen;

        *c = *n;
        c->gen = gen + 1;
        if (a->ops.vf_cfg_changed) {
            a->ops.vf_cfg_changed(a->ops.opaque, vf, c);
        }
    }
}

/* Count the VLAN filters that are on. */
static uint16_t vlan_filter_count(const struct vfw_vf_cfg *c)
{
    uint16_t n = 0;

    for (size_t i = 0; i < sizeof(c->vlan_filter); i++) {
        n += (uint16_t)__builtin_popcount(c->vlan_filter[i]);
    }
    return n;
}

static uint16_t exec_set(struct vfw_admin *a, uint16_t op, uint16_t vf,
                         const uint8_t *d)
{
    struct vfw_vf_cfg n = a->vf[vf];

    switch (op) {
    case VFW_AQ_OP_SET_VF_MAC: {
        const uint8_t *mac = d + P(vfw_aq_vf_mac, mac);

        if (!vfw_all_zero(d + P(vfw_aq_vf_mac, rsvd), 2) || (mac[0] & 1)) {
            return VFW_AQ_S_INVAL;  /* multicast/broadcast MAC */
        }
        memcpy(n.mac, mac, 6);
        break;
    }
    case VFW_AQ_OP_SET_VF_VLAN: {
        uint16_t vid = vfw_ld_le16(d + P(vfw_aq_vf_vlan, vid));
        uint8_t qos = d[P(vfw_aq_vf_vlan, qos)];
        uint16_t proto = vfw_ld_le16(d + P(vfw_aq_vf_vlan, proto));

        if (d[P(vfw_aq_vf_vlan, rsvd)] ||
            vfw_ld_le16(d + P(vfw_aq_vf_vlan, rsvd2))) {
            return VFW_AQ_S_INVAL;
        }
        if (vid > VFW_VLAN_VID_MAX || qos > VFW_VLAN_QOS_MAX) {
            return VFW_AQ_S_RANGE;
        }
        if (proto != 0 && proto != VFW_VLAN_PROTO_8021Q) {
            return VFW_AQ_S_UNSUPPORTED;
        }
        n.vlan = vid;
        n.qos = qos;
        break;
    }
    case VFW_AQ_OP_SET_VF_SPOOFCHK:
    case VFW_AQ_OP_SET_VF_TRUST: {
        uint8_t en = d[P(vfw_aq_vf_bool, enable)];

        if (en > 1 || !vfw_all_zero(d + P(vfw_aq_vf_bool, rsvd), 3)) {
            return VFW_AQ_S_INVAL;
        }
        if (op == VFW_AQ_OP_SET_VF_SPOOFCHK) {
            n.spoofchk = en;
        } else {
            n.trust = en;
        }
        break;
    }
    case VFW_AQ_OP_SET_VF_LINK_STATE: {
        uint8_t st = d[P(vfw_aq_vf_link, state)];

        if (!vfw_all_zero(d + P(vfw_aq_vf_link, rsvd), 3)) {
            return VFW_AQ_S_INVAL;
        }
        if (st > VFW_LINK_STATE_DISABLE) {
            return VFW_AQ_S_RANGE;
        }
        n.link_state = st;
        break;
    }
    case VFW_AQ_OP_SET_VF_RATE: {
        uint32_t min = vfw_ld_le32(d + P(vfw_aq_vf_rate, min_mbps));
        uint32_t max = vfw_ld_le32(d + P(vfw_aq_vf_rate, max_mbps));

        uint16_t st;

        if (min > VFW_UPLINK_SPEED_MBPS || max > VFW_UPLINK_SPEED_MBPS ||
            (max && min > max)) {
            return VFW_AQ_S_RANGE;
        }
        /* 2.1: the VF's leaf in the rate tree, refused if oversubscribed */
        st = admin_qos_vf_rate(a, vf, min, max);
        if (st != VFW_AQ_S_OK) {
            return st;
        }
        n.min_rate = min;
        n.max_rate = max;
        break;
    }
    case VFW_AQ_OP_SET_VF_VLAN_FILTER: {
        uint16_t vid = vfw_ld_le16(d + P(vfw_aq_vf_vlan_filter, vid));
        uint8_t on = d[P(vfw_aq_vf_vlan_filter, on)];

        if (on > 1 || d[P(vfw_aq_vf_vlan_filter, rsvd)]) {
            return VFW_AQ_S_INVAL;
        }
        if (vid < 1 || vid > VFW_VLAN_VID_MAX) {
            return VFW_AQ_S_RANGE;
        }
        if (on) {
            n.vlan_filter[vid / 8] |= (uint8_t)(1u << (vid % 8));
        } else {
            n.vlan_filter[vid / 8] &= (uint8_t)~(1u << (vid % 8));
        }
        break;
    }
    case VFW_AQ_OP_SET_VF_RX_MODE: {
        uint8_t flags = d[P(vfw_aq_vf_rx_mode, flags)];
        uint8_t cnt = d[P(vfw_aq_vf_rx_mode, mc_count)];
        const uint8_t *mc = d + P(vfw_aq_vf_rx_mode, mc);

        if ((flags & ~(VFW_RXM_ALLMULTI | VFW_RXM_PROMISC)) ||
            vfw_ld_le16(d + P(vfw_aq_vf_rx_mode, rsvd))) {
            return VFW_AQ_S_INVAL;
        }
        if (cnt > VFW_MC_FILTER_MAX) {
            return VFW_AQ_S_RANGE;
        }
        for (unsigned i = 0; i < VFW_MC_FILTER_MAX; i++) {
            /* entries in use are group addresses, the rest all zero */
            if (i < cnt ? !(mc[6 * i] & 1) : !vfw_all_zero(mc + 6 * i, 6)) {
                return VFW_AQ_S_INVAL;
            }
        }
        n.rx_mode = flags;
        n.mc_count = cnt;
        memcpy(n.mc, mc, sizeof(n.mc));
        break;
    }
    case VFW_AQ_OP_CLEAR_VF_FILTERS:
        if (!vfw_all_zero(d + D_U, sizeof(((struct vfw_aq_desc *)0)->u))) {
            return VFW_AQ_S_INVAL;
        }
        memset(n.vlan_filter, 0, sizeof(n.vlan_filter));
        n.rx_mode = 0;
        n.mc_count = 0;
        memset(n.mc, 0, sizeof(n.mc));
        break;
    default:
        return VFW_AQ_S_BAD_OPCODE;
    }
    admin_vf_commit(a, vf, &n);
    return VFW_AQ_S_OK;
}

/* struct vfw_aq_rdma_quota <-> descriptor bytes at `p` (LE u32 each) */
#define RQ_FIELDS(X) X(qp) X(cq) X(mr) X(pd) X(mr_pages) X(conn)

static void rq_load(struct vfw_aq_rdma_quota *q, const uint8_t *p)
{
#define X(f) q->f = vfw_ld_le32(p + offsetof(struct vfw_aq_rdma_quota, f));
    RQ_FIELDS(X)
#undef X
}

static void rq_store(uint8_t *p, const struct vfw_aq_rdma_quota *q)
{
#define X(f) vfw_st_le32(p + offsetof(struct vfw_aq_rdma_quota, f), q->f);
    RQ_FIELDS(X)
#undef X
}

/* SET_VF_RDMA_QUOTA / GET_VF_RDMA: the admin queue validates the
 * descriptor; the RNIC (ops) judges the values and owns the quota. */
static uint16_t exec_rdma(struct vfw_admin *a, uint16_t op, uint16_t vf,
                          uint8_t *d)
{
    uint8_t *uq = d + P(vfw_aq_vf_rdma, q);
    uint8_t *uu = d + P(vfw_aq_vf_rdma, used);
    struct vfw_aq_rdma_quota q, used;
    int rc;

    if (!vf_ok(a, vf)) {
        return VFW_AQ_S_BAD_VF;
    }
    if (op == VFW_AQ_OP_SET_VF_RDMA_QUOTA) {
        if (!vfw_all_zero(uu, sizeof(struct vfw_aq_rdma_quota))) {
            return VFW_AQ_S_INVAL;
        }
        if (!a->ops.rdma_quota_set) {
            return VFW_AQ_S_UNSUPPORTED;
        }
        rq_load(&q, uq);
        rc = a->ops.rdma_quota_set(a->ops.opaque, vf, &q);
        return rc < 0 || rc > 0xffff ? VFW_AQ_S_INVAL : (uint16_t)rc;
    }
    if (!a->ops.rdma_quota_get) {
        return VFW_AQ_S_UNSUPPORTED;
    }
    memset(&q, 0, sizeof(q));
    memset(&used, 0, sizeof(used));
    rc = a->ops.rdma_quota_get(a->ops.opaque, vf, &q, &used);
    if (rc != VFW_AQ_S_OK) {
        return rc < 0 || rc > 0xffff ? VFW_AQ_S_INVAL : (uint16_t)rc;
    }
    memset(d + D_U, 0, sizeof(((struct vfw_aq_desc *)0)->u));
    rq_store(uq, &q);
    rq_store(uu, &used);
    return VFW_AQ_S_OK;
}

uint16_t vfw_admin_exec(struct vfw_admin *a, uint8_t d[VFW_AQ_DESC_SIZE])
{
    uint16_t op = vfw_ld_le16(d + D_OPCODE);
    uint16_t vf = vfw_ld_le16(d + D_VF);
    uint8_t *u = d + D_U;
    uint16_t st;

    switch (op) {
    case VFW_AQ_OP_NOP:
        st = VFW_AQ_S_OK;
        break;
    case VFW_AQ_OP_SET_VF_MAC:
    case VFW_AQ_OP_SET_VF_VLAN:
    case VFW_AQ_OP_SET_VF_SPOOFCHK:
    case VFW_AQ_OP_SET_VF_TRUST:
    case VFW_AQ_OP_SET_VF_LINK_STATE:
    case VFW_AQ_OP_SET_VF_RATE:
    case VFW_AQ_OP_SET_VF_VLAN_FILTER:
    case VFW_AQ_OP_SET_VF_RX_MODE:
    case VFW_AQ_OP_CLEAR_VF_FILTERS:
        st = vf_ok(a, vf) ? exec_set(a, op, vf, d) : VFW_AQ_S_BAD_VF;
        break;
    case VFW_AQ_OP_GET_VF_CONFIG: {
        const struct vfw_vf_cfg *c = &a->vf[vf < a->total_vfs ? vf : 0];

        if (!vf_ok(a, vf)) {
            st = VFW_AQ_S_BAD_VF;
            break;
        }
        memset(u, 0, sizeof(((struct vfw_aq_desc *)0)->u));
        memcpy(d + P(vfw_aq_vf_config, mac), c->mac, 6);
        vfw_st_le16(d + P(vfw_aq_vf_config, vid), c->vlan);
        vfw_st_le16(d + P(vfw_aq_vf_config, proto), VFW_VLAN_PROTO_8021Q);
        d[P(vfw_aq_vf_config, qos)] = c->qos;
        d[P(vfw_aq_vf_config, spoofchk)] = c->spoofchk;
        d[P(vfw_aq_vf_config, trust)] = c->trust;
        d[P(vfw_aq_vf_config, link_state)] = c->link_state;
        d[P(vfw_aq_vf_config, rx_mode)] = c->rx_mode;
        d[P(vfw_aq_vf_config, mc_count)] = c->mc_count;
        vfw_st_le16(d + P(vfw_aq_vf_config, vlan_filters), vlan_filter_count(c));
        vfw_st_le32(d + P(vfw_aq_vf_config, min_mbps), c->min_rate);
        vfw_st_le32(d + P(vfw_aq_vf_config, max_mbps), c->max_rate);
        vfw_st_le32(d + P(vfw_aq_vf_config, gen), c->gen);
        st = VFW_AQ_S_OK;
        break;
    }
    case VFW_AQ_OP_GET_VF_STATS: {
        const struct vfw_vf_stats *s;

        if (!vf_ok(a, vf)) {
            st = VFW_AQ_S_BAD_VF;
            break;
        }
        if (a->ops.vf_stats) {
            a->ops.vf_stats(a->ops.opaque, vf, &a->stats[vf]);
        }
        s = &a->stats[vf];
        vfw_st_le64(d + P(vfw_aq_vf_stats, rx_packets), s->rx_packets);
        vfw_st_le64(d + P(vfw_aq_vf_stats, tx_packets), s->tx_packets);
        vfw_st_le64(d + P(vfw_aq_vf_stats, rx_bytes), s->rx_bytes);
        vfw_st_le64(d + P(vfw_aq_vf_stats, tx_bytes), s->tx_bytes);
        vfw_st_le64(d + P(vfw_aq_vf_stats, rx_dropped), s->rx_dropped);
        vfw_st_le64(d + P(vfw_aq_vf_stats, tx_dropped), s->tx_dropped);
        st = VFW_AQ_S_OK;
        break;
    }
    case VFW_AQ_OP_SET_VF_RDMA_QUOTA:
    case VFW_AQ_OP_GET_VF_RDMA:
        st = exec_rdma(a, op, vf, d);
        break;
    default:
        if (admin_qos_opcode(op)) {
            st = admin_qos_exec(a, op, d);
            break;
        }
        if (admin_esw_opcode(op)) {
            st = admin_esw_exec(a, op, d);
            break;
        }
        st = VFW_AQ_S_BAD_OPCODE;
        break;
    }
    vfw_st_le16(d + D_STATUS, st);
    vfw_st_le16(d + D_FLAGS, (uint16_t)(VFW_AQ_F_DONE |
                                 (st != VFW_AQ_S_OK ? VFW_AQ_F_ERR : 0)));
    if (st == VFW_AQ_S_OK) {
        a->cmds_ok++;
    } else {
        a->cmds_err++;
    }
    return st;
}

/* Run descriptors HEAD..TAIL; at most LEN of them per doorbell. */
static void run_ring(struct vfw_admin *a)
{
    uint8_t d[VFW_AQ_DESC_SIZE];

    for (uint32_t n = 0; n < VFW_AQ_MAX_LEN && a->len &&
                         a->head != a->tail; n++) {
        uint64_t addr = a->base + (uint64_t)a->head * VFW_AQ_DESC_SIZE;

        if (a->ops.dma_read(a->ops.opaque, addr, d, sizeof(d))) {
            goto dma_err;
        }
        vfw_admin_exec(a, d);
        if (a->ops.dma_write(a->ops.opaque, addr, d, sizeof(d))) {
            goto dma_err;
        }
        a->head = (a->head + 1) % a->len;
    }
    return;
dma_err:
    a->status = (a->status & ~VFW_AQ_STATUS_ENABLED) | VFW_AQ_STATUS_DMA_ERR;
}

bool vfw_admin_write(struct vfw_admin *a, uint64_t addr, uint64_t val,
                     unsigned size)
{
    bool en = a->status & VFW_AQ_STATUS_ENABLED;
    uint32_t v = (uint32_t)val;

    if (size != 4 || (addr & 3) || !vfw_admin_owns(addr)) {
        return false;
    }
    switch (addr) {
    case VFW_REG_AQ_BASE_LO:
        if (!en) {
            a->base = (a->base & ~0xffffffffull) | v;
        }
        break;
    case VFW_REG_AQ_BASE_HI:
        if (!en) {
            a->base = (a->base & 0xffffffffull) | (uint64_t)v << 32;
        }
        break;
    case VFW_REG_AQ_LEN:
        if (!en) {
            a->len = v;
        }
        break;
    case VFW_REG_AQ_TAIL:
        if (!en) {
            break;
        }
        if (v >= a->len) {
            a->status |= VFW_AQ_STATUS_TAIL_ERR;
            break;
        }
        a->tail = v;
        run_ring(a);
        break;
    case VFW_REG_AQ_CTRL:
        if (!(v & VFW_AQ_CTRL_ENABLE)) {
            a->status &= ~VFW_AQ_STATUS_ENABLED;
            break;
        }
        if (en) {
            break;
        }
        a->status = 0;
        a->head = a->tail = 0;
        if (a->len < 1 || a->len > VFW_AQ_MAX_LEN ||
            (a->base & (VFW_AQ_BASE_ALIGN - 1)) ||
            a->base > UINT64_MAX - (uint64_t)a->len * VFW_AQ_DESC_SIZE) {
            a->status = VFW_AQ_STATUS_CFG_ERR;
            break;
        }
        a->status = VFW_AQ_STATUS_ENABLED;
        break;
    default:
        break;  /* read-only or reserved */
    }
    return true;
}
