/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Secure QPs' frames (lib/sec): sealed frames opened by an independent
 * AES-GCM (OpenSSL's) with the nonce and AAD doc/security.rst gives;
 * seal then open gives back the very frame sealed (IPv4, IPv6, VLAN,
 * payload copied or attached, every size up to 4 KiB); every byte of the
 * transport part changed is refused; replays refused, reordering within
 * the window taken; both ends derive crossed keys, fresh per nonce.
 */

#include <inttypes.h>
#include <string.h>
#include <arpa/inet.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "dpr_sec.h"
#include "dpr_sec_policy.h"
#include "dpr_test.h"
#include "dpr_test_wire.h"
#include "dpr_wire.h"

static struct rte_mempool *pool;
static uint8_t payload[8192];

static void
write_hdrs(struct dpr_wire_hdrs *h, uint32_t len)
{
	memset(h, 0, sizeof(*h));
	h->opcode = DPR_OP_RC_WRITE_ONLY;
	h->pkey = DPR_DEFAULT_PKEY;
	h->dqpn = 0xa50123;
	h->psn = 0x123456;
	h->ackreq = true;
	h->reth.va = 0x00007f1234560000ULL;
	h->reth.rkey = 0x1a2b3c4d;
	h->reth.len = len;
}

static void
keys(struct dpr_sec_key *a, struct dpr_sec_key *b)
{
	memset(a, 0x11, sizeof(*a));
	a->id = 0x01020304;
	memset(b, 0x22, sizeof(*b));
	b->id = 0x05060708;
}

/* A plain WRITE frame of @p len bytes, payload copied or attached (a
 * SEND with @p send: its headers end before the ICRC's 4 bytes would) */
static struct rte_mbuf *
plain_op(const struct dpr_wire_encap *e, uint32_t len, bool attach, bool send)
{
	static struct rte_mbuf_ext_shared_info shinfo;
	struct dpr_wire_seg seg = { payload, (rte_iova_t)(uintptr_t)payload, len,
				    attach ? &shinfo : NULL };
	struct dpr_wire_hdrs h;

	rte_mbuf_ext_refcnt_set(&shinfo, 30000);
	write_hdrs(&h, len);
	if (send)
		h.opcode = DPR_OP_RC_SEND_ONLY;
	return dpr_wire_build(pool, e, &h, &seg, len ? 1 : 0);
}

static struct rte_mbuf *
plain(const struct dpr_wire_encap *e, uint32_t len, bool attach)
{
	return plain_op(e, len, attach, false);
}

/* OpenSSL's AES-128-GCM over a sealed frame as doc/security.rst reads
 * it: true if its ICV checks; the plain body into @p out. */
static bool
openssl_open(const struct dpr_sec_key *k, const struct rte_mbuf *m,
	     uint32_t bth, uint8_t *out, uint32_t *outlen)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *sech = p + bth + 12;
	uint32_t body = m->pkt_len - bth - 12 - DPR_SEC_OVERHEAD - DPR_ICRC_LEN;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t iv[12], tag[16];
	bool enc = (sech[0] & 0x0f) == DPR_SEC_ENCRYPT;
	int n = 0, ok;

	memcpy(iv, k->salt, 4);
	memcpy(iv + 4, sech + 8, 8);
	memcpy(tag, sech + DPR_SEC_HDR_LEN + body, 16);
	EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), NULL, NULL, NULL);
	EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL);
	EVP_DecryptInit_ex(c, NULL, NULL, k->key, iv);
	/* AAD: BTH and SECH; in auth mode the body too */
	EVP_DecryptUpdate(c, NULL, &n, p + bth, 12 + DPR_SEC_HDR_LEN + (enc ? 0 : (int)body));
	if (enc) {
		EVP_DecryptUpdate(c, out, &n, sech + DPR_SEC_HDR_LEN, (int)body);
	} else {
		memcpy(out, sech + DPR_SEC_HDR_LEN, body);
		n = (int)body;
	}
	*outlen = (uint32_t)n;
	EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, tag);
	ok = EVP_DecryptFinal_ex(c, out + n, &n);
	EVP_CIPHER_CTX_free(c);
	return ok == 1;
}

static int
test_seal_open(void)
{
	static const uint32_t sizes[] = { 0, 1, 3, 4, 15, 16, 17, 64, 255, 1000, 1024,
					  4096 };
	struct dpr_sec_key ka, kb;
	unsigned int v, i, mode;
	uint64_t frames = 0, in_place = 0;

	keys(&ka, &kb);
	for (mode = DPR_SEC_AUTH; mode <= DPR_SEC_ENCRYPT; mode++)
	for (v = 0; v < 4; v++)
	for (i = 0; i < RTE_DIM(sizes); i++) {
		struct dpr_sec_tx tx;
		struct dpr_sec_rx rx;
		struct dpr_wire_encap e;
		struct rte_mbuf *m, *s;
		struct dpr_pkt_info pi;
		uint8_t want[9000], body[9000];
		uint32_t len, bth, n;

		sample_encap(&e, v & 1, v & 2);
		dpr_sec_tx_init(&tx, &ka, mode);
		dpr_sec_rx_init(&rx, &ka, mode);
		/* (a SEND with its payload attached: the headers alone in
		 * the first segment) */
		m = plain_op(&e, sizes[i], i & 1, v == 0 && (i & 2));
		CHECK(m != NULL, "build");
		len = m->pkt_len;
		memcpy(want, rte_pktmbuf_read(m, 0, len, body), len);
		CHECK_EQ(dpr_wire_parse(m, &pi, 0), DPR_WIRE_OK, "plain frame parses");
		bth = pi.bth_off;
		s = dpr_sec_seal(&tx, m, pool);
		CHECK(s != NULL, "seal: %s", rte_strerror(rte_errno));
		in_place += s == m;     /* (copied and encrypted: sealed where it lay) */
		CHECK_EQ(s->pkt_len, len + DPR_SEC_OVERHEAD, "32 bytes longer");
		CHECK(dpr_sec_is_sealed(s), "sealed");
		/* a plain peer (and lib/wire) drops it at the TVer, its ICRC
		 * sound */
		CHECK_EQ(dpr_wire_parse(s, &pi, 0), DPR_WIRE_ERR_BAD_TVER, "TVer 1");
		CHECK(openssl_open(&ka, s, bth, body, &n), "OpenSSL opens it "
		      "(mode %u, size %u, variant %u)", mode, sizes[i], v);
		CHECK_EQ(n, len - bth - 12 - DPR_ICRC_LEN, "body length");
		CHECK(memcmp(body, want + bth + 12, n) == 0, "OpenSSL's plain body");
		if (mode == DPR_SEC_ENCRYPT && sizes[i] >= 16)
			CHECK(memmem(rte_pktmbuf_mtod(s, uint8_t *), s->pkt_len,
				     payload, 16) == NULL, "no payload in clear");
		CHECK_EQ(dpr_sec_check(s, &n), DPR_SEC_OK, "ICRC");
		CHECK_EQ(n, 0xa50123u, "its QP");
		CHECK_EQ(dpr_sec_open(&rx, s), DPR_SEC_OK, "opens");
		CHECK_EQ(s->pkt_len, len, "plain length again");
		CHECK(memcmp(rte_pktmbuf_mtod(s, uint8_t *), want, len - DPR_ICRC_LEN) == 0,
		      "the very frame sealed, but for its ICRC (mode %u, size %u, "
		      "variant %u)", mode, sizes[i], v);
		CHECK_EQ(dpr_wire_parse_again(s, &pi, 0), DPR_WIRE_OK, "parses");
		rte_pktmbuf_free(s);
		frames++;
	}
	CHECK_EQ(rte_mempool_in_use_count(pool), 0, "no mbuf kept");
	CHECK(in_place > 0 && in_place < frames, "sealed in place (%" PRIu64
	      ") and into a new frame (the rest): both ways checked", in_place);
	printf("    %" PRIu64 " frames, AES-GCM by ipsec-mb's %s code\n", frames,
	       dpr_sec_arch());
	return TEST_SUCCESS;
}

/* The ICRC of a sealed IPv4 frame made again, as anyone can. */
static void
set_icrc(struct rte_mbuf *m, uint32_t bth)
{
	struct dpr_pkt_info pi = {
		.l3_off = 14,
		.hdr_len = 12,
		.payload_off = bth + 12,
		.paylen = m->pkt_len - bth - 12 - DPR_ICRC_LEN,
	};
	rte_le32_t icrc = rte_cpu_to_le_32(dpr_icrc_mbuf(m, &pi));

	memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, m->pkt_len - DPR_ICRC_LEN),
	       &icrc, DPR_ICRC_LEN);
}

/* Every byte from the BTH to the ICV changed, one at a time, the ICRC
 * made again as an on-path attacker can: refused. */
static int
test_tamper(void)
{
	struct dpr_sec_key ka, kb;
	struct dpr_wire_encap e;
	unsigned int mode;

	keys(&ka, &kb);
	sample_encap(&e, false, false);
	for (mode = DPR_SEC_AUTH; mode <= DPR_SEC_ENCRYPT; mode++) {
		struct dpr_sec_tx tx;
		struct rte_mbuf *s;
		uint32_t bth = 14 + 20 + 8, i, len;
		uint8_t sealed[2048];

		dpr_sec_tx_init(&tx, &ka, mode);
		s = dpr_sec_seal(&tx, plain(&e, 100, false), pool);
		CHECK(s != NULL, "seal");
		len = s->pkt_len;
		memcpy(sealed, rte_pktmbuf_mtod(s, uint8_t *), len);
		rte_pktmbuf_free(s);
		/* FECN, BECN and Resv6a set on the way (the byte the ICRC
		 * masks): still taken */
		{
			struct dpr_sec_rx rx;
			struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
			uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);

			memcpy(p, sealed, len);
			p[bth + 4] |= 0xc5;
			dpr_sec_rx_init(&rx, &ka, mode);
			CHECK_EQ(dpr_sec_open(&rx, m), DPR_SEC_OK, "FECN/BECN marked");
			CHECK_EQ(p[bth + 16 + 4], 0xc5, "and kept");
			rte_pktmbuf_free(m);
		}
		for (i = bth; i < len - DPR_ICRC_LEN; i++) {
			struct dpr_sec_rx rx;
			struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
			uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
			enum dpr_sec_err err;

			uint32_t q;

			memcpy(p, sealed, len);
			p[i] ^= i == bth + 1 ? 0x40 : 0x01;  /* (TVer kept) */
			/* byte 4 (FECN, BECN, Resv6a): the ICRC masks it,
			 * the AAD leaves it out (above) */
			if (i == bth + 4) {
				rte_pktmbuf_free(m);
				continue;
			}
			CHECK_EQ(dpr_sec_check(m, &q), DPR_SEC_ERR_ICRC,
				 "byte %u: the ICRC catches it", i);
			/* corrupt on the way: refused, and told corrupt by
			 * the ICRC open checks of a frame that fails (a
			 * layout byte: malformed) -- the body put back as it
			 * came after a failed decryption, or it could not */
			{
				struct rte_mbuf *c = rte_pktmbuf_alloc(pool);

				memcpy(rte_pktmbuf_append(c, (uint16_t)len), p, len);
				dpr_sec_rx_init(&rx, &ka, mode);
				err = dpr_sec_open(&rx, c);
				CHECK(err == DPR_SEC_ERR_ICRC || err == DPR_SEC_ERR_MALFORMED,
				      "byte %u corrupt, mode %u: %s, not icrc", i, mode,
				      dpr_sec_err_name(err));
				CHECK_EQ(rx.top, 0, "the window did not move");
				rte_pktmbuf_free(c);
			}
			set_icrc(m, bth);       /* an attacker's rewrite */
			CHECK_EQ(dpr_sec_check(m, &q), DPR_SEC_OK, "ICRC made again");
			dpr_sec_rx_init(&rx, &ka, mode);
			err = dpr_sec_open(&rx, m);
			CHECK(err != DPR_SEC_OK && err != DPR_SEC_ERR_ICRC,
			      "byte %u changed, mode %u: %s (a forgery, not corrupt)", i,
			      mode, dpr_sec_err_name(err));
			CHECK_EQ(rx.top, 0, "the window did not move");
			rte_pktmbuf_free(m);
		}
		/* the other direction's key, and the other mode, refuse it */
		for (i = 0; i < 2; i++) {
			struct dpr_sec_rx rx;
			struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

			memcpy(rte_pktmbuf_append(m, (uint16_t)len), sealed, len);
			if (i == 0) {
				struct dpr_sec_key k = kb;

				k.id = ka.id;
				dpr_sec_rx_init(&rx, &k, mode);
				CHECK_EQ(dpr_sec_open(&rx, m), DPR_SEC_ERR_AUTH, "wrong key");
			} else {
				dpr_sec_rx_init(&rx, &ka, 3 - mode);
				CHECK_EQ(dpr_sec_open(&rx, m), DPR_SEC_ERR_MODE, "wrong mode");
			}
			rte_pktmbuf_free(m);
		}
	}
	return TEST_SUCCESS;
}

static int
test_replay(void)
{
	enum { N = 3 * DPR_SEC_WIN };
	struct dpr_sec_key ka, kb;
	struct dpr_wire_encap e;
	static uint8_t frames[N][192];
	struct dpr_sec_tx tx;
	struct dpr_sec_rx rx;
	uint32_t len = 0, i;

	keys(&ka, &kb);
	sample_encap(&e, false, false);
	dpr_sec_tx_init(&tx, &ka, DPR_SEC_ENCRYPT);
	dpr_sec_rx_init(&rx, &ka, DPR_SEC_ENCRYPT);
	for (i = 0; i < N; i++) {
		struct rte_mbuf *s = dpr_sec_seal(&tx, plain(&e, 64, false), pool);

		CHECK(s != NULL && s->pkt_len <= sizeof(frames[0]), "seal");
		len = s->pkt_len;
		memcpy(frames[i], rte_pktmbuf_mtod(s, uint8_t *), len);
		rte_pktmbuf_free(s);
	}
#define OPEN(i) ({ \
		struct rte_mbuf *m_ = rte_pktmbuf_alloc(pool); \
		enum dpr_sec_err r_; \
		memcpy(rte_pktmbuf_append(m_, (uint16_t)len), frames[i], len); \
		r_ = dpr_sec_open(&rx, m_); \
		rte_pktmbuf_free(m_); \
		r_; })
	/* in order, every other one first: the rest come late, in window */
	for (i = 0; i < DPR_SEC_WINDOW; i += 2)
		CHECK_EQ(OPEN(i), DPR_SEC_OK, "frame %u", i);
	for (i = 1; i < DPR_SEC_WINDOW; i += 2)
		CHECK_EQ(OPEN(i), DPR_SEC_OK, "late frame %u", i);
	for (i = 0; i < DPR_SEC_WINDOW; i += 97)
		CHECK_EQ(OPEN(i), DPR_SEC_ERR_REPLAY, "frame %u again", i);
	/* a jump of more than the window: what is behind it is refused */
	CHECK_EQ(OPEN(N - 1), DPR_SEC_OK, "far ahead");
	CHECK_EQ(OPEN(N - 1 - DPR_SEC_WINDOW), DPR_SEC_ERR_REPLAY, "behind the window");
	CHECK_EQ(OPEN(N - DPR_SEC_WINDOW), DPR_SEC_OK, "the window's last");
	CHECK_EQ(OPEN(N - DPR_SEC_WINDOW), DPR_SEC_ERR_REPLAY, "... once");
	for (i = N - DPR_SEC_WINDOW + 1; i < N - 1; i += 61)
		CHECK_EQ(OPEN(i), DPR_SEC_OK, "in the moved window: %u", i);
	CHECK_EQ(OPEN(N - 2), DPR_SEC_OK, "just behind the top");
#undef OPEN
	return TEST_SUCCESS;
}

/* The two ends the key tests derive for: 10.99.0.1 and 10.99.0.2, nonces 0. */
static void
two_ends(struct dpr_sec_end *a, struct dpr_sec_end *b)
{
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	dpr_gid_from_ipv4(&a->gid, htonl(0x0a630001));
	dpr_gid_from_ipv4(&b->gid, htonl(0x0a630002));
	a->qpn = 0x5a0011;
	b->qpn = 0x3c0012;
}

static int
test_keys(void)
{
	static const uint8_t psk[32] = "0123456789abcdef0123456789abcde";
	uint8_t prk[32], prk2[32], mk1[32], mk2[32], mac1[16], mac2[16], buf[64];
	struct dpr_sec_end a, b;
	struct dpr_sec_key atx, arx, btx, brx, k2tx, k2rx;

	CHECK_EQ(dpr_sec_psk_prk(psk, 8, prk), -EINVAL, "short PSK");
	CHECK_EQ(dpr_sec_psk_prk(psk, sizeof(psk), prk), 0, "extract");
	two_ends(&a, &b);
	memset(a.nonce, 0xa1, 16);
	memset(b.nonce, 0xb2, 16);
	CHECK_EQ(dpr_sec_derive(prk, NULL, DPR_SEC_ENCRYPT, &a, &b, &atx, &arx), 0, "A");
	CHECK_EQ(dpr_sec_derive(prk, NULL, DPR_SEC_ENCRYPT, &b, &a, &btx, &brx), 0, "B");
	CHECK(memcmp(&atx, &brx, sizeof(atx)) == 0, "A sends with what B receives with");
	CHECK(memcmp(&arx, &btx, sizeof(arx)) == 0, "and back");
	CHECK(memcmp(atx.key, arx.key, 16) != 0, "one key per direction");
	CHECK_EQ(dpr_sec_derive(prk, NULL, DPR_SEC_ENCRYPT, &a, &a, &k2tx, &k2rx), -EINVAL,
		 "an end with itself");
	/* a fresh nonce, the other mode, another PSK: other keys */
	b.nonce[15] ^= 1;
	dpr_sec_derive(prk, NULL, DPR_SEC_ENCRYPT, &a, &b, &k2tx, &k2rx);
	CHECK(memcmp(k2tx.key, atx.key, 16) && memcmp(k2rx.key, arx.key, 16), "nonce");
	b.nonce[15] ^= 1;
	dpr_sec_derive(prk, NULL, DPR_SEC_AUTH, &a, &b, &k2tx, &k2rx);
	CHECK(memcmp(k2tx.key, atx.key, 16) && memcmp(k2rx.key, arx.key, 16), "mode");
	buf[0] = 'x';
	CHECK_EQ(dpr_sec_psk_prk(buf, 1, prk2), -EINVAL, "1 byte");
	memcpy(buf, psk, sizeof(psk));
	buf[0] ^= 1;
	dpr_sec_psk_prk(buf, sizeof(psk), prk2);
	dpr_sec_derive(prk2, NULL, DPR_SEC_ENCRYPT, &a, &b, &k2tx, &k2rx);
	CHECK(memcmp(k2tx.key, atx.key, 16) != 0, "PSK");
	CHECK_EQ(dpr_sec_mac_key(prk, mk1), 0, "MAC key");
	CHECK_EQ(dpr_sec_mac_key(prk2, mk2), 0, "MAC key");
	dpr_sec_mac(mk1, "hello", 5, mac1);
	dpr_sec_mac(mk2, "hello", 5, mac2);
	CHECK(memcmp(mac1, mac2, 16) != 0, "MAC keyed by the PSK");
	dpr_sec_mac(mk1, "hellp", 5, mac2);
	CHECK(memcmp(mac1, mac2, 16) != 0, "MAC of the message");
	/* the CM's MAC keys: HKDF-Expand(prk, "dprdma cm v1" | from | to)
	 * (RFC 5869: one block, HMAC(prk, info | 1)), one per direction */
	uint8_t ga[16], gb[16], kab[32], kba[32], want[32], info[12 + 32 + 1];
	unsigned int wl = 0;

	memset(ga, 0x0a, 16);
	memset(gb, 0x0b, 16);
	CHECK_EQ(dpr_sec_cm_key(prk, ga, gb, kab), 0, "CM key");
	CHECK_EQ(dpr_sec_cm_key(prk, gb, ga, kba), 0, "CM key back");
	CHECK(memcmp(kab, kba, 32) != 0, "one CM key per direction");
	memcpy(info, "dprdma cm v1", 12);
	memcpy(info + 12, ga, 16);
	memcpy(info + 28, gb, 16);
	info[44] = 1;
	HMAC(EVP_sha256(), prk, 32, info, sizeof(info), want, &wl);
	CHECK(wl == 32 && memcmp(want, kab, 32) == 0, "CM key: HKDF-Expand as written");
	CHECK_EQ(dpr_sec_parse_hex("00112233445566778899aabbccddeeff"
				   "00112233445566778899AABBCCDDEEFF", buf, sizeof(buf)),
		 32, "hex");
	CHECK(buf[1] == 0x11 && buf[31] == 0xff, "hex bytes");
	CHECK_EQ(dpr_sec_parse_hex("00:11", buf, sizeof(buf)), -EINVAL, "too short");
	CHECK_EQ(dpr_sec_parse_hex("0g", buf, sizeof(buf)), -EINVAL, "not hex");
	return TEST_SUCCESS;
}

/* [security] subnets: parsed as written (IPv4 and IPv6, host bits
 * cleared), written back the same, the longest prefix wins, anything else
 * -1; what is wrong said. */
static int
test_subnets(void)
{
	struct dpr_sec_subnet v[DPR_SEC_MAX_SUBNETS];
	char why[160], buf[512];
	union dpr_gid g;

	CHECK_EQ(dpr_sec_subnets_parse("10.1.0.0/16=required, 10.1.2.3/24=none "
				       "fd00::1/8=opportunistic", v, DPR_SEC_MAX_SUBNETS,
				       why, sizeof(why)), 3, "three subnets");
	dpr_sec_subnets_format(v, 3, buf, sizeof(buf));
	CHECK(strcmp(buf, "10.1.0.0/16=required 10.1.2.0/24=none "
		     "fd00::/8=opportunistic") == 0, "written back: %s", buf);
	dpr_gid_from_ipv4(&g, htonl(0x0a010203));
	CHECK_EQ(dpr_sec_subnet_policy(v, 3, &g), DPR_SEC_POLICY_NONE,
		 "10.1.2.3: the /24, not the /16");
	dpr_gid_from_ipv4(&g, htonl(0x0a010303));
	CHECK_EQ(dpr_sec_subnet_policy(v, 3, &g), DPR_SEC_POLICY_REQUIRED, "10.1.3.3");
	dpr_gid_from_ipv4(&g, htonl(0x0a020000));
	CHECK_EQ(dpr_sec_subnet_policy(v, 3, &g), -1, "10.2.0.0: none holds it");
	memset(&g, 0, sizeof(g));
	g.raw[0] = 0xfd;
	g.raw[15] = 7;
	CHECK_EQ(dpr_sec_subnet_policy(v, 3, &g), DPR_SEC_POLICY_OPPORTUNISTIC, "fd00::7");
	g.raw[0] = 0xfe;
	CHECK_EQ(dpr_sec_subnet_policy(v, 3, &g), -1, "fe00::7");
	CHECK_EQ(dpr_sec_subnets_parse("0.0.0.0/0=none", v, 4, why, sizeof(why)), 1,
		 "every IPv4 peer");
	dpr_gid_from_ipv4(&g, htonl(0xc0a80101));
	CHECK_EQ(dpr_sec_subnet_policy(v, 1, &g), DPR_SEC_POLICY_NONE, "192.168.1.1");
	CHECK_EQ(dpr_sec_subnets_parse("", v, 4, why, sizeof(why)), 0, "none at all");
	CHECK_EQ(dpr_sec_subnets_parse("10.1.0.0/16", v, 4, why, sizeof(why)), -1,
		 "no policy");
	CHECK(strstr(why, "PREFIX/LEN=POLICY") != NULL, "says the form: %s", why);
	CHECK_EQ(dpr_sec_subnets_parse("10.1.0.0/33=none", v, 4, why, sizeof(why)), -1,
		 "/33");
	CHECK(strstr(why, "0-32") != NULL, "says the range: %s", why);
	CHECK_EQ(dpr_sec_subnets_parse("10.1.0.0/8=maybe", v, 4, why, sizeof(why)), -1,
		 "an unknown policy");
	CHECK_EQ(dpr_sec_subnets_parse("host/8=none", v, 4, why, sizeof(why)), -1,
		 "not an address");
	CHECK_EQ(dpr_sec_subnets_parse("1.0.0.0/8=none 2.0.0.0/8=none", v, 1, why,
				       sizeof(why)), -1, "more than room");
	return TEST_SUCCESS;
}

/* X25519 in the handshake: both ends get the same secret and from it the
 * same keys, other than the PSK's alone; a third key pair gets another;
 * a public key of low order (all zeros) and a forgotten private key are
 * refused. */
static int
test_x25519(void)
{
	static const uint8_t psk[32] = "0123456789abcdef0123456789abcde";
	struct dpr_sec_eph ea, eb, ec;
	uint8_t prk[32], sa[32], sb[32], sc[32], zero[32] = { 0 };
	struct dpr_sec_key atx, arx, btx, brx, ptx, prx;
	struct dpr_sec_end a, b;

	CHECK_EQ(dpr_sec_psk_prk(psk, sizeof(psk), prk), 0, "extract");
	CHECK_EQ(dpr_sec_eph_new(&ea), 0, "key pair A");
	CHECK_EQ(dpr_sec_eph_new(&eb), 0, "key pair B");
	CHECK_EQ(dpr_sec_eph_new(&ec), 0, "key pair C");
	CHECK(memcmp(ea.pub, eb.pub, 32) != 0, "fresh public keys");
	CHECK_EQ(dpr_sec_eph_shared(&ea, eb.pub, sa), 0, "A's secret");
	CHECK_EQ(dpr_sec_eph_shared(&eb, ea.pub, sb), 0, "B's secret");
	CHECK(memcmp(sa, sb, 32) == 0, "the same on both ends");
	CHECK_EQ(dpr_sec_eph_shared(&ec, eb.pub, sc), 0, "C's secret with B");
	CHECK(memcmp(sa, sc, 32) != 0, "another key pair, another secret");
	CHECK_EQ(dpr_sec_eph_shared(&ea, zero, sc), -EINVAL, "a low-order point");
	two_ends(&a, &b);
	CHECK_EQ(dpr_sec_derive(prk, sa, DPR_SEC_ENCRYPT, &a, &b, &atx, &arx), 0, "A");
	CHECK_EQ(dpr_sec_derive(prk, sb, DPR_SEC_ENCRYPT, &b, &a, &btx, &brx), 0, "B");
	CHECK(memcmp(&atx, &brx, sizeof(atx)) == 0 && memcmp(&arx, &btx, sizeof(arx)) == 0,
	      "A and B agree");
	CHECK_EQ(dpr_sec_derive(prk, NULL, DPR_SEC_ENCRYPT, &a, &b, &ptx, &prx), 0, "PSK");
	CHECK(memcmp(ptx.key, atx.key, 16) != 0 && memcmp(prx.key, arx.key, 16) != 0,
	      "other keys than the PSK's alone");
	dpr_sec_eph_free(&ea);
	CHECK(ea.key == NULL, "forgotten");
	CHECK_EQ(dpr_sec_eph_shared(&ea, eb.pub, sa), -EINVAL, "nothing after");
	dpr_sec_eph_free(&eb);
	dpr_sec_eph_free(&ec);
	return TEST_SUCCESS;
}

static int
setup(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	if (dpr_sec_init() != 0)
		return -1;
	pool = rte_pktmbuf_pool_create("sec", 255, 0, 0, 9000 + RTE_PKTMBUF_HEADROOM,
				       SOCKET_ID_ANY);
	return pool == NULL ? -1 : 0;
}

static void
teardown(void)
{
	rte_mempool_free(pool);
}

static const struct dpr_test_case sec_cases[] = {
	DPR_TEST_CASE(test_seal_open),
	DPR_TEST_CASE(test_tamper),
	DPR_TEST_CASE(test_replay),
	DPR_TEST_CASE(test_keys),
	DPR_TEST_CASE(test_x25519),
	DPR_TEST_CASE(test_subnets),
	DPR_TEST_CASES_END,
};

static struct dpr_test_suite sec_suite = {
	.name = "sec",
	.needs_eal = true,
	.setup = setup,
	.teardown = teardown,
	.cases = sec_cases,
};
DPR_TEST_SUITE(sec_suite);
