/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Keys of secure QPs: HKDF (RFC 5869, SHA-256) and HMAC from OpenSSL, at
 * connection time only (never per frame).
 *
 *   prk    = HKDF-Extract(salt "dprdma psk v1", PSK)
 *   qprk   = HKDF-Extract(salt prk, X25519(our private key, peer's public))
 *   secret = HKDF-Expand(qprk, "dprdma qp v1" | mode | end A | end B, 32)
 *   key of the direction from end X
 *          = HKDF-Expand(secret, "dprdma dir v1" | X.gid | X.qpn, 24):
 *            16 bytes of AES key, 4 of salt, 4 of key id
 *   handshake MAC key = HKDF-Expand(prk, "dprdma mac v1", 32)
 *
 * where an end is its GID (16 bytes), QPN (4, big-endian) and nonce (16),
 * and A is the end that sorts first (GID, then QPN), so that both sides
 * derive the same. The nonces are fresh per connection: a QP pair that
 * comes back with the same GIDs and QPNs gets other keys, and the
 * sequence numbers that start again from 1 never meet a key twice. The
 * X25519 key pairs are made for each handshake and their private keys
 * forgotten once the QP has its keys (forward secrecy); the offers that
 * carry the public keys are MACed with a key from the PSK, so that only a
 * holder of the PSK can stand in the middle.
 */

#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <rte_byteorder.h>

#include "dpr_sec.h"

static int
hkdf(int mode, const uint8_t *key, size_t klen, const void *salt, size_t slen,
     const void *info, size_t ilen, uint8_t *out, size_t olen)
{
	OSSL_PARAM params[6], *p = params;
	EVP_KDF_CTX *kctx;
	EVP_KDF *kdf;
	int rc;

	kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	if (kdf == NULL)
		return -ENOTSUP;
	kctx = EVP_KDF_CTX_new(kdf);
	EVP_KDF_free(kdf);
	if (kctx == NULL)
		return -ENOMEM;
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
	*p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, klen);
	if (salt != NULL)
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
							 (void *)salt, slen);
	if (info != NULL)
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
							 (void *)info, ilen);
	*p = OSSL_PARAM_construct_end();
	rc = EVP_KDF_derive(kctx, out, olen, params) == 1 ? 0 : -EINVAL;
	EVP_KDF_CTX_free(kctx);
	return rc;
}

int
dpr_sec_psk_prk(const uint8_t *psk, size_t len, uint8_t prk[32])
{
	static const char salt[] = "dprdma psk v1";

	if (psk == NULL || len < 16)
		return -EINVAL;
	return hkdf(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, psk, len, salt,
		    sizeof(salt) - 1, NULL, 0, prk, 32);
}

#define END_LEN (16 + 4 + 16)

static void
put_end(uint8_t *b, const struct dpr_sec_end *e, bool nonce)
{
	const rte_be32_t q = rte_cpu_to_be_32(e->qpn);

	memcpy(b, e->gid.raw, 16);
	memcpy(b + 16, &q, 4);
	if (nonce)
		memcpy(b + 20, e->nonce, 16);
}

static int
end_cmp(const struct dpr_sec_end *a, const struct dpr_sec_end *b)
{
	int c = memcmp(a->gid.raw, b->gid.raw, 16);

	if (c != 0)
		return c;
	return a->qpn < b->qpn ? -1 : a->qpn > b->qpn;
}

static int
dir_key(const uint8_t secret[32], const struct dpr_sec_end *from,
	struct dpr_sec_key *k)
{
	static const char label[] = "dprdma dir v1";
	uint8_t info[sizeof(label) - 1 + 20], out[24];
	rte_be32_t id;
	int rc;

	memcpy(info, label, sizeof(label) - 1);
	put_end(info + sizeof(label) - 1, from, false);
	rc = hkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, secret, 32, NULL, 0, info,
		  sizeof(info), out, sizeof(out));
	if (rc != 0)
		return rc;
	memcpy(k->key, out, DPR_SEC_KEY_LEN);
	memcpy(k->salt, out + 16, DPR_SEC_SALT_LEN);
	memcpy(&id, out + 20, sizeof(id));
	k->id = rte_be_to_cpu_32(id);
	return 0;
}

int
dpr_sec_eph_new(struct dpr_sec_eph *e)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
	size_t n = sizeof(e->pub);

	e->key = NULL;
	if (k == NULL)
		return -ENOTSUP;
	if (EVP_PKEY_get_raw_public_key(k, e->pub, &n) != 1 || n != sizeof(e->pub)) {
		EVP_PKEY_free(k);
		return -ENOTSUP;
	}
	e->key = k;
	return 0;
}

int
dpr_sec_eph_shared(const struct dpr_sec_eph *e, const uint8_t peer_pub[32],
		   uint8_t shared[32])
{
	EVP_PKEY *peer;
	EVP_PKEY_CTX *c;
	size_t n = 32;
	int rc = -EINVAL;

	if (e->key == NULL)
		return -EINVAL;
	peer = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, peer_pub, 32);
	c = EVP_PKEY_CTX_new(e->key, NULL);
	/* (OpenSSL refuses a secret of all zeros: a low-order point) */
	if (peer != NULL && c != NULL && EVP_PKEY_derive_init(c) == 1 &&
	    EVP_PKEY_derive_set_peer(c, peer) == 1 &&
	    EVP_PKEY_derive(c, shared, &n) == 1 && n == 32)
		rc = 0;
	EVP_PKEY_CTX_free(c);
	EVP_PKEY_free(peer);
	return rc;
}

void
dpr_sec_eph_free(struct dpr_sec_eph *e)
{
	EVP_PKEY_free(e->key);
	e->key = NULL;
}

int
dpr_sec_derive(const uint8_t prk[32], const uint8_t *shared, enum dpr_sec_mode mode,
	       const struct dpr_sec_end *local, const struct dpr_sec_end *remote,
	       struct dpr_sec_key *tx, struct dpr_sec_key *rx)
{
	static const char label[] = "dprdma qp v1";
	uint8_t info[sizeof(label) - 1 + 1 + 2 * END_LEN], secret[32], qprk[32];
	const struct dpr_sec_end *a = local, *b = remote;
	uint8_t *p = info;
	int c = end_cmp(local, remote), rc;

	if (c == 0)
		return -EINVAL;
	if (c > 0) {
		a = remote;
		b = local;
	}
	memcpy(p, label, sizeof(label) - 1);
	p += sizeof(label) - 1;
	*p++ = (uint8_t)mode;
	put_end(p, a, true);
	put_end(p + END_LEN, b, true);
	if (shared != NULL) {
		rc = hkdf(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, shared, 32, prk, 32, NULL, 0,
			  qprk, sizeof(qprk));
		if (rc != 0)
			return rc;
		prk = qprk;
	}
	rc = hkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, prk, 32, NULL, 0, info,
		  sizeof(info), secret, sizeof(secret));
	memset(qprk, 0, sizeof(qprk));
	if (rc == 0)
		rc = dir_key(secret, local, tx);
	if (rc == 0)
		rc = dir_key(secret, remote, rx);
	memset(secret, 0, sizeof(secret));
	return rc;
}

int
dpr_sec_mac_key(const uint8_t prk[32], uint8_t key[32])
{
	static const char label[] = "dprdma mac v1";

	return hkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, prk, 32, NULL, 0, label,
		    sizeof(label) - 1, key, 32);
}

int
dpr_sec_cm_key(const uint8_t prk[32], const uint8_t from[16], const uint8_t to[16],
	       uint8_t key[32])
{
	static const char label[] = "dprdma cm v1";
	uint8_t info[sizeof(label) - 1 + 32];

	memcpy(info, label, sizeof(label) - 1);
	memcpy(info + sizeof(label) - 1, from, 16);
	memcpy(info + sizeof(label) - 1 + 16, to, 16);
	return hkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, prk, 32, NULL, 0, info,
		    sizeof(info), key, 32);
}

void
dpr_sec_mac(const uint8_t key[32], const void *msg, size_t len, uint8_t mac[16])
{
	uint8_t out[32];
	size_t n = 0;

	memset(mac, 0, 16);
	if (EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, 32, msg, len, out,
		      sizeof(out), &n) != NULL && n == sizeof(out))
		memcpy(mac, out, 16);
}

int
dpr_sec_parse_hex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	int hi = -1;

	for (; *s != '\0'; s++) {
		int v;

		if (*s == ' ' || *s == ':' || *s == '\t')
			continue;
		if (*s >= '0' && *s <= '9')
			v = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			v = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			v = *s - 'A' + 10;
		else
			return -EINVAL;
		if (hi < 0) {
			hi = v;
			continue;
		}
		if (n == cap)
			return -EINVAL;
		out[n++] = (uint8_t)(hi << 4 | v);
		hi = -1;
	}
	if (hi >= 0 || n < 32)
		return -EINVAL;
	return (int)n;
}
