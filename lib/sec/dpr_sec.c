/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Sealing and opening secure RoCEv2 frames (dpr_sec.h has the format).
 * AES-GCM is Intel's ipsec-mb (its direct GCM calls with keys expanded
 * once per association: no job queue, no allocation per frame); the
 * manager it dispatches through is set up once and only read after, so
 * every worker shares it. The ICRC is lib/wire's.
 */

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dpr_sec.h"

static IMB_MGR *mgr;
static IMB_ARCH arch = IMB_ARCH_NONE;

int
dpr_sec_init(void)
{
	IMB_MGR *m;

	if (mgr != NULL)
		return 0;
	m = alloc_mb_mgr(0);
	if (m == NULL)
		return -ENOMEM;
	init_mb_mgr_auto(m, &arch);
	if (imb_get_errno(m) != 0 || arch == IMB_ARCH_NONE) {
		free_mb_mgr(m);
		return -ENOTSUP;
	}
	mgr = m;
	return 0;
}

const char *
dpr_sec_arch(void)
{
	switch (arch) {
	case IMB_ARCH_NOAESNI: return "no-aesni";
	case IMB_ARCH_SSE: return "sse";
	case IMB_ARCH_AVX: return "avx";
	case IMB_ARCH_AVX2: return "avx2";
	case IMB_ARCH_AVX512: return "avx512";
	default: return "none";
	}
}

static void
sa_key(struct gcm_key_data *gk, uint8_t *salt, uint32_t *id,
       const struct dpr_sec_key *k)
{
	IMB_AES128_GCM_PRE(mgr, k->key, gk);
	memcpy(salt, k->salt, DPR_SEC_SALT_LEN);
	*id = k->id;
}

void
dpr_sec_tx_init(struct dpr_sec_tx *tx, const struct dpr_sec_key *k,
		enum dpr_sec_mode mode)
{
	memset(tx, 0, sizeof(*tx));
	sa_key(&tx->gk, tx->salt, &tx->id, k);
	tx->mode = (uint8_t)mode;
}

void
dpr_sec_rx_init(struct dpr_sec_rx *rx, const struct dpr_sec_key *k,
		enum dpr_sec_mode mode)
{
	memset(rx, 0, sizeof(*rx));
	sa_key(&rx->gk, rx->salt, &rx->id, k);
	rx->mode = (uint8_t)mode;
}

/* Where a RoCEv2 frame's headers lie (Ethernet, one VLAN tag or none). */
struct layout {
	uint32_t l3, l4, bth;
	bool ipv6;
};

/* @p len bytes at @p p hold the headers through the BTH; the frame's
 * whole length is checked by the caller (its payload and ICRC may lie in
 * further segments). */
static bool
layout_of(const uint8_t *p, uint32_t len, struct layout *l)
{
	uint32_t off = RTE_ETHER_HDR_LEN;
	uint16_t et;

	if (len < off + 4)
		return false;
	et = (uint16_t)(p[12] << 8 | p[13]);
	if (et == RTE_ETHER_TYPE_VLAN) {
		et = (uint16_t)(p[16] << 8 | p[17]);
		off += 4;
	}
	l->l3 = off;
	if (et == RTE_ETHER_TYPE_IPV4) {
		if (len < off + sizeof(struct rte_ipv4_hdr) || p[off + 9] != IPPROTO_UDP)
			return false;
		l->l4 = off + (p[off] & 0x0f) * 4u;
		l->ipv6 = false;
	} else if (et == RTE_ETHER_TYPE_IPV6) {
		if (len < off + sizeof(struct rte_ipv6_hdr) || p[off + 6] != IPPROTO_UDP)
			return false;
		l->l4 = off + sizeof(struct rte_ipv6_hdr);
		l->ipv6 = true;
	} else {
		return false;
	}
	l->bth = l->l4 + sizeof(struct rte_udp_hdr);
	return len >= l->bth + sizeof(struct dpr_bth) &&
		(p[l->l4 + 2] << 8 | p[l->l4 + 3]) == DPR_ROCEV2_PORT;
}

/* The frame's length by its IP header (Ethernet padding excluded). */
static uint32_t
ip_frame_len(const uint8_t *p, const struct layout *l)
{
	if (l->ipv6)
		return l->l3 + sizeof(struct rte_ipv6_hdr) +
			(p[l->l3 + 4] << 8 | p[l->l3 + 5]);
	return l->l3 + (p[l->l3 + 2] << 8 | p[l->l3 + 3]);
}

/* IP and UDP lengths grown (or shrunk) by @p d, the IPv4 checksum or the
 * IPv6 UDP checksum (where the sender set one) computed again. */
static void
fix_lengths(uint8_t *p, const struct layout *l, int d)
{
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(p + l->l4);

	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(rte_be_to_cpu_16(udp->dgram_len) + d));
	if (l->ipv6) {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(p + l->l3);

		ip->payload_len = rte_cpu_to_be_16((uint16_t)
				(rte_be_to_cpu_16(ip->payload_len) + d));
		if (udp->dgram_cksum != 0) {
			udp->dgram_cksum = 0;
			udp->dgram_cksum = rte_ipv6_udptcp_cksum(ip, udp);
		}
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + l->l3);

		const uint16_t old = rte_be_to_cpu_16(ip->total_length);
		const uint16_t len = (uint16_t)(old + d);
		uint32_t sum;

		/* the checksum updated for the one word changed (RFC 1624,
		 * eqn. 3): not summed again over a header just written,
		 * whose loads would wait for that store */
		ip->total_length = rte_cpu_to_be_16(len);
		sum = (uint16_t)~rte_be_to_cpu_16(ip->hdr_checksum) +
			(uint32_t)(uint16_t)~old + len;
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)~sum);
	}
}

/* The ICRC of a frame in one piece, @p len through its ICRC. */
static rte_le32_t
icrc_of(const struct rte_mbuf *m, const struct layout *l, uint32_t len)
{
	struct dpr_pkt_info pi = {
		.l3_off = (uint16_t)l->l3,
		.hdr_len = sizeof(struct dpr_bth),
		.payload_off = l->bth + (uint32_t)sizeof(struct dpr_bth),
		.paylen = len - l->bth - (uint32_t)sizeof(struct dpr_bth) - DPR_ICRC_LEN,
		.encap.ipv6 = l->ipv6,
	};

	return rte_cpu_to_le_32(dpr_icrc_mbuf(m, &pi));
}

static void
set_icrc(struct rte_mbuf *m, const struct layout *l, uint32_t len)
{
	rte_le32_t icrc = icrc_of(m, l, len);

	memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, len - DPR_ICRC_LEN), &icrc,
	       DPR_ICRC_LEN);
}

static void
make_iv(uint8_t iv[12], const uint8_t salt[DPR_SEC_SALT_LEN], uint64_t seq)
{
	const rte_be64_t s = rte_cpu_to_be_64(seq);

	memcpy(iv, salt, DPR_SEC_SALT_LEN);
	memcpy(iv + DPR_SEC_SALT_LEN, &s, sizeof(s));
}

/* layout_of() of a frame whose BTH says it is sealed */
static bool
sealed_layout(const uint8_t *p, uint32_t len, struct layout *l)
{
	return layout_of(p, len, l) &&
		(p[l->bth + 1] & DPR_BTH_TVER_MASK) == DPR_SEC_TVER;
}

bool
dpr_sec_is_sealed(const struct rte_mbuf *m)
{
	struct layout l;

	return sealed_layout(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, &l);
}

/* The layout of sealed frame @p m as far as a first look needs: its
 * length to the ICRC's end in @p len. */
static bool
peek(const struct rte_mbuf *m, struct layout *l, uint32_t *len)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	if (!sealed_layout(p, m->data_len, l))
		return false;
	*len = ip_frame_len(p, l);
	return *len <= m->pkt_len &&
		*len >= l->bth + sizeof(struct dpr_bth) + DPR_SEC_OVERHEAD + DPR_ICRC_LEN;
}

enum dpr_sec_err
dpr_sec_check(const struct rte_mbuf *m, uint32_t *dqpn)
{
	uint8_t tail[DPR_ICRC_LEN];
	const void *carried;
	struct layout l;
	rte_le32_t icrc;
	uint32_t len;

	if (!peek(m, &l, &len))
		return DPR_SEC_ERR_MALFORMED;
	icrc = icrc_of(m, &l, len);
	carried = rte_pktmbuf_read(m, len - DPR_ICRC_LEN, DPR_ICRC_LEN, tail);
	if (carried == NULL || memcmp(&icrc, carried, DPR_ICRC_LEN) != 0)
		return DPR_SEC_ERR_ICRC;
	*dqpn = dpr_bth_qpn(rte_pktmbuf_mtod_offset(m, const struct dpr_bth *, l.bth));
	return DPR_SEC_OK;
}

/* GMAC (RFC 4543) of the @p len bytes at @p from under @p gk and @p iv:
 * the tag into @p tag. A sealed frame in auth mode is authenticated from
 * its BTH through its payload. */
static void
gmac(const struct gcm_key_data *gk, const uint8_t iv[12], const uint8_t *from,
     uint32_t len, uint8_t *tag)
{
	struct gcm_context_data ctx;

	IMB_AES128_GMAC_INIT(mgr, gk, &ctx, iv, 12);
	IMB_AES128_GMAC_UPDATE(mgr, gk, &ctx, from, len);
	IMB_AES128_GMAC_FINALIZE(mgr, gk, &ctx, tag, DPR_SEC_ICV_LEN);
}

/* Headers @p p (their BTH at @p l, @p hl bytes through it) made a sealed
 * frame's: TVer 1, BTH byte 4 zero, the SECH of the next sequence number
 * after them; its IV in @p iv. */
static void
seal_headers(struct dpr_sec_tx *tx, uint8_t *p, const struct layout *l,
	     uint32_t hl, uint8_t iv[12])
{
	uint8_t *sech = p + hl;
	rte_be64_t seq;
	rte_be32_t id;

	p[l->bth + 1] = (uint8_t)((p[l->bth + 1] & ~DPR_BTH_TVER_MASK) | DPR_SEC_TVER);
	/* BTH byte 4 (FECN, BECN, Resv6a) is not authenticated: a switch
	 * may mark FECN/BECN, a receiver ignores Resv6a, and the ICRC masks
	 * the byte as variant. Zero in the AAD, and a sender sets none */
	p[l->bth + 4] = 0;
	memset(sech, 0, DPR_SEC_HDR_LEN);
	sech[0] = DPR_SEC_VERSION << 4 | tx->mode;
	id = rte_cpu_to_be_32(tx->id);
	memcpy(sech + 4, &id, sizeof(id));
	tx->seq++;
	seq = rte_cpu_to_be_64(tx->seq);
	memcpy(sech + 8, &seq, sizeof(seq));
	make_iv(iv, tx->salt, tx->seq);
}

/*
 * Sealed where it lies: a frame of one segment that is its own (not
 * shared, not attached memory) with room for the SECH before it and the
 * ICV after -- the usual short message, copied. The headers move 16
 * bytes into the headroom, the body is encrypted (or authenticated) in
 * place: no second
 * mbuf to take, touch and free, no copy (at 64 B a seventh of what
 * sealing cost). @return false if @p m is not such a frame.
 */
static bool
seal_in_place(struct dpr_sec_tx *tx, struct rte_mbuf *m, const struct layout *l,
	      uint32_t hl, uint32_t len)
{
	struct gcm_context_data ctx;
	const uint32_t body = len - hl - DPR_ICRC_LEN;
	uint8_t iv[12], *p, *d;

	if (m->nb_segs != 1 || !RTE_MBUF_DIRECT(m) ||
	    rte_mbuf_refcnt_read(m) != 1 || m->data_len != len ||
	    rte_pktmbuf_headroom(m) < DPR_SEC_HDR_LEN ||
	    rte_pktmbuf_tailroom(m) < DPR_SEC_ICV_LEN)
		return false;
	p = (uint8_t *)rte_pktmbuf_prepend(m, DPR_SEC_HDR_LEN);
	rte_pktmbuf_append(m, DPR_SEC_ICV_LEN);
	memmove(p, p + DPR_SEC_HDR_LEN, hl);
	seal_headers(tx, p, l, hl, iv);
	d = p + hl + DPR_SEC_HDR_LEN;
	if (tx->mode == DPR_SEC_ENCRYPT) {
		IMB_AES128_GCM_ENC(mgr, &tx->gk, &ctx, d, d, body, iv, p + l->bth,
				   sizeof(struct dpr_bth) + DPR_SEC_HDR_LEN, d + body,
				   DPR_SEC_ICV_LEN);
	} else {
		gmac(&tx->gk, iv, p + l->bth,
		     sizeof(struct dpr_bth) + DPR_SEC_HDR_LEN + body, d + body);
	}
	fix_lengths(p, l, DPR_SEC_OVERHEAD);
	set_icrc(m, l, len + DPR_SEC_OVERHEAD);
	return true;
}

struct rte_mbuf *
dpr_sec_seal(struct dpr_sec_tx *tx, struct rte_mbuf *m, struct rte_mempool *pool)
{
	const uint8_t *src = rte_pktmbuf_mtod(m, const uint8_t *);
	struct gcm_context_data ctx;
	struct rte_mbuf *out = NULL, *seg;
	uint32_t hl, body, len, off, left;
	uint8_t iv[12], *p, *sech, *d;
	struct layout l;

	len = m->pkt_len;
	if (!layout_of(src, m->data_len, &l)) {
		rte_errno = EINVAL;
		goto fail;
	}
	hl = l.bth + (uint32_t)sizeof(struct dpr_bth);
	if (len < hl + DPR_ICRC_LEN) {
		rte_errno = EINVAL;
		goto fail;
	}
	if (seal_in_place(tx, m, &l, hl, len))
		return m;
	body = len - hl - DPR_ICRC_LEN;
	out = rte_pktmbuf_alloc(pool);
	if (out == NULL) {
		rte_errno = ENOBUFS;
		goto fail;
	}
	p = len + DPR_SEC_OVERHEAD > UINT16_MAX ? NULL :
		(uint8_t *)rte_pktmbuf_append(out, (uint16_t)(len + DPR_SEC_OVERHEAD));
	if (p == NULL) {
		rte_errno = EMSGSIZE;
		goto fail;
	}
	memcpy(p, src, hl);
	seal_headers(tx, p, &l, hl, iv);
	sech = p + hl;
	d = sech + DPR_SEC_HDR_LEN;
	if (tx->mode == DPR_SEC_ENCRYPT && hl + body <= m->data_len) {
		/* headers and payload in the one segment (a short message,
		 * copied): one call, not three */
		IMB_AES128_GCM_ENC(mgr, &tx->gk, &ctx, d, src + hl, body, iv,
				   p + l.bth, sizeof(struct dpr_bth) + DPR_SEC_HDR_LEN,
				   d + body, DPR_SEC_ICV_LEN);
		goto sealed;
	}
	/* the body where it lies: headers and maybe payload in the first
	 * segment, the payload maybe attached after */
	if (tx->mode == DPR_SEC_ENCRYPT)
		IMB_AES128_GCM_INIT(mgr, &tx->gk, &ctx, iv, p + l.bth,
				    sizeof(struct dpr_bth) + DPR_SEC_HDR_LEN);
	off = hl;
	left = body;
	for (seg = m; seg != NULL && left > 0; seg = seg->next) {
		uint32_t n;

		if (off >= seg->data_len) {
			off -= seg->data_len;
			continue;
		}
		n = RTE_MIN(left, seg->data_len - off);
		if (tx->mode == DPR_SEC_ENCRYPT)
			IMB_AES128_GCM_ENC_UPDATE(mgr, &tx->gk, &ctx, d,
				rte_pktmbuf_mtod_offset(seg, const uint8_t *, off), n);
		else
			memcpy(d, rte_pktmbuf_mtod_offset(seg, const uint8_t *, off), n);
		d += n;
		left -= n;
		off = 0;
	}
	if (left != 0) {
		rte_errno = EINVAL;
		goto fail;
	}
	if (tx->mode == DPR_SEC_ENCRYPT) {
		IMB_AES128_GCM_ENC_FINALIZE(mgr, &tx->gk, &ctx, d, DPR_SEC_ICV_LEN);
	} else {
		/* GMAC (RFC 4543): the whole transport part authenticated */
		gmac(&tx->gk, iv, p + l.bth,
		     sizeof(struct dpr_bth) + DPR_SEC_HDR_LEN + body, d);
	}
sealed:
	fix_lengths(p, &l, DPR_SEC_OVERHEAD);
	set_icrc(out, &l, len + DPR_SEC_OVERHEAD);
	out->port = m->port;
	rte_pktmbuf_free(m);
	return out;
fail:
	rte_pktmbuf_free(out);
	rte_pktmbuf_free(m);
	return NULL;
}

/* RFC 6479's window: bit (s % WIN) of the last WINDOW sequence numbers. */
static bool
replay_ok(const struct dpr_sec_rx *rx, uint64_t s)
{
	if (s == 0)
		return false;
	if (s > rx->top)
		return true;
	if (rx->top - s >= DPR_SEC_WINDOW)
		return false;
	return !(rx->win[(s / 64) % (DPR_SEC_WIN / 64)] & (1ull << (s % 64)));
}

static void
replay_take(struct dpr_sec_rx *rx, uint64_t s)
{
	if (s > rx->top) {
		if (s - rx->top >= DPR_SEC_WIN) {
			memset(rx->win, 0, sizeof(rx->win));
		} else {
			/* clear the words the window moves into */
			uint64_t w;

			for (w = rx->top / 64 + 1; w <= s / 64; w++)
				rx->win[w % (DPR_SEC_WIN / 64)] = 0;
		}
		rx->top = s;
	}
	rx->win[(s / 64) % (DPR_SEC_WIN / 64)] |= 1ull << (s % 64);
}

static enum dpr_sec_err
open_frame(struct dpr_sec_rx *rx, struct rte_mbuf *m)
{
	struct gcm_context_data ctx;
	uint8_t iv[12], icv[DPR_SEC_ICV_LEN], *p, *sech, becn;
	uint32_t hl, len, body;
	struct layout l;
	rte_be64_t seqb;
	rte_be32_t idb;
	uint64_t seq;

	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0)
		return DPR_SEC_ERR_MALFORMED;
	p = rte_pktmbuf_mtod(m, uint8_t *);
	if (!sealed_layout(p, m->data_len, &l))
		return DPR_SEC_ERR_MALFORMED;
	hl = l.bth + (uint32_t)sizeof(struct dpr_bth);
	len = ip_frame_len(p, &l);
	if (len > m->data_len || len < hl + DPR_SEC_OVERHEAD + DPR_ICRC_LEN)
		return DPR_SEC_ERR_MALFORMED;
	sech = p + hl;
	if (sech[0] >> 4 != DPR_SEC_VERSION || sech[1] || sech[2] || sech[3])
		return DPR_SEC_ERR_MALFORMED;
	if ((sech[0] & 0x0f) != rx->mode)
		return DPR_SEC_ERR_MODE;
	memcpy(&idb, sech + 4, sizeof(idb));
	if (rte_be_to_cpu_32(idb) != rx->id)
		return DPR_SEC_ERR_KEY;
	memcpy(&seqb, sech + 8, sizeof(seqb));
	seq = rte_be_to_cpu_64(seqb);
	if (!replay_ok(rx, seq))
		return DPR_SEC_ERR_REPLAY;
	body = len - hl - DPR_SEC_OVERHEAD - DPR_ICRC_LEN;
	make_iv(iv, rx->salt, seq);
	/* BTH byte 4 out of the AAD, as the ICRC leaves it out (FECN and
	 * BECN a switch may mark, Resv6a ignored); put back after */
	becn = p[l.bth + 4];
	p[l.bth + 4] = 0;
	if (rx->mode == DPR_SEC_ENCRYPT) {
		/* in place: a frame that fails is dropped, garbled */
		IMB_AES128_GCM_DEC(mgr, &rx->gk, &ctx, sech + DPR_SEC_HDR_LEN,
				   sech + DPR_SEC_HDR_LEN, body, iv, p + l.bth,
				   sizeof(struct dpr_bth) + DPR_SEC_HDR_LEN, icv,
				   DPR_SEC_ICV_LEN);
	} else {
		gmac(&rx->gk, iv, p + l.bth,
		     sizeof(struct dpr_bth) + DPR_SEC_HDR_LEN + body, icv);
	}
	if (CRYPTO_memcmp(icv, sech + DPR_SEC_HDR_LEN + body, DPR_SEC_ICV_LEN) != 0) {
		if (rx->mode == DPR_SEC_ENCRYPT)
			/* the body back as it came, for its ICRC: the same
			 * counter stream over it again (AES-CTR undoes
			 * itself; the tag it makes goes nowhere) */
			IMB_AES128_GCM_ENC(mgr, &rx->gk, &ctx, sech + DPR_SEC_HDR_LEN,
					   sech + DPR_SEC_HDR_LEN, body, iv, p + l.bth,
					   sizeof(struct dpr_bth) + DPR_SEC_HDR_LEN, icv,
					   DPR_SEC_ICV_LEN);
		p[l.bth + 4] = becn;
		return DPR_SEC_ERR_AUTH;
	}
	p[l.bth + 4] = becn;
	replay_take(rx, seq);
	/* the plain frame: the headers slide over the SECH, the ICV goes */
	p[l.bth + 1] &= (uint8_t)~DPR_BTH_TVER_MASK;
	memmove(p + DPR_SEC_HDR_LEN, p, hl);
	rte_pktmbuf_adj(m, DPR_SEC_HDR_LEN);
	p = rte_pktmbuf_mtod(m, uint8_t *);
	len -= DPR_SEC_OVERHEAD;
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	fix_lengths(p, &l, -DPR_SEC_OVERHEAD);
	/* (its ICRC is not made again: the tag vouched for what it covers,
	 * and the caller parses it with dpr_wire_parse_again()) */
	return DPR_SEC_OK;
}

enum dpr_sec_err
dpr_sec_open(struct dpr_sec_rx *rx, struct rte_mbuf *m)
{
	enum dpr_sec_err err = open_frame(rx, m);
	uint32_t dqpn;

	/* a frame refused is told corrupt from forged, replayed or for
	 * another key by its ICRC (unchanged by what was tried) */
	if (err != DPR_SEC_OK && dpr_sec_check(m, &dqpn) == DPR_SEC_ERR_ICRC)
		return DPR_SEC_ERR_ICRC;
	return err;
}

const char *
dpr_sec_err_name(enum dpr_sec_err e)
{
	static const char *const names[] = {
		[DPR_SEC_OK] = "ok",
		[DPR_SEC_ERR_ICRC] = "icrc",
		[DPR_SEC_ERR_MALFORMED] = "malformed",
		[DPR_SEC_ERR_MODE] = "mode",
		[DPR_SEC_ERR_KEY] = "key",
		[DPR_SEC_ERR_REPLAY] = "replay",
		[DPR_SEC_ERR_AUTH] = "auth",
	};

	return (unsigned int)e < RTE_DIM(names) ? names[e] : "?";
}
