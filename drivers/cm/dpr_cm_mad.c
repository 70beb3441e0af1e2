/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * CM MADs: the byte layout of IBA 12.6 (tables 106-120). Offsets below
 * are from the start of the message data (after the 24-byte MAD header);
 * a bit field is named by its byte and its place from the byte's most
 * significant bit, as the spec's tables give them.
 */

#include <errno.h>
#include <string.h>

#include "dpr_cm_mad.h"

static inline uint32_t
get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline void
put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | get24(p + 1);
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	put24(p + 1, v);
}

static inline uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static inline void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Where each message's private data starts, and how long it is. */
static const struct { uint16_t attr; uint8_t off; uint8_t len; const char *name; }
cm_layout[] = {
	{ DPR_CM_REQ, 140, DPR_CM_REQ_PDATA, "REQ" },
	{ DPR_CM_MRA, 10, DPR_CM_MRA_PDATA, "MRA" },
	{ DPR_CM_REJ, 84, DPR_CM_REJ_PDATA, "REJ" },
	{ DPR_CM_REP, 36, DPR_CM_REP_PDATA, "REP" },
	{ DPR_CM_RTU, 8, DPR_CM_RTU_PDATA, "RTU" },
	{ DPR_CM_DREQ, 12, DPR_CM_DREQ_PDATA, "DREQ" },
	{ DPR_CM_DREP, 8, DPR_CM_DREP_PDATA, "DREP" },
	{ DPR_CM_SIDR_REQ, 16, DPR_CM_SIDR_REQ_PDATA, "SIDR_REQ" },
	{ DPR_CM_SIDR_REP, 96, DPR_CM_SIDR_REP_PDATA, "SIDR_REP" },
};

static int
layout(uint16_t attr)
{
	for (unsigned int i = 0; i < sizeof(cm_layout) / sizeof(cm_layout[0]); i++)
		if (cm_layout[i].attr == attr)
			return (int)i;
	return -1;
}

unsigned int
dpr_cm_pdata_size(uint16_t attr)
{
	int i = layout(attr);

	return i < 0 ? 0 : cm_layout[i].len;
}

const char *
dpr_cm_attr_name(uint16_t attr)
{
	int i = layout(attr);

	return i < 0 ? "?" : cm_layout[i].name;
}

enum dpr_cm_mad_err
dpr_cm_decode(const uint8_t *mad, size_t len, struct dpr_cm_msg *m)
{
	const uint8_t *d = mad + DPR_MAD_HDR_LEN;
	int li;

	memset(m, 0, sizeof(*m));
	if (len < DPR_MAD_LEN)
		return DPR_CM_ERR_mad_short;
	if (mad[0] != 1)
		return DPR_CM_ERR_mad_base_version;
	if (mad[1] != DPR_MAD_CLASS_CM)
		return DPR_CM_ERR_mad_class;
	if (mad[2] != DPR_MAD_CM_VERSION)
		return DPR_CM_ERR_mad_class_version;
	if (mad[3] != DPR_MAD_METHOD_SEND)
		return DPR_CM_ERR_mad_method;
	m->attr = get16(mad + 16);
	li = layout(m->attr);
	if (li < 0)
		return DPR_CM_ERR_mad_attr;
	m->tid = get64(mad + 8);
	m->local_id = get32(d);
	m->remote_id = get32(d + 4);
	switch (m->attr) {
	case DPR_CM_REQ:
		m->remote_id = 0;
		m->service_id = get64(d + 8);
		memcpy(&m->ca_guid, d + 16, 8);
		m->qkey = get32(d + 28);
		m->qpn = get24(d + 32);
		m->resp_res = d[35];
		m->init_depth = d[39];
		m->remote_timeout = d[43] >> 3;
		m->tst = (d[43] >> 1) & 3;
		m->flow_ctrl = d[43] & 1;
		m->psn = get24(d + 44);
		m->local_timeout = d[47] >> 3;
		m->retry_cnt = d[47] & 7;
		m->pkey = get16(d + 48);
		m->mtu = d[50] >> 4;
		m->rnr_retry = d[50] & 7;
		m->max_cm_retries = d[51] >> 4;
		m->srq = (d[51] >> 3) & 1;
		memcpy(m->sgid, d + 56, 16);
		memcpy(m->dgid, d + 72, 16);
		m->flow_label = get32(d + 88) >> 12;
		m->rate = d[91] & 0x3f;
		m->traffic_class = d[92];
		m->hop_limit = d[93];
		m->sl = d[94] >> 4;
		m->ack_timeout = d[95] >> 3;
		break;
	case DPR_CM_MRA:
		m->msg_ref = d[8] >> 6;
		m->service_timeout = d[9] >> 3;
		break;
	case DPR_CM_REJ:
		m->msg_ref = d[8] >> 6;
		m->ari_len = d[9] >> 1;
		if (m->ari_len > sizeof(m->ari))
			m->ari_len = sizeof(m->ari);
		m->reason = get16(d + 10);
		memcpy(m->ari, d + 12, m->ari_len);
		break;
	case DPR_CM_REP:
		m->qkey = get32(d + 8);
		m->qpn = get24(d + 12);
		m->psn = get24(d + 20);
		m->resp_res = d[24];
		m->init_depth = d[25];
		m->target_ack_delay = d[26] >> 3;
		m->failover = (d[26] >> 1) & 3;
		m->flow_ctrl = d[26] & 1;
		m->rnr_retry = d[27] >> 5;
		m->srq = (d[27] >> 4) & 1;
		memcpy(&m->ca_guid, d + 28, 8);
		break;
	case DPR_CM_DREQ:
		m->qpn = get24(d + 8);
		break;
	case DPR_CM_SIDR_REQ:
		m->remote_id = 0;
		m->pkey = get16(d + 4);
		m->service_id = get64(d + 8);
		break;
	case DPR_CM_SIDR_REP:
		m->remote_id = 0;
		m->status = d[4];
		m->qpn = get24(d + 8);
		m->service_id = get64(d + 12);
		m->qkey = get32(d + 20);
		break;
	default:                /* RTU, DREP: the two IDs */
		break;
	}
	m->pdata_len = cm_layout[li].len;
	memcpy(m->pdata, d + cm_layout[li].off, m->pdata_len);
	return DPR_CM_MAD_OK;
}

void
dpr_cm_encode(const struct dpr_cm_msg *m, uint8_t mad[DPR_MAD_LEN])
{
	uint8_t *d = mad + DPR_MAD_HDR_LEN;
	int li = layout(m->attr);
	unsigned int n;

	memset(mad, 0, DPR_MAD_LEN);
	mad[0] = 1;
	mad[1] = DPR_MAD_CLASS_CM;
	mad[2] = DPR_MAD_CM_VERSION;
	mad[3] = DPR_MAD_METHOD_SEND;
	put64(mad + 8, m->tid);
	put16(mad + 16, m->attr);
	if (li < 0)
		return;
	put32(d, m->local_id);
	put32(d + 4, m->remote_id);
	switch (m->attr) {
	case DPR_CM_REQ:
		put32(d + 4, 0);
		put64(d + 8, m->service_id);
		memcpy(d + 16, &m->ca_guid, 8);
		put32(d + 28, m->qkey);
		put24(d + 32, m->qpn);
		d[35] = m->resp_res;
		d[39] = m->init_depth;
		d[43] = (uint8_t)(m->remote_timeout << 3 | (m->tst & 3) << 1 |
				  (m->flow_ctrl & 1));
		put24(d + 44, m->psn);
		d[47] = (uint8_t)(m->local_timeout << 3 | (m->retry_cnt & 7));
		put16(d + 48, m->pkey);
		d[50] = (uint8_t)(m->mtu << 4 | (m->rnr_retry & 7));
		d[51] = (uint8_t)(m->max_cm_retries << 4 | (m->srq & 1) << 3);
		/* RoCE: no LIDs (the permissive one, as Linux sends) */
		put16(d + 52, 0xffff);
		put16(d + 54, 0xffff);
		memcpy(d + 56, m->sgid, 16);
		memcpy(d + 72, m->dgid, 16);
		put32(d + 88, m->flow_label << 12 | (m->rate & 0x3f));
		d[92] = m->traffic_class;
		d[93] = m->hop_limit;
		d[94] = (uint8_t)(m->sl << 4);
		d[95] = (uint8_t)(m->ack_timeout << 3);
		break;
	case DPR_CM_MRA:
		d[8] = (uint8_t)(m->msg_ref << 6);
		d[9] = (uint8_t)(m->service_timeout << 3);
		break;
	case DPR_CM_REJ:
		n = m->ari_len < sizeof(m->ari) ? m->ari_len : sizeof(m->ari);
		d[8] = (uint8_t)(m->msg_ref << 6);
		d[9] = (uint8_t)(n << 1);
		put16(d + 10, m->reason);
		memcpy(d + 12, m->ari, n);
		break;
	case DPR_CM_REP:
		put32(d + 8, m->qkey);
		put24(d + 12, m->qpn);
		put24(d + 20, m->psn);
		d[24] = m->resp_res;
		d[25] = m->init_depth;
		d[26] = (uint8_t)(m->target_ack_delay << 3 | (m->failover & 3) << 1 |
				  (m->flow_ctrl & 1));
		d[27] = (uint8_t)(m->rnr_retry << 5 | (m->srq & 1) << 4);
		memcpy(d + 28, &m->ca_guid, 8);
		break;
	case DPR_CM_DREQ:
		put24(d + 8, m->qpn);
		break;
	case DPR_CM_SIDR_REQ:
		put32(d + 4, 0);
		put16(d + 4, m->pkey);
		put64(d + 8, m->service_id);
		break;
	case DPR_CM_SIDR_REP:
		put32(d + 4, 0);
		d[4] = m->status;
		put24(d + 8, m->qpn);
		put64(d + 12, m->service_id);
		put32(d + 20, m->qkey);
		break;
	default:
		break;
	}
	n = m->pdata_len < cm_layout[li].len ? m->pdata_len : cm_layout[li].len;
	memcpy(d + cm_layout[li].off, m->pdata, n);
}

void
dpr_cma_hdr_put(uint8_t *p, const struct dpr_cma_hdr *h)
{
	memset(p, 0, DPR_CMA_HDR_LEN);
	p[1] = (uint8_t)(h->ip_version << 4);
	put16(p + 2, h->src_port);
	if (h->ip_version == 4) {
		/* rdma_cm's cma_ip_addr: IPv4 in the last 4 bytes, zeros before */
		memcpy(p + 16, h->src + 12, 4);
		memcpy(p + 32, h->dst + 12, 4);
	} else {
		memcpy(p + 4, h->src, 16);
		memcpy(p + 20, h->dst, 16);
	}
}

bool
dpr_cma_hdr_get(const uint8_t *p, struct dpr_cma_hdr *h)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(h, 0, sizeof(*h));
	if (p[0] != 0)
		return false;
	h->ip_version = p[1] >> 4;
	h->src_port = get16(p + 2);
	if (h->ip_version == 4) {
		memcpy(h->src, mapped, 12);
		memcpy(h->dst, mapped, 12);
		memcpy(h->src + 12, p + 16, 4);
		memcpy(h->dst + 12, p + 32, 4);
		return true;
	}
	if (h->ip_version != 6)
		return false;
	memcpy(h->src, p + 4, 16);
	memcpy(h->dst, p + 20, 16);
	return true;
}

/*
 * DprdmaCaps (dpr_cm_mad.h): the common MAD header (bytes 0-23), the
 * vendor header of range 2 (24-35 the RMPP header, unused: zero; 36
 * reserved; 37-39 the OUI), then the data:
 *
 *   40      version        DPR_CAPS_VERSION
 *   41-43   reserved       0
 *   44-47   caps           DPR_PEER_* bits, big-endian
 *   48-55   node GUID      as the sender's CM messages carry it
 *   56-255  reserved       0
 */
/* A MAD of dprdma's vendor class (its class and OUI), whatever its
 * attribute. */
static bool
vendor_ours(const uint8_t *mad, size_t len)
{
	return len >= DPR_MAD_LEN && mad[1] == DPR_CAPS_CLASS &&
		get24(mad + 37) == DPR_CAPS_OUI;
}

/* The common MAD header and the vendor header of dprdma's class; the
 * rest zero. */
static void
vendor_hdr(uint8_t mad[DPR_MAD_LEN], uint8_t method, uint16_t status,
	   uint64_t tid, uint16_t attr)
{
	memset(mad, 0, DPR_MAD_LEN);
	mad[0] = 1;
	mad[1] = DPR_CAPS_CLASS;
	mad[2] = DPR_CAPS_CLASS_VERSION;
	mad[3] = method;
	put16(mad + 4, status);
	put64(mad + 8, tid);
	put16(mad + 16, attr);
	put24(mad + 37, DPR_CAPS_OUI);
}

int
dpr_caps_decode(const uint8_t *mad, size_t len, struct dpr_caps_msg *m)
{
	memset(m, 0, sizeof(*m));
	if (!vendor_ours(mad, len))
		return 1;
	m->method = mad[3];
	m->status = get16(mad + 4);
	m->tid = get64(mad + 8);
	if (mad[0] != 1 || mad[2] != DPR_CAPS_CLASS_VERSION ||
	    get16(mad + 16) != DPR_CAPS_ATTR ||
	    (m->method != DPR_MAD_METHOD_GET &&
	     m->method != DPR_MAD_METHOD_GET_RESP))
		return -EINVAL;
	if (m->status != 0)
		return 0;               /* an answer from a stack not ours */
	m->version = mad[40];
	if (m->version == 0)
		return -EINVAL;
	/* a later version keeps these fields where they are */
	m->caps = get32(mad + 44);
	memcpy(&m->node_guid, mad + 48, 8);
	memcpy(m->keyprint, mad + 56, 8);
	return 0;
}

void
dpr_caps_encode(const struct dpr_caps_msg *m, uint8_t mad[DPR_MAD_LEN])
{
	vendor_hdr(mad, m->method, m->status, m->tid, DPR_CAPS_ATTR);
	mad[40] = DPR_CAPS_VERSION;
	put32(mad + 44, m->caps);
	memcpy(mad + 48, &m->node_guid, 8);
	memcpy(mad + 56, m->keyprint, 8);
}

/*
 * DprdmaSec (secure QPs' handshake, doc/security.rst), method Send, the
 * headers as DprdmaCaps', then:
 *
 *   40       version 1; 41 mode; 42 flags (bit 0: the echo is valid)
 *   44-47    the receiver's QPN; 48-51 the sender's QPN
 *   52-67    the sender's GID; 68-83 the receiver's GID
 *   84-99    the sender's nonce; 100-115 the receiver's nonce as the
 *            sender has it (the echo)
 *   116-147  the sender's X25519 public key (RFC 7748)
 *   148-163  HMAC-SHA-256 of bytes 0-147, first 16 bytes (the caller's)
 */
int
dpr_sec_offer_decode(const uint8_t *mad, size_t len, struct dpr_sec_offer *o)
{
	memset(o, 0, sizeof(*o));
	if (!vendor_ours(mad, len) || get16(mad + 16) != DPR_SEC_ATTR)
		return 1;
	o->tid = get64(mad + 8);
	o->version = mad[40];
	o->mode = mad[41];
	o->echo = mad[42] & 1;
	o->dqpn = get32(mad + 44);
	o->sqpn = get32(mad + 48);
	memcpy(o->sgid, mad + 52, 16);
	memcpy(o->dgid, mad + 68, 16);
	memcpy(o->nonce, mad + 84, 16);
	memcpy(o->echo_nonce, mad + 100, 16);
	memcpy(o->pub, mad + 116, 32);
	return o->version == DPR_SEC_OFFER_VERSION ? 0 : -EINVAL;
}

void
dpr_sec_offer_encode(const struct dpr_sec_offer *o, uint8_t mad[DPR_MAD_LEN])
{
	vendor_hdr(mad, DPR_MAD_METHOD_SEND, 0, o->tid, DPR_SEC_ATTR);
	mad[40] = DPR_SEC_OFFER_VERSION;
	mad[41] = o->mode;
	mad[42] = o->echo ? 1 : 0;
	put32(mad + 44, o->dqpn);
	put32(mad + 48, o->sqpn);
	memcpy(mad + 52, o->sgid, 16);
	memcpy(mad + 68, o->dgid, 16);
	memcpy(mad + 84, o->nonce, 16);
	if (o->echo)
		memcpy(mad + 100, o->echo_nonce, 16);
	memcpy(mad + 116, o->pub, 32);
}
