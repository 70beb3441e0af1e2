/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * Secure QPs (issue 46): RoCEv2 frames sealed with AES-128-GCM, either
 * authenticated only (GMAC over the whole transport part) or authenticated
 * and encrypted, per QP and direction, with a replay window. The wire
 * format (doc/security.rst, "Secure QPs"):
 *
 *   Ethernet | IP | UDP 4791 | BTH, TVer = 1 | SECH (16) |
 *   extension headers + payload + pad (ciphertext, or plain in auth mode) |
 *   ICV (16) | ICRC
 *
 *   SECH: byte 0 version (high nibble, 1) and mode (low nibble: 1 auth,
 *   2 encrypt); bytes 1-3 zero; bytes 4-7 the key's id (big-endian);
 *   bytes 8-15 the sequence number (big-endian), which never repeats
 *   under a key: every frame sent takes the next one, a retransmission
 *   too (a READ response sent again may carry other bytes under its PSN).
 *
 *   Nonce: the key's 4-byte salt, then the sequence number (RFC 4106's
 *   layout). AAD: the BTH as sent with byte 4 (FECN, BECN, Resv6a) zero
 *   (a switch may mark FECN/BECN, a receiver ignores Resv6a, the ICRC
 *   masks the byte too), and the SECH; in auth mode everything
 *   after them is authenticated too and stays readable.
 *
 * A peer that does not speak it drops the frame at the BTH (IBA 9.2.2:
 * TVer must be 0; rxe's check). The ICRC is computed over the sealed frame
 * by RoCEv2's rules, so switches and captures see a sound frame. A sealed
 * frame is 32 bytes longer than the plain one: DPR_SEC_OVERHEAD.
 *
 * Keys come from dpr_sec_derive() (dpr_sec_kdf.c): per QP pair and
 * direction, from a host-pair secret and a fresh nonce of each side.
 */

#ifndef DPR_SEC_H
#define DPR_SEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <intel-ipsec-mb.h>
#include <rte_mbuf.h>

#include "dpr_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPR_SEC_TVER 1            /**< BTH TVer of a sealed frame */
#define DPR_SEC_VERSION 1         /**< SECH version */
#define DPR_SEC_HDR_LEN 16        /**< SECH */
#define DPR_SEC_ICV_LEN 16        /**< GCM tag */
#define DPR_SEC_OVERHEAD (DPR_SEC_HDR_LEN + DPR_SEC_ICV_LEN)
#define DPR_SEC_KEY_LEN 16        /**< AES-128 */
#define DPR_SEC_SALT_LEN 4
#define DPR_SEC_WIN 2048          /**< replay bitmap, bits */
/** Frames taken up to this many behind the newest (RFC 6479: the bitmap
 * keeps a word spare for the one the newest moves into). */
#define DPR_SEC_WINDOW (DPR_SEC_WIN - 64)

/** What a secure QP does to its frames. */
enum dpr_sec_mode {
	DPR_SEC_NONE = 0,         /**< plain RoCEv2 */
	DPR_SEC_AUTH = 1,         /**< authenticated (GMAC), readable */
	DPR_SEC_ENCRYPT = 2,      /**< authenticated and encrypted (GCM) */
};

/** Why dpr_sec_open() refused a frame (each a counter). */
enum dpr_sec_err {
	DPR_SEC_OK = 0,
	DPR_SEC_ERR_ICRC,         /**< corrupt on the way (checked first) */
	DPR_SEC_ERR_MALFORMED,    /**< too short, or a SECH we do not know */
	DPR_SEC_ERR_MODE,         /**< not the QP's mode */
	DPR_SEC_ERR_KEY,          /**< another key's id (an old handshake) */
	DPR_SEC_ERR_REPLAY,       /**< sequence seen, or behind the window */
	DPR_SEC_ERR_AUTH,         /**< the ICV does not match: forged or
				       corrupt */
};

/** Key material of one direction of a QP pair. */
struct dpr_sec_key {
	uint8_t key[DPR_SEC_KEY_LEN];
	uint8_t salt[DPR_SEC_SALT_LEN];
	uint32_t id;
};

/** The sending side of a QP's association. */
struct dpr_sec_tx {
	/** expanded key (ipsec-mb: its AVX-512 code wants it aligned) */
	struct gcm_key_data gk __rte_aligned(64);
	uint8_t salt[DPR_SEC_SALT_LEN];
	uint32_t id;
	uint8_t mode;
	uint64_t seq;             /**< the last sequence number sent */
};

/** The receiving side: its key and replay window. */
struct dpr_sec_rx {
	struct gcm_key_data gk __rte_aligned(64);
	uint8_t salt[DPR_SEC_SALT_LEN];
	uint32_t id;
	uint8_t mode;
	uint64_t top;             /**< highest sequence number taken */
	uint64_t win[DPR_SEC_WIN / 64]; /**< bit (s % WIN): s taken */
};

/**
 * Pick the AES-GCM code for this CPU (AVX-512/VAES, AVX2, AVX, SSE), once
 * per process, before any other call.
 * @return 0, or -ENOTSUP without AES-NI.
 */
int dpr_sec_init(void);

/** The ipsec-mb architecture picked ("avx512", "sse", ...). */
const char *dpr_sec_arch(void);

void dpr_sec_tx_init(struct dpr_sec_tx *tx, const struct dpr_sec_key *k,
		     enum dpr_sec_mode mode);
void dpr_sec_rx_init(struct dpr_sec_rx *rx, const struct dpr_sec_key *k,
		     enum dpr_sec_mode mode);

/** Is @p m (a frame from its Ethernet header) a sealed RoCEv2 frame? Only
 * its BTH's TVer is looked at; dpr_sec_open() checks the rest. */
bool dpr_sec_is_sealed(const struct rte_mbuf *m);
/**
 * First look at a frame dpr_sec_is_sealed() says is sealed: its ICRC (a
 * frame corrupted on the way is told from a forged one) and the
 * destination QP of its BTH, whose keys open it.
 * @return DPR_SEC_OK, DPR_SEC_ERR_ICRC or DPR_SEC_ERR_MALFORMED.
 */
enum dpr_sec_err dpr_sec_check(const struct rte_mbuf *m, uint32_t *dqpn);

/**
 * Seal a plain RoCEv2 frame (its ICRC need not be set): 32 bytes longer,
 * lengths, IPv4 checksum and ICRC set. Encrypted in place when @p m is one
 * segment of its own with 16 bytes of headroom and tailroom (then @p m
 * itself is returned), else a new frame in one segment from @p pool and
 * @p m freed (its payload may be attached memory of a registered region:
 * it is read, never written). @p m is freed on failure.
 * @return the sealed frame, or NULL (rte_errno: ENOBUFS no mbuf, EMSGSIZE
 *   the sealed frame would not fit one, EINVAL not a RoCEv2 frame).
 */
struct rte_mbuf *dpr_sec_seal(struct dpr_sec_tx *tx, struct rte_mbuf *m,
			      struct rte_mempool *pool);

/**
 * Open a sealed frame in place: the plain frame it carried, as its sender
 * built it (TVer 0, lengths and IPv4 checksum set), in one segment, but
 * for its ICRC, which is not made again (parse it with
 * dpr_wire_parse_again()). The replay window moves only for a frame that
 * passed. The tag is checked first and the ICRC only of a frame that
 * fails: a frame the tag vouches for has every byte that matters
 * authentic (the BTH, SECH and payload; the IP and UDP headers are
 * checked as any frame's or read by nothing), and a frame that fails is
 * told corrupt (DPR_SEC_ERR_ICRC) from forged or replayed by its ICRC --
 * which spares a CRC pass over every good frame.
 * @return DPR_SEC_OK, or why the frame must be dropped (garbled, in
 *   encrypt mode).
 */
enum dpr_sec_err dpr_sec_open(struct dpr_sec_rx *rx, struct rte_mbuf *m);

/** "ok", "icrc", "malformed", "mode", "key", "replay", "auth". */
const char *dpr_sec_err_name(enum dpr_sec_err e);

/* ------------------------------------------------------------------ keys */

/** One end of a QP pair, as both sides name it. */
struct dpr_sec_end {
	union dpr_gid gid;
	uint32_t qpn;
	uint8_t nonce[16];        /**< fresh for each connection */
};

/**
 * The host-pair secret from a pre-shared key (HKDF-Extract, SHA-256,
 * salt "dprdma psk v1"). @p len at least 16.
 * @return 0 or -EINVAL.
 */
int dpr_sec_psk_prk(const uint8_t *psk, size_t len, uint8_t prk[32]);

/** An ephemeral X25519 key pair of one handshake (OpenSSL). */
struct dpr_sec_eph {
	void *key;                /**< its EVP_PKEY; NULL once freed */
	uint8_t pub[32];          /**< the public key, as the offer carries it */
};

/** A fresh key pair. @return 0, or -ENOMEM / -ENOTSUP (OpenSSL). */
int dpr_sec_eph_new(struct dpr_sec_eph *e);
/** X25519 of @p e's private key and the peer's @p peer_pub: the same on
 * both ends. @return 0, or -EINVAL (a public key of low order, whose
 * shared secret would be zero; or @p e freed). */
int dpr_sec_eph_shared(const struct dpr_sec_eph *e, const uint8_t peer_pub[32],
		       uint8_t shared[32]);
/** The private key forgotten (forward secrecy: once the QP's keys are
 * derived); pub stays. */
void dpr_sec_eph_free(struct dpr_sec_eph *e);

/**
 * Keys of a QP pair (HKDF, SHA-256): both ends derive the same two from
 * the same two dpr_sec_end (their order does not matter), @p tx the one
 * @p local sends with, @p rx the one it receives with. With @p shared
 * (the ends' X25519 secret, dpr_sec_eph_shared()) the keys come from
 * HKDF-Extract(salt @p prk, @p shared): forward secret, a recording of
 * the traffic stays sealed to whoever learns the pre-shared key later;
 * without it (NULL: tests) from @p prk alone. The mode is bound in: an
 * auth key never opens an encrypted frame.
 * @return 0, or -EINVAL (the two ends are the same).
 */
int dpr_sec_derive(const uint8_t prk[32], const uint8_t *shared,
		   enum dpr_sec_mode mode, const struct dpr_sec_end *local,
		   const struct dpr_sec_end *remote,
		   struct dpr_sec_key *tx, struct dpr_sec_key *rx);

/** The handshake's MAC key from @p prk (HKDF-Expand, "dprdma mac v1"):
 * derived once, for every dpr_sec_mac(). @return 0 or -EINVAL. */
int dpr_sec_mac_key(const uint8_t prk[32], uint8_t key[32]);

/** The key that MACs the MADs box @p from sends box @p to (their GIDs;
 * HKDF-Expand, "dprdma cm v1" and both GIDs): one per direction and
 * address pair, so that a MAD is not taken for one of another pair or
 * sent back as the other's. @return 0 or -EINVAL. */
int dpr_sec_cm_key(const uint8_t prk[32], const uint8_t from[16],
		   const uint8_t to[16], uint8_t key[32]);

/** HMAC-SHA-256 of a handshake message under @p key (dpr_sec_mac_key()),
 * the first 16 bytes. */
void dpr_sec_mac(const uint8_t key[32], const void *msg, size_t len,
		 uint8_t mac[16]);

/** Parse a key written as hex (64 digits or more, spaces and colons
 * allowed). @return its length in bytes, or -EINVAL. */
int dpr_sec_parse_hex(const char *s, uint8_t *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* DPR_SEC_H */
