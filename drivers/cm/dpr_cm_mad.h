/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * Communication Management MADs (IBA chapter 12, as Linux's ib_cm sends
 * them over RoCE) and the IP header rdma_cm puts in front of a REQ's
 * private data (IBA Annex A11): encoded into and decoded from the 256
 * bytes of a MAD (its 24-byte common header, then 232 bytes of message).
 * Pure functions over bytes: the unit tests read the reference rping
 * capture with them, the fuzzer feeds them anything.
 */

#ifndef DPR_CM_MAD_H
#define DPR_CM_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DPR_MAD_LEN 256
#define DPR_MAD_HDR_LEN 24
#define DPR_MAD_CLASS_CM 0x07
#define DPR_MAD_CM_VERSION 2
#define DPR_MAD_METHOD_SEND 0x03

/** CM attribute IDs (IBA table 105). */
enum dpr_cm_attr {
	DPR_CM_REQ = 0x0010,
	DPR_CM_MRA = 0x0011,
	DPR_CM_REJ = 0x0012,
	DPR_CM_REP = 0x0013,
	DPR_CM_RTU = 0x0014,
	DPR_CM_DREQ = 0x0015,
	DPR_CM_DREP = 0x0016,
	DPR_CM_SIDR_REQ = 0x0017,
	DPR_CM_SIDR_REP = 0x0018,
};

/** REJ reasons dprdma sends or reads (IBA table 109). */
enum dpr_cm_rej_reason {
	DPR_CM_REJ_NO_QP = 1,
	DPR_CM_REJ_NO_RESOURCES = 3,
	DPR_CM_REJ_TIMEOUT = 4,
	DPR_CM_REJ_INVALID_COMM_ID = 6,
	DPR_CM_REJ_INVALID_SERVICE_ID = 8,
	DPR_CM_REJ_STALE_CONN = 10,
	DPR_CM_REJ_INVALID_GID = 12,
	DPR_CM_REJ_INVALID_MTU = 26,
	DPR_CM_REJ_CONSUMER_DEFINED = 28,
};

/** What a REJ or MRA says it answers (msg_rejected / msg_mraed). */
enum dpr_cm_msg_ref { DPR_CM_REF_REQ = 0, DPR_CM_REF_REP = 1, DPR_CM_REF_OTHER = 2 };

/** Transport service type of a REQ. */
enum dpr_cm_tst { DPR_CM_TST_RC = 0, DPR_CM_TST_UC = 1 };

/** Private data bytes each message carries. */
#define DPR_CM_REQ_PDATA 92
#define DPR_CM_MRA_PDATA 222
#define DPR_CM_REJ_PDATA 148
#define DPR_CM_REP_PDATA 196
#define DPR_CM_RTU_PDATA 224
#define DPR_CM_DREQ_PDATA 220
#define DPR_CM_DREP_PDATA 224
#define DPR_CM_SIDR_REQ_PDATA 216
#define DPR_CM_SIDR_REP_PDATA 136
#define DPR_CM_MAX_PDATA 224

/** One CM message, decoded: the fields its attribute has (others 0). */
struct dpr_cm_msg {
	uint16_t attr;                  /**< enum dpr_cm_attr */
	uint64_t tid;                   /**< transaction ID, host order */
	uint32_t local_id;              /**< local comm ID; SIDR: request ID */
	uint32_t remote_id;
	/* REQ, SIDR_REQ, SIDR_REP */
	uint64_t service_id;
	uint64_t ca_guid;               /**< REQ, REP: network order as sent */
	uint32_t qkey;                  /**< REQ, REP, SIDR_REP */
	uint32_t qpn;                   /**< REQ, REP: local QPN; DREQ: remote;
	                                     SIDR_REP: the QPN */
	uint32_t psn;                   /**< REQ, REP: starting PSN */
	uint8_t resp_res, init_depth;   /**< REQ, REP */
	uint8_t remote_timeout;         /**< REQ: remote CM response timeout */
	uint8_t local_timeout;          /**< REQ: local CM response timeout */
	uint8_t tst;                    /**< REQ: enum dpr_cm_tst */
	uint8_t flow_ctrl;              /**< REQ, REP */
	uint8_t retry_cnt;              /**< REQ */
	uint8_t rnr_retry;              /**< REQ, REP */
	uint8_t mtu;                    /**< REQ: path MTU (ibv_mtu) */
	uint8_t max_cm_retries;         /**< REQ */
	uint8_t srq;                    /**< REQ, REP */
	uint16_t pkey;                  /**< REQ, SIDR_REQ */
	/* REQ: the primary path */
	uint8_t sgid[16], dgid[16];     /**< local and remote port GIDs */
	uint32_t flow_label;
	uint8_t rate, traffic_class, hop_limit, sl, ack_timeout;
	/* REP */
	uint8_t target_ack_delay, failover;
	/* REJ, MRA */
	uint8_t msg_ref;                /**< enum dpr_cm_msg_ref */
	uint16_t reason;                /**< REJ */
	uint8_t ari_len;                /**< REJ */
	uint8_t ari[72];
	uint8_t service_timeout;        /**< MRA */
	uint8_t status;                 /**< SIDR_REP */
	/* private data: all the bytes the message has for it */
	uint16_t pdata_len;
	uint8_t pdata[DPR_CM_MAX_PDATA];
};

/** Why a MAD was not taken (the CM's drop counters, in this order). */
#define DPR_CM_MAD_ERRORS(_) \
	_(mad_short) \
	_(mad_base_version) \
	_(mad_class) \
	_(mad_class_version) \
	_(mad_method) \
	_(mad_attr)

enum dpr_cm_mad_err {
	DPR_CM_MAD_OK = 0,
#define _(n) DPR_CM_ERR_ ## n,
	DPR_CM_MAD_ERRORS(_)
#undef _
};

/** Decode the @p len bytes of a MAD. @return DPR_CM_MAD_OK or why not. */
enum dpr_cm_mad_err dpr_cm_decode(const uint8_t *mad, size_t len,
		struct dpr_cm_msg *m);

/** Encode @p m (its attr says which fields count) into @p mad; its private
 * data is cut to what the message holds. */
void dpr_cm_encode(const struct dpr_cm_msg *m, uint8_t mad[DPR_MAD_LEN]);

/** Private data bytes of a message with attribute @p attr (0: unknown). */
unsigned int dpr_cm_pdata_size(uint16_t attr);

/** The message's name, for logs ("REQ", ...; "?" when unknown). */
const char *dpr_cm_attr_name(uint16_t attr);

/* ------------------------------------------------ rdma_cm's IP header */

/** rdma_cm's port spaces and the service IDs they make (IBA A11.2). */
#define DPR_RDMA_PS_TCP 0x0106
#define DPR_RDMA_PS_UDP 0x0111
#define DPR_RDMA_PS_IB 0x013F
#define DPR_CMA_HDR_LEN 36

static inline uint64_t
dpr_cm_service_id(uint16_t ps, uint16_t port)
{
	return ((uint64_t)ps << 16) | port;
}

/** The IP header of a REQ's (or SIDR_REQ's) private data. Addresses are
 * 16 bytes, IPv4 ones IPv4-mapped. */
struct dpr_cma_hdr {
	uint8_t ip_version;             /**< 4 or 6 */
	uint16_t src_port;              /**< host order */
	uint8_t src[16], dst[16];
};

/** Write @p h into the first DPR_CMA_HDR_LEN bytes of @p pdata. */
void dpr_cma_hdr_put(uint8_t *pdata, const struct dpr_cma_hdr *h);
/** Read it. @return false when it is not version 0 with IPv4 or IPv6. */
bool dpr_cma_hdr_get(const uint8_t *pdata, struct dpr_cma_hdr *h);

/*
 * dprdma's own MAD (doc/architecture.rst, "Selective repeat"): a box asks
 * a peer's QP1 what it can do beyond IBA (DPR_PEER_* bits of
 * dpr_transport.h) with a Get, and tells its own in the same message; the
 * peer answers with a GetResp carrying its own. A vendor class with an
 * OUI (IBA 13.4.2, class range 0x30-0x4F): stacks that do not know it
 * answer a Get with a status of "unsupported" (Linux's ib_mad) or not at
 * all, and both mean "IBA only". The OUI is a locally administered
 * company ID (IEEE's CID: the X bit set), not one IEEE assigned.
 */
#define DPR_CAPS_CLASS 0x30
#define DPR_CAPS_CLASS_VERSION 1
#define DPR_CAPS_OUI 0x06d9d4u
#define DPR_CAPS_ATTR 0xff01            /* DprdmaCaps */
#define DPR_CAPS_VERSION 1
#define DPR_MAD_METHOD_GET 0x01
#define DPR_MAD_METHOD_GET_RESP 0x81

/** A DprdmaCaps Get or GetResp. */
struct dpr_caps_msg {
	uint8_t method;         /**< DPR_MAD_METHOD_GET or _GET_RESP */
	uint16_t status;        /**< the MAD status: 0, or why the peer did
	                             not answer (it does not know the class) */
	uint64_t tid;
	uint8_t version;        /**< DPR_CAPS_VERSION of the sender */
	uint32_t caps;          /**< the sender's DPR_PEER_* bits */
	uint64_t node_guid;     /**< the sender's, network order */
	uint8_t keyprint[8];    /**< whose pre-shared key it holds (secure
	                             QPs; zero: none) */
};

/** Decode the @p len bytes of a MAD: @return 0 (ours: @p m filled), 1 (a
 * class or OUI of someone else's) or -EINVAL (ours, malformed). */
int dpr_caps_decode(const uint8_t *mad, size_t len, struct dpr_caps_msg *m);
void dpr_caps_encode(const struct dpr_caps_msg *m, uint8_t mad[DPR_MAD_LEN]);

/* Secure QPs' handshake in the same class (doc/security.rst): an offer of
 * a QP's nonce and X25519 public key, with an echo of its peer's nonce,
 * MACed by the sender. */
#define DPR_SEC_ATTR 0xff02             /* DprdmaSec */
#define DPR_SEC_OFFER_VERSION 2         /* 1: no public key (PSK alone) */
#define DPR_MAD_METHOD_SEND 0x03
#define DPR_SEC_OFFER_MAC_AT 148        /* its MAC covers bytes 0-147 */

/** A DprdmaSec offer. */
struct dpr_sec_offer {
	uint64_t tid;
	uint8_t version;
	uint8_t mode;           /**< enum dpr_sec_mode */
	bool echo;              /**< echo_nonce is valid */
	uint32_t dqpn, sqpn;    /**< the receiver's QP, the sender's */
	uint8_t sgid[16], dgid[16];
	uint8_t nonce[16];      /**< the sender's */
	uint8_t echo_nonce[16]; /**< the receiver's, as the sender has it */
	uint8_t pub[32];        /**< the sender's X25519 public key */
};

/** @return 0 (@p o filled), 1 (not a DprdmaSec MAD) or -EINVAL (one of
 * another version; @p o filled as far as it goes). */
int dpr_sec_offer_decode(const uint8_t *mad, size_t len, struct dpr_sec_offer *o);
/** Everything but the MAC (bytes DPR_SEC_OFFER_MAC_AT on: the caller's). */
void dpr_sec_offer_encode(const struct dpr_sec_offer *o, uint8_t mad[DPR_MAD_LEN]);

/*
 * The authentication trailer (doc/security.rst, "The CM's MADs"): 32
 * bytes after the 256 of a MAD that a box sends a peer holding its key
 * (both DprdmaCaps say DPR_PEER_CM_AUTH and the same key):
 *
 *   0       version (DPR_MAD_AUTH_VERSION); 1-7 zero
 *   8-15    the sender's sequence number, big-endian (replays)
 *   16-31   HMAC-SHA-256 of the MAD and bytes 0-15, its first 16 bytes,
 *           under the key of this sender and receiver's GIDs
 *           (dpr_sec_cm_key())
 */
#define DPR_MAD_AUTH_LEN 32
#define DPR_MAD_AUTH_VERSION 1
#define DPR_MAD_AUTH_MAC_AT 16

#endif /* DPR_CM_MAD_H */
