/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_admin.c - the PF admin queue (src/dev/admin.c): ring setup checks,
 * doorbell handling, every command's validation (a bad command fails alone
 * and changes nothing), config generation counter, DMA faults.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_admin.h"

#include "check.h"

/* Fake guest memory: 64 KiB at MEM_BASE. */
#define MEM_BASE 0x100000ull
static uint8_t mem[65536];
static bool dma_fail;

static int dma_rd(void *o, uint64_t addr, void *buf, size_t len)
{
    (void)o;
    if (dma_fail || addr < MEM_BASE || addr - MEM_BASE > sizeof(mem) - len) {
        return -1;
    }
    memcpy(buf, mem + (addr - MEM_BASE), len);
    return 0;
}

static int dma_wr(void *o, uint64_t addr, const void *buf, size_t len)
{
    (void)o;
    if (dma_fail || addr < MEM_BASE || addr - MEM_BASE > sizeof(mem) - len) {
        return -1;
    }
    memcpy(mem + (addr - MEM_BASE), buf, len);
    return 0;
}

static const struct vfw_admin_ops OPS = { .dma_read = dma_rd, .dma_write = dma_wr };
static struct vfw_admin A;

static uint32_t rd(uint64_t addr)
{
    uint32_t v = 0xdeadbeef;

    if (!vfw_admin_read(&A, addr, 4, &v)) {
        return 0xdeadbeef;
    }
    return v;
}

static void wr(uint64_t addr, uint32_t v)
{
    vfw_admin_write(&A, addr, v, 4);
}

static int setup(uint16_t num_vfs, uint32_t len)
{
    dma_fail = false;
    memset(mem, 0, sizeof(mem));
    if (vfw_admin_init(&A, &OPS, 128)) {
        return -1;
    }
    vfw_admin_set_num_vfs(&A, num_vfs);
    wr(VFW_REG_AQ_BASE_LO, (uint32_t)MEM_BASE);
    wr(VFW_REG_AQ_BASE_HI, 0);
    wr(VFW_REG_AQ_LEN, len);
    wr(VFW_REG_AQ_CTRL, VFW_AQ_CTRL_ENABLE);
    return rd(VFW_REG_AQ_STATUS) == VFW_AQ_STATUS_ENABLED ? 0 : -1;
}

/* Submit one command through the ring; returns its status (or 0xffff). */
static uint16_t submit(struct vfw_aq_desc *d)
{
    uint32_t tail = rd(VFW_REG_AQ_TAIL), len = rd(VFW_REG_AQ_LEN);
    uint8_t *slot = mem + tail * VFW_AQ_DESC_SIZE;

    d->flags = 0;
    memcpy(slot, d, sizeof(*d));
    wr(VFW_REG_AQ_TAIL, (tail + 1) % len);
    memcpy(d, slot, sizeof(*d));
    if (!(d->flags & VFW_AQ_F_DONE)) {
        return 0xffff;
    }
    return d->status;
}

static uint16_t cmd(uint16_t op, uint16_t vf, const void *p, size_t n)
{
    struct vfw_aq_desc d;

    memset(&d, 0, sizeof(d));
    d.opcode = op;
    d.vf = vf;
    if (p) {
        memcpy(d.u.raw, p, n);
    }
    return submit(&d);
}

static int t_defaults(void)
{
    const struct vfw_vf_cfg *c;

    CHECK(setup(4, 16) == 0);
    c = vfw_admin_vf_cfg(&A, 3);
    CHECK(c && c->spoofchk && !c->trust && c->vlan == 0 && c->gen == 1);
    CHECK(c->link_state == VFW_LINK_STATE_AUTO);
    CHECK(vfw_admin_vf_cfg(&A, 128) == NULL);
    CHECK(rd(0x0090) == 0xdeadbeef);  /* not in the window */
    CHECK(rd(VFW_REG_AQ_LEN) == 16);
    return 0;
}

static int t_ring_config(void)
{
    CHECK(vfw_admin_init(&A, &OPS, 128) == 0);
    CHECK(vfw_admin_init(&A, &OPS, 129) == -1);
    CHECK(vfw_admin_init(&A, NULL, 1) == -1);
    CHECK(vfw_admin_init(&A, &OPS, 128) == 0);
    wr(VFW_REG_AQ_LEN, 0);
    wr(VFW_REG_AQ_CTRL, 1);
    CHECK(rd(VFW_REG_AQ_STATUS) == VFW_AQ_STATUS_CFG_ERR);
    wr(VFW_REG_AQ_LEN, 257);
    wr(VFW_REG_AQ_CTRL, 1);
    CHECK(rd(VFW_REG_AQ_STATUS) == VFW_AQ_STATUS_CFG_ERR);
    wr(VFW_REG_AQ_LEN, 8);
    wr(VFW_REG_AQ_BASE_LO, 0x1020);  /* misaligned */
    wr(VFW_REG_AQ_CTRL, 1);
    CHECK(rd(VFW_REG_AQ_STATUS) == VFW_AQ_STATUS_CFG_ERR);
    wr(VFW_REG_AQ_BASE_LO, 0xffffffc0);  /* wraps past 2^64 */
    wr(VFW_REG_AQ_BASE_HI, 0xffffffff);
    wr(VFW_REG_AQ_CTRL, 1);
    CHECK(rd(VFW_REG_AQ_STATUS) == VFW_AQ_STATUS_CFG_ERR);
    CHECK(setup(4, 8) == 0);
    wr(VFW_REG_AQ_LEN, 4);  /* ignored while enabled */
    CHECK(rd(VFW_REG_AQ_LEN) == 8);
    wr(VFW_REG_AQ_TAIL, 8);  /* out of range */
    CHECK(rd(VFW_REG_AQ_STATUS) & VFW_AQ_STATUS_TAIL_ERR);
    CHECK(rd(VFW_REG_AQ_HEAD) == 0 && rd(VFW_REG_AQ_TAIL) == 0);
    CHECK(!vfw_admin_write(&A, VFW_REG_AQ_TAIL, 1, 2));  /* bad size */
    CHECK(!vfw_admin_write(&A, VFW_REG_AQ_TAIL + 1, 1, 4));
    return 0;
}

static int t_ring_wrap(void)
{
    CHECK(setup(2, 3) == 0);
    for (int i = 0; i < 10; i++) {
        CHECK(cmd(VFW_AQ_OP_NOP, 0, NULL, 0) == VFW_AQ_S_OK);
    }
    CHECK(rd(VFW_REG_AQ_HEAD) == 10 % 3);
    CHECK(rd(VFW_REG_AQ_CMDS_OK) == 10 && rd(VFW_REG_AQ_CMDS_ERR) == 0);
    /* Several descriptors per doorbell. */
    memset(mem, 0, 3 * VFW_AQ_DESC_SIZE);
    wr(VFW_REG_AQ_TAIL, (rd(VFW_REG_AQ_TAIL) + 2) % 3);
    CHECK(rd(VFW_REG_AQ_HEAD) == rd(VFW_REG_AQ_TAIL));
    CHECK(rd(VFW_REG_AQ_CMDS_OK) == 12);
    return 0;
}

static int t_mac(void)
{
    uint8_t m[8] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0};
    uint8_t bad[8] = {0x01, 0, 0x5e, 0, 0, 1, 0, 0};
    const struct vfw_vf_cfg *c;

    CHECK(setup(4, 16) == 0);
    c = vfw_admin_vf_cfg(&A, 1);
    CHECK(cmd(VFW_AQ_OP_SET_VF_MAC, 1, m, 8) == VFW_AQ_S_OK);
    CHECK(memcmp(c->mac, m, 6) == 0 && c->gen == 2);
    CHECK(cmd(VFW_AQ_OP_SET_VF_MAC, 1, m, 8) == VFW_AQ_S_OK);
    CHECK(c->gen == 2);  /* no change, no bump */
    CHECK(cmd(VFW_AQ_OP_SET_VF_MAC, 1, bad, 8) == VFW_AQ_S_INVAL);
    CHECK(cmd(VFW_AQ_OP_SET_VF_MAC, 4, m, 8) == VFW_AQ_S_BAD_VF);
    CHECK(cmd(VFW_AQ_OP_SET_VF_MAC, 0xffff, m, 8) == VFW_AQ_S_BAD_VF);
    m[6] = 1;
    CHECK(cmd(VFW_AQ_OP_SET_VF_MAC, 2, m, 8) == VFW_AQ_S_INVAL);
    CHECK(c->gen == 2 && vfw_admin_vf_cfg(&A, 2)->gen == 1);
    CHECK(rd(VFW_REG_AQ_CMDS_ERR) == 4);
    return 0;
}

static int t_vlan(void)
{
    struct vfw_aq_vf_vlan v = { .vid = 100, .qos = 5, .proto = 0x8100 };
    const struct vfw_vf_cfg *c;

    CHECK(setup(4, 16) == 0);
    c = vfw_admin_vf_cfg(&A, 0);
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN, 0, &v, sizeof(v)) == VFW_AQ_S_OK);
    CHECK(c->vlan == 100 && c->qos == 5 && c->gen == 2);
    v.vid = 4096;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN, 0, &v, sizeof(v)) == VFW_AQ_S_RANGE);
    v.vid = 4095;
    v.qos = 8;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN, 0, &v, sizeof(v)) == VFW_AQ_S_RANGE);
    v.qos = 7;
    v.proto = 0x88a8;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN, 0, &v, sizeof(v)) ==
          VFW_AQ_S_UNSUPPORTED);
    v.proto = 0x8100;
    v.rsvd = 1;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN, 0, &v, sizeof(v)) == VFW_AQ_S_INVAL);
    CHECK(c->vlan == 100 && c->qos == 5 && c->gen == 2);
    v.rsvd = 0;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN, 0, &v, sizeof(v)) == VFW_AQ_S_OK);
    CHECK(c->vlan == 4095 && c->qos == 7 && c->gen == 3);
    return 0;
}

static int t_flags_link_rate(void)
{
    uint8_t b[4] = {0};
    struct vfw_aq_vf_rate r = { 100, 1000 };
    const struct vfw_vf_cfg *c;

    CHECK(setup(4, 16) == 0);
    c = vfw_admin_vf_cfg(&A, 3);
    b[0] = 0;
    CHECK(cmd(VFW_AQ_OP_SET_VF_SPOOFCHK, 3, b, 4) == VFW_AQ_S_OK);
    CHECK(!c->spoofchk);
    b[0] = 1;
    CHECK(cmd(VFW_AQ_OP_SET_VF_TRUST, 3, b, 4) == VFW_AQ_S_OK);
    CHECK(c->trust);
    b[0] = 2;
    CHECK(cmd(VFW_AQ_OP_SET_VF_TRUST, 3, b, 4) == VFW_AQ_S_INVAL);
    CHECK(cmd(VFW_AQ_OP_SET_VF_LINK_STATE, 3, b, 4) == VFW_AQ_S_OK);
    CHECK(c->link_state == VFW_LINK_STATE_DISABLE);
    b[0] = 3;
    CHECK(cmd(VFW_AQ_OP_SET_VF_LINK_STATE, 3, b, 4) == VFW_AQ_S_RANGE);
    CHECK(cmd(VFW_AQ_OP_SET_VF_RATE, 3, &r, sizeof(r)) == VFW_AQ_S_OK);
    CHECK(c->min_rate == 100 && c->max_rate == 1000);
    r.min_mbps = 2000;
    CHECK(cmd(VFW_AQ_OP_SET_VF_RATE, 3, &r, sizeof(r)) == VFW_AQ_S_RANGE);
    r.min_mbps = 0;
    r.max_mbps = VFW_UPLINK_SPEED_MBPS + 1;
    CHECK(cmd(VFW_AQ_OP_SET_VF_RATE, 3, &r, sizeof(r)) == VFW_AQ_S_RANGE);
    r.min_mbps = 500;
    r.max_mbps = 0;  /* unlimited max with a guarantee */
    CHECK(cmd(VFW_AQ_OP_SET_VF_RATE, 3, &r, sizeof(r)) == VFW_AQ_S_OK);
    CHECK(c->min_rate == 500 && c->max_rate == 0);
    CHECK(c->gen == 6 && !c->spoofchk && c->trust);
    CHECK(cmd(0x7777, 3, NULL, 0) == VFW_AQ_S_BAD_OPCODE);
    return 0;
}

static int t_get(void)
{
    struct vfw_aq_desc d;
    uint8_t m[8] = {0x02, 1, 2, 3, 4, 5, 0, 0};
    struct vfw_vf_stats *s;

    CHECK(setup(2, 4) == 0);
    CHECK(cmd(VFW_AQ_OP_SET_VF_MAC, 1, m, 8) == VFW_AQ_S_OK);
    memset(&d, 0xee, sizeof(d));
    d.opcode = VFW_AQ_OP_GET_VF_CONFIG;
    d.vf = 1;
    d.cookie = 0x1234;
    CHECK(submit(&d) == VFW_AQ_S_OK);
    CHECK(d.cookie == 0x1234 && d.flags == VFW_AQ_F_DONE);
    CHECK(memcmp(d.u.cfg.mac, m, 6) == 0 && d.u.cfg.spoofchk == 1);
    CHECK(d.u.cfg.proto == 0x8100 && d.u.cfg.gen == 2 && d.u.cfg.rx_mode == 0);
    CHECK(d.u.cfg.mc_count == 0 && d.u.cfg.vlan_filters == 0);
    s = vfw_admin_vf_stats(&A, 1);
    CHECK(s);
    s->rx_packets = 7;
    s->tx_bytes = 1ull << 40;
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_AQ_OP_GET_VF_STATS;
    d.vf = 1;
    CHECK(submit(&d) == VFW_AQ_S_OK);
    CHECK(d.u.stats.rx_packets == 7 && d.u.stats.tx_bytes == 1ull << 40);
    d.vf = 2;
    CHECK(submit(&d) == VFW_AQ_S_BAD_VF);
    CHECK(d.flags == (VFW_AQ_F_DONE | VFW_AQ_F_ERR));
    d.opcode = VFW_AQ_OP_GET_VF_CONFIG;
    CHECK(submit(&d) == VFW_AQ_S_BAD_VF);
    /* NumVFs shrinks: the VF's commands fail. */
    vfw_admin_set_num_vfs(&A, 1);
    CHECK(cmd(VFW_AQ_OP_SET_VF_MAC, 1, m, 8) == VFW_AQ_S_BAD_VF);
    CHECK(vfw_admin_vf_cfg(&A, 1)->mac[0] == 0);  /* removed: defaults */
    CHECK(vfw_admin_vf_cfg(&A, 1)->gen == 3);
    vfw_admin_set_num_vfs(&A, 500);
    CHECK(A.num_vfs == 128);
    return 0;
}

/* The filters the PF sets on a VF's request: VLAN filter bits, RX mode
 * with its exact multicast list, and clearing both. */
static int t_filters(void)
{
    const struct vfw_vf_cfg *c;
    struct vfw_aq_vf_vlan_filter vf = { .vid = 100, .on = 1 };
    struct vfw_aq_vf_rx_mode rm;
    struct vfw_aq_desc d;
    uint32_t gen;

    CHECK(setup(2, 8) == 0);
    c = vfw_admin_vf_cfg(&A, 1);
    gen = c->gen;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN_FILTER, 1, &vf, sizeof(vf)) ==
          VFW_AQ_S_OK);
    CHECK((c->vlan_filter[100 / 8] & (1u << (100 % 8))) && c->gen == gen + 1);
    vf.vid = 4095;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN_FILTER, 1, &vf, sizeof(vf)) ==
          VFW_AQ_S_OK);
    /* again: no change, no new generation */
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN_FILTER, 1, &vf, sizeof(vf)) ==
          VFW_AQ_S_OK && c->gen == gen + 2);
    vf.vid = 0;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN_FILTER, 1, &vf, sizeof(vf)) ==
          VFW_AQ_S_RANGE);
    vf.vid = 4096;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN_FILTER, 1, &vf, sizeof(vf)) ==
          VFW_AQ_S_RANGE);
    vf.vid = 7;
    vf.on = 2;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN_FILTER, 1, &vf, sizeof(vf)) ==
          VFW_AQ_S_INVAL);
    vf.on = 1;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN_FILTER, 2, &vf, sizeof(vf)) ==
          VFW_AQ_S_BAD_VF);
    vf.vid = 100;
    vf.on = 0;
    CHECK(cmd(VFW_AQ_OP_SET_VF_VLAN_FILTER, 1, &vf, sizeof(vf)) ==
          VFW_AQ_S_OK && !(c->vlan_filter[100 / 8] & (1u << (100 % 8))));
    CHECK(c->gen == gen + 3);

    memset(&rm, 0, sizeof(rm));
    rm.flags = VFW_RXM_ALLMULTI;
    rm.mc_count = 2;
    memcpy(rm.mc[0], "\x01\x00\x5e\x00\x00\x01", 6);
    memcpy(rm.mc[1], "\x33\x33\x00\x00\x00\x01", 6);
    CHECK(cmd(VFW_AQ_OP_SET_VF_RX_MODE, 1, &rm, sizeof(rm)) == VFW_AQ_S_OK);
    CHECK(c->rx_mode == VFW_RXM_ALLMULTI && c->mc_count == 2);
    CHECK(!memcmp(c->mc[1], rm.mc[1], 6) && c->gen == gen + 4);
    /* each bad request fails alone and changes nothing */
    rm.flags = 4;
    CHECK(cmd(VFW_AQ_OP_SET_VF_RX_MODE, 1, &rm, sizeof(rm)) ==
          VFW_AQ_S_INVAL);
    rm.flags = 0;
    rm.mc_count = VFW_MC_FILTER_MAX + 1;
    CHECK(cmd(VFW_AQ_OP_SET_VF_RX_MODE, 1, &rm, sizeof(rm)) ==
          VFW_AQ_S_RANGE);
    rm.mc_count = 2;
    rm.mc[1][0] = 0x02;          /* a unicast address in the list */
    CHECK(cmd(VFW_AQ_OP_SET_VF_RX_MODE, 1, &rm, sizeof(rm)) ==
          VFW_AQ_S_INVAL);
    rm.mc_count = 1;             /* an entry past mc_count not zero */
    CHECK(cmd(VFW_AQ_OP_SET_VF_RX_MODE, 1, &rm, sizeof(rm)) ==
          VFW_AQ_S_INVAL);
    CHECK(c->rx_mode == VFW_RXM_ALLMULTI && c->mc_count == 2 &&
          c->gen == gen + 4);

    memset(&d, 0, sizeof(d));
    d.opcode = VFW_AQ_OP_GET_VF_CONFIG;
    d.vf = 1;
    CHECK(submit(&d) == VFW_AQ_S_OK);
    CHECK(d.u.cfg.rx_mode == VFW_RXM_ALLMULTI && d.u.cfg.mc_count == 2 &&
          d.u.cfg.vlan_filters == 1);

    memset(&d, 0, sizeof(d));
    d.u.raw[0] = 1;              /* CLEAR_VF_FILTERS takes no parameters */
    CHECK(cmd(VFW_AQ_OP_CLEAR_VF_FILTERS, 1, d.u.raw, 1) == VFW_AQ_S_INVAL);
    CHECK(cmd(VFW_AQ_OP_CLEAR_VF_FILTERS, 1, NULL, 0) == VFW_AQ_S_OK);
    CHECK(c->rx_mode == 0 && c->mc_count == 0 && c->mc[0][0] == 0);
    for (unsigned i = 0; i < sizeof(c->vlan_filter); i++) {
        CHECK(c->vlan_filter[i] == 0);
    }
    CHECK(c->gen == gen + 5);
    return 0;
}

static int t_dma_fault_and_reset(void)
{
    const struct vfw_vf_cfg *c;
    uint8_t b[4] = {1, 0, 0, 0};

    CHECK(setup(2, 4) == 0);
    CHECK(cmd(VFW_AQ_OP_SET_VF_TRUST, 0, b, 4) == VFW_AQ_S_OK);
    dma_fail = true;
    wr(VFW_REG_AQ_TAIL, 2);
    CHECK(rd(VFW_REG_AQ_STATUS) == VFW_AQ_STATUS_DMA_ERR);
    CHECK(rd(VFW_REG_AQ_CTRL) == 0);
    /* A ring pointing outside memory behaves the same. */
    dma_fail = false;
    wr(VFW_REG_AQ_BASE_LO, 0x40);
    wr(VFW_REG_AQ_CTRL, 1);
    CHECK(rd(VFW_REG_AQ_STATUS) == VFW_AQ_STATUS_ENABLED);
    wr(VFW_REG_AQ_TAIL, 1);
    CHECK(rd(VFW_REG_AQ_STATUS) == VFW_AQ_STATUS_DMA_ERR);
    c = vfw_admin_vf_cfg(&A, 0);
    CHECK(c->trust && c->gen == 2);
    vfw_admin_reset(&A);
    CHECK(!c->trust && c->spoofchk && c->gen == 3);
    CHECK(rd(VFW_REG_AQ_STATUS) == 0 && rd(VFW_REG_AQ_LEN) == 0);
    return 0;
}

/* Random descriptors never crash and never leave config out of range. */
static int t_random(void)
{
    uint8_t d[VFW_AQ_DESC_SIZE];
    uint32_t x = 12345;

    CHECK(setup(128, 16) == 0);
    for (int i = 0; i < 200000; i++) {
        for (size_t j = 0; j < sizeof(d); j++) {
            x = x * 1103515245u + 12345u;
            d[j] = (uint8_t)(x >> 16);
        }
        d[0] = (uint8_t)(d[0] % 8 ? d[0] % 8 : 0);
        d[1] = (uint8_t)(d[1] & 1);
        d[6] = (uint8_t)(d[6] & 0x7f);
        d[7] = 0;
        vfw_admin_exec(&A, d);
    }
    for (unsigned v = 0; v < 128; v++) {
        const struct vfw_vf_cfg *c = vfw_admin_vf_cfg(&A, v);

        CHECK(c->vlan <= 4095 && c->qos <= 7 && c->link_state <= 2);
        CHECK(c->max_rate <= VFW_UPLINK_SPEED_MBPS);
        CHECK(!c->max_rate || c->min_rate <= c->max_rate);
        CHECK(!(c->mac[0] & 1));
    }
    return 0;
}

/* SET_VF_RDMA_QUOTA / GET_VF_RDMA: validated here, judged by the RNIC */
static struct vfw_aq_rdma_quota q_store[8], q_used[8];
static unsigned q_sets, q_gets;

static int q_set(void *o, unsigned vf, const struct vfw_aq_rdma_quota *q)
{
    (void)o;
    q_sets++;
    if (vf >= 8 || q->qp > 1024) {
        return VFW_AQ_S_RANGE;
    }
    q_store[vf] = *q;
    return VFW_AQ_S_OK;
}

static int q_get(void *o, unsigned vf, struct vfw_aq_rdma_quota *q,
                 struct vfw_aq_rdma_quota *used)
{
    (void)o;
    q_gets++;
    if (vf >= 8) {
        return VFW_AQ_S_BAD_VF;
    }
    *q = q_store[vf];
    *used = q_used[vf];
    return VFW_AQ_S_OK;
}

static int t_rdma_quota(void)
{
    struct vfw_aq_vf_rdma r;
    struct vfw_aq_desc d;

    /* without an RNIC: UNSUPPORTED (after the VF check) */
    CHECK(setup(4, 16) == 0);
    memset(&r, 0, sizeof(r));
    CHECK(cmd(VFW_AQ_OP_SET_VF_RDMA_QUOTA, 0, &r, sizeof(r)) ==
          VFW_AQ_S_UNSUPPORTED);
    CHECK(cmd(VFW_AQ_OP_GET_VF_RDMA, 0, NULL, 0) == VFW_AQ_S_UNSUPPORTED);
    CHECK(cmd(VFW_AQ_OP_GET_VF_RDMA, 4, NULL, 0) == VFW_AQ_S_BAD_VF);

    struct vfw_admin_ops ops = OPS;
    ops.rdma_quota_set = q_set;
    ops.rdma_quota_get = q_get;
    CHECK(vfw_admin_init(&A, &ops, 128) == 0);
    vfw_admin_set_num_vfs(&A, 4);
    wr(VFW_REG_AQ_BASE_LO, (uint32_t)MEM_BASE);
    wr(VFW_REG_AQ_BASE_HI, 0);
    wr(VFW_REG_AQ_LEN, 16);
    wr(VFW_REG_AQ_CTRL, VFW_AQ_CTRL_ENABLE);
    memset(q_store, 0, sizeof(q_store));
    memset(q_used, 0, sizeof(q_used));
    q_sets = q_gets = 0;

    /* a set reaches the RNIC with every field in place (little endian) */
    r.q = (struct vfw_aq_rdma_quota){ .qp = 10, .cq = 20, .mr = 30,
        .pd = 40, .mr_pages = 0x12345, .conn = 60 };
    CHECK(cmd(VFW_AQ_OP_SET_VF_RDMA_QUOTA, 2, &r, sizeof(r)) == VFW_AQ_S_OK);
    CHECK(q_sets == 1);
    CHECK(q_store[2].qp == 10 && q_store[2].cq == 20 && q_store[2].mr == 30 &&
          q_store[2].pd == 40 && q_store[2].mr_pages == 0x12345 &&
          q_store[2].conn == 60);
    /* the RNIC's verdict is the command's status */
    r.q.qp = 5000;
    CHECK(cmd(VFW_AQ_OP_SET_VF_RDMA_QUOTA, 2, &r, sizeof(r)) ==
          VFW_AQ_S_RANGE);
    CHECK(q_store[2].qp == 10);
    /* `used` must be zero on SET; never reaches the RNIC */
    r.q.qp = 11;
    r.used.conn = 1;
    CHECK(cmd(VFW_AQ_OP_SET_VF_RDMA_QUOTA, 2, &r, sizeof(r)) ==
          VFW_AQ_S_INVAL);
    r.used.conn = 0;
    r.used.qp = 0x01000000;
    CHECK(cmd(VFW_AQ_OP_SET_VF_RDMA_QUOTA, 2, &r, sizeof(r)) ==
          VFW_AQ_S_INVAL);
    CHECK(q_sets == 2);
    /* VF index >= NumVFs */
    memset(&r, 0, sizeof(r));
    CHECK(cmd(VFW_AQ_OP_SET_VF_RDMA_QUOTA, 4, &r, sizeof(r)) ==
          VFW_AQ_S_BAD_VF);
    CHECK(cmd(VFW_AQ_OP_SET_VF_RDMA_QUOTA, 0xffff, &r, sizeof(r)) ==
          VFW_AQ_S_BAD_VF);
    CHECK(q_sets == 2);
    /* get: quota and objects in use, the rest of the descriptor zeroed */
    q_used[2] = (struct vfw_aq_rdma_quota){ .qp = 1, .cq = 2, .mr = 3,
        .pd = 4, .mr_pages = 5, .conn = 6 };
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_AQ_OP_GET_VF_RDMA;
    d.vf = 2;
    memset(d.u.raw, 0xa5, sizeof(d.u.raw));
    CHECK(submit(&d) == VFW_AQ_S_OK);
    CHECK(q_gets == 1);
    CHECK(d.u.rdma.q.qp == 10 && d.u.rdma.q.cq == 20 &&
          d.u.rdma.q.mr_pages == 0x12345 && d.u.rdma.q.conn == 60);
    CHECK(d.u.rdma.used.qp == 1 && d.u.rdma.used.pd == 4 &&
          d.u.rdma.used.conn == 6);
    CHECK(d.flags == VFW_AQ_F_DONE);
    CHECK(cmd(VFW_AQ_OP_GET_VF_RDMA, 3, NULL, 0) == VFW_AQ_S_OK);
    CHECK(cmd(VFW_AQ_OP_GET_VF_RDMA, 9, NULL, 0) == VFW_AQ_S_BAD_VF);
    CHECK(q_gets == 2);
    /* disabling VFs takes the commands away */
    vfw_admin_set_num_vfs(&A, 2);
    CHECK(cmd(VFW_AQ_OP_GET_VF_RDMA, 2, NULL, 0) == VFW_AQ_S_BAD_VF);
    CHECK(q_gets == 2);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct unit_test tests[] = {
        {"defaults", t_defaults},
        {"ring_config", t_ring_config},
        {"ring_wrap", t_ring_wrap},
        {"mac", t_mac},
        {"vlan", t_vlan},
        {"flags_link_rate", t_flags_link_rate},
        {"get", t_get},
        {"filters", t_filters},
        {"dma_fault_and_reset", t_dma_fault_and_reset},
        {"random", t_random},
        {"rdma_quota", t_rdma_quota},
    };

    return run_tests("admin", tests, sizeof(tests) / sizeof(tests[0]), argc,
                     argv, NULL);
}
