/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-pcap: check the RoCEv2 frames of a capture with lib/wire.
 *
 *   dprdma-pcap [-q] [--fields] FILE...     one line per RoCEv2 frame, a summary
 *   dprdma-pcap --generate FILE             write sample frames of every opcode
 *
 * Wireshark decodes RoCEv2 but does not check the ICRC; this does, with
 * the same validation dprdmad applies on receive. Exit status: 0 if every
 * RoCEv2 frame is well formed with a good ICRC, 1 if any is not, 2 if a
 * file cannot be read. No EAL is needed.
 */

#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "dpr_sec.h"
#include "dpr_wire.h"

struct totals {
	uint64_t frames, roce, ok, bad_icrc, malformed, truncated, sealed;
	uint64_t per_opcode[256];
	uint64_t per_err[DPR_WIRE_NUM_ERR];
};

static bool quiet, fields;

static void
gid_str(const union dpr_gid *g, char *buf, size_t len)
{
	if (dpr_gid_is_ipv4(g)) {
		rte_be32_t ip = dpr_gid_to_ipv4(g);

		inet_ntop(AF_INET, &ip, buf, len);
	} else {
		inet_ntop(AF_INET6, g->raw, buf, len);
	}
}

/* Does this frame, whatever else is wrong with it, go to UDP 4791? */
static bool
looks_like_roce(const uint8_t *p, uint32_t len)
{
	uint32_t off = 14;
	uint16_t type;

	if (len < 14)
		return false;
	type = (uint16_t)(p[12] << 8 | p[13]);
	if (type == RTE_ETHER_TYPE_VLAN && len >= 18) {
		type = (uint16_t)(p[16] << 8 | p[17]);
		off = 18;
	}
	if (type == RTE_ETHER_TYPE_IPV4 && len >= off + 20 && p[off + 9] == 17) {
		off += (p[off] & 0x0f) * 4u;
	} else if (type == RTE_ETHER_TYPE_IPV6 && len >= off + 40 &&
		   p[off + 6] == 17) {
		off += 40;
	} else {
		return false;
	}
	return len >= off + 4 && p[off + 2] == (DPR_ROCEV2_PORT >> 8) &&
		p[off + 3] == (DPR_ROCEV2_PORT & 0xff);
}

static void
print_fields(uint64_t n, const struct dpr_pkt_info *pi,
	     const struct dpr_wire_hdrs *h)
{
	/* tab-separated, in the order tests/integration/test_wire_tshark.py
	 * asks tshark for them; empty where the header is absent */
#define HAS(t) (pi->mask & (1u << DPR_HDR_ ## t))
	printf("%" PRIu64 "\t%u\t%u\t%u\t%u\t%u\t%u\t%u", n, h->opcode, h->se,
	       h->mig, pi->pad, h->pkey, h->dqpn, h->ackreq);
	printf("\t%u", h->psn);
	if (HAS(RETH))
		printf("\t0x%016" PRIx64 "\t0x%08x\t%u", h->reth.va, h->reth.rkey,
		       h->reth.len);
	else if (HAS(ATMETH))
		printf("\t0x%016" PRIx64 "\t0x%08x\t", h->atomic.va,
		       h->atomic.rkey);
	else
		printf("\t\t\t");
	if (HAS(AETH))
		printf("\t%u\t%u", h->aeth.syndrome, h->aeth.msn);
	else
		printf("\t\t");
	if (HAS(ATMETH))
		printf("\t0x%016" PRIx64 "\t0x%016" PRIx64, h->atomic.swap_add,
		       h->atomic.compare);
	else
		printf("\t\t");
	if (HAS(ATMACK))
		printf("\t0x%016" PRIx64, h->atomic_orig);
	else
		printf("\t");
	if (HAS(IMMDT))
		printf("\t0x%08x", rte_be_to_cpu_32(h->imm));
	else
		printf("\t");
	if (HAS(IETH))
		printf("\t0x%08x", h->ieth_rkey);
	else
		printf("\t");
	if (HAS(DETH))
		printf("\t0x%08x\t%u", h->deth.qkey, h->deth.sqpn);
	else
		printf("\t\t");
	/* tshark shows the ICRC as the frame's bytes read big-endian */
	printf("\t0x%08x\t%u\t%u\n", rte_bswap32(pi->icrc), pi->paylen,
	       pi->encap.sport);
#undef HAS
}

static void
one_frame(struct totals *t, uint64_t n, const struct pcap_pkthdr *ph,
	  const uint8_t *data)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	struct dpr_pkt_info pi;
	struct dpr_wire_hdrs h;
	enum dpr_wire_err err;
	struct rte_mbuf m;
	uint8_t *copy;

	t->frames++;
	if (!looks_like_roce(data, ph->caplen))
		return;
	t->roce++;
	if (ph->caplen < ph->len) {
		t->truncated++;
		if (!quiet && !fields)
			printf("%6" PRIu64 " truncated by the capture (%u of %u "
			       "bytes): not checked\n", n, ph->caplen, ph->len);
		return;
	}
	/* an exact-size copy: nothing past the frame can be read unnoticed */
	copy = malloc(ph->caplen);
	if (copy == NULL)
		return;
	memcpy(copy, data, ph->caplen);
	dpr_wire_mbuf_wrap(&m, copy, (uint16_t)RTE_MIN(ph->caplen, (bpf_u_int32)UINT16_MAX));
	err = dpr_wire_parse(&m, &pi, 0);
	if (err == DPR_WIRE_ERR_BAD_TVER && dpr_sec_is_sealed(&m)) {
		/* a secure QP's frame (doc/security.rst): its ICRC and QP are
		 * all there is to check without its keys */
		uint32_t dqpn = 0;
		enum dpr_sec_err se = dpr_sec_check(&m, &dqpn);

		if (se == DPR_SEC_OK) {
			t->ok++;
			t->sealed++;
		} else if (se == DPR_SEC_ERR_ICRC) {
			t->bad_icrc++;
		} else {
			t->malformed++;
		}
		if (!quiet && !fields)
			printf("%6" PRIu64 " %ld.%06ld sealed qp=0x%06x len=%u %s\n", n,
			       (long)ph->ts.tv_sec, (long)ph->ts.tv_usec, dqpn,
			       ph->caplen, se == DPR_SEC_OK ? "icrc=ok" :
			       se == DPR_SEC_ERR_ICRC ? "icrc=BAD" : "MALFORMED");
		free(copy);
		return;
	}
	t->per_err[err]++;
	if (err != DPR_WIRE_OK && err != DPR_WIRE_ERR_BAD_ICRC) {
		t->malformed++;
		if (!quiet && !fields)
			printf("%6" PRIu64 " MALFORMED: %s\n", n,
			       dpr_wire_err_name(err));
		free(copy);
		return;
	}
	dpr_wire_decode(&m, &pi, &h);
	t->per_opcode[pi.opcode]++;
	if (err == DPR_WIRE_ERR_BAD_ICRC)
		t->bad_icrc++;
	else
		t->ok++;
	if (fields) {
		print_fields(n, &pi, &h);
	} else if (!quiet || err != DPR_WIRE_OK) {
		gid_str(&pi.encap.sgid, src, sizeof(src));
		gid_str(&pi.encap.dgid, dst, sizeof(dst));
		printf("%6" PRIu64 " %ld.%06ld %s:%u > %s %s qp=0x%06x psn=%u%s "
		       "len=%u", n, (long)ph->ts.tv_sec, (long)ph->ts.tv_usec,
		       src, pi.encap.sport, dst, dpr_opcode[pi.opcode].name,
		       h.dqpn, h.psn, h.ackreq ? " ackreq" : "", pi.paylen);
		if (pi.mask & DPR_AETH_MASK)
			printf(" %s(%u) msn=%u",
			       dpr_aeth_syndrome_name(h.aeth.syndrome),
			       h.aeth.syndrome & 0x1f, h.aeth.msn);
		if (pi.ce)
			printf(" ecn=CE");
		printf(" icrc=%s\n", err == DPR_WIRE_OK ? "ok" : "BAD");
	}
	free(copy);
}

static int
check_file(const char *path, struct totals *t)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *ph;
	const uint8_t *data;
	uint64_t n = 0;
	pcap_t *p;
	int r;

	p = pcap_open_offline(path, errbuf);
	if (p == NULL) {
		fprintf(stderr, "dprdma-pcap: %s: %s\n", path, errbuf);
		return -1;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		fprintf(stderr, "dprdma-pcap: %s: link type %s, expected Ethernet\n",
			path, pcap_datalink_val_to_name(pcap_datalink(p)));
		pcap_close(p);
		return -1;
	}
	while ((r = pcap_next_ex(p, &ph, &data)) == 1)
		one_frame(t, ++n, ph, data);
	if (r == PCAP_ERROR)
		fprintf(stderr, "dprdma-pcap: %s: %s\n", path, pcap_geterr(p));
	pcap_close(p);
	return r == PCAP_ERROR ? -1 : 0;
}

/* One frame per opcode (IPv4), plus IPv6 and VLAN variants, with payload
 * where the opcode carries one. */
static int
generate(const char *path)
{
	struct dpr_wire_encap e = {
		.dst_mac = {{ 0x02, 0, 0, 0, 0, 0x02 }},
		.src_mac = {{ 0x02, 0, 0, 0, 0, 0x01 }},
		.ttl = 64, .df = true,
	};
	uint8_t payload[300], frame[2048];
	struct pcap_pkthdr ph = { .ts = { 1, 0 } };
	pcap_dumper_t *d;
	pcap_t *p;
	unsigned int op, variant, count = 0;

	for (op = 0; op < sizeof(payload); op++)
		payload[op] = (uint8_t)(op * 13 + 5);
	p = pcap_open_dead(DLT_EN10MB, 65535);
	d = pcap_dump_open(p, path);
	if (d == NULL) {
		fprintf(stderr, "dprdma-pcap: %s: %s\n", path, pcap_geterr(p));
		pcap_close(p);
		return 2;
	}
	for (variant = 0; variant < 3; variant++) {
		for (op = 0; op < 256; op++) {
			const struct dpr_opcode_info *oi = &dpr_opcode[op];
			struct dpr_wire_hdrs h = {
				.opcode = (uint8_t)op, .pkey = DPR_DEFAULT_PKEY,
				.dqpn = 0x11 + op, .psn = 0xfffff0 + op % 32,
				.ackreq = oi->mask & DPR_END_MASK ? true : false,
				.se = op % 3 == 0,
				.reth = { 0x7f0000001000ULL + op, 0x1234 + op, 257 },
				.aeth = { (uint8_t)(op % 2 ? 0x1f : 0x61), 77 + op },
				.atomic = { 0x7f0000002000ULL, 0x4321, 5, 9 },
				.atomic_orig = 0x1122334455667788ULL,
				.imm = rte_cpu_to_be_32(0xdeadbeef),
				.ieth_rkey = 0xabcd,
				.deth = { 0x11111111, 0x123 },
			};
			uint32_t paylen = oi->mask & DPR_PAYLOAD_MASK ?
				1 + (op * 37) % 299 : 0;

			if (oi->name == NULL)
				continue;
			e.ipv6 = variant == 1;
			e.vlan = variant == 2;
			e.vlan_tci = 100;
			if (e.ipv6) {
				inet_pton(AF_INET6, "fd00::1", e.sgid.raw);
				inet_pton(AF_INET6, "fd00::2", e.dgid.raw);
				e.flow_label = 0x12345;
			} else {
				dpr_gid_from_ipv4(&e.sgid, htonl(0x0a4d0001));
				dpr_gid_from_ipv4(&e.dgid, htonl(0x0a4d0002));
			}
			e.sport = oi->mask & DPR_UD_MASK ? dpr_udp_sport_ud(h.deth.sqpn) :
				dpr_udp_sport_rc(0x10 + op, h.dqpn, 0);
			e.ip_id = (uint16_t)op;
			ph.len = ph.caplen = dpr_wire_build_linear(frame,
				sizeof(frame), &e, &h, payload, paylen);
			pcap_dump((u_char *)d, &ph, frame);
			count++;
		}
	}
	pcap_dump_close(d);
	pcap_close(p);
	printf("dprdma-pcap: wrote %u frames to %s\n", count, path);
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: dprdma-pcap [-q] [--fields] FILE...\n"
"       dprdma-pcap --generate FILE\n"
"\n"
"Checks every RoCEv2 frame (UDP 4791, IPv4 or IPv6, optionally VLAN-tagged)\n"
"of pcap or pcapng captures: lengths, opcode, headers, pad, and the ICRC\n"
"(which Wireshark does not check). One line per frame, then a summary.\n"
"\n"
"  -q, --quiet      print only frames with a problem, and the summary\n"
"      --fields     tab-separated header fields per frame (for tests)\n"
"      --generate   write sample frames of every opcode built by lib/wire\n"
"\n"
"Exit status: 0 all RoCEv2 frames good, 1 a frame malformed or with a bad\n"
"ICRC, 2 a file could not be read.\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "fields", no_argument, NULL, 'F' },
		{ "generate", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct totals t;
	int opt, i, rc = 0;
	unsigned int k;

	while ((opt = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (opt) {
		case 'q': quiet = true; break;
		case 'F': fields = true; break;
		case 'g': return generate(optarg);
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	memset(&t, 0, sizeof(t));
	for (i = optind; i < argc; i++)
		if (check_file(argv[i], &t) != 0)
			rc = 2;
	if (fields)
		return rc ? rc : (t.malformed || t.bad_icrc ? 1 : 0);

	printf("%" PRIu64 " frames, %" PRIu64 " RoCEv2: %" PRIu64 " ok, %"
	       PRIu64 " bad ICRC, %" PRIu64 " malformed, %" PRIu64
	       " truncated by the capture\n", t.frames, t.roce, t.ok,
	       t.bad_icrc, t.malformed, t.truncated);
	if (t.sealed != 0)
		printf("  %-36s %" PRIu64 "\n", "sealed (secure QPs)", t.sealed);
	for (k = 0; k < 256; k++)
		if (t.per_opcode[k] != 0)
			printf("  %-36s %" PRIu64 "\n", dpr_opcode[k].name,
			       t.per_opcode[k]);
	for (k = 1; k < DPR_WIRE_NUM_ERR; k++)
		if (t.per_err[k] != 0)
			printf("  refused: %-27s %" PRIu64 "\n",
			       dpr_wire_err_name(k), t.per_err[k]);
	if (rc == 0 && (t.malformed != 0 || t.bad_icrc != 0))
		rc = 1;
	return rc;
}
