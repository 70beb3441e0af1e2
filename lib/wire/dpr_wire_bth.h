/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * RoCEv2 transport headers (IBTA 9.2-9.3), AETH syndromes, the opcode
 * table and 24-bit PSN arithmetic: the first part of dpr_wire.h, which
 * includes it (include dpr_wire.h, not this).
 */

#ifndef DPR_WIRE_BTH_H
#define DPR_WIRE_BTH_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------
 * Transport headers (IBTA 9.2-9.3). Packed: AtomicETH has 64-bit fields
 * at 4-byte offsets.
 */

/** Base Transport Header, 12 bytes. */
struct dpr_bth {
	uint8_t opcode;
	uint8_t flags;       /**< SE:1 M:1 PadCnt:2 TVer:4 */
	rte_be16_t pkey;
	rte_be32_t qpn;      /**< FECN:1 BECN:1 Resv6:6 DestQP:24 */
	rte_be32_t apsn;     /**< AckReq:1 Resv7:7 PSN:24 */
} __rte_packed;

/** RDMA Extended Transport Header, 16 bytes. */
struct dpr_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t len;
} __rte_packed;

/** ACK Extended Transport Header, 4 bytes. */
struct dpr_aeth {
	rte_be32_t smsn;     /**< Syndrome:8 MSN:24 */
} __rte_packed;

/** Atomic Extended Transport Header, 28 bytes. */
struct dpr_atmeth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t compare;
} __rte_packed;

/** Atomic ACK Extended Transport Header, 8 bytes. */
struct dpr_atmack {
	rte_be64_t orig;
} __rte_packed;

/** Immediate Data, 4 bytes (opaque: kept in wire order end to end). */
struct dpr_immdt {
	rte_be32_t imm;
} __rte_packed;

/** Invalidate Extended Transport Header, 4 bytes. */
struct dpr_ieth {
	rte_be32_t rkey;
} __rte_packed;

/** Datagram Extended Transport Header, 8 bytes. */
struct dpr_deth {
	rte_be32_t qkey;
	rte_be32_t sqpn;     /**< Resv8:8 SrcQP:24 */
} __rte_packed;

/** RoCEv2 Congestion Notification Packet body after the BTH, 16 bytes. */
struct dpr_cnp {
	uint8_t reserved[16];
} __rte_packed;

static_assert(sizeof(struct dpr_bth) == 12, "BTH is 12 bytes");
static_assert(sizeof(struct dpr_reth) == 16, "RETH is 16 bytes");
static_assert(sizeof(struct dpr_aeth) == 4, "AETH is 4 bytes");
static_assert(sizeof(struct dpr_atmeth) == 28, "AtomicETH is 28 bytes");
static_assert(sizeof(struct dpr_atmack) == 8, "AtomicAckETH is 8 bytes");
static_assert(sizeof(struct dpr_immdt) == 4, "ImmDt is 4 bytes");
static_assert(sizeof(struct dpr_ieth) == 4, "IETH is 4 bytes");
static_assert(sizeof(struct dpr_deth) == 8, "DETH is 8 bytes");
static_assert(sizeof(struct dpr_cnp) == 16, "CNP body is 16 bytes");

#define DPR_BTH_SE     0x80
#define DPR_BTH_MIG    0x40
#define DPR_BTH_PAD_MASK 0x30
#define DPR_BTH_PAD_SHIFT 4
#define DPR_BTH_TVER_MASK 0x0f
#define DPR_BTH_FECN   0x80000000u
#define DPR_BTH_BECN   0x40000000u
#define DPR_BTH_QPN_MASK 0x00ffffffu
#define DPR_BTH_ACKREQ 0x80000000u
#define DPR_PSN_MASK   0x00ffffffu

/* BTH raw accessors: read and write the wire bytes. */
static inline uint8_t dpr_bth_opcode(const struct dpr_bth *b) { return b->opcode; }
static inline bool dpr_bth_se(const struct dpr_bth *b) { return b->flags & DPR_BTH_SE; }
static inline bool dpr_bth_mig(const struct dpr_bth *b) { return b->flags & DPR_BTH_MIG; }
static inline uint8_t dpr_bth_pad(const struct dpr_bth *b)
{ return (b->flags & DPR_BTH_PAD_MASK) >> DPR_BTH_PAD_SHIFT; }
static inline uint8_t dpr_bth_tver(const struct dpr_bth *b) { return b->flags & DPR_BTH_TVER_MASK; }
static inline uint16_t dpr_bth_pkey(const struct dpr_bth *b) { return rte_be_to_cpu_16(b->pkey); }
static inline uint32_t dpr_bth_qpn(const struct dpr_bth *b)
{ return rte_be_to_cpu_32(b->qpn) & DPR_BTH_QPN_MASK; }
static inline bool dpr_bth_fecn(const struct dpr_bth *b)
{ return rte_be_to_cpu_32(b->qpn) & DPR_BTH_FECN; }
static inline bool dpr_bth_becn(const struct dpr_bth *b)
{ return rte_be_to_cpu_32(b->qpn) & DPR_BTH_BECN; }
static inline bool dpr_bth_ackreq(const struct dpr_bth *b)
{ return rte_be_to_cpu_32(b->apsn) & DPR_BTH_ACKREQ; }
static inline uint32_t dpr_bth_psn(const struct dpr_bth *b)
{ return rte_be_to_cpu_32(b->apsn) & DPR_PSN_MASK; }

static inline uint64_t dpr_reth_va(const struct dpr_reth *r) { return rte_be_to_cpu_64(r->va); }
static inline uint32_t dpr_reth_rkey(const struct dpr_reth *r) { return rte_be_to_cpu_32(r->rkey); }
static inline uint32_t dpr_reth_len(const struct dpr_reth *r) { return rte_be_to_cpu_32(r->len); }

static inline uint8_t dpr_aeth_syn(const struct dpr_aeth *a) { return rte_be_to_cpu_32(a->smsn) >> 24; }
static inline uint32_t dpr_aeth_msn(const struct dpr_aeth *a)
{ return rte_be_to_cpu_32(a->smsn) & DPR_PSN_MASK; }

static inline uint64_t dpr_atmeth_va(const struct dpr_atmeth *a) { return rte_be_to_cpu_64(a->va); }
static inline uint32_t dpr_atmeth_rkey(const struct dpr_atmeth *a) { return rte_be_to_cpu_32(a->rkey); }
static inline uint64_t dpr_atmeth_swap_add(const struct dpr_atmeth *a) { return rte_be_to_cpu_64(a->swap_add); }
static inline uint64_t dpr_atmeth_compare(const struct dpr_atmeth *a) { return rte_be_to_cpu_64(a->compare); }
static inline uint64_t dpr_atmack_orig(const struct dpr_atmack *a) { return rte_be_to_cpu_64(a->orig); }
static inline uint32_t dpr_ieth_rkey(const struct dpr_ieth *i) { return rte_be_to_cpu_32(i->rkey); }
static inline uint32_t dpr_deth_qkey(const struct dpr_deth *d) { return rte_be_to_cpu_32(d->qkey); }
static inline uint32_t dpr_deth_sqpn(const struct dpr_deth *d)
{ return rte_be_to_cpu_32(d->sqpn) & DPR_BTH_QPN_MASK; }

/* ---------------------------------------------------------------------
 * AETH syndromes (IBTA 9.7.5.1.1, table 44).
 */
#define DPR_AETH_TYPE_MASK 0xe0
#define DPR_AETH_ACK       0x00  /**< low 5 bits: credit count */
#define DPR_AETH_RNR_NAK   0x20  /**< low 5 bits: RNR timer */
#define DPR_AETH_NAK       0x60  /**< low 5 bits: NAK code */
#define DPR_AETH_CREDIT_INVALID 0x1f

enum dpr_nak_code {
	DPR_NAK_PSN_SEQ_ERR = 0,
	DPR_NAK_INVALID_REQ = 1,
	DPR_NAK_REM_ACCESS_ERR = 2,
	DPR_NAK_REM_OP_ERR = 3,
	DPR_NAK_INVALID_RD_REQ = 4,
};

/** "ACK", "RNR_NAK", "NAK_PSN_SEQ_ERR", ... for a syndrome. */
const char *dpr_aeth_syndrome_name(uint8_t syn);

/* ---------------------------------------------------------------------
 * The opcode table (IBTA 9.2.1 table 35), indexed by BTH opcode.
 */

/** Headers that may follow the BTH, in wire order. */
enum dpr_hdr_type {
	DPR_HDR_BTH,
	DPR_HDR_DETH,
	DPR_HDR_RETH,
	DPR_HDR_ATMETH,
	DPR_HDR_AETH,
	DPR_HDR_ATMACK,
	DPR_HDR_IMMDT,
	DPR_HDR_IETH,
	DPR_HDR_CNP,
	DPR_HDR_PAYLOAD, /**< offset of the payload = length of the headers */
	DPR_NUM_HDR_TYPES
};

/** Mask bits of an opcode: which headers, which role. */
enum dpr_opcode_mask {
	DPR_BTH_MASK       = 1u << DPR_HDR_BTH,
	DPR_DETH_MASK      = 1u << DPR_HDR_DETH,
	DPR_RETH_MASK      = 1u << DPR_HDR_RETH,
	DPR_ATMETH_MASK    = 1u << DPR_HDR_ATMETH,
	DPR_AETH_MASK      = 1u << DPR_HDR_AETH,
	DPR_ATMACK_MASK    = 1u << DPR_HDR_ATMACK,
	DPR_IMMDT_MASK     = 1u << DPR_HDR_IMMDT,
	DPR_IETH_MASK      = 1u << DPR_HDR_IETH,
	DPR_CNP_MASK       = 1u << DPR_HDR_CNP,
	DPR_PAYLOAD_MASK   = 1u << DPR_HDR_PAYLOAD, /**< carries payload */

	DPR_REQ_MASK       = 1u << 12, /**< sent by a requester */
	DPR_ACK_MASK       = 1u << 13, /**< sent by a responder (ACK, read/atomic response) */
	DPR_SEND_MASK      = 1u << 14,
	DPR_WRITE_MASK     = 1u << 15,
	DPR_READ_MASK      = 1u << 16, /**< READ request or READ response */
	DPR_ATOMIC_MASK    = 1u << 17, /**< atomic request or atomic ACK */
	DPR_START_MASK     = 1u << 18, /**< FIRST (with END: ONLY) */
	DPR_MIDDLE_MASK    = 1u << 19,
	DPR_END_MASK       = 1u << 20, /**< LAST (with START: ONLY) */
	DPR_RWR_MASK       = 1u << 21, /**< consumes a receive WQE */
	DPR_COMP_MASK      = 1u << 22, /**< completes a WQE at the responder */
	DPR_NEED_ACK_MASK  = 1u << 23, /**< RC request: the responder acknowledges it */
	DPR_INV_MASK       = 1u << 24, /**< invalidates an rkey */
	DPR_RC_MASK        = 1u << 25,
	DPR_UC_MASK        = 1u << 26,
	DPR_UD_MASK        = 1u << 27,
	DPR_CNP_PKT_MASK   = 1u << 28, /**< congestion notification */
};

#define DPR_ONLY_MASK (DPR_START_MASK | DPR_END_MASK)

struct dpr_opcode_info {
	const char *name;      /**< "RC_SEND_FIRST"; NULL: not a valid opcode */
	uint32_t mask;         /**< enum dpr_opcode_mask bits */
	uint8_t length;        /**< BTH and extension headers, bytes */
	uint8_t offset[DPR_NUM_HDR_TYPES]; /**< from the BTH; valid where mask has the bit */
};

extern const struct dpr_opcode_info dpr_opcode[256];

/* Opcodes (IBTA table 35, RoCEv2 CNP 0x81). */
enum dpr_opcode {
	DPR_OP_RC_SEND_FIRST = 0x00,
	DPR_OP_RC_SEND_MIDDLE = 0x01,
	DPR_OP_RC_SEND_LAST = 0x02,
	DPR_OP_RC_SEND_LAST_IMM = 0x03,
	DPR_OP_RC_SEND_ONLY = 0x04,
	DPR_OP_RC_SEND_ONLY_IMM = 0x05,
	DPR_OP_RC_WRITE_FIRST = 0x06,
	DPR_OP_RC_WRITE_MIDDLE = 0x07,
	DPR_OP_RC_WRITE_LAST = 0x08,
	DPR_OP_RC_WRITE_LAST_IMM = 0x09,
	DPR_OP_RC_WRITE_ONLY = 0x0a,
	DPR_OP_RC_WRITE_ONLY_IMM = 0x0b,
	DPR_OP_RC_READ_REQUEST = 0x0c,
	DPR_OP_RC_READ_RESPONSE_FIRST = 0x0d,
	DPR_OP_RC_READ_RESPONSE_MIDDLE = 0x0e,
	DPR_OP_RC_READ_RESPONSE_LAST = 0x0f,
	DPR_OP_RC_READ_RESPONSE_ONLY = 0x10,
	DPR_OP_RC_ACK = 0x11,
	DPR_OP_RC_ATOMIC_ACK = 0x12,
	DPR_OP_RC_CMP_SWAP = 0x13,
	DPR_OP_RC_FETCH_ADD = 0x14,
	DPR_OP_RC_SEND_LAST_INV = 0x16,
	DPR_OP_RC_SEND_ONLY_INV = 0x17,
	DPR_OP_UC_SEND_FIRST = 0x20,
	DPR_OP_UC_SEND_MIDDLE = 0x21,
	DPR_OP_UC_SEND_LAST = 0x22,
	DPR_OP_UC_SEND_LAST_IMM = 0x23,
	DPR_OP_UC_SEND_ONLY = 0x24,
	DPR_OP_UC_SEND_ONLY_IMM = 0x25,
	DPR_OP_UC_WRITE_FIRST = 0x26,
	DPR_OP_UC_WRITE_MIDDLE = 0x27,
	DPR_OP_UC_WRITE_LAST = 0x28,
	DPR_OP_UC_WRITE_LAST_IMM = 0x29,
	DPR_OP_UC_WRITE_ONLY = 0x2a,
	DPR_OP_UC_WRITE_ONLY_IMM = 0x2b,
	DPR_OP_UD_SEND_ONLY = 0x64,
	DPR_OP_UD_SEND_ONLY_IMM = 0x65,
	DPR_OP_CNP = 0x81,
	/** dprdma's selective acknowledgement, a manufacturer-specific
	 * opcode (IBA 9.2.1: 0xC0-0xFF): sent only to a peer that said on
	 * QP1 that it reads it (doc/architecture.rst, "Selective repeat") */
	DPR_OP_DPR_SACK = 0xc0,
	/** dprdma's purge, requester to responder: its BTH's PSN is the
	 * first the requester has not sent; what the responder holds from
	 * there on was injected (a SACK named it). To a peer that sent
	 * SACKs only. */
	DPR_OP_DPR_PURGE = 0xc1,
};

/**
 * The payload of a DPR_OP_DPR_SACK frame: after the BTH, whose PSN is the
 * cumulative acknowledgement (every PSN up to it arrived, as an ACK's),
 * and the AETH (an ACK's syndrome and MSN), up to DPR_SACK_MAX_BLOCKS of
 * these, in PSN order from the cumulative point on: runs of requests that
 * arrived past it, first and last PSN inclusive, each in the low 24 bits
 * of a big-endian word whose top 8 bits are zero.
 */
struct dpr_sack_block {
	rte_be32_t first;
	rte_be32_t last;
} __rte_packed;

#define DPR_SACK_MAX_BLOCKS 16

/** Header @p t of a packet whose BTH is at @p bth, or NULL if absent. */
static inline void *
dpr_hdr(const void *bth, enum dpr_hdr_type t)
{
	const struct dpr_opcode_info *oi = &dpr_opcode[*(const uint8_t *)bth];

	if (!(oi->mask & (1u << t)))
		return NULL;
	return (uint8_t *)(uintptr_t)bth + oi->offset[t];
}

/* ---------------------------------------------------------------------
 * 24-bit PSN arithmetic (IBTA 9.7.1: comparisons are modulo 2^24 within
 * half the space).
 */

static inline uint32_t
dpr_psn_add(uint32_t psn, int32_t n)
{
	return (uint32_t)(psn + (uint32_t)n) & DPR_PSN_MASK;
}

/** Signed distance a - b, in [-2^23, 2^23). */
static inline int32_t
dpr_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline bool dpr_psn_lt(uint32_t a, uint32_t b) { return dpr_psn_diff(a, b) < 0; }
static inline bool dpr_psn_le(uint32_t a, uint32_t b) { return dpr_psn_diff(a, b) <= 0; }
static inline bool dpr_psn_gt(uint32_t a, uint32_t b) { return dpr_psn_diff(a, b) > 0; }
static inline bool dpr_psn_ge(uint32_t a, uint32_t b) { return dpr_psn_diff(a, b) >= 0; }


#ifdef __cplusplus
}
#endif

#endif /* DPR_WIRE_BTH_H */
