/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vfwarp hardware interface 2.0: the RDMA (iWARP verbs) part of every
 * function, PF and VF alike. Additive to 1.1: nothing of 1.1 moves.
 *
 *   BAR0 window 0x0a00..0x0aff  limits (this function's quota), the verbs
 *                               command queue, the event queue, counters
 *   BAR4 (VFW_DB_BAR)           doorbells: VFW_DB_PAGES pages of 4 KiB; a
 *                               driver maps one page into one process
 *   function memory (DMA)       command ring, event ring + private-data
 *                               slots, and per object: SQ/RQ/CQ rings and
 *                               MR page lists, all named by page lists
 *
 * Control path: the function's own driver writes commands (PD, MR, CQ,
 * QP, address, listen, connect, accept, reject) into the command ring and
 * rings VFW_REG_RCQ_TAIL, like the PF admin queue. The device runs them in
 * order, writes each back with DONE (+ ERR) and a status; a bad command
 * fails alone and changes nothing.
 *
 * Data path: a process owns SQ, RQ and CQ rings in its own memory (pinned
 * by the driver, handed to the device as page lists) and one doorbell
 * page. It writes WQEs, then the producer index into its doorbell page;
 * the device reads the WQEs and payload by DMA as the function (the IOMMU
 * applies) after checking PD, STag, bounds and rights, and writes CQEs the
 * process polls. A doorbell for a QP or CQ written through a page other
 * than the one the object was created with is ignored and counted
 * (VFW_RSTAT_DB_REFUSED).
 *
 * Events (completion notification, connection manager, asynchronous
 * errors) go to the function's event queue and raise its MSI-X vector.
 *
 * Every field is little endian. Must compile in the kernel, QEMU and user
 * space. docs/hw-interface.md ("Revision 2.0: RDMA") explains it.
 */
#ifndef VFWARP_RDMA_H
#define VFWARP_RDMA_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#else
#include <stdint.h>
#endif

/* ---- BAR0 window 0x0a00..0x0aff -------------------------------------- */
#define VFW_REGWIN_RDMA          0x0a00

/* Limits, RO. The quotas (QP..CONN) are this function's share: a VF's are
 * set by the PF (VFW_AQ_OP_SET_VF_RDMA_QUOTA), defaults VFW_RDMA_DEF_*. */
#define VFW_REG_RDMA_CAPS        0x0a00  /* VFW_RDMA_CAP_* */
#define VFW_REG_RDMA_MAX_QP      0x0a04
#define VFW_REG_RDMA_MAX_CQ      0x0a08
#define VFW_REG_RDMA_MAX_MR      0x0a0c
#define VFW_REG_RDMA_MAX_PD      0x0a10
#define VFW_REG_RDMA_MAX_MR_PAGES 0x0a14 /* 4 KiB pages over all MRs */
#define VFW_REG_RDMA_MAX_CONN    0x0a18  /* listeners + connections */
#define VFW_REG_RDMA_MAX_QP_DEPTH 0x0a1c /* SQ/RQ entries (power of two) */
#define VFW_REG_RDMA_MAX_CQ_DEPTH 0x0a20 /* CQ entries (power of two) */
#define VFW_REG_RDMA_MAX_SGE     0x0a24
#define VFW_REG_RDMA_MAX_INLINE  0x0a28  /* bytes of inline send data */
#define VFW_REG_RDMA_MAX_ORD_IRD 0x0a2c
#define VFW_REG_RDMA_DB_PAGES    0x0a30  /* doorbell pages in BAR4 */
#define VFW_REG_RDMA_MAX_PDATA   0x0a34  /* MPA private data bytes */

#define VFW_RDMA_CAP_IWARP       (1u << 0)  /* the engine is present */

/* Verbs command queue (same shape as the PF admin queue). */
#define VFW_REG_RCQ_BASE_LO      0x0a40  /* RW: ring base (64-byte aligned) */
#define VFW_REG_RCQ_BASE_HI      0x0a44
#define VFW_REG_RCQ_LEN          0x0a48  /* RW: descriptors, 1..VFW_RCQ_MAX_LEN */
#define VFW_REG_RCQ_HEAD         0x0a4c  /* RO: next descriptor the device runs */
#define VFW_REG_RCQ_TAIL         0x0a50  /* RW: doorbell, next free descriptor */
#define VFW_REG_RCQ_CTRL         0x0a54  /* RW: bit 0 ENABLE */
#define VFW_REG_RCQ_STATUS       0x0a58  /* RO: VFW_RCQ_STATUS_* */

#define VFW_RCQ_CTRL_ENABLE      (1u << 0)
#define VFW_RCQ_STATUS_ENABLED   (1u << 0)
#define VFW_RCQ_STATUS_CFG_ERR   (1u << 1)  /* bad BASE/LEN at enable */
#define VFW_RCQ_STATUS_TAIL_ERR  (1u << 2)  /* TAIL >= LEN written, ignored */
#define VFW_RCQ_STATUS_DMA_ERR   (1u << 3)  /* ring DMA failed; disabled */
#define VFW_RCQ_MAX_LEN          256
#define VFW_RCQ_DESC_SIZE        128
#define VFW_RCQ_BASE_ALIGN       64

/*
 * Event queue: a ring of VFW_EQE_SIZE entries and, beside it, one
 * VFW_EQ_PDATA_SLOT-byte slot per entry for private data (CM events).
 * Enabling checks BASE (64-byte aligned, non-zero), LEN (power of two,
 * VFW_EQ_MIN_LEN..VFW_EQ_MAX_LEN) and PDATA (64-byte aligned; 0 = events
 * carry no private data) and zeroes PROD/CONS. The device writes entry
 * PROD % LEN with owner = ((PROD / LEN) & 1) ^ 1, so the first pass writes
 * owner 1; the driver consumes while the owner bit matches its pass and
 * writes CONS (its consumed count, wrapping). With LEN entries unconsumed
 * an event is dropped and counted (VFW_REQ_STATUS_OVERFLOW,
 * VFW_RSTAT_EQ_OVERFLOW). IRQ_EN raises VECTOR after each batch of
 * entries; with IRQ_EN clear an event is remembered and raised when it is
 * set again.
 */
#define VFW_REG_REQ_BASE_LO      0x0a60
#define VFW_REG_REQ_BASE_HI      0x0a64
#define VFW_REG_REQ_LEN          0x0a68
#define VFW_REG_REQ_PDATA_LO     0x0a6c
#define VFW_REG_REQ_PDATA_HI     0x0a70
#define VFW_REG_REQ_CTRL         0x0a74  /* RW: VFW_REQ_CTRL_* */
#define VFW_REG_REQ_STATUS       0x0a78  /* RO: VFW_REQ_STATUS_* */
#define VFW_REG_REQ_PROD         0x0a7c  /* RO: entries written (wrapping) */
#define VFW_REG_REQ_CONS         0x0a80  /* RW: entries consumed (wrapping) */

#define VFW_REQ_CTRL_ENABLE      (1u << 0)
#define VFW_REQ_CTRL_IRQ_EN      (1u << 1)
#define VFW_REQ_CTRL_VEC_SHIFT   16         /* bits 23:16: MSI-X vector */
#define VFW_REQ_CTRL_VEC_MASK    (0xffu << 16)
#define VFW_REQ_STATUS_ENABLED   (1u << 0)
#define VFW_REQ_STATUS_CFG_ERR   (1u << 1)
#define VFW_REQ_STATUS_DMA_ERR   (1u << 2)  /* an entry write failed; disabled */
#define VFW_REQ_STATUS_OVERFLOW  (1u << 3)  /* an event was dropped (sticky) */
#define VFW_EQ_MIN_LEN           16
#define VFW_EQ_MAX_LEN           4096
#define VFW_EQE_SIZE             64
#define VFW_EQ_PDATA_SLOT        512        /* = VFW_RDMA_MAX_PDATA */

/* Counters, RO, 32-bit wrapping: VFW_REG_RSTAT(VFW_RSTAT_*). */
#define VFW_REG_RSTAT(k)         (0x0ac0 + 4 * (k))
enum vfw_rdma_stat {
    VFW_RSTAT_CMDS_OK = 0,
    VFW_RSTAT_CMDS_ERR,
    VFW_RSTAT_DB_REFUSED,       /* doorbell from a page that does not own the object */
    VFW_RSTAT_DB_BAD,           /* doorbell naming no object / a bad index */
    VFW_RSTAT_EQ_OVERFLOW,
    VFW_RSTAT_CQ_OVERFLOW,
    VFW_RSTAT_RX_FRAMES,        /* frames the engine took from the eswitch */
    VFW_RSTAT_TX_FRAMES,        /* frames the engine sent into the eswitch */
    VFW_RSTAT_RX_DROPS,         /* engine input queue full */
    VFW_RSTAT_DMA_ERR,          /* a ring/page-list/payload DMA failed */
    VFW_RSTAT_PROT_ERR,         /* STag/PD/bounds/rights check failed */
    /* A half-open connection (SYN answered, handshake not complete) the
     * engine dropped to make room for a newer one: a SYN beyond its
     * listener's backlog, or the engine's connection table full. Counts
     * SYN floods (issue 33); established connections are never dropped.
     * Reads 0 on a device that does not count it. */
    VFW_RSTAT_SYN_DROPS,
    VFW_RSTAT_COUNT
};

/* Quota defaults of a VF (the PF changes them with SET_VF_RDMA_QUOTA). */
#define VFW_RDMA_DEF_QP          64
#define VFW_RDMA_DEF_CQ          128
#define VFW_RDMA_DEF_MR          256
#define VFW_RDMA_DEF_PD          64
#define VFW_RDMA_DEF_MR_PAGES    65536      /* 256 MiB of registered memory */
#define VFW_RDMA_DEF_CONN        128
/* Hard device limits of one function (quotas cannot exceed them). */
#define VFW_RDMA_HW_QP           1024
#define VFW_RDMA_HW_CQ           2048
#define VFW_RDMA_HW_MR           8192
#define VFW_RDMA_HW_PD           1024
#define VFW_RDMA_HW_MR_PAGES     (1u << 20) /* 4 GiB */
#define VFW_RDMA_HW_CONN         1024
#define VFW_RDMA_MAX_QP_DEPTH    4096
#define VFW_RDMA_MAX_CQ_DEPTH    65536
#define VFW_RDMA_MAX_SGE         6
#define VFW_RDMA_MAX_INLINE      96
#define VFW_RDMA_MAX_ORD_IRD     32
#define VFW_RDMA_MAX_PDATA       512
#define VFW_RDMA_MAX_MR_PGL      (1u << 18) /* pages in one MR or ring (1 GiB) */

/* ---- BAR4: doorbells ------------------------------------------------- */
/*
 * VFW_DB_PAGES pages of VFW_DB_PAGE_SIZE. Page 0 belongs to the kernel
 * driver; pages 1.. are handed to user contexts, one each. In a page, all
 * 32-bit writes:
 *   +0x00 SQ:  qp_id (15:0) | producer index mod 65536 (31:16)
 *   +0x04 RQ:  qp_id (15:0) | producer index mod 65536 (31:16)
 *   +0x08 CQ arm: cq_id (15:0) | VFW_DB_CQ_ARM_* (17:16)
 * The producer index counts WQEs ever posted (wrapping at 65536); the
 * device takes (pi - its consumer index) mod 65536 new WQEs, which must be
 * <= the queue depth, else the doorbell is ignored (VFW_RSTAT_DB_BAD).
 * Reads return 0.
 */
#define VFW_DB_BAR               4
#define VFW_DB_PAGE_SIZE         0x1000
#define VFW_DB_PAGES             16
#define VFW_DB_BAR_SIZE          (VFW_DB_PAGE_SIZE * VFW_DB_PAGES)
#define VFW_DB_SQ                0x00
#define VFW_DB_RQ                0x04
#define VFW_DB_CQ                0x08
#define VFW_DB_ID_MASK           0xffffu
#define VFW_DB_PI_SHIFT          16
#define VFW_DB_CQ_ARM_NEXT       (1u << 16)  /* event on the next CQE */
#define VFW_DB_CQ_ARM_SOLICITED  (1u << 17)  /* ... solicited or error only */

/* ---- page lists ---------------------------------------------------- */
/*
 * Memory an object uses (MR, SQ/RQ/CQ ring) is named by a page list: an
 * array of npages little-endian u64 DMA addresses, each aligned to
 * 1 << page_shift (VFW_PGL_MIN_SHIFT..VFW_PGL_MAX_SHIFT), stored in
 * function memory at pgl_addr (8-byte aligned). The device copies the
 * list at create/registration time (the driver may free it after the
 * command completes); npages counts against MAX_MR_PAGES for MRs.
 * The memory starts at byte `offset` of the first page.
 */
#define VFW_PGL_MIN_SHIFT        12
#define VFW_PGL_MAX_SHIFT        30
struct vfw_pgl_ref {
    uint64_t pgl_addr;
    uint32_t npages;
    uint8_t  page_shift;
    uint8_t  rsvd;
    uint16_t offset;        /* ring: byte offset in the first page (< 4096) */
};

/* ---- verbs command descriptors (VFW_RCQ_DESC_SIZE bytes) -------------- */
#define VFW_RCMD_NOP             0x00
#define VFW_RCMD_PD_ALLOC        0x10  /* -> pd */
#define VFW_RCMD_PD_FREE         0x11
#define VFW_RCMD_MR_REG          0x20  /* -> stag */
#define VFW_RCMD_MR_DEREG        0x21
#define VFW_RCMD_CQ_CREATE       0x30  /* -> cq */
#define VFW_RCMD_CQ_DESTROY      0x31
#define VFW_RCMD_QP_CREATE       0x40  /* -> qp */
#define VFW_RCMD_QP_MODIFY       0x41  /* to CLOSING (graceful) or ERROR */
#define VFW_RCMD_QP_DESTROY      0x42
#define VFW_RCMD_QP_QUERY        0x43
#define VFW_RCMD_SET_ADDR        0x50  /* the function's IPv4 address, MTU */
#define VFW_RCMD_LISTEN          0x60  /* -> listener */
#define VFW_RCMD_UNLISTEN        0x61
#define VFW_RCMD_CONNECT         0x62
#define VFW_RCMD_ACCEPT          0x63
#define VFW_RCMD_REJECT          0x64

#define VFW_RCMD_F_DONE          (1u << 0)
#define VFW_RCMD_F_ERR           (1u << 1)

#define VFW_RCMD_S_OK            0
#define VFW_RCMD_S_BAD_OPCODE    1
#define VFW_RCMD_S_INVAL         2   /* a field out of range / reserved set */
#define VFW_RCMD_S_NOSPC         3   /* quota or table full */
#define VFW_RCMD_S_NOENT         4   /* no such object */
#define VFW_RCMD_S_BUSY          5   /* object in use */
#define VFW_RCMD_S_UNSUPPORTED   6
#define VFW_RCMD_S_DMA           7   /* a page list / private data read failed */
#define VFW_RCMD_S_STATE         8   /* wrong state (e.g. QP already connected) */
#define VFW_RCMD_S_ADDRINUSE     9   /* port already listened on / 4-tuple taken */

/* MR access (VFW_RCMD_MR_REG .access). */
#define VFW_MR_ACC_LOCAL_WRITE   (1u << 0)
#define VFW_MR_ACC_REMOTE_WRITE  (1u << 1)
#define VFW_MR_ACC_REMOTE_READ   (1u << 2)
/* MR flags. PHYS: TO is the function's DMA address, no page list, local
 * access only (the kernel's get_dma_mr). */
#define VFW_MR_F_PHYS            (1u << 0)

/* QP states for MODIFY / QUERY. */
#define VFW_QPS_IDLE             0
#define VFW_QPS_RTS              1
#define VFW_QPS_CLOSING          2
#define VFW_QPS_TERMINATE        3
#define VFW_QPS_ERROR            4

/* CONNECT / ACCEPT flags. */
#define VFW_CONN_F_CRC           (1u << 0)  /* ask for MPA CRC */
#define VFW_CONN_F_P2P           (1u << 1)  /* MPA v2 peer-to-peer (RTR) */
/* rtr_mask: VFW_RTR_SEND 1, VFW_RTR_WRITE 2, VFW_RTR_READ 4 (vfw_engine.h) */

struct vfw_rcmd_pd { uint32_t pd; uint8_t rsvd[108]; };
struct vfw_rcmd_mr_reg {
    uint32_t pd;
    uint32_t access;        /* VFW_MR_ACC_* */
    uint64_t iova;          /* tagged offset of the first byte (VA-based) */
    uint64_t len;           /* bytes, >= 1 */
    struct vfw_pgl_ref pgl; /* pages covering [iova, iova + len); offset = iova mod page size */
    uint32_t flags;         /* VFW_MR_F_* */
    uint32_t stag;          /* reply */
    uint8_t  rsvd[64];
};
struct vfw_rcmd_mr_dereg { uint32_t stag; uint8_t rsvd[108]; };
struct vfw_rcmd_cq_create {
    uint32_t depth;         /* power of two, 2..MAX_CQ_DEPTH */
    uint16_t db_page;       /* doorbell page allowed to arm it */
    uint16_t rsvd0;
    struct vfw_pgl_ref pgl; /* ring: depth * VFW_CQE_SIZE + VFW_CQ_CTRL_SIZE */
    uint32_t cq;            /* reply */
    uint8_t  rsvd[84];
};
struct vfw_rcmd_cq_destroy { uint32_t cq; uint8_t rsvd[108]; };
struct vfw_rcmd_qp_create {
    uint32_t pd, send_cq, recv_cq;
    uint32_t sq_depth;      /* power of two, 2..MAX_QP_DEPTH */
    uint32_t rq_depth;      /* power of two, 2..MAX_QP_DEPTH */
    uint8_t  ord, ird;      /* 1..MAX_ORD_IRD */
    uint16_t db_page;       /* doorbell page allowed to ring it */
    struct vfw_pgl_ref sq;  /* ring: sq_depth * VFW_WQE_SIZE */
    struct vfw_pgl_ref rq;  /* ring: rq_depth * VFW_WQE_SIZE */
    uint32_t qp;            /* reply */
    uint8_t  rsvd[52];
};
struct vfw_rcmd_qp_modify {
    uint32_t qp;
    uint8_t  state;         /* VFW_QPS_CLOSING or VFW_QPS_ERROR */
    uint8_t  rsvd[107];
};
struct vfw_rcmd_qp_query {
    uint32_t qp;
    /* reply: */
    uint8_t  state, ord, ird, rsvd0;
    uint16_t mss, rsvd1;
    uint8_t  term_sent_valid, term_sent_layer, term_sent_etype, term_sent_ecode;
    uint8_t  term_rcvd_valid, term_rcvd_layer, term_rcvd_etype, term_rcvd_ecode;
    uint32_t sq_outstanding, rq_posted;
    uint8_t  rsvd[84];
};
struct vfw_rcmd_set_addr {
    uint8_t  ip[4];         /* IPv4 in network order; 0.0.0.0 = none */
    uint16_t mtu;           /* IP MTU, 576..9000 */
    uint8_t  rsvd[106];
};
struct vfw_rcmd_listen {
    uint8_t  ip[4];         /* 0.0.0.0 = any of the function's addresses */
    uint16_t port;          /* host order, 1..65535 */
    uint16_t backlog;       /* 1..MAX_CONN */
    uint32_t listener;      /* reply; UNLISTEN takes it */
    uint8_t  rsvd[100];
};
struct vfw_rcmd_connect {
    uint32_t qp;
    uint8_t  lip[4], rip[4];    /* network order */
    uint16_t lport, rport;      /* host order; lport 0 = device picks */
    uint8_t  dmac[6];           /* next hop, from the driver's neighbour table */
    uint16_t vlan;              /* must be 0 (tagging is the port's) */
    uint16_t mss;               /* 0 = from the MTU */
    uint8_t  ord, ird;
    uint8_t  mpa_rev;           /* 1 or 2 */
    uint8_t  flags;             /* VFW_CONN_F_* */
    uint8_t  rtr_mask;
    uint8_t  tos;               /* 2.3: IPv4 TOS of the connection's segments
                                   (DSCP << 2; ECN bits 0, else INVAL): the
                                   switch classifies them by it */
    uint16_t pdata_len;         /* <= MAX_PDATA - 4 (v2 header added by device) */
    uint16_t lport_used;        /* reply */
    uint32_t cep;               /* reply: connection id used in events */
    uint64_t pdata_addr;        /* DMA address of the private data */
    uint8_t  rsvd[64];
};
struct vfw_rcmd_accept {
    uint32_t cep;               /* from VFW_EQE_CONNECT_REQUEST */
    uint32_t qp;
    uint8_t  ord, ird;
    uint8_t  mpa_rev;           /* 0 = as the peer asked */
    uint8_t  flags;             /* VFW_CONN_F_* */
    uint8_t  rtr_mask;
    uint8_t  tos;               /* 2.3: as CONNECT's, from the accept on (the
                                   SYN-ACK, already sent, carried 0) */
    uint16_t pdata_len;
    uint64_t pdata_addr;
    uint8_t  rsvd[88];
};
struct vfw_rcmd_reject {
    uint32_t cep;
    uint16_t pdata_len;
    uint16_t rsvd0;
    uint64_t pdata_addr;
    uint8_t  rsvd[96];
};
struct vfw_rcmd_unlisten { uint32_t listener; uint8_t rsvd[108]; };

struct vfw_rcmd {
    uint16_t opcode;
    uint16_t flags;             /* device: VFW_RCMD_F_* */
    uint16_t status;            /* device: VFW_RCMD_S_* */
    uint16_t rsvd0;
    uint32_t cookie;            /* echoed */
    uint32_t rsvd1;
    union {
        uint8_t raw[112];
        struct vfw_rcmd_pd pd;
        struct vfw_rcmd_mr_reg mr_reg;
        struct vfw_rcmd_mr_dereg mr_dereg;
        struct vfw_rcmd_cq_create cq_create;
        struct vfw_rcmd_cq_destroy cq_destroy;
        struct vfw_rcmd_qp_create qp_create;
        struct vfw_rcmd_qp_modify qp_modify;
        struct vfw_rcmd_qp_query qp_query;
        struct vfw_rcmd_set_addr set_addr;
        struct vfw_rcmd_listen listen;
        struct vfw_rcmd_unlisten unlisten;
        struct vfw_rcmd_connect connect;
        struct vfw_rcmd_accept accept;
        struct vfw_rcmd_reject reject;
    } u;
};

/* ---- work queue entries (in the process's SQ/RQ rings) --------------- */
#define VFW_WQE_SIZE             128
#define VFW_WQE_OP_SEND          0
#define VFW_WQE_OP_SEND_INV      1
#define VFW_WQE_OP_RDMA_WRITE    4
#define VFW_WQE_OP_RDMA_READ     5
#define VFW_WQE_F_SIGNALED       (1u << 0)
#define VFW_WQE_F_FENCE          (1u << 1)
#define VFW_WQE_F_SOLICITED      (1u << 2)
#define VFW_WQE_F_INLINE         (1u << 3)  /* payload in the WQE: inline_len bytes */

struct vfw_wqe_sge {
    uint64_t addr;
    uint32_t lkey;
    uint32_t len;
};
/* SQ and RQ entries share this layout; an RQ entry uses wr_id, num_sge and
 * sge[] only (the rest zero). */
struct vfw_wqe {
    uint64_t wr_id;
    uint8_t  opcode;            /* VFW_WQE_OP_* */
    uint8_t  flags;             /* VFW_WQE_F_* */
    uint8_t  num_sge;           /* 0..MAX_SGE (RDMA READ: exactly 1) */
    uint8_t  rsvd0;
    uint32_t inline_len;        /* VFW_WQE_F_INLINE: 0..MAX_INLINE */
    uint32_t inv_stag;          /* SEND_INV */
    uint32_t remote_stag;       /* WRITE: sink; READ: source */
    uint64_t remote_addr;
    union {
        struct vfw_wqe_sge sge[VFW_RDMA_MAX_SGE];
        uint8_t inline_data[VFW_RDMA_MAX_INLINE];
    } u;
};

/* ---- completion queue entries ---------------------------------------- */
/*
 * A CQ ring is depth entries of VFW_CQE_SIZE followed by a control block
 * of VFW_CQ_CTRL_SIZE bytes whose first le32 is the consumer's count of
 * CQEs consumed (wrapping), written by the process. The device writes CQE
 * number n at index n % depth with owner = ((n / depth) & 1) ^ 1, the
 * owner byte last. If depth CQEs are unconsumed the CQ overflows: the CQE
 * is lost, VFW_EQE_CQ_ERROR is raised and the CQ's QPs go to ERROR.
 */
#define VFW_CQE_SIZE             32
#define VFW_CQ_CTRL_SIZE         64
#define VFW_CQE_OP_SEND          0
#define VFW_CQE_OP_RDMA_WRITE    1
#define VFW_CQE_OP_RDMA_READ     2
#define VFW_CQE_OP_RECV          3
/* status: as enum vfw_wc_status in adapter/include/vfw_engine.h */
#define VFW_CQE_S_SUCCESS        0
#define VFW_CQE_S_LOC_LEN_ERR    1
#define VFW_CQE_S_LOC_QP_OP_ERR  2
#define VFW_CQE_S_LOC_PROT_ERR   3
#define VFW_CQE_S_WR_FLUSH_ERR   4
#define VFW_CQE_S_REM_ACCESS_ERR 5
#define VFW_CQE_S_REM_OP_ERR     6
#define VFW_CQE_S_REM_INV_REQ_ERR 7
#define VFW_CQE_S_GENERAL_ERR    8
#define VFW_CQE_F_WITH_INV       (1u << 0)
#define VFW_CQE_F_SOLICITED      (1u << 1)
struct vfw_cqe_hw {
    uint64_t wr_id;
    uint32_t qp;
    uint32_t byte_len;
    uint32_t inv_stag;
    uint16_t wqe_idx;           /* SQ/RQ index (mod 65536) the CQE retires */
    uint8_t  opcode;            /* VFW_CQE_OP_* */
    uint8_t  status;            /* VFW_CQE_S_* */
    uint8_t  flags;             /* VFW_CQE_F_* */
    uint8_t  rsvd[6];
    uint8_t  owner;             /* bit 0: pass parity, written last */
};

/* ---- event queue entries --------------------------------------------- */
#define VFW_EQE_COMP             1   /* obj = cq: an armed CQ got a CQE */
#define VFW_EQE_CQ_ERROR         2   /* obj = cq: overflow or ring DMA error */
#define VFW_EQE_QP_ERROR         3   /* obj = qp: fatal (term info valid) */
#define VFW_EQE_CONNECT_REQUEST  16  /* obj = cep, obj2 = listener; addrs, ord/ird, pdata */
#define VFW_EQE_CONNECT_REPLY    17  /* obj = cep, obj2 = qp (active); status, pdata */
#define VFW_EQE_ESTABLISHED      18  /* obj = cep, obj2 = qp (passive, after ACCEPT) */
#define VFW_EQE_DISCONNECT       19  /* obj = cep, obj2 = qp: peer closed (FIN) */
#define VFW_EQE_CLOSE            20  /* obj = cep, obj2 = qp: connection gone;
                                        the cep id is free after this event */
/* CM status (CONNECT_REPLY, CLOSE). */
#define VFW_CM_S_OK              0
#define VFW_CM_S_REFUSED         1   /* peer rejected (MPA) or RST to SYN */
#define VFW_CM_S_RESET           2
#define VFW_CM_S_TIMEOUT         3
#define VFW_CM_S_UNREACH         4
#define VFW_CM_S_TERMINATE       5   /* Terminate sent or received */

struct vfw_eqe {
    uint8_t  type;              /* VFW_EQE_* */
    uint8_t  status;            /* VFW_CM_S_* */
    uint8_t  ord, ird;          /* peer's (request) / negotiated */
    uint32_t obj;
    uint32_t obj2;
    uint8_t  lip[4], rip[4];    /* network order */
    uint16_t lport, rport;      /* host order */
    uint16_t pdata_len;         /* bytes in this entry's pdata slot */
    uint8_t  mpa_rev;
    uint8_t  term_layer, term_etype, term_ecode;  /* QP_ERROR / CLOSE */
    uint8_t  rsvd[33];
    uint8_t  owner;             /* bit 0: pass parity, written last */
};

#ifdef __KERNEL__
static_assert(sizeof(struct vfw_rcmd) == VFW_RCQ_DESC_SIZE);
static_assert(sizeof(struct vfw_wqe) == VFW_WQE_SIZE);
static_assert(sizeof(struct vfw_cqe_hw) == VFW_CQE_SIZE);
static_assert(sizeof(struct vfw_eqe) == VFW_EQE_SIZE);
#else
_Static_assert(sizeof(struct vfw_rcmd) == VFW_RCQ_DESC_SIZE, "rcmd size");
_Static_assert(sizeof(struct vfw_wqe) == VFW_WQE_SIZE, "wqe size");
_Static_assert(sizeof(struct vfw_cqe_hw) == VFW_CQE_SIZE, "cqe size");
_Static_assert(sizeof(struct vfw_eqe) == VFW_EQE_SIZE, "eqe size");
#endif

#endif /* VFWARP_RDMA_H */
