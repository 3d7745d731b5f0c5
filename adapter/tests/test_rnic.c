/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_rnic.c - the RNIC device model driven only through its hardware
 * interface (vfwarp_rdma.h): two RNICs wired back to back (frames of one
 * go to the other's vfw_rnic_rx_frame), guest memory as flat arrays with
 * bounds-checked DMA, a simulated clock. A = VF 0 (function 1) of rnic 1,
 * B = the PF (function 0) of rnic 2.
 */
#include "check.h"
#include "rnic_drv.h"
#include "tcp/tcp_wire.h"
#include "tcp_frame.h"
#include "vfw_tcp.h"

#define VFW_WQE_OP_RECV_ 0xff   /* test-only marker: an RQ entry */

static struct side A, B;
static struct vfw_rnic *R1, *R2;

static void teardown(void)
{
    A.peer = B.peer = NULL;
    vfw_rnic_destroy(R1);
    vfw_rnic_destroy(R2);
    R1 = R2 = NULL;
    free(A.mem);
    free(B.mem);
    memset(&A, 0, sizeof(A));
    memset(&B, 0, sizeof(B));
}

static int setup(void)
{
    teardown();
    A.mem = calloc(1, GM_SIZE);
    B.mem = calloc(1, GM_SIZE);
    CHECK(A.mem && B.mem);
    R1 = vfw_rnic_create(&sd_ops, &A, 2);
    R2 = vfw_rnic_create(&sd_ops, &B, 0);
    CHECK(R1 && R2);
    A.r = R1; A.fn = 1; A.peer = &B; A.peer_fn = 0;
    B.r = R2; B.fn = 0; B.peer = &A; B.peer_fn = 1;
    memcpy(A.mac, (uint8_t[]){ 0x02, 0, 0, 0, 0, 0x0a }, 6);
    memcpy(B.mac, (uint8_t[]){ 0x02, 0, 0, 0, 0, 0x0b }, 6);
    A.ip = 0x0a000001;
    B.ip = 0x0a000002;
    vfw_rnic_set_mac(R1, 1, A.mac);
    vfw_rnic_set_mac(R2, 0, B.mac);
    return 0;
}

static int set_addr(struct side *s)
{
    struct vfw_rcmd d = { .opcode = VFW_RCMD_SET_ADDR };
    d.u.set_addr.ip[0] = (uint8_t)(s->ip >> 24);
    d.u.set_addr.ip[1] = (uint8_t)(s->ip >> 16);
    d.u.set_addr.ip[2] = (uint8_t)(s->ip >> 8);
    d.u.set_addr.ip[3] = (uint8_t)s->ip;
    d.u.set_addr.mtu = 1500;
    return cmd(s, &d);
}

static int pd_alloc(struct side *s, uint32_t *pd)
{
    struct vfw_rcmd d = { .opcode = VFW_RCMD_PD_ALLOC };
    int st = cmd(s, &d);
    *pd = d.u.pd.pd;
    return st;
}

static struct vfw_aq_rdma_quota used_of(struct vfw_rnic *r, unsigned vf)
{
    struct vfw_aq_rdma_quota q, u;
    memset(&u, 0xff, sizeof(u));
    vfw_rnic_get_quota(r, vf, &q, &u);
    return u;
}

/* ------------------------------------------------------------------ */
static int test_registers(void)
{
    CHECK(setup() == 0);
    CHECK(vfw_rnic_owns(0x0a00) && vfw_rnic_owns(0x0aff) &&
          !vfw_rnic_owns(0x0b00) && !vfw_rnic_owns(0x09fc));
    CHECK(reg_r(&A, VFW_REG_RDMA_CAPS) == VFW_RDMA_CAP_IWARP);
    CHECK(reg_r(&A, VFW_REG_RDMA_MAX_QP) == VFW_RDMA_DEF_QP);
    CHECK(reg_r(&B, VFW_REG_RDMA_MAX_QP) == VFW_RDMA_HW_QP);
    CHECK(reg_r(&A, VFW_REG_RDMA_DB_PAGES) == VFW_DB_PAGES);
    CHECK(reg_r(&A, VFW_REG_RCQ_STATUS) == 0);
    uint32_t v;
    CHECK(!vfw_rnic_read(R1, 1, VFW_REG_RCQ_STATUS, 2, &v));
    CHECK(!vfw_rnic_read(R1, 1, VFW_REG_RCQ_STATUS + 1, 4, &v));
    CHECK(!vfw_rnic_read(R1, 3, VFW_REG_RCQ_STATUS, 4, &v));  /* no fn 3 */
    /* misconfigured queues refuse to enable */
    reg_w(&A, VFW_REG_RCQ_BASE_LO, 0x100020);     /* not 64-byte aligned */
    reg_w(&A, VFW_REG_RCQ_LEN, 16);
    reg_w(&A, VFW_REG_RCQ_CTRL, 1);
    CHECK(reg_r(&A, VFW_REG_RCQ_STATUS) == VFW_RCQ_STATUS_CFG_ERR);
    reg_w(&A, VFW_REG_REQ_BASE_LO, 0x200000);
    reg_w(&A, VFW_REG_REQ_LEN, 24);               /* not a power of two */
    reg_w(&A, VFW_REG_REQ_CTRL, 1);
    CHECK(reg_r(&A, VFW_REG_REQ_STATUS) == VFW_REQ_STATUS_CFG_ERR);
    drv_start(&A);
    CHECK(reg_r(&A, VFW_REG_RCQ_STATUS) == VFW_RCQ_STATUS_ENABLED);
    CHECK(reg_r(&A, VFW_REG_REQ_STATUS) == VFW_REQ_STATUS_ENABLED);
    /* TAIL beyond LEN is refused and flagged */
    reg_w(&A, VFW_REG_RCQ_TAIL, 16);
    CHECK(reg_r(&A, VFW_REG_RCQ_STATUS) & VFW_RCQ_STATUS_TAIL_ERR);
    CHECK(reg_r(&A, VFW_REG_RCQ_TAIL) == 0);
    /* base cannot move while enabled */
    reg_w(&A, VFW_REG_RCQ_BASE_LO, 0x300000);
    CHECK(reg_r(&A, VFW_REG_RCQ_BASE_LO) == (uint32_t)A.rcq);
    /* reset_fn: back to reset values */
    vfw_rnic_reset_fn(R1, 1);
    CHECK(reg_r(&A, VFW_REG_RCQ_STATUS) == 0);
    CHECK(reg_r(&A, VFW_REG_RCQ_BASE_LO) == 0);
    CHECK(reg_r(&A, VFW_REG_REQ_CTRL) == 0);
    teardown();
    return 0;
}

static int test_bad_commands(void)
{
    CHECK(setup() == 0);
    drv_start(&A);
    struct vfw_rcmd d;
    uint32_t pd;
    CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_OK && pd >= 1);

    memset(&d, 0, sizeof(d));
    d.opcode = 0x7777;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_BAD_OPCODE);
    CHECK(d.flags == (VFW_RCMD_F_DONE | VFW_RCMD_F_ERR));

    /* reserved byte set: INVAL, nothing allocated */
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_PD_ALLOC;
    d.u.pd.rsvd[50] = 1;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);
    CHECK(d.u.pd.pd == 0);
    CHECK(used_of(R1, 0).pd == 1);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_NOP;
    d.rsvd1 = 1;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);

    /* CQ: depth not a power of two; db page out of range */
    struct g_buf ring;
    g_scatter(&A, &ring, 1);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_CQ_CREATE;
    d.u.cq_create.depth = 12;
    d.u.cq_create.pgl = g_ref(&ring, 0);
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);
    d.u.cq_create.depth = 16;
    d.u.cq_create.db_page = VFW_DB_PAGES;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);
    /* page list too short for the ring, misaligned, or unreadable */
    d.u.cq_create.db_page = 1;
    d.u.cq_create.depth = 256;           /* 8256 bytes: 3 pages */
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);
    d.u.cq_create.depth = 16;
    d.u.cq_create.pgl.offset = 32;       /* not 64-byte aligned */
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);
    d.u.cq_create.pgl.offset = 0;
    d.u.cq_create.pgl.pgl_addr = 0x10;           /* below guest memory */
    CHECK(cmd(&A, &d) == VFW_RCMD_S_DMA);
    d.u.cq_create.pgl = g_ref(&ring, 0);
    uint64_t saved = ring.pages[0];
    uint64_t odd = saved + 8;                    /* page not aligned */
    memcpy(gm(&A, ring.pgl), &odd, 8);
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);
    memcpy(gm(&A, ring.pgl), &saved, 8);
    CHECK(used_of(R1, 0).cq == 0);
    /* a longer list than the ring needs is fine (a process may pin a
     * larger buffer); only the pages the ring uses are taken */
    d.u.cq_create.pgl.npages = 5;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    struct vfw_rcmd x = { .opcode = VFW_RCMD_CQ_DESTROY };
    x.u.cq_destroy.cq = d.u.cq_create.cq;
    CHECK(cmd(&A, &x) == VFW_RCMD_S_OK);
    CHECK(cmd(&A, &x) == VFW_RCMD_S_NOENT);
    d.u.cq_create.pgl.npages = 1;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    uint32_t cq = d.u.cq_create.cq;
    CHECK(used_of(R1, 0).cq == 1);

    /* QP naming a CQ that does not exist */
    struct d_qp q;
    CHECK(qp_make(&A, &q, pd, cq, cq + 100, 8, 1) == VFW_RCMD_S_NOENT);
    CHECK(qp_make(&A, &q, pd + 100, cq, cq, 8, 1) == VFW_RCMD_S_NOENT);
    CHECK(used_of(R1, 0).qp == 0);
    CHECK(qp_make(&A, &q, pd, cq, cq, 8, 1) == VFW_RCMD_S_OK);

    /* busy objects */
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_CQ_DESTROY;
    d.u.cq_destroy.cq = cq;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_BUSY);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_PD_FREE;
    d.u.pd.pd = pd;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_BUSY);

    /* MR: page list count not matching the length; no such PD; bad access */
    struct g_buf mb;
    g_scatter(&A, &mb, 3);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_MR_REG;
    d.u.mr_reg.pd = pd;
    d.u.mr_reg.iova = 0x10000;
    d.u.mr_reg.len = 2 * PG;
    d.u.mr_reg.pgl = g_ref(&mb, 0);
    d.u.mr_reg.access = VFW_MR_ACC_LOCAL_WRITE;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);      /* 3 pages for 2 */
    d.u.mr_reg.len = 3 * PG;
    d.u.mr_reg.access = 8;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);
    d.u.mr_reg.access = VFW_MR_ACC_LOCAL_WRITE;
    d.u.mr_reg.pd = 999;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_NOENT);
    d.u.mr_reg.pd = pd;
    d.u.mr_reg.iova = 0x10010;                   /* offset mismatch */
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);
    CHECK(used_of(R1, 0).mr == 0 && used_of(R1, 0).mr_pages == 0);
    d.u.mr_reg.iova = 0x10000;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    CHECK(used_of(R1, 0).mr == 1 && used_of(R1, 0).mr_pages == 3);

    /* connect before SET_ADDR; unknown listener */
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_CONNECT;
    d.u.connect.qp = q.id;
    memcpy(d.u.connect.rip, (uint8_t[]){ 10, 0, 0, 2 }, 4);
    d.u.connect.rport = 5000;
    memcpy(d.u.connect.dmac, B.mac, 6);
    d.u.connect.mpa_rev = 2;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_STATE);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_UNLISTEN;
    d.u.unlisten.listener = 5;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_NOENT);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_SET_ADDR;
    d.u.set_addr.mtu = 100;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);
    CHECK(reg_r(&A, VFW_REG_RSTAT(VFW_RSTAT_CMDS_ERR)) >= 15);

    /* quota: PF sets VF 0's PD quota to what it uses -> NOSPC; lower than
     * usage -> RANGE and unchanged */
    struct vfw_aq_rdma_quota qq = { .qp = 64, .cq = 128, .mr = 256,
                                    .pd = 1, .mr_pages = 100, .conn = 8 };
    CHECK(vfw_rnic_set_quota(R1, 0, &qq) == VFW_AQ_S_OK);
    CHECK(reg_r(&A, VFW_REG_RDMA_MAX_PD) == 1);
    CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_NOSPC);
    qq.qp = 0;
    CHECK(vfw_rnic_set_quota(R1, 0, &qq) == VFW_AQ_S_RANGE);
    qq.qp = VFW_RDMA_HW_QP + 1;
    CHECK(vfw_rnic_set_quota(R1, 0, &qq) == VFW_AQ_S_RANGE);
    CHECK(vfw_rnic_set_quota(R1, 2, &qq) == VFW_AQ_S_BAD_VF);
    CHECK(reg_r(&A, VFW_REG_RDMA_MAX_QP) == 64);
    /* MR pages: 100 allowed, 3 used, 98 more refused */
    struct g_buf big;
    memset(&big, 0, sizeof(big));
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_MR_REG;
    d.u.mr_reg.pd = 1;
    d.u.mr_reg.len = 98ull * PG;
    d.u.mr_reg.pgl.pgl_addr = GM_BASE;
    d.u.mr_reg.pgl.npages = 98;
    d.u.mr_reg.pgl.page_shift = 12;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_NOSPC);

    /* reset_fn frees everything; the quota stays */
    vfw_rnic_reset_fn(R1, 1);
    struct vfw_aq_rdma_quota u = used_of(R1, 0), z;
    memset(&z, 0, sizeof(z));
    CHECK(memcmp(&u, &z, sizeof(z)) == 0);
    CHECK(reg_r(&A, VFW_REG_RDMA_MAX_PD) == 1);
    vfw_rnic_reset(R1);
    CHECK(reg_r(&A, VFW_REG_RDMA_MAX_PD) == VFW_RDMA_DEF_PD);
    teardown();
    return 0;
}

/* A malformed RQ WQE completes with LOC_QP_OP_ERR and errors the QP; the
 * armed CQ's COMP event is held while IRQ_EN is clear and raised when it
 * is set again. */
static int test_malformed_wqe_and_irq_mask(void)
{
    CHECK(setup() == 0);
    drv_start(&A);
    uint32_t pd;
    CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_OK);
    struct d_cq cq;
    CHECK(cq_make(&A, &cq, 8, 3) == VFW_RCMD_S_OK);
    struct d_qp q;
    CHECK(qp_make(&A, &q, pd, cq.id, cq.id, 4, 3) == VFW_RCMD_S_OK);
    reg_w(&A, VFW_REG_REQ_CTRL, VFW_REQ_CTRL_ENABLE |
                                (4u << VFW_REQ_CTRL_VEC_SHIFT));
    CHECK(reg_r(&A, VFW_REG_REQ_STATUS) == VFW_REQ_STATUS_ENABLED);
    /* arming through a foreign page is refused */
    vfw_rnic_doorbell(R1, 1, 2 * VFW_DB_PAGE_SIZE + VFW_DB_CQ,
                      cq.id | VFW_DB_CQ_ARM_NEXT, 4);
    CHECK(vfw_rnic_stat(R1, 1, VFW_RSTAT_DB_REFUSED) == 1);
    vfw_rnic_doorbell(R1, 1, 3 * VFW_DB_PAGE_SIZE + VFW_DB_CQ,
                      cq.id | VFW_DB_CQ_ARM_NEXT, 4);
    unsigned irqs = A.irqs;
    struct vfw_wqe w;
    memset(&w, 0, sizeof(w));
    w.wr_id = 0x77;
    w.flags = VFW_WQE_F_SIGNALED;        /* not allowed in an RQ entry */
    post(&A, &q, false, &w, 3);
    pump(&A, NULL, 3);
    struct vfw_cqe_hw c;
    CHECK(cq_poll(&A, &cq, &c));
    CHECK(c.wr_id == 0x77 && c.status == VFW_CQE_S_LOC_QP_OP_ERR &&
          c.opcode == VFW_CQE_OP_RECV && c.owner == 1);
    struct vfw_eqe e;
    CHECK(eq_poll(&A, &e, NULL) && e.type == VFW_EQE_COMP && e.obj == cq.id);
    CHECK(A.irqs == irqs);               /* masked */
    reg_w(&A, VFW_REG_REQ_CTRL, VFW_REQ_CTRL_ENABLE | VFW_REQ_CTRL_IRQ_EN |
                                (4u << VFW_REQ_CTRL_VEC_SHIFT));
    CHECK(A.irqs == irqs + 1 && A.last_vec == 4);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_QP_QUERY };
    d.u.qp_query.qp = q.id;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    CHECK(d.u.qp_query.state == VFW_QPS_ERROR);
    teardown();
    return 0;
}

/* ------------------------------------------------------------------ */
struct ep {
    struct side *s;
    uint32_t pd, stag;
    struct d_cq cq;
    struct d_qp qp;
    struct g_buf mr;          /* 4 scattered pages */
};
#define MR_IOVA 0x7f0000000000ull

static int ep_make(struct ep *e, struct side *s)
{
    e->s = s;
    drv_start(s);
    CHECK(set_addr(s) == VFW_RCMD_S_OK);
    CHECK(pd_alloc(s, &e->pd) == VFW_RCMD_S_OK);
    CHECK(cq_make(s, &e->cq, 32, 1) == VFW_RCMD_S_OK);
    CHECK(qp_make(s, &e->qp, e->pd, e->cq.id, e->cq.id, 16, 1) ==
          VFW_RCMD_S_OK);
    CHECK(mr_make(s, e->pd, &e->mr, 4,
                  VFW_MR_ACC_LOCAL_WRITE | VFW_MR_ACC_REMOTE_WRITE |
                  VFW_MR_ACC_REMOTE_READ, &e->stag) == VFW_RCMD_S_OK);
    return 0;
}

/* RTR types offered/accepted (VFW_RTR_*): 1 = zero-length Send; the
 * kernel driver uses WRITE|READ (6) */
static uint8_t g_rtr = 1;
/* TOS of the connection as CONNECT and ACCEPT give it (0: none) */
static uint8_t g_tos_connect, g_tos_accept;
/* the port B listens on (a second connection needs a second listener) */
static uint16_t g_port = 5000;

static int connect_pair(struct ep *a, struct ep *b, uint32_t *cep_a,
                        uint32_t *cep_b)
{
    struct vfw_rcmd d = { .opcode = VFW_RCMD_LISTEN };
    d.u.listen.port = g_port;
    d.u.listen.backlog = 4;
    CHECK(cmd(b->s, &d) == VFW_RCMD_S_OK);
    uint32_t listener = d.u.listen.listener;
    CHECK(listener >= 1);

    static const char hello[] = "hello from A";
    uint64_t pda = g_alloc(a->s, 64, 64);
    memcpy(gm(a->s, pda), hello, sizeof(hello));
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_CONNECT;
    d.u.connect.qp = a->qp.id;
    memcpy(d.u.connect.rip, (uint8_t[]){ 10, 0, 0, 2 }, 4);
    d.u.connect.rport = g_port;
    memcpy(d.u.connect.dmac, b->s->mac, 6);
    d.u.connect.ord = d.u.connect.ird = 4;
    d.u.connect.mpa_rev = 2;
    d.u.connect.flags = VFW_CONN_F_P2P;
    d.u.connect.rtr_mask = g_rtr;
    d.u.connect.tos = g_tos_connect;
    d.u.connect.pdata_len = sizeof(hello);
    d.u.connect.pdata_addr = pda;
    CHECK(cmd(a->s, &d) == VFW_RCMD_S_OK);
    *cep_a = d.u.connect.cep;
    uint16_t lport = d.u.connect.lport_used;
    CHECK(*cep_a >= 1 && lport != 0);

    struct vfw_eqe e;
    uint8_t pdata[VFW_EQ_PDATA_SLOT];
    CHECK(eq_wait(b->s, a->s, VFW_EQE_CONNECT_REQUEST, &e, pdata));
    CHECK(e.obj2 == listener);
    CHECK(memcmp(e.rip, (uint8_t[]){ 10, 0, 0, 1 }, 4) == 0);
    CHECK(memcmp(e.lip, (uint8_t[]){ 10, 0, 0, 2 }, 4) == 0);
    CHECK(e.rport == lport && e.lport == g_port);
    CHECK(e.pdata_len == sizeof(hello));
    CHECK(memcmp(pdata, hello, sizeof(hello)) == 0);
    CHECK(e.mpa_rev == 2);
    *cep_b = e.obj;
    CHECK(b->s->irqs > 0 && b->s->last_vec == 4);

    /* accepting with a QP of the wrong id fails alone */
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_ACCEPT;
    d.u.accept.cep = *cep_b;
    d.u.accept.qp = 77;
    d.u.accept.ord = d.u.accept.ird = 4;
    d.u.accept.flags = VFW_CONN_F_P2P;
    d.u.accept.rtr_mask = g_rtr;
    d.u.accept.tos = g_tos_accept;
    CHECK(cmd(b->s, &d) == VFW_RCMD_S_NOENT);
    d.u.accept.qp = b->qp.id;
    CHECK(cmd(b->s, &d) == VFW_RCMD_S_OK);
    /* a second ACCEPT of the same request is a state error */
    CHECK(cmd(b->s, &d) == VFW_RCMD_S_STATE);

    CHECK(eq_wait(b->s, a->s, VFW_EQE_ESTABLISHED, &e, NULL));
    CHECK(e.obj == *cep_b && e.obj2 == b->qp.id);
    CHECK(eq_wait(a->s, b->s, VFW_EQE_CONNECT_REPLY, &e, NULL));
    CHECK(e.status == VFW_CM_S_OK && e.obj == *cep_a && e.obj2 == a->qp.id);
    CHECK(e.lport == lport && e.rport == g_port);
    return 0;
}

/* A fresh pair of functions (setup()), an endpoint on each, connected:
 * the start of most tests below. */
static int connected_pair(struct ep *a, struct ep *b, uint32_t *cep_a,
                          uint32_t *cep_b)
{
    CHECK(setup() == 0);
    CHECK(ep_make(a, &A) == 0);
    CHECK(ep_make(b, &B) == 0);
    CHECK(connect_pair(a, b, cep_a, cep_b) == 0);
    return 0;
}

static void sge_wqe(struct vfw_wqe *w, uint64_t wr_id, uint8_t op,
                    uint32_t lkey, uint64_t addr, uint32_t len)
{
    memset(w, 0, sizeof(*w));
    w->wr_id = wr_id;
    w->opcode = op == VFW_WQE_OP_RECV_ ? 0 : op;
    /* RQ entries carry wr_id and SGEs only (the rest zero) */
    w->flags = op == VFW_WQE_OP_RECV_ ? 0 : VFW_WQE_F_SIGNALED;
    w->num_sge = 1;
    w->u.sge[0].addr = addr;
    w->u.sge[0].lkey = lkey;
    w->u.sge[0].len = len;
}

static int test_verbs_end_to_end(void)
{
    struct ep a, b;
    uint32_t cep_a, cep_b;
    CHECK(connected_pair(&a, &b, &cep_a, &cep_b) == 0);
    struct vfw_aq_rdma_quota u = used_of(R1, 0);
    CHECK(u.qp == 1 && u.cq == 1 && u.mr == 1 && u.pd == 1 &&
          u.mr_pages == 4 && u.conn == 1);

    /* SEND with two SGEs crossing page boundaries -> RECV on B */
    uint8_t pat[6000];
    for (size_t i = 0; i < sizeof(pat); i++)
        pat[i] = (uint8_t)(i * 7 + 3);
    g_put(&A, &a.mr, 100, pat, sizeof(pat));
    struct vfw_wqe w;
    sge_wqe(&w, 0xb0b, VFW_WQE_OP_RECV_, b.stag, MR_IOVA + 8000, 8000);
    post(&B, &b.qp, false, &w, 1);
    memset(&w, 0, sizeof(w));
    w.wr_id = 0xa1;
    w.opcode = VFW_WQE_OP_SEND;
    w.flags = VFW_WQE_F_SIGNALED;
    w.num_sge = 2;
    w.u.sge[0] = (struct vfw_wqe_sge){ MR_IOVA + 100, a.stag, 4000 };
    w.u.sge[1] = (struct vfw_wqe_sge){ MR_IOVA + 4100, a.stag, 2000 };
    post(&A, &a.qp, true, &w, 1);
    struct vfw_cqe_hw c;
    CHECK(cq_wait(&A, &B, &a.cq, &c));
    CHECK(c.wr_id == 0xa1 && c.status == VFW_CQE_S_SUCCESS &&
          c.opcode == VFW_CQE_OP_SEND && c.qp == a.qp.id && c.owner == 1 &&
          c.wqe_idx == 0);
    CHECK(cq_wait(&B, &A, &b.cq, &c));
    CHECK(c.wr_id == 0xb0b && c.status == VFW_CQE_S_SUCCESS &&
          c.opcode == VFW_CQE_OP_RECV && c.byte_len == 6000);
    uint8_t got[6000];
    g_get(&B, &b.mr, 8000, got, 6000);
    CHECK(memcmp(got, pat, 6000) == 0);

    /* RDMA WRITE A -> B across B's scattered pages */
    sge_wqe(&w, 0xa2, VFW_WQE_OP_RDMA_WRITE, a.stag, MR_IOVA + 100, 6000);
    w.remote_stag = b.stag;
    w.remote_addr = MR_IOVA + 1000;
    post(&A, &a.qp, true, &w, 1);
    CHECK(cq_wait(&A, &B, &a.cq, &c));
    CHECK(c.wr_id == 0xa2 && c.status == VFW_CQE_S_SUCCESS &&
          c.opcode == VFW_CQE_OP_RDMA_WRITE);
    g_get(&B, &b.mr, 1000, got, 6000);
    CHECK(memcmp(got, pat, 6000) == 0);

    /* RDMA READ: A pulls 5000 bytes of B's MR into its own */
    uint8_t pat2[5000];
    for (size_t i = 0; i < sizeof(pat2); i++)
        pat2[i] = (uint8_t)(i ^ 0x5a);
    g_put(&B, &b.mr, 9000, pat2, sizeof(pat2));
    sge_wqe(&w, 0xa3, VFW_WQE_OP_RDMA_READ, a.stag, MR_IOVA + 10000, 5000);
    w.remote_stag = b.stag;
    w.remote_addr = MR_IOVA + 9000;
    post(&A, &a.qp, true, &w, 1);
    CHECK(cq_wait(&A, &B, &a.cq, &c));
    CHECK(c.wr_id == 0xa3 && c.status == VFW_CQE_S_SUCCESS &&
          c.opcode == VFW_CQE_OP_RDMA_READ);
    g_get(&A, &a.mr, 10000, got, 5000);
    CHECK(memcmp(got, pat2, 5000) == 0);

    /* inline SEND */
    sge_wqe(&w, 0xb0c, VFW_WQE_OP_RECV_, b.stag, MR_IOVA, 200);
    post(&B, &b.qp, false, &w, 1);
    memset(&w, 0, sizeof(w));
    w.wr_id = 0xa4;
    w.opcode = VFW_WQE_OP_SEND;
    w.flags = VFW_WQE_F_SIGNALED | VFW_WQE_F_INLINE;
    w.inline_len = 40;
    memcpy(w.u.inline_data, "inline payload, forty bytes long.......", 40);
    post(&A, &a.qp, true, &w, 1);
    CHECK(cq_wait(&B, &A, &b.cq, &c));
    CHECK(c.wr_id == 0xb0c && c.byte_len == 40);
    g_get(&B, &b.mr, 0, got, 40);
    CHECK(memcmp(got, "inline payload, forty bytes long.......", 40) == 0);
    CHECK(cq_wait(&A, &B, &a.cq, &c) && c.wr_id == 0xa4);

    /* CQ arm: the next CQE raises VFW_EQE_COMP for the CQ */
    vfw_rnic_doorbell(R2, 0, 1 * VFW_DB_PAGE_SIZE + VFW_DB_CQ,
                      b.cq.id | VFW_DB_CQ_ARM_NEXT, 4);
    sge_wqe(&w, 0xb0d, VFW_WQE_OP_RECV_, b.stag, MR_IOVA, 200);
    post(&B, &b.qp, false, &w, 1);
    memset(&w, 0, sizeof(w));
    w.wr_id = 0xa5;
    w.opcode = VFW_WQE_OP_SEND;
    w.flags = VFW_WQE_F_INLINE;   /* unsignaled */
    w.inline_len = 4;
    post(&A, &a.qp, true, &w, 1);
    struct vfw_eqe e;
    CHECK(eq_wait(&B, &A, VFW_EQE_COMP, &e, NULL));
    CHECK(e.obj == b.cq.id);
    CHECK(cq_poll(&B, &b.cq, &c) && c.wr_id == 0xb0d);

    /* a doorbell through a page that does not own the QP is refused and
     * nothing happens */
    uint64_t refused = vfw_rnic_stat(R1, 1, VFW_RSTAT_DB_REFUSED);
    memset(got, 0xee, 64);
    g_put(&B, &b.mr, 12000, got, 64);
    sge_wqe(&w, 0xa6, VFW_WQE_OP_RDMA_WRITE, a.stag, MR_IOVA + 100, 64);
    w.remote_stag = b.stag;
    w.remote_addr = MR_IOVA + 12000;
    g_put(&A, &a.qp.sq, (uint64_t)(a.qp.sq_pi % 16) * VFW_WQE_SIZE, &w,
          sizeof(w));
    vfw_rnic_doorbell(R1, 1, 2 * VFW_DB_PAGE_SIZE + VFW_DB_SQ,
                      a.qp.id | (uint32_t)(uint16_t)(a.qp.sq_pi + 1) << 16, 4);
    CHECK(vfw_rnic_stat(R1, 1, VFW_RSTAT_DB_REFUSED) == refused + 1);
    CHECK(reg_r(&A, VFW_REG_RSTAT(VFW_RSTAT_DB_REFUSED)) == refused + 1);
    pump(&A, &B, 50);
    CHECK(!cq_poll(&A, &a.cq, &c));
    g_get(&B, &b.mr, 12000, got, 64);
    for (int i = 0; i < 64; i++)
        CHECK(got[i] == 0xee);
    /* a producer index more than the depth ahead is refused too */
    uint64_t bad = vfw_rnic_stat(R1, 1, VFW_RSTAT_DB_BAD);
    vfw_rnic_doorbell(R1, 1, 1 * VFW_DB_PAGE_SIZE + VFW_DB_SQ,
                      a.qp.id | (uint32_t)(uint16_t)(a.qp.sq_pi + 17) << 16,
                      4);
    CHECK(vfw_rnic_stat(R1, 1, VFW_RSTAT_DB_BAD) == bad + 1);

    /* a remote READ with a bad STag: remote access error CQE at A, A's
     * sink memory unchanged */
    memset(got, 0xdd, 64);
    g_put(&A, &a.mr, 13000, got, 64);
    sge_wqe(&w, 0xa7, VFW_WQE_OP_RDMA_READ, a.stag, MR_IOVA + 13000, 64);
    w.remote_stag = b.stag ^ 0x100;     /* another index */
    w.remote_addr = MR_IOVA;
    post(&A, &a.qp, true, &w, 1);
    CHECK(cq_wait(&A, &B, &a.cq, &c));
    CHECK(c.wr_id == 0xa7 && c.status == VFW_CQE_S_REM_ACCESS_ERR &&
          c.opcode == VFW_CQE_OP_RDMA_READ);
    g_get(&A, &a.mr, 13000, got, 64);
    for (int i = 0; i < 64; i++)
        CHECK(got[i] == 0xdd);
    CHECK(eq_wait(&A, &B, VFW_EQE_QP_ERROR, &e, NULL) && e.obj == a.qp.id);
    CHECK(e.term_etype == 1);   /* RDMAP remote protection error */
    /* both sides see the connection end */
    CHECK(eq_wait(&A, &B, VFW_EQE_CLOSE, &e, NULL) && e.obj == cep_a);
    CHECK(eq_wait(&B, &A, VFW_EQE_CLOSE, &e, NULL) && e.obj == cep_b);
    CHECK(used_of(R1, 0).conn == 0);

    /* reset_fn leaves nothing allocated */
    vfw_rnic_reset_fn(R1, 1);
    struct vfw_aq_rdma_quota z;
    memset(&z, 0, sizeof(z));
    u = used_of(R1, 0);
    CHECK(memcmp(&u, &z, sizeof(z)) == 0);
    teardown();
    return 0;
}

/* A remote WRITE with a bad STag: B's memory is unchanged, B terminates
 * the connection, A's QP errors with the Terminate's cause and a WQE
 * posted after it is flushed. */
static int test_bad_stag_write(void)
{
    struct ep a, b;
    uint32_t cep_a, cep_b;
    CHECK(connected_pair(&a, &b, &cep_a, &cep_b) == 0);
    uint8_t got[64];
    memset(got, 0xee, 64);
    g_put(&B, &b.mr, 12000, got, 64);
    struct vfw_wqe w;
    sge_wqe(&w, 0xa6, VFW_WQE_OP_RDMA_WRITE, a.stag, MR_IOVA + 100, 64);
    w.remote_stag = b.stag ^ 0x100;
    w.remote_addr = MR_IOVA + 12000;
    post(&A, &a.qp, true, &w, 1);
    struct vfw_eqe e;
    CHECK(eq_wait(&A, &B, VFW_EQE_QP_ERROR, &e, NULL) && e.obj == a.qp.id);
    CHECK(e.term_etype == 1);   /* RDMAP remote protection error */
    CHECK(eq_wait(&B, &A, VFW_EQE_QP_ERROR, &e, NULL) && e.obj == b.qp.id);
    g_get(&B, &b.mr, 12000, got, 64);
    for (int i = 0; i < 64; i++)
        CHECK(got[i] == 0xee);
    CHECK(vfw_rnic_stat(R2, 0, VFW_RSTAT_PROT_ERR) >= 1);
    CHECK(reg_r(&B, VFW_REG_RSTAT(VFW_RSTAT_PROT_ERR)) >= 1);
    sge_wqe(&w, 0xa8, VFW_WQE_OP_SEND, a.stag, MR_IOVA, 8);
    post(&A, &a.qp, true, &w, 1);
    struct vfw_cqe_hw c;
    bool flushed = false;
    for (int i = 0; i < 4 && cq_wait(&A, &B, &a.cq, &c); i++)
        if (c.wr_id == 0xa8) {
            flushed = c.status == VFW_CQE_S_WR_FLUSH_ERR;
            break;
        }
    CHECK(flushed);
    teardown();
    return 0;
}

/* Reset of a function with a live connection: the peer sees the RST. */
static int test_reset_with_connection(void)
{
    struct ep a, b;
    uint32_t cep_a, cep_b;
    CHECK(connected_pair(&a, &b, &cep_a, &cep_b) == 0);
    vfw_rnic_reset_fn(R1, 1);
    struct vfw_eqe e;
    CHECK(eq_wait(&B, &A, VFW_EQE_CLOSE, &e, NULL));
    CHECK(e.obj == cep_b && e.status == VFW_CM_S_RESET);
    /* B's QP is in ERROR; a posted receive is flushed */
    struct vfw_wqe w;
    sge_wqe(&w, 0xf1, VFW_WQE_OP_RECV_, b.stag, MR_IOVA, 100);
    post(&B, &b.qp, false, &w, 1);
    struct vfw_cqe_hw c;
    CHECK(cq_wait(&B, &A, &b.cq, &c));
    CHECK(c.wr_id == 0xf1 && c.status == VFW_CQE_S_WR_FLUSH_ERR);
    /* A's registers are back to reset values, nothing is allocated */
    CHECK(reg_r(&A, VFW_REG_RCQ_STATUS) == 0);
    CHECK(reg_r(&A, VFW_REG_REQ_STATUS) == 0);
    struct vfw_aq_rdma_quota z, u = used_of(R1, 0);
    memset(&z, 0, sizeof(z));
    CHECK(memcmp(&u, &z, sizeof(z)) == 0);
    teardown();
    return 0;
}

/* Graceful disconnect: CLOSING on A -> DISCONNECT on B, CLOSE on both. */
static int test_graceful_close(void)
{
    CHECK(setup() == 0);
    struct ep a, b;
    CHECK(ep_make(&a, &A) == 0);
    CHECK(ep_make(&b, &B) == 0);
    /* receives posted before the connection exists; a Send rung before
     * RTS waits in the ring */
    struct vfw_wqe w;
    sge_wqe(&w, 0xd1, VFW_WQE_OP_RECV_, b.stag, MR_IOVA, 100);
    post(&B, &b.qp, false, &w, 1);
    memset(&w, 0, sizeof(w));
    w.wr_id = 0xd2;
    w.opcode = VFW_WQE_OP_SEND;
    w.flags = VFW_WQE_F_SIGNALED | VFW_WQE_F_INLINE;
    w.inline_len = 5;
    memcpy(w.u.inline_data, "early", 5);
    post(&A, &a.qp, true, &w, 1);
    pump(&A, &B, 5);
    uint32_t cep_a, cep_b;
    CHECK(connect_pair(&a, &b, &cep_a, &cep_b) == 0);
    struct vfw_cqe_hw c;
    CHECK(cq_wait(&B, &A, &b.cq, &c));
    CHECK(c.wr_id == 0xd1 && c.status == VFW_CQE_S_SUCCESS && c.byte_len == 5);
    uint8_t got[5];
    g_get(&B, &b.mr, 0, got, 5);
    CHECK(memcmp(got, "early", 5) == 0);
    CHECK(cq_wait(&A, &B, &a.cq, &c) && c.wr_id == 0xd2);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_QP_MODIFY };
    d.u.qp_modify.qp = a.qp.id;
    d.u.qp_modify.state = VFW_QPS_CLOSING;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    struct vfw_eqe e;
    CHECK(eq_wait(&B, &A, VFW_EQE_DISCONNECT, &e, NULL) && e.obj == cep_b);
    CHECK(eq_wait(&B, &A, VFW_EQE_CLOSE, &e, NULL) && e.obj == cep_b);
    CHECK(eq_wait(&A, &B, VFW_EQE_CLOSE, &e, NULL) && e.obj == cep_a &&
          e.status == VFW_CM_S_OK);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_QP_QUERY;
    d.u.qp_query.qp = a.qp.id;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    CHECK(d.u.qp_query.state == VFW_QPS_IDLE ||
          d.u.qp_query.state == VFW_QPS_ERROR);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_QP_DESTROY;
    d.u.qp_modify.qp = a.qp.id;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    CHECK(used_of(R1, 0).qp == 0 && used_of(R1, 0).conn == 0);
    teardown();
    return 0;
}

/* Abortive disconnect: ERROR on B -> RST; CLOSE with RESET on both sides,
 * A's posted receive flushed. */
static int test_abortive_close(void)
{
    struct ep a, b;
    uint32_t cep_a, cep_b;
    CHECK(connected_pair(&a, &b, &cep_a, &cep_b) == 0);
    struct vfw_wqe w;
    sge_wqe(&w, 0xc1, VFW_WQE_OP_RECV_, a.stag, MR_IOVA, 100);
    post(&A, &a.qp, false, &w, 1);
    pump(&A, &B, 5);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_QP_MODIFY };
    d.u.qp_modify.qp = b.qp.id;
    d.u.qp_modify.state = VFW_QPS_ERROR;
    CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
    struct vfw_eqe e;
    CHECK(eq_wait(&B, &A, VFW_EQE_CLOSE, &e, NULL));
    CHECK(e.obj == cep_b && e.status == VFW_CM_S_RESET);
    CHECK(eq_wait(&A, &B, VFW_EQE_CLOSE, &e, NULL));
    CHECK(e.obj == cep_a && e.obj2 == a.qp.id && e.status == VFW_CM_S_RESET);
    struct vfw_cqe_hw c;
    CHECK(cq_wait(&A, &B, &a.cq, &c));
    CHECK(c.wr_id == 0xc1 && c.status == VFW_CQE_S_WR_FLUSH_ERR &&
          c.opcode == VFW_CQE_OP_RECV);
    CHECK(used_of(R1, 0).conn == 0);
    teardown();
    return 0;
}

/* ERROR then DESTROY in one batch of commands, with SQ WQEs rung in but
 * not fetched yet (the commands run before the doorbells' WQEs, as when a
 * driver tears a QP down during an FLR): each of those WRs still completes
 * with WR_FLUSH_ERR, so a process polling its CQ learns that they ended. */
static int test_error_flushes_rung_wqes(void)
{
    struct ep a, b;
    uint32_t cep_a, cep_b;
    CHECK(connected_pair(&a, &b, &cep_a, &cep_b) == 0);
    struct vfw_wqe w;
    for (unsigned i = 0; i < 3; i++) {
        sge_wqe(&w, 0xe0 + i, VFW_WQE_OP_RDMA_WRITE, a.stag, MR_IOVA, 4000);
        w.remote_stag = b.stag;
        w.remote_addr = MR_IOVA;
        post(&A, &a.qp, true, &w, 1);          /* rung in, no run yet */
    }
    struct vfw_rcmd d[2] = { { .opcode = VFW_RCMD_QP_MODIFY },
                             { .opcode = VFW_RCMD_QP_DESTROY } };
    d[0].u.qp_modify.qp = d[1].u.qp_modify.qp = a.qp.id;
    d[0].u.qp_modify.state = VFW_QPS_ERROR;
    uint64_t at[2];
    for (unsigned i = 0; i < 2; i++) {
        at[i] = A.rcq + (uint64_t)A.rcq_tail * VFW_RCQ_DESC_SIZE;
        d[i].cookie = ++A.cookie;
        memcpy(gm(&A, at[i]), &d[i], sizeof(d[i]));
        A.rcq_tail = (A.rcq_tail + 1) % 16;
    }
    reg_w(&A, VFW_REG_RCQ_TAIL, A.rcq_tail);    /* both commands at once */
    vfw_rnic_run(R1);
    for (unsigned i = 0; i < 2; i++) {
        struct vfw_rcmd out;
        memcpy(&out, gm(&A, at[i]), sizeof(out));
        CHECK((out.flags & VFW_RCMD_F_DONE) && out.status == VFW_RCMD_S_OK);
    }
    struct vfw_cqe_hw c;
    for (unsigned i = 0; i < 3; i++) {
        CHECK(cq_poll(&A, &a.cq, &c));
        CHECK(c.wr_id == 0xe0 + i && c.status == VFW_CQE_S_WR_FLUSH_ERR);
    }
    CHECK(!cq_poll(&A, &a.cq, &c));
    CHECK(used_of(R1, 0).qp == 0);
    teardown();
    return 0;
}

/* Connection quota and listener backlog on a VF: a LISTEN beyond the
 * quota fails with NOSPC; a connection beyond the backlog is reset when
 * its handshake completes (the active side sees CONNECT_REPLY RESET). */
static int test_conn_quota_backlog(void)
{
    CHECK(setup() == 0);
    struct ep a, b;
    CHECK(ep_make(&a, &A) == 0);
    CHECK(ep_make(&b, &B) == 0);
    struct vfw_aq_rdma_quota qq = { .qp = 64, .cq = 128, .mr = 256,
                                    .pd = 64, .mr_pages = 1000, .conn = 3 };
    CHECK(vfw_rnic_set_quota(R1, 0, &qq) == VFW_AQ_S_OK);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_LISTEN };
    d.u.listen.port = 7000;
    d.u.listen.backlog = 1;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    struct d_qp q2;
    CHECK(qp_make(&B, &q2, b.pd, b.cq.id, b.cq.id, 4, 1) == VFW_RCMD_S_OK);
    uint32_t qps[2] = { b.qp.id, q2.id }, ceps[2];
    for (int i = 0; i < 2; i++) {
        memset(&d, 0, sizeof(d));
        d.opcode = VFW_RCMD_CONNECT;
        d.u.connect.qp = qps[i];
        memcpy(d.u.connect.rip, (uint8_t[]){ 10, 0, 0, 1 }, 4);
        d.u.connect.rport = 7000;
        memcpy(d.u.connect.dmac, A.mac, 6);
        d.u.connect.mpa_rev = 2;
        CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
        ceps[i] = d.u.connect.cep;
        pump(&A, &B, 20);
    }
    struct vfw_eqe e;
    CHECK(eq_wait(&A, &B, VFW_EQE_CONNECT_REQUEST, &e, NULL));
    CHECK(used_of(R1, 0).conn == 2);
    CHECK(eq_wait(&B, &A, VFW_EQE_CONNECT_REPLY, &e, NULL));
    CHECK(e.obj == ceps[1] && e.status == VFW_CM_S_RESET);
    /* quota 3: one more listener fits, the next does not */
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_LISTEN;
    d.u.listen.port = 7001;
    d.u.listen.backlog = 1;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    d.u.listen.port = 7002;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_NOSPC);
    CHECK(used_of(R1, 0).conn == 3);
    /* the PF cannot lower the quota below that */
    qq.conn = 2;
    CHECK(vfw_rnic_set_quota(R1, 0, &qq) == VFW_AQ_S_RANGE);
    teardown();
    return 0;
}

/* EQ overflow: with LEN entries unconsumed the next event is dropped and
 * counted, nothing is overwritten. */
static int test_eq_overflow(void)
{
    CHECK(setup() == 0);
    drv_start(&A);                       /* EQ of 64 */
    uint32_t pd;
    CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_OK);
    struct d_cq cq;
    CHECK(cq_make(&A, &cq, 256, 1) == VFW_RCMD_S_OK);
    struct d_qp q;
    CHECK(qp_make(&A, &q, pd, cq.id, cq.id, 4, 1) == VFW_RCMD_S_OK);
    /* 70 COMP events: arm, then a malformed RQ WQE errors the QP and
     * completes; re-arm, the QP is in ERROR so each RQ WQE is flushed */
    struct vfw_wqe w;
    for (int i = 0; i < 70; i++) {
        vfw_rnic_doorbell(R1, 1, VFW_DB_PAGE_SIZE + VFW_DB_CQ,
                          cq.id | VFW_DB_CQ_ARM_NEXT, 4);
        memset(&w, 0, sizeof(w));
        w.wr_id = (uint64_t)i;
        w.flags = i == 0 ? 1 : 0;        /* the first one is malformed */
        post(&A, &q, false, &w, 1);
        pump(&A, NULL, 1);
    }
    CHECK(reg_r(&A, VFW_REG_REQ_PROD) == 64);
    CHECK(reg_r(&A, VFW_REG_REQ_STATUS) & VFW_REQ_STATUS_OVERFLOW);
    CHECK(vfw_rnic_stat(R1, 1, VFW_RSTAT_EQ_OVERFLOW) == 6);
    struct vfw_eqe e;
    for (int i = 0; i < 64; i++)
        CHECK(eq_poll(&A, &e, NULL) && e.type == VFW_EQE_COMP);
    CHECK(!eq_poll(&A, &e, NULL));
    /* consumed: events flow again, second pass owner 0 */
    vfw_rnic_doorbell(R1, 1, VFW_DB_PAGE_SIZE + VFW_DB_CQ,
                      cq.id | VFW_DB_CQ_ARM_NEXT, 4);
    memset(&w, 0, sizeof(w));
    post(&A, &q, false, &w, 1);
    pump(&A, NULL, 1);
    CHECK(eq_poll(&A, &e, NULL) && e.type == VFW_EQE_COMP && e.owner == 0);
    teardown();
    return 0;
}

/* Connection refused (no listener): CONNECT_REPLY with REFUSED. And a
 * listener's CONNECT_REQUEST answered with REJECT. */
static int test_refused_and_rejected(void)
{
    CHECK(setup() == 0);
    struct ep a, b;
    CHECK(ep_make(&a, &A) == 0);
    CHECK(ep_make(&b, &B) == 0);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_CONNECT };
    d.u.connect.qp = a.qp.id;
    memcpy(d.u.connect.rip, (uint8_t[]){ 10, 0, 0, 2 }, 4);
    d.u.connect.rport = 6000;
    memcpy(d.u.connect.dmac, B.mac, 6);
    d.u.connect.mpa_rev = 2;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    uint32_t cep = d.u.connect.cep;
    /* same QP again while connecting: state error */
    CHECK(cmd(&A, &d) == VFW_RCMD_S_STATE);
    /* B's netdev gets the SYN (nobody listens on B's engine) and the test
     * host drops it: A's SYNs time out (simulated seconds) */
    struct vfw_eqe e;
    bool got = false;
    for (int i = 0; i < 400 && !got; i++) {
        pump(&A, &B, 1);
        sim_now += 1000000000ull;
        while (!got && eq_poll(&A, &e, NULL))
            got = e.type == VFW_EQE_CONNECT_REPLY;
    }
    CHECK(got);
    CHECK(e.obj == cep && e.status == VFW_CM_S_TIMEOUT);
    CHECK(used_of(R1, 0).conn == 0);

    struct d_qp q2;
    CHECK(qp_make(&A, &q2, a.pd, a.cq.id, a.cq.id, 4, 1) == VFW_RCMD_S_OK);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_LISTEN;
    d.u.listen.port = 6001;
    d.u.listen.backlog = 1;
    CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
    /* the same port twice */
    CHECK(cmd(&B, &d) == VFW_RCMD_S_ADDRINUSE);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_CONNECT;
    d.u.connect.qp = q2.id;
    memcpy(d.u.connect.rip, (uint8_t[]){ 10, 0, 0, 2 }, 4);
    d.u.connect.rport = 6001;
    memcpy(d.u.connect.dmac, B.mac, 6);
    d.u.connect.mpa_rev = 1;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    cep = d.u.connect.cep;
    CHECK(eq_wait(&B, &A, VFW_EQE_CONNECT_REQUEST, &e, NULL));
    uint64_t rj = g_alloc(&B, 64, 64);
    memcpy(gm(&B, rj), "no", 2);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_REJECT;
    d.u.reject.cep = e.obj;
    d.u.reject.pdata_len = 2;
    d.u.reject.pdata_addr = rj;
    CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
    CHECK(cmd(&B, &d) == VFW_RCMD_S_NOENT);   /* the cep is gone */
    uint8_t pdata[VFW_EQ_PDATA_SLOT];
    CHECK(eq_wait(&A, &B, VFW_EQE_CONNECT_REPLY, &e, pdata));
    CHECK(e.obj == cep && e.status == VFW_CM_S_REFUSED);
    CHECK(e.pdata_len == 2 && memcmp(pdata, "no", 2) == 0);
    /* the address withdrawn with a listener up: accepted; new listeners
     * wait for the next address */
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_SET_ADDR;
    d.u.set_addr.mtu = 1500;
    CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_LISTEN;
    d.u.listen.port = 6002;
    d.u.listen.backlog = 1;
    CHECK(cmd(&B, &d) == VFW_RCMD_S_STATE);
    CHECK(set_addr(&B) == VFW_RCMD_S_OK);
    CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
    teardown();
    return 0;
}

/* CQ overflow: the driver never consumes; depth+1-th CQE is lost,
 * VFW_EQE_CQ_ERROR raised. EQ overflow counted likewise. */
static int test_cq_overflow(void)
{
    struct ep a, b;
    uint32_t cep_a, cep_b;
    CHECK(connected_pair(&a, &b, &cep_a, &cep_b) == 0);
    /* 32-entry CQ on A; the SQ holds 16: post 16, reap none, post 16 more */
    struct vfw_wqe w;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 12; i++) {
            sge_wqe(&w, (uint64_t)(round * 100 + i), VFW_WQE_OP_RDMA_WRITE,
                    a.stag, MR_IOVA, 16);
            w.remote_stag = b.stag;
            w.remote_addr = MR_IOVA;
            post(&A, &a.qp, true, &w, 1);
        }
        pump(&A, &B, 200);
    }
    CHECK(vfw_rnic_stat(R1, 1, VFW_RSTAT_CQ_OVERFLOW) >= 1);
    struct vfw_eqe e;
    CHECK(eq_wait(&A, &B, VFW_EQE_CQ_ERROR, &e, NULL) && e.obj == a.cq.id);
    /* the CQ's QP went to ERROR */
    struct vfw_rcmd d = { .opcode = VFW_RCMD_QP_QUERY };
    d.u.qp_query.qp = a.qp.id;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    CHECK(d.u.qp_query.state == VFW_QPS_ERROR);
    /* the 32 CQEs written are intact */
    struct vfw_cqe_hw c;
    for (int i = 0; i < 32; i++) {
        CHECK(cq_poll(&A, &a.cq, &c));
        CHECK(c.wr_id == (uint64_t)((i / 12) * 100 + i % 12));
    }
    CHECK(!cq_poll(&A, &a.cq, &c));
    teardown();
    return 0;
}

/* Two VFs of one RNIC wired to each other (the eswitch between them): a
 * connection between them, data, then the RNIC destroyed with the
 * connection up (each teardown's RST reaches the other function). */
static struct side *pair[3];
static int pr_rd(void *c, unsigned fn, uint64_t a, void *b, size_t n)
{ (void)c; return fn < 3 && pair[fn] ? sd_dma_read(pair[fn], fn, a, b, n) : -1; }
static int pr_wr(void *c, unsigned fn, uint64_t a, const void *b, size_t n)
{ (void)c; return fn < 3 && pair[fn] ? sd_dma_write(pair[fn], fn, a, b, n) : -1; }
static void pr_irq(void *c, unsigned fn, unsigned v)
{ (void)c; if (fn < 3 && pair[fn]) sd_irq(pair[fn], fn, v); }
static void pr_out(void *c, unsigned fn, const uint8_t *f, size_t n)
{ (void)c; if (fn < 3 && pair[fn]) sd_frame_out(pair[fn], fn, f, n); }
static void pr_kick(void *c) { (void)c; }
static const struct vfw_rnic_ops pair_ops = { pr_rd, pr_wr, pr_irq, pr_out,
                                              sd_now, pr_kick, sd_timer };

static int test_two_functions_one_rnic(void)
{
    CHECK(setup() == 0);
    vfw_rnic_destroy(R1);
    R1 = vfw_rnic_create(&pair_ops, NULL, 2);
    CHECK(R1);
    pair[1] = &A;
    pair[2] = &B;
    A.r = B.r = R1;
    A.fn = 1; A.peer_fn = 2;
    B.fn = 2; B.peer_fn = 1;
    vfw_rnic_set_mac(R1, 1, A.mac);
    vfw_rnic_set_mac(R1, 2, B.mac);
    struct ep a, b;
    CHECK(ep_make(&a, &A) == 0);
    CHECK(ep_make(&b, &B) == 0);
    uint32_t cep_a, cep_b;
    g_rtr = 6;                           /* as the kernel driver asks */
    int rc = connect_pair(&a, &b, &cep_a, &cep_b);
    g_rtr = 1;
    CHECK(rc == 0);
    uint8_t pat[3000];
    for (size_t i = 0; i < sizeof(pat); i++)
        pat[i] = (uint8_t)(i * 13);
    g_put(&B, &b.mr, 500, pat, sizeof(pat));
    struct vfw_wqe w;
    sge_wqe(&w, 0xe1, VFW_WQE_OP_RDMA_READ, a.stag, MR_IOVA + 6000, 3000);
    w.remote_stag = b.stag;
    w.remote_addr = MR_IOVA + 500;
    post(&A, &a.qp, true, &w, 1);
    struct vfw_cqe_hw c;
    CHECK(cq_wait(&A, &B, &a.cq, &c));
    CHECK(c.wr_id == 0xe1 && c.status == VFW_CQE_S_SUCCESS);
    uint8_t got[3000];
    g_get(&A, &a.mr, 6000, got, sizeof(got));
    CHECK(memcmp(got, pat, sizeof(pat)) == 0);
    /* VF 0's doorbell page cannot ring VF 1's QP: a different function */
    uint64_t bad = vfw_rnic_stat(R1, 2, VFW_RSTAT_DB_BAD);
    vfw_rnic_doorbell(R1, 2, VFW_DB_PAGE_SIZE + VFW_DB_SQ,
                      77u | 1u << 16, 4);
    CHECK(vfw_rnic_stat(R1, 2, VFW_RSTAT_DB_BAD) == bad + 1);
    /* destroyed with the connection up: each function's RST reaches the
     * other one through the "switch" while the RNIC goes away */
    vfw_rnic_destroy(R1);
    R1 = NULL;
    pair[1] = pair[2] = NULL;
    teardown();
    return 0;
}

/* The engine's tables follow the VF's share: raising the quota of a live
 * function grows them (ids in use stay), lowering it to the usage and
 * raising it again works too. */
static int test_quota_grows_live(void)
{
    CHECK(setup() == 0);
    drv_start(&A);
    uint32_t pd, first = 0;
    for (unsigned i = 0; i < VFW_RDMA_DEF_PD; i++) {
        CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_OK);
        if (!first)
            first = pd;
    }
    CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_NOSPC);
    struct vfw_aq_rdma_quota qq = {
        .qp = VFW_RDMA_DEF_QP, .cq = VFW_RDMA_DEF_CQ, .mr = VFW_RDMA_DEF_MR,
        .pd = 3 * VFW_RDMA_DEF_PD, .mr_pages = VFW_RDMA_DEF_MR_PAGES,
        .conn = VFW_RDMA_DEF_CONN };
    CHECK(vfw_rnic_set_quota(R1, 0, &qq) == VFW_AQ_S_OK);
    CHECK(reg_r(&A, VFW_REG_RDMA_MAX_PD) == 3 * VFW_RDMA_DEF_PD);
    uint32_t hi = 0;
    for (unsigned i = VFW_RDMA_DEF_PD; i < 3 * VFW_RDMA_DEF_PD; i++) {
        CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_OK);
        hi = pd > hi ? pd : hi;
    }
    CHECK(hi == 3 * VFW_RDMA_DEF_PD);
    CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_NOSPC);
    CHECK(used_of(R1, 0).pd == 3 * VFW_RDMA_DEF_PD);
    /* the first PD is still there: freeing it works once, then NOENT */
    struct vfw_rcmd d = { .opcode = VFW_RCMD_PD_FREE };
    d.u.pd.pd = first;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_PD_FREE;
    d.u.pd.pd = first;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_NOENT);
    /* down to the usage, then up to the device limit */
    qq.pd = 3 * VFW_RDMA_DEF_PD - 1;
    CHECK(vfw_rnic_set_quota(R1, 0, &qq) == VFW_AQ_S_OK);
    CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_NOSPC);
    qq.pd = VFW_RDMA_HW_PD;
    CHECK(vfw_rnic_set_quota(R1, 0, &qq) == VFW_AQ_S_OK);
    for (unsigned i = 3 * VFW_RDMA_DEF_PD - 1; i < VFW_RDMA_HW_PD; i++)
        CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_OK);
    CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_NOSPC);
    CHECK(used_of(R1, 0).pd == VFW_RDMA_HW_PD);
    return 0;
}

/* The connection's TOS (issue 17: RDMA QPs in traffic classes): every TCP
 * segment of the initiator carries CONNECT's TOS, its SYN included; the
 * acceptor's carry ACCEPT's from the accept on (its SYN-ACK went before);
 * ECN bits in the TOS are refused. */
static int test_connection_tos(void)
{
    CHECK(setup() == 0);
    struct ep a, b;
    CHECK(ep_make(&a, &A) == 0);
    CHECK(ep_make(&b, &B) == 0);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_CONNECT };
    d.u.connect.qp = a.qp.id;
    memcpy(d.u.connect.rip, (uint8_t[]){ 10, 0, 0, 2 }, 4);
    d.u.connect.rport = 5000;
    memcpy(d.u.connect.dmac, B.mac, 6);
    d.u.connect.mpa_rev = 2;
    d.u.connect.tos = 0xb9;             /* DSCP 46 with an ECN bit */
    CHECK(cmd(&A, &d) == VFW_RCMD_S_INVAL);
    CHECK(A.tcp_out == 0);
    g_tos_connect = 0xb8;               /* DSCP 46 (EF) */
    g_tos_accept = 0x28;                /* DSCP 10 (AF11) */
    uint32_t cep_a, cep_b;
    int rc = connect_pair(&a, &b, &cep_a, &cep_b);
    g_tos_connect = g_tos_accept = 0;
    CHECK(rc == 0);
    /* some data from B after the accept: an RDMA Send */
    struct vfw_wqe w;
    sge_wqe(&w, 0x51, VFW_WQE_OP_RECV_, a.stag, MR_IOVA, 64);
    post(&A, &a.qp, false, &w, 1);
    sge_wqe(&w, 0x52, VFW_WQE_OP_SEND, b.stag, MR_IOVA, 64);
    post(&B, &b.qp, true, &w, 1);
    struct vfw_cqe_hw c;
    CHECK(cq_wait(&A, &B, &a.cq, &c));
    CHECK(c.wr_id == 0x51 && c.status == VFW_CQE_S_SUCCESS);
    CHECK(A.tcp_out >= 3);
    CHECK(A.tos_first == 0xb8 && A.tos_and == 0xb8 && A.tos_or == 0xb8);
    CHECK(B.tcp_out >= 2);
    CHECK(B.tos_first == 0 && B.tos_last == 0x28);
    teardown();
    return 0;
}

/* One SEND A -> B and one RDMA READ A <- B on a connected pair; each must
 * complete with success on both sides and move the bytes. */
static int send_and_read(struct ep *a, struct ep *b, uint64_t tag)
{
    struct vfw_wqe w;
    struct vfw_cqe_hw c;
    uint8_t pat[300], got[300];
    for (size_t i = 0; i < sizeof(pat); i++)
        pat[i] = (uint8_t)(i + tag);
    g_put(a->s, &a->mr, 0, pat, sizeof(pat));
    sge_wqe(&w, tag, VFW_WQE_OP_RECV_, b->stag, MR_IOVA + 4096, 300);
    post(b->s, &b->qp, false, &w, 1);
    sge_wqe(&w, tag + 1, VFW_WQE_OP_SEND, a->stag, MR_IOVA, 300);
    post(a->s, &a->qp, true, &w, 1);
    CHECK(cq_wait(b->s, a->s, &b->cq, &c));
    CHECK(c.wr_id == tag && c.status == VFW_CQE_S_SUCCESS &&
          c.byte_len == 300);
    g_get(b->s, &b->mr, 4096, got, 300);
    CHECK(memcmp(got, pat, 300) == 0);
    CHECK(cq_wait(a->s, b->s, &a->cq, &c));
    CHECK(c.wr_id == tag + 1 && c.status == VFW_CQE_S_SUCCESS);
    /* A pulls them back from B into its own MR's third page */
    sge_wqe(&w, tag + 2, VFW_WQE_OP_RDMA_READ, a->stag, MR_IOVA + 8192, 300);
    w.remote_stag = b->stag;
    w.remote_addr = MR_IOVA + 4096;
    post(a->s, &a->qp, true, &w, 1);
    CHECK(cq_wait(a->s, b->s, &a->cq, &c));
    CHECK(c.wr_id == tag + 2 && c.status == VFW_CQE_S_SUCCESS &&
          c.opcode == VFW_CQE_OP_RDMA_READ);
    g_get(a->s, &a->mr, 8192, got, 300);
    CHECK(memcmp(got, pat, 300) == 0);
    return 0;
}

/* Issue 33 class 4: a QP reconnected after a graceful close starts its
 * new connection clean. The first connection (with a Read RTR) moves the
 * Send and Read MSNs of A's QP; after CLOSING on A and the close on both
 * sides, A's QP connects to a new QP of B's, and its first SEND and READ
 * must be taken by that peer, whose MSNs start at 1 (RFC 5041 sec. 5.1:
 * the MSN of each queue starts at 1 on a new stream). */
static int test_reconnect_after_graceful_close(void)
{
    struct ep a, b;
    uint32_t cep_a, cep_b;
    g_rtr = 4;                  /* a zero-length RDMA Read as RTR */
    int rc = connected_pair(&a, &b, &cep_a, &cep_b);
    g_rtr = 1;
    CHECK(rc == 0);
    CHECK(send_and_read(&a, &b, 0x100) == 0);
    CHECK(send_and_read(&a, &b, 0x200) == 0);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_QP_MODIFY };
    d.u.qp_modify.qp = a.qp.id;
    d.u.qp_modify.state = VFW_QPS_CLOSING;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    struct vfw_eqe e;
    CHECK(eq_wait(&B, &A, VFW_EQE_CLOSE, &e, NULL) && e.obj == cep_b);
    CHECK(eq_wait(&A, &B, VFW_EQE_CLOSE, &e, NULL) && e.obj == cep_a &&
          e.status == VFW_CM_S_OK);
    struct ep *eps[2] = { &a, &b };
    for (int i = 0; i < 2; i++) {
        memset(&d, 0, sizeof(d));
        d.opcode = VFW_RCMD_QP_QUERY;
        d.u.qp_query.qp = eps[i]->qp.id;
        CHECK(cmd(eps[i]->s, &d) == VFW_RCMD_S_OK);
        CHECK(d.u.qp_query.state == VFW_QPS_IDLE);
    }
    /* A's QP again, to a new QP of B's: its MSNs start at 1 */
    struct ep b2 = b;
    CHECK(qp_make(&B, &b2.qp, b.pd, b.cq.id, b.cq.id, 16, 1) ==
          VFW_RCMD_S_OK);
    eps[1] = &b2;
    g_port = 5001;
    rc = connect_pair(&a, &b2, &cep_a, &cep_b);
    g_port = 5000;
    CHECK(rc == 0);
    CHECK(send_and_read(&a, &b2, 0x300) == 0);
    for (int i = 0; i < 2; i++) {
        memset(&d, 0, sizeof(d));
        d.opcode = VFW_RCMD_QP_QUERY;
        d.u.qp_query.qp = eps[i]->qp.id;
        CHECK(cmd(eps[i]->s, &d) == VFW_RCMD_S_OK);
        CHECK(d.u.qp_query.state == VFW_QPS_RTS);
        CHECK(!d.u.qp_query.term_sent_valid && !d.u.qp_query.term_rcvd_valid);
    }
    teardown();
    return 0;
}

/* A's SYNs leave with their MSS option lowered to 200, as a path that
 * clamps it would: B's TCP may then send no record over 200 bytes. */
static void clamp_syn_mss(uint8_t *f, size_t n)
{
    if (n < 54 || f[12] != 0x08 || f[13] != 0 || f[23] != 6)
        return;
    uint8_t *ip = f + 14;
    size_t ihl = (size_t)(ip[0] & 15) * 4;
    uint8_t *t = ip + ihl;
    size_t thl = (size_t)(t[12] >> 4) * 4;
    uint16_t tl = (uint16_t)(vfw_ld_be16(ip + 2) - ihl);
    if (!(t[13] & 0x02) || 14 + ihl + tl > n)
        return;                              /* not a SYN */
    for (size_t i = 20; i + 4 <= thl && t[i] != 0;) {
        if (t[i] == 1) {
            i++;
            continue;
        }
        if (t[i] == 2 && t[i + 1] == 4) {
            vfw_st_be16(t + i + 2, 200);
            break;
        }
        if (t[i + 1] < 2)
            break;
        i += t[i + 1];
    }
    t[16] = t[17] = 0;
    vfw_csum_store(t + 16, vfw_csum_partial(t, tl,
                   vfw_csum_pseudo(vfw_ld_be32(ip + 12), vfw_ld_be32(ip + 16),
                                   6, tl)));
}

/* Issue 33 class 5: a REJECT that fails changes nothing. Its MPA Reject
 * does not fit B's MSS (clamped to 200 on the way), so the command fails;
 * the request must still be pending, the TCP connection open (A hears
 * nothing), and a REJECT that fits must then reach A with its data. */
static int test_failed_reject_changes_nothing(void)
{
    CHECK(setup() == 0);
    struct ep a, b;
    CHECK(ep_make(&a, &A) == 0);
    CHECK(ep_make(&b, &B) == 0);
    A.mangle_out = clamp_syn_mss;
    struct vfw_rcmd d = { .opcode = VFW_RCMD_LISTEN };
    d.u.listen.port = 6100;
    d.u.listen.backlog = 1;
    CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_CONNECT;
    d.u.connect.qp = a.qp.id;
    memcpy(d.u.connect.rip, (uint8_t[]){ 10, 0, 0, 2 }, 4);
    d.u.connect.rport = 6100;
    memcpy(d.u.connect.dmac, B.mac, 6);
    d.u.connect.mpa_rev = 2;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    uint32_t cep_a = d.u.connect.cep;
    struct vfw_eqe e;
    CHECK(eq_wait(&B, &A, VFW_EQE_CONNECT_REQUEST, &e, NULL));
    uint32_t cep_b = e.obj;

    uint64_t big = g_alloc(&B, 512, 64);
    memset(gm(&B, big), 'x', 300);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_REJECT;
    d.u.reject.cep = cep_b;
    d.u.reject.pdata_len = 300;               /* 20 + 4 + 300 > 200 */
    d.u.reject.pdata_addr = big;
    int st = cmd(&B, &d);
    CHECK(st != VFW_RCMD_S_OK && st > 0);
    pump(&A, &B, 50);
    CHECK(!eq_poll(&A, &e, NULL));            /* A's connect still waits */
    CHECK(!eq_poll(&B, &e, NULL));            /* B's request still there */

    uint64_t small = g_alloc(&B, 64, 64);
    memcpy(gm(&B, small), "not today", 9);
    d.u.reject.pdata_len = 9;
    d.u.reject.pdata_addr = small;
    CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
    uint8_t pdata[VFW_EQ_PDATA_SLOT];
    CHECK(eq_wait(&A, &B, VFW_EQE_CONNECT_REPLY, &e, pdata));
    CHECK(e.obj == cep_a && e.status == VFW_CM_S_REFUSED);
    CHECK(e.pdata_len == 9 && memcmp(pdata, "not today", 9) == 0);
    teardown();
    return 0;
}

/* ---- issue 33 class 2: a guest-chosen amount of work in one run -------- */
/* A QP whose rings are 4096 WQEs deep (512 KiB each: more pages than a
 * g_buf holds), in contiguous guest memory with its page list beside it. */
#define BIG_DEPTH 4096u
struct big_qp {
    uint32_t id;
    uint64_t sq, rq;          /* ring bases */
    uint16_t sq_pi, rq_pi;
    uint32_t sq_seq, rq_seq;  /* WRs rung in so far */
};

static struct vfw_pgl_ref big_ring(struct side *s, uint64_t *base)
{
    uint32_t npages = BIG_DEPTH * VFW_WQE_SIZE / PG;
    *base = g_alloc(s, (uint64_t)npages * PG, PG);
    uint64_t pgl = g_alloc(s, 8ull * npages, 8);
    for (uint32_t i = 0; i < npages; i++) {
        uint64_t a = *base + (uint64_t)i * PG;
        memcpy(gm(s, pgl + 8ull * i), &a, 8);
    }
    struct vfw_pgl_ref r = { .pgl_addr = pgl, .npages = npages,
                             .page_shift = 12 };
    return r;
}

static int big_qp_make(struct side *s, struct big_qp *q, uint32_t pd,
                       uint32_t cq)
{
    memset(q, 0, sizeof(*q));
    struct vfw_rcmd d = { .opcode = VFW_RCMD_QP_CREATE };
    struct vfw_rcmd_qp_create *c = &d.u.qp_create;
    c->pd = pd;
    c->send_cq = c->recv_cq = cq;
    c->sq_depth = c->rq_depth = BIG_DEPTH;
    c->ord = c->ird = 1;
    c->db_page = 1;
    c->sq = big_ring(s, &q->sq);
    c->rq = big_ring(s, &q->rq);
    int st = cmd(s, &d);
    q->id = c->qp;
    return st;
}

/* wr_id of a big QP's WR: which QP, which queue, its sequence number */
static uint64_t big_wr_id(uint32_t qp, bool rq, uint32_t seq)
{
    return (uint64_t)qp << 40 | (uint64_t)rq << 32 | seq;
}

/* n more WRs into the RQ (empty Receives) and, with sends, the SQ
 * (signaled zero-length Sends); the doorbells rung: recorded, nothing
 * fetched until a run. */
static void big_ring_in_q(struct side *s, struct big_qp *q, uint32_t n,
                          bool sends)
{
    struct vfw_wqe w;
    for (uint32_t i = 0; i < n; i++) {
        if (sends) {
            memset(&w, 0, sizeof(w));
            w.wr_id = big_wr_id(q->id, false, q->sq_seq++);
            w.opcode = VFW_WQE_OP_SEND;
            w.flags = VFW_WQE_F_SIGNALED;
            memcpy(gm(s, q->sq + (uint64_t)(q->sq_pi++ % BIG_DEPTH) *
                      VFW_WQE_SIZE), &w, sizeof(w));
        }
        memset(&w, 0, sizeof(w));
        w.wr_id = big_wr_id(q->id, true, q->rq_seq++);
        memcpy(gm(s, q->rq + (uint64_t)(q->rq_pi++ % BIG_DEPTH) *
                  VFW_WQE_SIZE), &w, sizeof(w));
    }
    if (sends)
        vfw_rnic_doorbell(s->r, s->fn, VFW_DB_PAGE_SIZE + VFW_DB_SQ,
                          q->id | (uint32_t)q->sq_pi << VFW_DB_PI_SHIFT, 4);
    vfw_rnic_doorbell(s->r, s->fn, VFW_DB_PAGE_SIZE + VFW_DB_RQ,
                      q->id | (uint32_t)q->rq_pi << VFW_DB_PI_SHIFT, 4);
}

static void big_ring_in(struct side *s, struct big_qp *q, uint32_t n)
{
    big_ring_in_q(s, q, n, true);
}


static bool cmd_done(struct side *s, uint64_t a, uint16_t *status)
{
    struct vfw_rcmd out;
    memcpy(&out, gm(s, a), sizeof(out));
    *status = out.status;
    return out.flags & VFW_RCMD_F_DONE;
}

/* What one run of one function may touch of its memory, whatever the
 * guest rang in: the run's budget is a few hundred units (a WQE fetched,
 * a CQE or EQE written, a command), each a few DMA accesses. Without a
 * budget the first run below fetched all 16384 WQEs and wrote as many
 * CQEs: ~49000 accesses. */
#define RUN_DMA_BOUND 2048u

/* Each CQE the driver finds: a WR_FLUSH_ERR of one of the big QPs, in
 * ring order per queue (next[qp index][queue] is the sequence expected). */
static int big_reap(struct side *s, struct d_cq *cq, const struct big_qp *q,
                    unsigned nq, uint32_t next[][2], unsigned *reaped)
{
    struct vfw_cqe_hw c;
    while (cq_poll(s, cq, &c)) {
        CHECK(c.status == VFW_CQE_S_WR_FLUSH_ERR);
        unsigned k = nq;
        for (unsigned i = 0; i < nq; i++)
            if (q[i].id == c.wr_id >> 40)
                k = i;
        CHECK(k < nq && c.qp == q[k].id);
        bool rq = (c.wr_id >> 32) & 1;
        CHECK(rq == (c.opcode == VFW_CQE_OP_RECV));
        CHECK((uint32_t)c.wr_id == next[k][rq]);
        next[k][rq]++;
        (*reaped)++;
    }
    return 0;
}

/* QP_MODIFY(ERROR) drains what the driver rang in, but within the run's
 * budget: two QPs with both rings full (16384 WRs), ERROR for both and a
 * QP_DESTROY of the first in one batch. Every run stays under the bound;
 * the drain carries over from run to run, every WR completes exactly
 * once, flushed, in ring order; the QP_DESTROY completes only after the
 * last WR of its QP did. Then the second QP, already in ERROR, is rung
 * full again and sent ERROR eight times in one batch: a drain again, the
 * same bound, no WR twice. */
static int test_error_drain_is_budgeted(void)
{
    CHECK(setup() == 0);
    drv_start(&A);
    uint32_t pd;
    CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_OK);
    struct d_cq cq;
    CHECK(cq_make(&A, &cq, 4096, 1) == VFW_RCMD_S_OK);
    struct big_qp q[2];
    for (unsigned i = 0; i < 2; i++) {
        CHECK(big_qp_make(&A, &q[i], pd, cq.id) == VFW_RCMD_S_OK);
        big_ring_in(&A, &q[i], BIG_DEPTH);
    }
    struct vfw_rcmd d = { .opcode = VFW_RCMD_QP_MODIFY };
    d.u.qp_modify.state = VFW_QPS_ERROR;
    d.u.qp_modify.qp = q[0].id;
    uint64_t err0 = cmd_put(&A, &d);
    d.u.qp_modify.qp = q[1].id;
    uint64_t err1 = cmd_put(&A, &d);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_QP_DESTROY;
    d.u.qp_modify.qp = q[0].id;
    uint64_t destroy0 = cmd_put(&A, &d);
    reg_w(&A, VFW_REG_RCQ_TAIL, A.rcq_tail);

    uint32_t next[2][2] = { { 0, 0 }, { 0, 0 } };
    unsigned reaped = 0, runs = 0;
    bool destroyed = false;
    uint16_t st;
    while (reaped < 4 * BIG_DEPTH && runs < 1000) {
        A.dma_ops = 0;
        vfw_rnic_run(R1);
        runs++;
        CHECK(A.dma_ops <= RUN_DMA_BOUND);
        CHECK(big_reap(&A, &cq, q, 2, next, &reaped) == 0);
        if (!destroyed && cmd_done(&A, destroy0, &st)) {
            CHECK(st == VFW_RCMD_S_OK);
            CHECK(next[0][0] == BIG_DEPTH && next[0][1] == BIG_DEPTH);
            destroyed = true;
        }
    }
    CHECK(reaped == 4 * BIG_DEPTH && runs > 1);
    CHECK(cmd_done(&A, err0, &st) && st == VFW_RCMD_S_OK);
    CHECK(cmd_done(&A, err1, &st) && st == VFW_RCMD_S_OK);
    CHECK(cmd_done(&A, destroy0, &st) && st == VFW_RCMD_S_OK);
    CHECK(used_of(R1, 0).qp == 1);

    /* the second QP again: already in ERROR, rung full, ERROR x 8 */
    struct big_qp *q1 = &q[1];
    big_ring_in(&A, q1, BIG_DEPTH);
    uint64_t again[8];
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_QP_MODIFY;
    d.u.qp_modify.state = VFW_QPS_ERROR;
    d.u.qp_modify.qp = q1->id;
    for (unsigned i = 0; i < 8; i++)
        again[i] = cmd_put(&A, &d);
    reg_w(&A, VFW_REG_RCQ_TAIL, A.rcq_tail);
    uint32_t next1[1][2] = { { next[1][0], next[1][1] } };
    reaped = 0;
    for (runs = 0; runs < 1000 && reaped < 2 * BIG_DEPTH; runs++) {
        A.dma_ops = 0;
        vfw_rnic_run(R1);
        CHECK(A.dma_ops <= RUN_DMA_BOUND);
        CHECK(big_reap(&A, &cq, q1, 1, next1, &reaped) == 0);
    }
    CHECK(reaped == 2 * BIG_DEPTH && runs > 1);
    pump(&A, NULL, 20);
    CHECK(big_reap(&A, &cq, q1, 1, next1, &reaped) == 0);
    CHECK(reaped == 2 * BIG_DEPTH);           /* none twice */
    for (unsigned i = 0; i < 8; i++)
        CHECK(cmd_done(&A, again[i], &st) && st == VFW_RCMD_S_OK);
    teardown();
    return 0;
}

/* The engine's own flush is budgeted too. WRs fetched into an idle QP
 * wait in the engine until it connects, so over many runs 8192 of them
 * pile up; one QP_MODIFY(ERROR) must not complete them all in one run.
 * Each run stays under the bound, every WR completes once, flushed, in
 * order, and a QP_DESTROY behind the ERROR waits for the last of them. */
static int test_error_flush_is_budgeted(void)
{
    CHECK(setup() == 0);
    drv_start(&A);
    uint32_t pd;
    CHECK(pd_alloc(&A, &pd) == VFW_RCMD_S_OK);
    struct d_cq cq;
    CHECK(cq_make(&A, &cq, 4096, 1) == VFW_RCMD_S_OK);
    struct big_qp q;
    CHECK(big_qp_make(&A, &q, pd, cq.id) == VFW_RCMD_S_OK);
    big_ring_in(&A, &q, BIG_DEPTH);
    for (unsigned i = 0; i < 200; i++)
        vfw_rnic_run(R1);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_QP_QUERY };
    d.u.qp_query.qp = q.id;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    CHECK(d.u.qp_query.state == VFW_QPS_IDLE);
    CHECK(d.u.qp_query.sq_outstanding == BIG_DEPTH &&
          d.u.qp_query.rq_posted == BIG_DEPTH);
    struct vfw_cqe_hw c;
    CHECK(!cq_poll(&A, &cq, &c));

    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_QP_MODIFY;
    d.u.qp_modify.qp = q.id;
    d.u.qp_modify.state = VFW_QPS_ERROR;
    uint64_t err = cmd_put(&A, &d);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_QP_DESTROY;
    d.u.qp_modify.qp = q.id;
    uint64_t destroy = cmd_put(&A, &d);
    reg_w(&A, VFW_REG_RCQ_TAIL, A.rcq_tail);
    uint32_t next[1][2] = { { 0, 0 } };
    unsigned reaped = 0, runs;
    uint16_t st;
    for (runs = 0; runs < 1000 && !cmd_done(&A, destroy, &st); runs++) {
        A.dma_ops = 0;
        vfw_rnic_run(R1);
        CHECK(A.dma_ops <= RUN_DMA_BOUND);
        CHECK(big_reap(&A, &cq, &q, 1, next, &reaped) == 0);
    }
    CHECK(cmd_done(&A, err, &st) && st == VFW_RCMD_S_OK);
    CHECK(cmd_done(&A, destroy, &st) && st == VFW_RCMD_S_OK);
    CHECK(reaped == 2 * BIG_DEPTH && runs > 1);
    CHECK(used_of(R1, 0).qp == 0);
    teardown();
    return 0;
}

/* A graceful close flushes the QP's posted receives within the budget
 * too, and the QP becomes IDLE only when the last is flushed: B's QP
 * holds 4096 receives when A closes; every run of B stays under the
 * bound, B's QP is still CLOSING right after its CLOSE event (no new
 * connection may take it half-flushed), then IDLE with all 4096 flushed
 * once in order. */
static int test_graceful_close_flush_is_budgeted(void)
{
    CHECK(setup() == 0);
    struct ep a, b;
    CHECK(ep_make(&a, &A) == 0);
    CHECK(ep_make(&b, &B) == 0);
    struct d_cq bcq;
    CHECK(cq_make(&B, &bcq, 4096, 1) == VFW_RCMD_S_OK);
    struct big_qp bq;
    CHECK(big_qp_make(&B, &bq, b.pd, bcq.id) == VFW_RCMD_S_OK);
    big_ring_in_q(&B, &bq, BIG_DEPTH, false);
    struct ep b2 = b;                 /* B's end of it: the big QP */
    b2.qp.id = bq.id;
    uint32_t cep_a, cep_b;
    CHECK(connect_pair(&a, &b2, &cep_a, &cep_b) == 0);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_QP_QUERY };
    for (int i = 0; i < 100; i++) {
        pump(&A, &B, 1);
        memset(&d, 0, sizeof(d));
        d.opcode = VFW_RCMD_QP_QUERY;
        d.u.qp_query.qp = bq.id;
        CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
        if (d.u.qp_query.rq_posted == BIG_DEPTH)
            break;
    }
    CHECK(d.u.qp_query.state == VFW_QPS_RTS &&
          d.u.qp_query.rq_posted == BIG_DEPTH);

    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_QP_MODIFY;
    d.u.qp_modify.qp = a.qp.id;
    d.u.qp_modify.state = VFW_QPS_CLOSING;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    uint32_t next[1][2] = { { 0, 0 } };
    unsigned reaped = 0;
    bool closed = false;
    struct vfw_eqe e;
    for (int i = 0; i < 2000 && reaped < BIG_DEPTH; i++) {
        vfw_rnic_run(R1);
        B.dma_ops = 0;
        vfw_rnic_run(R2);
        CHECK(B.dma_ops <= RUN_DMA_BOUND);
        sim_now += 200000;
        CHECK(big_reap(&B, &bcq, &bq, 1, next, &reaped) == 0);
        while (!closed && eq_poll(&B, &e, NULL))
            closed = e.type == VFW_EQE_CLOSE && e.obj == cep_b;
        if (closed && reaped < BIG_DEPTH / 2) {
            memset(&d, 0, sizeof(d));
            d.opcode = VFW_RCMD_QP_QUERY;
            d.u.qp_query.qp = bq.id;
            CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
            CHECK(d.u.qp_query.state == VFW_QPS_CLOSING);
        }
    }
    CHECK(closed && reaped == BIG_DEPTH);
    CHECK(next[0][1] == BIG_DEPTH && next[0][0] == 0);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_QP_QUERY;
    d.u.qp_query.qp = bq.id;
    CHECK(cmd(&B, &d) == VFW_RCMD_S_OK);
    CHECK(d.u.qp_query.state == VFW_QPS_IDLE &&
          d.u.qp_query.rq_posted == 0);
    teardown();
    return 0;
}

/* ---- issue 33: a SYN flood at a listener of the function --------------- */
/* A's listener at FL_PORT (backlog FL_BACKLOG) with one connection from
 * B accepted on it; a wire peer then sends FL_SYNS SYNs to the listener
 * from many addresses and ports, FL_BATCH per run of the device (the
 * engine's input queue holds 256), without ever completing a handshake.
 * Each test below asserts one property of the function under the flood. */
#define FL_PORT    7000
#define FL_BACKLOG 4
#define FL_SYNS    3000
#define FL_BATCH   32

/* B connects QP bq to A:FL_PORT; A accepts it on QP aq; both sides up. */
static int fl_accept(struct side *a, uint32_t aq, struct side *b, uint32_t bq)
{
    struct vfw_rcmd d = { .opcode = VFW_RCMD_CONNECT };
    d.u.connect.qp = bq;
    memcpy(d.u.connect.rip, (uint8_t[]){ 10, 0, 0, 1 }, 4);
    d.u.connect.rport = FL_PORT;
    memcpy(d.u.connect.dmac, a->mac, 6);
    d.u.connect.ord = d.u.connect.ird = 4;
    d.u.connect.mpa_rev = 2;
    d.u.connect.flags = VFW_CONN_F_P2P;
    d.u.connect.rtr_mask = g_rtr;
    CHECK(cmd(b, &d) == VFW_RCMD_S_OK);
    uint32_t cep_b = d.u.connect.cep;
    struct vfw_eqe e;
    CHECK(eq_wait(a, b, VFW_EQE_CONNECT_REQUEST, &e, NULL));
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_ACCEPT;
    d.u.accept.cep = e.obj;
    d.u.accept.qp = aq;
    d.u.accept.ord = d.u.accept.ird = 4;
    d.u.accept.flags = VFW_CONN_F_P2P;
    d.u.accept.rtr_mask = g_rtr;
    CHECK(cmd(a, &d) == VFW_RCMD_S_OK);
    CHECK(eq_wait(a, b, VFW_EQE_ESTABLISHED, &e, NULL));
    CHECK(eq_wait(b, a, VFW_EQE_CONNECT_REPLY, &e, NULL));
    CHECK(e.status == VFW_CM_S_OK && e.obj == cep_b);
    return 0;
}

static int fl_start(struct ep *a, struct ep *b)
{
    CHECK(setup() == 0);
    CHECK(ep_make(a, &A) == 0);
    CHECK(ep_make(b, &B) == 0);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_LISTEN };
    d.u.listen.port = FL_PORT;
    d.u.listen.backlog = FL_BACKLOG;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    CHECK(fl_accept(&A, a->qp.id, &B, b->qp.id) == 0);
    return 0;
}

/* SYN number i of the flood: source 10.9.x.y:port, a different address
 * every SYN (65000 of them) and a different port every 7. */
static void fl_syn(unsigned i)
{
    uint8_t f[128];
    static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 0x0f };
    uint32_t sip = 0x0a090000u + 1 + (i * 40503u) % 65000u;
    uint16_t sport = (uint16_t)(1024 + (i / 7) % 60000);
    size_t n = tcp_frame(f, A.mac, smac, sip, A.ip, sport, FL_PORT,
                         i * 2654435761u, 0, VFW_TH_SYN, 65535, NULL, 0,
                         NULL, 0);
    vfw_rnic_rx_frame(R1, 1, f, n);
}

/* B writes `len` bytes of pattern `seed` into A's MR with RDMA WRITE and
 * the bytes are there when B's completion says so. */
static int fl_write(struct ep *a, struct ep *b, unsigned seed, uint32_t len)
{
    uint8_t pat[4000], got[4000];
    for (uint32_t k = 0; k < len; k++)
        pat[k] = (uint8_t)(k * 31 + seed * 7 + 1);
    g_put(&B, &b->mr, 200, pat, len);
    struct vfw_wqe w;
    sge_wqe(&w, 0x3300 + seed, VFW_WQE_OP_RDMA_WRITE, b->stag,
            MR_IOVA + 200, len);
    w.remote_stag = a->stag;
    w.remote_addr = MR_IOVA + 8000;
    post(&B, &b->qp, true, &w, 1);
    struct vfw_cqe_hw c;
    CHECK(cq_wait(&B, &A, &b->cq, &c));
    CHECK(c.wr_id == 0x3300 + seed && c.status == VFW_CQE_S_SUCCESS);
    /* B's completion says its TCP took the bytes; A places them when its
     * engine gets the segments, which may still wait in A's input queue
     * behind a flood: as long as cq_wait would give it */
    for (int i = 0; i < 2000; i++) {
        g_get(&A, &a->mr, 8000, got, len);
        if (memcmp(got, pat, len) == 0)
            return 0;
        pump(&B, &A, 1);
    }
    CHECK(memcmp(got, pat, len) == 0);
    return 0;
}

/* (a) The flood leaves the function's TCP holding the buffers of its one
 * established connection and at most the listener's backlog of half-open
 * ones; the quota's accounting does not move. */
static int test_syn_flood_bounded(void)
{
    struct ep a, b;
    CHECK(fl_start(&a, &b) == 0);
    struct vfw_tcp_stats st0, st;
    CHECK(vfw_rnic_tcp_stats(R1, 1, &st0) == 0);
    CHECK(st0.buf_bytes > 0 && st0.half_open == 0);
    for (unsigned i = 0; i < FL_SYNS; i++) {
        fl_syn(i);
        if ((i + 1) % FL_BATCH)
            continue;
        pump(&A, &B, 1);
        CHECK(vfw_rnic_tcp_stats(R1, 1, &st) == 0);
        CHECK(st.half_open <= FL_BACKLOG);
        CHECK(st.buf_bytes == st0.buf_bytes);
        CHECK(used_of(R1, 0).conn == 2);
    }
    /* every SYN had its own 4-tuple: all but the last FL_BACKLOG were
     * dropped, and the guest's counter says so */
    pump(&A, &B, 2);
    CHECK(vfw_rnic_tcp_stats(R1, 1, &st) == 0);
    CHECK(st.half_open == FL_BACKLOG && st.conn_limit == 0);
    CHECK(st.syn_dropped == FL_SYNS - FL_BACKLOG);
    CHECK(vfw_rnic_stat(R1, 1, VFW_RSTAT_SYN_DROPS) == st.syn_dropped);
    CHECK(reg_r(&A, VFW_REG_RSTAT(VFW_RSTAT_SYN_DROPS)) ==
          FL_SYNS - FL_BACKLOG);
    /* the last ones go after their SYN-ACK retransmissions (63 s) */
    for (int k = 0; k < 20; k++) {
        sim_now += 4000000000ull;
        pump(&A, &B, 1);
    }
    CHECK(vfw_rnic_tcp_stats(R1, 1, &st) == 0);
    CHECK(st.half_open == 0 && st.buf_bytes == st0.buf_bytes);
    CHECK(used_of(R1, 0).conn == 2);
    teardown();
    return 0;
}

/* (b) The established connection of the same function keeps moving data
 * while the flood arrives and after it. */
static int test_syn_flood_established_moves(void)
{
    struct ep a, b;
    CHECK(fl_start(&a, &b) == 0);
    unsigned writes = 0;
    for (unsigned i = 0; i < FL_SYNS; i++) {
        fl_syn(i);
        if ((i + 1) % FL_BATCH)
            continue;
        pump(&A, &B, 1);
        if ((i + 1) % (8 * FL_BATCH) == 0)
            CHECK(fl_write(&a, &b, writes++, 4000) == 0);
    }
    CHECK(writes >= 10);
    for (int k = 0; k < 20; k++) {      /* 2 s after the flood */
        sim_now += 100000000ull;
        pump(&A, &B, 1);
    }
    CHECK(fl_write(&a, &b, writes++, 4000) == 0);
    teardown();
    return 0;
}

/* (c) Once the flood stops and the device's clock moves on (2 s: less
 * than the 63 s a half-open connection lives through its SYN-ACK
 * retransmissions), a new connection to the listener is accepted and
 * both connections carry data. */
static int test_syn_flood_then_accept(void)
{
    struct ep a, b;
    CHECK(fl_start(&a, &b) == 0);
    for (unsigned i = 0; i < FL_SYNS; i++) {
        fl_syn(i);
        if ((i + 1) % FL_BATCH == 0)
            pump(&A, &B, 1);
    }
    for (int k = 0; k < 20; k++) {
        sim_now += 100000000ull;
        pump(&A, &B, 1);
    }
    struct d_qp qa2, qb2;
    CHECK(qp_make(&A, &qa2, a.pd, a.cq.id, a.cq.id, 16, 1) == VFW_RCMD_S_OK);
    CHECK(qp_make(&B, &qb2, b.pd, b.cq.id, b.cq.id, 16, 1) == VFW_RCMD_S_OK);
    CHECK(fl_accept(&A, qa2.id, &B, qb2.id) == 0);
    CHECK(used_of(R1, 0).conn == 3);
    CHECK(fl_write(&a, &b, 1, 4000) == 0);
    struct ep b2 = b, a2 = a;
    b2.qp = qb2;
    a2.qp = qa2;
    CHECK(fl_write(&a2, &b2, 2, 4000) == 0);
    teardown();
    return 0;
}

/* (b) again, with a flood faster than the device: on the wire in front of
 * every frame B sends to A come FL_PER_FRAME SYNs, far more than A's
 * input queue (256) drains per run (64), so A drops frames. The flood's
 * must be the ones dropped: not one of the connection's segments is lost
 * (B never retransmits) and every WRITE completes at once. */
#define FL_PER_FRAME 64
static unsigned g_fl_per_frame, g_fl_next;
static void fl_frame_out(void *ctx, unsigned fn, const uint8_t *f, size_t n)
{
    for (unsigned k = 0; k < g_fl_per_frame; k++)
        fl_syn(g_fl_next++);
    sd_frame_out(ctx, fn, f, n);
}

static int test_syn_flood_outpaces_device(void)
{
    struct ep a, b;
    CHECK(setup() == 0);
    /* B's frames go out through the flooding wire */
    static struct vfw_rnic_ops fl_ops;
    fl_ops = sd_ops;
    fl_ops.frame_out = fl_frame_out;
    vfw_rnic_destroy(R2);
    R2 = vfw_rnic_create(&fl_ops, &B, 0);
    CHECK(R2);
    B.r = R2;
    vfw_rnic_set_mac(R2, 0, B.mac);
    CHECK(ep_make(&a, &A) == 0);
    CHECK(ep_make(&b, &B) == 0);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_LISTEN };
    d.u.listen.port = FL_PORT;
    d.u.listen.backlog = FL_BACKLOG;
    CHECK(cmd(&A, &d) == VFW_RCMD_S_OK);
    CHECK(fl_accept(&A, a.qp.id, &B, b.qp.id) == 0);
    struct vfw_tcp_stats sb0, sb;
    CHECK(vfw_rnic_tcp_stats(R2, 0, &sb0) == 0);
    uint64_t drops0 = vfw_rnic_stat(R1, 1, VFW_RSTAT_RX_DROPS);
    g_fl_per_frame = FL_PER_FRAME;
    g_fl_next = 0;
    for (unsigned k = 0; k < 20; k++) {
        int rc = fl_write(&a, &b, k, 4000);
        if (rc)
            g_fl_per_frame = 0;
        CHECK(rc == 0);
    }
    g_fl_per_frame = 0;
    CHECK(g_fl_next >= 20 * 3 * FL_PER_FRAME);
    CHECK(vfw_rnic_stat(R1, 1, VFW_RSTAT_RX_DROPS) > drops0);
    CHECK(vfw_rnic_tcp_stats(R2, 0, &sb) == 0);
    CHECK(sb.retrans == sb0.retrans && sb.timeouts == sb0.timeouts);
    teardown();
    return 0;
}

int main(int argc, char **argv)
{
    static const struct unit_test t[] = {
        { "registers", test_registers },
        { "bad_commands", test_bad_commands },
        { "malformed_wqe_and_irq_mask", test_malformed_wqe_and_irq_mask },
        { "verbs_end_to_end", test_verbs_end_to_end },
        { "bad_stag_write", test_bad_stag_write },
        { "reset_with_connection", test_reset_with_connection },
        { "graceful_close", test_graceful_close },
        { "abortive_close", test_abortive_close },
        { "error_flushes_rung_wqes", test_error_flushes_rung_wqes },
        { "conn_quota_backlog", test_conn_quota_backlog },
        { "eq_overflow", test_eq_overflow },
        { "refused_and_rejected", test_refused_and_rejected },
        { "cq_overflow", test_cq_overflow },
        { "two_functions_one_rnic", test_two_functions_one_rnic },
        { "quota_grows_live", test_quota_grows_live },
        { "connection_tos", test_connection_tos },
        { "failed_reject_changes_nothing", test_failed_reject_changes_nothing },
        { "reconnect_after_graceful_close",
          test_reconnect_after_graceful_close },
        { "error_drain_is_budgeted", test_error_drain_is_budgeted },
        { "error_flush_is_budgeted", test_error_flush_is_budgeted },
        { "graceful_close_flush_is_budgeted",
          test_graceful_close_flush_is_budgeted },
        { "syn_flood_bounded", test_syn_flood_bounded },
        { "syn_flood_established_moves", test_syn_flood_established_moves },
        { "syn_flood_then_accept", test_syn_flood_then_accept },
        { "syn_flood_outpaces_device", test_syn_flood_outpaces_device },
    };
    int rc = run_tests("rnic", t, sizeof(t) / sizeof(t[0]), argc, argv,
                       teardown);
    teardown();
    return rc;
}
