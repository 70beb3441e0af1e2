/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The CM MAD codec (drivers/cm/dpr_cm_mad.c) against the real rping
 * exchange between two rxe guests (tests/data/captures/rping_rdmacm.pcap):
 * every field of the REQ, REP, RTU, DREQ and DREP read as Linux wrote
 * it, each re-encoded byte for byte; then MADs that must be refused.
 */

#include <errno.h>
#include <string.h>

#include <pcap/pcap.h>

#include "dpr_cm_mad.h"
#include "dpr_test.h"

#define MAD_OFF (14 + 20 + 8 + 12 + 8)  /* Ethernet, IPv4, UDP, BTH, DETH */

static int
capture_mads(uint8_t mads[][DPR_MAD_LEN], int max)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(DPR_SOURCE_ROOT
				      "/tests/data/captures/rping_rdmacm.pcap", errbuf);
	struct pcap_pkthdr *ph;
	const u_char *d;
	int n = 0;

	if (p == NULL)
		return -1;
	while (n < max && pcap_next_ex(p, &ph, &d) == 1) {
		/* UD SEND ONLY to QP1 */
		if (ph->caplen < MAD_OFF + DPR_MAD_LEN || d[42] != 0x64 ||
		    d[47] != 0 || d[48] != 0 || d[49] != 1)
			continue;
		memcpy(mads[n++], d + MAD_OFF, DPR_MAD_LEN);
	}
	pcap_close(p);
	return n;
}

static int
test_capture_decodes_and_reencodes(void)
{
	static const uint8_t g2[16] = { [10] = 0xff, [11] = 0xff, 10, 99, 0, 2 };
	static const uint8_t g3[16] = { [10] = 0xff, [11] = 0xff, 10, 99, 0, 3 };
	static const uint16_t want[] = { DPR_CM_REQ, DPR_CM_REP, DPR_CM_RTU,
					 DPR_CM_DREQ, DPR_CM_DREP };
	uint8_t mads[8][DPR_MAD_LEN], again[DPR_MAD_LEN];
	struct dpr_cm_msg m;
	struct dpr_cma_hdr h;
	int n = capture_mads(mads, 8);

	CHECK_EQ(n, 5, "CM MADs in the rping capture");
	for (int i = 0; i < n; i++) {
		CHECK_EQ(dpr_cm_decode(mads[i], DPR_MAD_LEN, &m), DPR_CM_MAD_OK,
			 "MAD %d decodes", i);
		CHECK_EQ(m.attr, want[i], "MAD %d is a %s", i, dpr_cm_attr_name(want[i]));
		CHECK_EQ(m.tid, 0x0000000272ca9979ull, "transaction ID");
		dpr_cm_encode(&m, again);
		CHECK(memcmp(again, mads[i], DPR_MAD_LEN) == 0,
		      "%s re-encoded byte for byte", dpr_cm_attr_name(m.attr));
		switch (m.attr) {
		case DPR_CM_REQ:
			CHECK_EQ(m.local_id, 0x7999ca72u, "REQ comm ID");
			CHECK_EQ(m.service_id, dpr_cm_service_id(DPR_RDMA_PS_TCP, 7174),
				 "REQ service ID: RDMA_PS_TCP, port 7174");
			CHECK_EQ(m.qpn, 0x11u, "REQ QPN");
			CHECK_EQ(m.psn, 0x81b6eau, "REQ starting PSN");
			CHECK(m.resp_res == 1 && m.init_depth == 1, "REQ rd atomics");
			CHECK(m.remote_timeout == 20 && m.local_timeout == 20,
			      "REQ CM response timeouts");
			CHECK(m.retry_cnt == 7 && m.rnr_retry == 7 &&
			      m.max_cm_retries == 15, "REQ retry counts");
			CHECK(m.tst == DPR_CM_TST_RC && m.mtu == 3 && m.pkey == 0xffff &&
			      m.srq == 0, "REQ RC, MTU 1024, default P_Key, no SRQ");
			CHECK(memcmp(m.sgid, g2, 16) == 0 && memcmp(m.dgid, g3, 16) == 0,
			      "REQ primary path GIDs");
			CHECK(m.hop_limit == 64 && m.ack_timeout == 19 &&
			      m.flow_label == 0x05625, "REQ path hop limit, ACK "
			      "timeout, flow label");
			CHECK(dpr_cma_hdr_get(m.pdata, &h), "rdma_cm's IP header");
			CHECK(h.ip_version == 4 && h.src_port == 0x8601 &&
			      memcmp(h.src, g2, 16) == 0 && memcmp(h.dst, g3, 16) == 0,
			      "IP header: IPv4, source port, addresses");
			{
				uint8_t hdr[DPR_CMA_HDR_LEN];

				dpr_cma_hdr_put(hdr, &h);
				CHECK(memcmp(hdr, m.pdata, sizeof(hdr)) == 0,
				      "IP header re-encoded byte for byte");
			}
			break;
		case DPR_CM_REP:
			CHECK(m.local_id == 0x12dff419u && m.remote_id == 0x7999ca72u,
			      "REP comm IDs");
			CHECK(m.qpn == 0x11 && m.psn == 0xe5aaf1 && m.resp_res == 1 &&
			      m.init_depth == 1 && m.target_ack_delay == 15 &&
			      m.rnr_retry == 7, "REP QPN, PSN, rd atomics, RNR retry");
			break;
		case DPR_CM_DREQ:
			CHECK(m.local_id == 0x7999ca72u && m.remote_id == 0x12dff419u &&
			      m.qpn == 0x11, "DREQ IDs and remote QPN");
			break;
		default:
			break;
		}
	}
	return TEST_SUCCESS;
}

static int
test_refused(void)
{
	uint8_t mad[DPR_MAD_LEN];
	struct dpr_cm_msg m = { .attr = DPR_CM_RTU, .local_id = 1, .remote_id = 2 };

	dpr_cm_encode(&m, mad);
	CHECK_EQ(dpr_cm_decode(mad, DPR_MAD_LEN, &m), DPR_CM_MAD_OK, "an RTU");
	CHECK_EQ(dpr_cm_decode(mad, 255, &m), DPR_CM_ERR_mad_short, "255 bytes");
	mad[0] = 2;
	CHECK_EQ(dpr_cm_decode(mad, DPR_MAD_LEN, &m), DPR_CM_ERR_mad_base_version,
		 "base version 2");
	mad[0] = 1;
	mad[1] = 0x04;
	CHECK_EQ(dpr_cm_decode(mad, DPR_MAD_LEN, &m), DPR_CM_ERR_mad_class, "class 4");
	mad[1] = DPR_MAD_CLASS_CM;
	mad[2] = 1;
	CHECK_EQ(dpr_cm_decode(mad, DPR_MAD_LEN, &m), DPR_CM_ERR_mad_class_version,
		 "class version 1");
	mad[2] = 2;
	mad[3] = 0x01;
	CHECK_EQ(dpr_cm_decode(mad, DPR_MAD_LEN, &m), DPR_CM_ERR_mad_method, "Get");
	mad[3] = 3;
	mad[17] = 0x99;
	CHECK_EQ(dpr_cm_decode(mad, DPR_MAD_LEN, &m), DPR_CM_ERR_mad_attr,
		 "attribute 0x99");
	return TEST_SUCCESS;
}

static int
test_round_trips(void)
{
	uint8_t mad[DPR_MAD_LEN];
	struct dpr_cm_msg in = {
		.attr = DPR_CM_REJ, .tid = 7, .local_id = 3, .remote_id = 4,
		.msg_ref = DPR_CM_REF_REP, .reason = DPR_CM_REJ_CONSUMER_DEFINED,
		.ari_len = 3, .ari = { 1, 2, 3 }, .pdata_len = 4,
		.pdata = { 'n', 'o', '!', 0 },
	}, out;

	dpr_cm_encode(&in, mad);
	CHECK_EQ(dpr_cm_decode(mad, DPR_MAD_LEN, &out), DPR_CM_MAD_OK, "REJ");
	CHECK(out.msg_ref == DPR_CM_REF_REP && out.reason == 28 &&
	      out.ari_len == 3 && memcmp(out.ari, in.ari, 3) == 0 &&
	      out.pdata_len == DPR_CM_REJ_PDATA && memcmp(out.pdata, "no!", 4) == 0,
	      "REJ fields and private data");
	in = (struct dpr_cm_msg){ .attr = DPR_CM_MRA, .local_id = 9, .remote_id = 8,
				  .msg_ref = DPR_CM_REF_REQ, .service_timeout = 20 };
	dpr_cm_encode(&in, mad);
	CHECK_EQ(dpr_cm_decode(mad, DPR_MAD_LEN, &out), DPR_CM_MAD_OK, "MRA");
	CHECK(out.msg_ref == DPR_CM_REF_REQ && out.service_timeout == 20, "MRA fields");
	in = (struct dpr_cm_msg){ .attr = DPR_CM_SIDR_REP, .local_id = 5, .status = 0,
				  .qpn = 0xabcdef, .qkey = 0x01234567,
				  .service_id = dpr_cm_service_id(DPR_RDMA_PS_UDP, 7174) };
	dpr_cm_encode(&in, mad);
	CHECK_EQ(dpr_cm_decode(mad, DPR_MAD_LEN, &out), DPR_CM_MAD_OK, "SIDR_REP");
	CHECK(out.local_id == 5 && out.qpn == 0xabcdef && out.qkey == 0x01234567 &&
	      out.service_id == in.service_id, "SIDR_REP fields");
	return TEST_SUCCESS;
}

/* DprdmaCaps: what it says survives the bytes; a CM MAD, another vendor's
 * OUI and a stack's "unsupported" answer are told apart. */
static int
test_caps(void)
{
	struct dpr_caps_msg in = {
		.method = DPR_MAD_METHOD_GET, .tid = 0x1122334455667788ull,
		.caps = 0x1, .node_guid = 0xa1b2c3d4e5f60718ull,
	}, out;
	struct dpr_cm_msg cmm = { .attr = DPR_CM_RTU, .local_id = 1 };
	uint8_t mad[DPR_MAD_LEN];

	dpr_caps_encode(&in, mad);
	CHECK_EQ(mad[1], 0x30, "a vendor class of range 2");
	CHECK(mad[37] == 0x06 && mad[38] == 0xd9 && mad[39] == 0xd4, "the OUI");
	CHECK_EQ(dpr_caps_decode(mad, DPR_MAD_LEN, &out), 0, "ours");
	CHECK(out.method == in.method && out.tid == in.tid && out.caps == 1 &&
	      out.node_guid == in.node_guid && out.version == DPR_CAPS_VERSION &&
	      out.status == 0, "its fields");
	CHECK_EQ(dpr_cm_decode(mad, DPR_MAD_LEN, &cmm), DPR_CM_ERR_mad_class,
		 "not a CM MAD");
	CHECK_EQ(dpr_caps_decode(mad, DPR_MAD_LEN - 1, &out), 1, "short: not ours");
	/* what Linux's ib_mad answers a class nobody registered */
	mad[3] = DPR_MAD_METHOD_GET_RESP;
	mad[4] = 0x00;
	mad[5] = 0x0c;
	memset(mad + 40, 0, 16);
	CHECK_EQ(dpr_caps_decode(mad, DPR_MAD_LEN, &out), 0, "an answer");
	CHECK(out.status == 0x0c && out.caps == 0, "with a status: IBA only");
	mad[5] = 0;
	CHECK_EQ(dpr_caps_decode(mad, DPR_MAD_LEN, &out), -EINVAL, "version 0");
	mad[39] = 0xd5;
	CHECK_EQ(dpr_caps_decode(mad, DPR_MAD_LEN, &out), 1, "another OUI");
	dpr_caps_encode(&in, mad);
	mad[3] = 0x02;          /* Set */
	CHECK_EQ(dpr_caps_decode(mad, DPR_MAD_LEN, &out), -EINVAL, "a Set");
	dpr_cm_encode(&cmm, mad);
	CHECK_EQ(dpr_caps_decode(mad, DPR_MAD_LEN, &out), 1, "a CM MAD");
	return TEST_SUCCESS;
}

/* DprdmaSec offers: the fields at the places doc/security.rst gives, the
 * echo only when it is valid, told apart from DprdmaCaps both ways. */
static int
test_sec_offer(void)
{
	struct dpr_sec_offer in = {
		.tid = 0x0102030405060708ull, .mode = 2, .echo = true,
		.dqpn = 0xa50011, .sqpn = 0x3c0022,
	}, out;
	struct dpr_caps_msg caps = { .method = DPR_MAD_METHOD_GET };
	uint8_t mad[DPR_MAD_LEN];

	memset(in.sgid, 0xa1, 16);
	memset(in.dgid, 0xb2, 16);
	memset(in.nonce, 0xc3, 16);
	memset(in.echo_nonce, 0xd4, 16);
	memset(in.pub, 0xe5, 32);
	dpr_sec_offer_encode(&in, mad);
	CHECK(mad[1] == 0x30 && mad[3] == DPR_MAD_METHOD_SEND && mad[16] == 0xff &&
	      mad[17] == 0x02 && mad[37] == 0x06 && mad[39] == 0xd4, "the headers");
	CHECK(mad[40] == 2 && mad[41] == 2 && mad[42] == 1 && mad[45] == 0xa5 &&
	      mad[51] == 0x22 && mad[52] == 0xa1 && mad[68] == 0xb2 &&
	      mad[84] == 0xc3 && mad[115] == 0xd4 && mad[116] == 0xe5 &&
	      mad[147] == 0xe5 && mad[148] == 0,
	      "the fields where doc/security.rst puts them, the MAC left to the caller");
	CHECK_EQ(dpr_sec_offer_decode(mad, DPR_MAD_LEN, &out), 0, "ours");
	CHECK(out.tid == in.tid && out.mode == 2 && out.echo && out.dqpn == in.dqpn &&
	      out.sqpn == in.sqpn && !memcmp(out.sgid, in.sgid, 16) &&
	      !memcmp(out.dgid, in.dgid, 16) && !memcmp(out.nonce, in.nonce, 16) &&
	      !memcmp(out.echo_nonce, in.echo_nonce, 16) &&
	      !memcmp(out.pub, in.pub, 32), "its fields");
	CHECK_EQ(dpr_caps_decode(mad, DPR_MAD_LEN, &caps), -EINVAL,
		 "not a DprdmaCaps MAD");
	in.echo = false;
	dpr_sec_offer_encode(&in, mad);
	CHECK(mad[42] == 0 && mad[100] == 0 && mad[115] == 0, "no echo: zero");
	mad[40] = 1;
	CHECK_EQ(dpr_sec_offer_decode(mad, DPR_MAD_LEN, &out), -EINVAL,
		 "version 1 (no public key)");
	CHECK_EQ(dpr_sec_offer_decode(mad, DPR_MAD_LEN - 1, &out), 1, "short");
	dpr_caps_encode(&caps, mad);
	CHECK_EQ(dpr_sec_offer_decode(mad, DPR_MAD_LEN, &out), 1, "a DprdmaCaps MAD");
	return TEST_SUCCESS;
}

static const struct dpr_test_case cm_mad_cases[] = {
	DPR_TEST_CASE(test_caps),
	DPR_TEST_CASE(test_sec_offer),
	DPR_TEST_CASE(test_capture_decodes_and_reencodes),
	DPR_TEST_CASE(test_refused),
	DPR_TEST_CASE(test_round_trips),
	DPR_TEST_CASES_END,
};

static struct dpr_test_suite cm_mad_suite = {
	.name = "cm_mad",
	.needs_eal = false,
	.cases = cm_mad_cases,
};
DPR_TEST_SUITE(cm_mad_suite);
