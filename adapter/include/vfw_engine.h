/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_engine.h - the adapter's iWARP offload engine (RDMAP/DDP/MPA), one
 * instance per adapter function (PF or VF).
 *
 * The engine is plain C11 with no global mutable state, no threads and no
 * sleeping. It touches function memory only through ops->dma_read/dma_write
 * and only after checking PD, STag, bounds and access rights. Time comes
 * from ops->now_ns. Every call and every callback happens on the caller's
 * thread; callbacks must not destroy the engine.
 *
 * Lower layer: each connection is an LLP byte stream with the record
 * semantics of vfw_tcp.h (whole-record send up to the MSS, in-order receive
 * upcall). The device model glues a vfw_tcp_conn to the engine with
 * vfw_iwarp_tcp_* (vfw_iwarp_tcp.h) or supplies its own struct vfw_llp_ops.
 *
 * Objects are named by small integer ids (>= 1) that the device model can
 * hand to guests; every id coming in is validated.
 */
#ifndef VFW_ENGINE_H
#define VFW_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vfw_engine;

/* ---- limits ------------------------------------------------------------ */
#define VFW_MAX_SGE         8
#define VFW_MAX_PDATA       512      /* MPA private data incl. v2 header */
#define VFW_MAX_MSG         (1u << 30) /* largest message, bytes */
#define VFW_MAX_QP_DEPTH    4096
#define VFW_MAX_ORD_IRD     128
#define VFW_MAX_CQ_DEPTH    65536
#define VFW_MAX_MR_PGL      (1u << 18) /* pages in one page-list MR */
#define VFW_DEF_MR_PAGES    (1u << 20) /* default engine-wide bound */

/* ---- access rights (MR) ----------------------------------------------- */
enum {
    VFW_ACC_LOCAL_WRITE  = 1u << 0,
    VFW_ACC_REMOTE_WRITE = 1u << 1,
    VFW_ACC_REMOTE_READ  = 1u << 2,
};

/* ---- ops table: how the engine meets the device model ------------------- */
struct vfw_cm_event;
struct vfw_cqe;
struct vfw_engine_ops {
    void *opaque;
    /* Copy len bytes of function memory at iova. 0 or -errno. */
    int (*dma_read)(void *opaque, uint16_t func_id, uint64_t iova, void *buf,
                    size_t len);
    int (*dma_write)(void *opaque, uint16_t func_id, uint64_t iova,
                     const void *buf, size_t len);
    /* A CQ armed with vfw_cq_arm() got a matching CQE. */
    void (*cq_notify)(void *opaque, uint32_t cq_id);
    /* Connection manager / async events (optional, may be NULL). */
    void (*cm_event)(void *opaque, const struct vfw_cm_event *ev);
    uint64_t (*now_ns)(void *opaque);
    /* Optional (2.0 device): when set, every CQE goes here instead of the
     * engine's own CQ ring (vfw_cq_poll then returns nothing and arming is
     * the caller's business). The device writes it to the guest's ring. */
    void (*cqe)(void *opaque, uint32_t cq_id, const struct vfw_cqe *c);
    /* (cqe is called synchronously from whatever engine call completed the
     * work, for a cq_id that exists; the engine keeps no copy.) */
    /* Optional: the owner's budget for work that can wait. Flushing a QP's
     * WRs (ERROR, a graceful close) takes one WR at a time while this says
     * true; what it stops, vfw_engine_poll resumes (vfw_engine_busy tells
     * that some waits). A guest posts as many WRs as its queues hold, and
     * a flush of all of them in one call would be work of its choosing in
     * one run of the owner. NULL: no limit. */
    bool (*work_left)(void *opaque);
};

struct vfw_engine_config {
    uint16_t func_id;
    uint32_t max_pd, max_mr, max_cq, max_qp, max_cep;  /* 0 = defaults */
    /* Page-list entries over all page-list MRs of the engine (0: default
     * VFW_DEF_MR_PAGES); vfw_mr_reg_pages fails with -ENOSPC beyond it.
     * Appended (additive) by the engine owner for issue 14. */
    uint32_t max_mr_pages;
    /* As MPA initiator, send no FPDU until this long after the MPA Reply
     * (0: none). Linux siw as responder starts reading the stream only
     * after its Reply has gone out (siw_accept), so an FPDU that arrives
     * in that window is never read; a device answering within
     * microseconds hits it. vfw_engine_poll releases held QPs. */
    uint64_t initiator_settle_ns;
};

struct vfw_engine *vfw_engine_new(const struct vfw_engine_ops *ops,
                                  const struct vfw_engine_config *cfg);
void vfw_engine_free(struct vfw_engine *e);
/* Enlarge the object tables to cfg's max_* (0 or a smaller value: that
 * table stays as it is; func_id, max_mr_pages, initiator_settle_ns are
 * ignored). Objects and
 * ids are kept. Not from inside an engine call or upcall. -ENOMEM: some
 * tables may have grown, none shrank, everything still works. */
int vfw_engine_grow(struct vfw_engine *e, const struct vfw_engine_config *cfg);
/* Drive timers (MPA handshake timeout, initiator settle). Cheap; call on
 * any tick. */
void vfw_engine_poll(struct vfw_engine *e);
/* When vfw_engine_poll next has something to release (UINT64_MAX: none;
 * the MPA handshake timeout is not included). */
uint64_t vfw_engine_next_ns(struct vfw_engine *e);
/* Work that ops->work_left stopped waits for the next vfw_engine_poll. */
bool vfw_engine_busy(const struct vfw_engine *e);

/* ---- PD / MR ----------------------------------------------------------- */
int vfw_pd_alloc(struct vfw_engine *e, uint32_t *pd_id);
int vfw_pd_free(struct vfw_engine *e, uint32_t pd_id);     /* -EBUSY if used */
/* Register [iova, iova+len) of the function's memory; returns the STag
 * (24-bit index, 8-bit key). Tagged offsets are VA-based (TO == iova). */
int vfw_mr_reg(struct vfw_engine *e, uint32_t pd_id, uint64_t iova,
               uint64_t len, uint32_t access, uint32_t *stag);
/* Register a page-list MR (user memory is virtually contiguous, physically
 * scattered): tagged offsets [iova, iova + len) map to pages[] (DMA
 * addresses of the function, each aligned to 1 << page_shift, 12..30);
 * iova's offset in the first page is iova & ((1 << page_shift) - 1), and
 * npages must be exactly the pages the range touches. The engine copies
 * pages[]. Every access to such an MR's memory goes through the page list
 * (mr.c is the one place that turns a tagged offset into DMA). */
/* -EINVAL: page_shift outside 12..30, npages 0 or > VFW_MAX_MR_PGL or not
 * exactly the pages touched, a page unaligned, len 0 or iova + len
 * wrapping, bad rights, NULL pages; -ENOENT bad PD; -ENOSPC no MR slot or
 * over the engine's max_mr_pages (entries, all page-list MRs together;
 * dereg returns them); -ENOMEM. */
int vfw_mr_reg_pages(struct vfw_engine *e, uint32_t pd_id, uint64_t iova,
                     uint64_t len, uint32_t access, unsigned page_shift,
                     const uint64_t *pages, uint32_t npages, uint32_t *stag);
int vfw_mr_dereg(struct vfw_engine *e, uint32_t stag);
int vfw_mr_invalidate(struct vfw_engine *e, uint32_t stag);  /* local */
int vfw_mr_is_valid(const struct vfw_engine *e, uint32_t stag);

/* ---- CQ ---------------------------------------------------------------- */
enum vfw_wc_opcode {
    VFW_WC_SEND = 0, VFW_WC_RDMA_WRITE, VFW_WC_RDMA_READ, VFW_WC_RECV,
};
enum vfw_wc_status {
    VFW_WC_SUCCESS = 0,
    VFW_WC_LOC_LEN_ERR,      /* local length (e.g. recv buffer too small) */
    VFW_WC_LOC_QP_OP_ERR,    /* malformed WR */
    VFW_WC_LOC_PROT_ERR,     /* local lkey/bounds/rights check failed */
    VFW_WC_WR_FLUSH_ERR,     /* flushed on QP error/close */
    VFW_WC_REM_ACCESS_ERR,   /* peer reported a protection error */
    VFW_WC_REM_OP_ERR,       /* peer reported an operation error */
    VFW_WC_REM_INV_REQ_ERR,
    VFW_WC_GENERAL_ERR,
};
enum { VFW_WC_F_WITH_INV = 1, VFW_WC_F_SOLICITED = 2 };
/* A plain CQE. The device model translates it into the guest CQE format. */
struct vfw_cqe {
    uint64_t wr_id;
    uint32_t qp_id;
    uint32_t byte_len;
    uint32_t invalidated_stag;
    uint8_t  opcode;   /* enum vfw_wc_opcode */
    uint8_t  status;   /* enum vfw_wc_status */
    uint8_t  flags;    /* VFW_WC_F_* */
    uint8_t  rsvd;
};
int vfw_cq_create(struct vfw_engine *e, uint32_t depth, uint32_t *cq_id);
int vfw_cq_destroy(struct vfw_engine *e, uint32_t cq_id);  /* -EBUSY if used */
/* Poll up to n CQEs; returns the count (>= 0) or -errno. */
int vfw_cq_poll(struct vfw_engine *e, uint32_t cq_id, struct vfw_cqe *out,
                int n);
/* Request one cq_notify on the next CQE (solicited_only: next solicited
 * receive or any error CQE). */
int vfw_cq_arm(struct vfw_engine *e, uint32_t cq_id, int solicited_only);

/* ---- QP ---------------------------------------------------------------- */
enum vfw_qp_state {
    VFW_QPS_IDLE = 0, VFW_QPS_RTS, VFW_QPS_CLOSING, VFW_QPS_TERMINATE,
    VFW_QPS_ERROR,
};
struct vfw_qp_attr {
    uint32_t pd_id, send_cq, recv_cq;
    uint32_t sq_depth, rq_depth;   /* 1..VFW_MAX_QP_DEPTH */
    uint32_t ord, ird;             /* 0..VFW_MAX_ORD_IRD; negotiated down */
    uint32_t max_sge;              /* 1..VFW_MAX_SGE */
};
int vfw_qp_create(struct vfw_engine *e, const struct vfw_qp_attr *a,
                  uint32_t *qp_id);
int vfw_qp_destroy(struct vfw_engine *e, uint32_t qp_id);
/* Consumer transitions: to CLOSING (graceful: drain SQ, LLP close) or to
 * ERROR (abort the LLP, flush all WRs). */
int vfw_qp_modify(struct vfw_engine *e, uint32_t qp_id,
                  enum vfw_qp_state to);

struct vfw_term_info {       /* last Terminate sent or received */
    uint8_t valid, layer, etype, ecode;
    uint8_t opcode;          /* RDMAP opcode of the offending message */
};
struct vfw_qp_info {
    enum vfw_qp_state state;
    uint32_t ord, ird;       /* negotiated */
    uint32_t mss, mulpdu;
    struct vfw_term_info term_sent, term_rcvd;
    uint32_t sq_outstanding, rq_posted;
};
int vfw_qp_query(const struct vfw_engine *e, uint32_t qp_id,
                 struct vfw_qp_info *out);

/* ---- work requests ----------------------------------------------------- */
enum vfw_wr_opcode {
    VFW_WR_SEND = 0, VFW_WR_SEND_INV, VFW_WR_SEND_SE, VFW_WR_SEND_SE_INV,
    VFW_WR_RDMA_WRITE, VFW_WR_RDMA_READ,
};
enum { VFW_WR_F_SIGNALED = 1, VFW_WR_F_FENCE = 2,
       VFW_WR_F_INLINE = 4 /* SEND/WRITE payload in inline_data[] */ };
#define VFW_MAX_INLINE      96
struct vfw_sge {
    uint32_t stag;   /* local STag ("lkey") */
    uint32_t len;
    uint64_t addr;   /* iova */
};
struct vfw_send_wr {
    uint64_t wr_id;
    uint8_t  opcode;         /* enum vfw_wr_opcode */
    uint8_t  flags;          /* VFW_WR_F_* */
    uint8_t  num_sge;        /* RDMA READ: exactly 1 (the sink) */
    uint8_t  rsvd;
    uint32_t invalidate_stag;  /* SEND_INV / SEND_SE_INV */
    uint32_t remote_stag;      /* WRITE: sink; READ: source */
    uint64_t remote_addr;
    struct vfw_sge sge[VFW_MAX_SGE];
    /* VFW_WR_F_INLINE: the payload (num_sge ignored), copied at post time */
    uint32_t inline_len;       /* 0..VFW_MAX_INLINE */
    uint8_t  inline_data[VFW_MAX_INLINE];
};
struct vfw_recv_wr {
    uint64_t wr_id;
    uint8_t  num_sge;
    struct vfw_sge sge[VFW_MAX_SGE];
};
/* 0, -EINVAL (malformed), -ENOMEM (queue full), -ENOENT (no QP),
 * -ENOTCONN (QP not yet connected / gone; in ERROR the WR is flushed). */
int vfw_post_send(struct vfw_engine *e, uint32_t qp_id,
                  const struct vfw_send_wr *wr);
int vfw_post_recv(struct vfw_engine *e, uint32_t qp_id,
                  const struct vfw_recv_wr *wr);

/* ---- connection management (MPA) --------------------------------------- */
/* The lower layer: a connected TCP conn with vfw_tcp.h semantics. */
struct vfw_llp_ops {
    int (*send_record)(void *conn, const uint8_t *data, size_t len);
    size_t (*send_space)(void *conn);
    uint16_t (*mss)(void *conn);
    void (*recv_resume)(void *conn);
    void (*close)(void *conn);
    void (*abort)(void *conn);
    /* Optional (NULL: not offered), additive: zero-copy records. reserve
     * returns a contiguous writable span of len (<= mss) bytes in the LLP's
     * send buffer, or NULL (no room, not contiguous, not connected: the
     * engine then builds the record itself and calls send_record, which
     * reports the condition). commit(conn, len) then queues those bytes as
     * one record with exactly the semantics of a successful send_record.
     * The engine calls nothing else on the conn between the two and may
     * drop a reservation by not committing it. */
    uint8_t *(*reserve_record)(void *conn, size_t len);
    int (*commit_record)(void *conn, size_t len);
};
enum {
    VFW_RTR_SEND  = 1, /* zero-length Send */
    VFW_RTR_WRITE = 2, /* zero-length RDMA Write */
    VFW_RTR_READ  = 4, /* zero-length RDMA Read */
};
struct vfw_conn_param {
    uint32_t ord, ird;        /* 0: take the QP's */
    uint8_t  mpa_rev;         /* 1 (RFC 5044) or 2 (RFC 6581 enhanced) */
    uint8_t  p2p;             /* v2: peer-to-peer mode with an RTR */
    uint8_t  rtr_mask;        /* v2: RTR types offered/accepted, VFW_RTR_* */
    uint8_t  crc;             /* request CRC (we always check if either asks) */
    uint16_t pdata_len;       /* <= VFW_MAX_PDATA (- 4 in v2) */
    uint8_t  pdata[VFW_MAX_PDATA];
};
/* Register a freshly established LLP connection. active: we will send the
 * MPA Request (vfw_connect); passive: we wait for one and raise
 * VFW_CM_CONNECT_REQUEST. Returns a CEP id. */
int vfw_cep_create(struct vfw_engine *e, const struct vfw_llp_ops *llp,
                   void *conn, int active, uint32_t *cep_id);
int vfw_connect(struct vfw_engine *e, uint32_t cep_id, uint32_t qp_id,
                const struct vfw_conn_param *p);
int vfw_accept(struct vfw_engine *e, uint32_t cep_id, uint32_t qp_id,
               const struct vfw_conn_param *p);
int vfw_reject(struct vfw_engine *e, uint32_t cep_id, const uint8_t *pdata,
               uint16_t len);
/* LLP upcalls: call these from the TCP callbacks of the CEP's connection. */
size_t vfw_llp_recv(struct vfw_engine *e, uint32_t cep_id,
                    const uint8_t *data, size_t len);
void vfw_llp_writable(struct vfw_engine *e, uint32_t cep_id);
/* The conn is gone (err 0: orderly). The engine drops its pointer. */
void vfw_llp_closed(struct vfw_engine *e, uint32_t cep_id, int err);

enum vfw_cm_event_type {
    VFW_CM_CONNECT_REQUEST = 1,  /* passive: MPA Request arrived */
    VFW_CM_ESTABLISHED,          /* QP is in RTS */
    VFW_CM_REJECTED,             /* active: peer rejected (pdata valid) */
    VFW_CM_CONNECT_ERROR,        /* handshake failed (err) */
    VFW_CM_CLOSED,               /* LLP gone; QP in IDLE or ERROR */
    VFW_CM_TERMINATE,            /* Terminate sent or received; QP ERROR */
};
struct vfw_cm_event {
    enum vfw_cm_event_type type;
    uint32_t cep_id, qp_id;
    int err;
    uint32_t ord, ird;           /* peer's (request) or negotiated */
    uint8_t  mpa_rev;
    uint16_t pdata_len;
    const uint8_t *pdata;        /* valid during the callback only */
};

/* ---- statistics --------------------------------------------------------- */
struct vfw_engine_stats {
    uint64_t tx_fpdus, rx_fpdus, tx_bytes, rx_bytes;   /* payload bytes */
    uint64_t crc_errors, terms_sent, terms_rcvd, prot_errors, flushed;
    uint64_t dma_errors;
};
void vfw_engine_stats(const struct vfw_engine *e, struct vfw_engine_stats *st);

/* ---- wire constants (for tests, fuzzers and dissection) ---------------- */
enum vfw_rdmap_opcode {
    VFW_RDMAP_WRITE = 0, VFW_RDMAP_READ_REQ = 1, VFW_RDMAP_READ_RESP = 2,
    VFW_RDMAP_SEND = 3, VFW_RDMAP_SEND_INV = 4, VFW_RDMAP_SEND_SE = 5,
    VFW_RDMAP_SEND_SE_INV = 6, VFW_RDMAP_TERMINATE = 7,
};
enum { VFW_TERM_LAYER_RDMAP = 0, VFW_TERM_LAYER_DDP = 1,
       VFW_TERM_LAYER_MPA = 2 };

/* CRC32c (Castagnoli) as used by MPA: SSE4.2 when the CPU has it. */
uint32_t vfw_crc32c(uint32_t crc, const void *data, size_t len);
int vfw_crc32c_is_hw(void);

#endif /* VFW_ENGINE_H */
