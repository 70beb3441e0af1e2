/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * What every counter means, for operators: /dprdma/counters lists the
 * groups, /dprdma/counters/help,GROUP gives name -> meaning for one group
 * (one reply holds 16 KiB: a group per command). dprdmactl metrics takes
 * its HELP lines from here and `dprdmactl counters --rst` writes
 * doc/counters.rst from it; the dprdmactl test checks that every counter a
 * telemetry command returns has its line here, so a new counter without a
 * meaning fails the suite. Drivers add their groups with
 * dpr_engine_counter_help().
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "dpr_engine.h"
#include "engine_private.h"

static const struct dpr_counter_help port_help[] = {
	{ "rx_packets", "frames a worker received from the port (every kind)" },
	{ "rx_bytes", "bytes of those frames" },
	{ "tx_packets", "frames the port accepted for sending" },
	{ "tx_bytes", "bytes of those frames" },
	{ "arp_request_rx", "ARP requests for the port's IPv4 address" },
	{ "arp_reply_tx", "ARP replies sent for them" },
	{ "arp_reply_rx", "ARP replies received (the port's own requests answered)" },
	{ "arp_request_tx", "ARP requests sent to find a peer's MAC" },
	{ "icmp_echo_rx", "ICMP echo requests (ping) to the port" },
	{ "icmp_echo_reply_tx", "ICMP echo replies sent" },
	{ "nd_solicit_rx", "IPv6 neighbour solicitations for one of the port's addresses" },
	{ "nd_advert_tx", "neighbour advertisements sent for them" },
	{ "nd_advert_rx", "neighbour advertisements received" },
	{ "nd_solicit_tx", "neighbour solicitations sent to find a peer's MAC" },
	{ "icmp6_echo_rx", "ICMPv6 echo requests to the port" },
	{ "icmp6_echo_reply_tx", "ICMPv6 echo replies sent" },
	{ "roce_rx_packets", "RoCEv2 frames (UDP 4791) given to the transport" },
	{ "roce_rx_bytes", "bytes of those frames" },
	{ "loopback_packets", "frames between two QPs of this box, never on the wire" },
	{ "tx_deferred", "frames the port refused at once, kept and sent on a later loop" },
	{ "neigh_held", "frames held until their peer's MAC was known (ARP/ND under way)" },
	{ "neigh_released", "held frames sent once the MAC was known" },
	{ "neigh_changed", "known neighbours whose MAC changed (gratuitous ARP, unsolicited advertisement, another reply)" },
	{ "neigh_change_locked", "MAC changes ignored: the neighbour's MAC had changed less than 1 s before (locktime)" },
	{ "neigh_evicted", "neighbours dropped from a full table to make room" },
#define _(e, n, h) { #n, h },
	DPR_DROP_REASONS(_)
#undef _
	{ "rx_missed", "frames the device dropped: no room in its RX ring (the workers fell behind)" },
	{ "rx_errors", "frames the device received with errors" },
	{ "rx_nombuf", "frames the device dropped: no mbuf to receive into" },
	{ "tx_errors", "frames the device failed to send" },
};

static const struct dpr_counter_help transport_help[] = {
	{ "rx_frames", "RoCEv2 frames the transport looked at" },
	{ "rx_fast", "of those, handled by the in-order fast path" },
	{ "rx_invalid", "frames dropped as malformed: bad ICRC, BTH, opcode or lengths" },
	{ "rx_no_qp", "frames to a QP number that does not exist" },
	{ "rx_qp_state", "frames to a QP in a state that takes none (RESET, INIT, ERR)" },
	{ "rx_wrong_peer", "frames to a connected QP from an address that is not its peer" },
	{ "rx_wrong_type", "frames whose opcode does not fit the QP's type" },
	{ "tx_frames", "frames the transport built" },
	{ "tx_fast", "of those, built by the fast path" },
	{ "tx_no_mbuf", "frames not built for want of an mbuf (built later)" },
	{ "tx_unresolved", "frames built before their peer's MAC was known (answers, datagrams): held by the neighbour table until ARP/ND answers" },
	{ "path_updates", "QPs that took a peer's MAC when it became known or changed (ARP/ND)" },
	{ "sec_sealed", "frames of secure QPs sealed (authenticated, or encrypted)" },
	{ "sec_opened", "frames of secure QPs opened: authentic, not replayed" },
	{ "sec_seal_failed", "frames of secure QPs not sent: no buffer, or too long sealed (32 bytes more)" },
	{ "sec_drop_auth", "sealed frames dropped: the tag does not match (forged or corrupt)" },
	{ "sec_drop_replay", "sealed frames dropped: sequence number seen already, or behind the replay window" },
	{ "sec_drop_key", "sealed frames dropped: another key or mode (an earlier handshake of the QP)" },
	{ "sec_drop_malformed", "sealed frames dropped: too short, or a security header of another version" },
	{ "sec_drop_plain", "plain frames dropped: for a secure QP, or one whose security is being decided" },
	{ "sec_drop_unexpected", "sealed frames dropped: for no QP, or a QP that is not secure" },
	{ "sec_refused", "QPs to ERR: security required and impossible with the peer, or the handshake failed" },
	{ "req_packets", "request packets sent (SEND, WRITE, READ request, atomic)" },
	{ "retransmits", "request packets sent again (timeout, NAK or RNR)" },
	{ "local_ack_timeouts", "times the ACK timer ran out (the peer did not answer in time)" },
	{ "rto_timeouts", "adaptive retransmission timeouts (no progress for an RTO measured from the RTT): sent again without spending retry_cnt" },
	{ "rto_probes", "RTOs that sent one request again alone, with AckReq: the oldest not acknowledged to a go-back-N peer (a head probe), the newest to a peer with selective repeat (a tail probe)" },
	{ "rto_gobacks", "RTOs that went back to the oldest request not acknowledged (the probe went unanswered)" },
	{ "probe_gobacks", "head probes the responder took as the next in order (its NAK was lost): went back past them at once" },
	{ "rnr_waits", "times a requester waited after an RNR NAK" },
	{ "ack_rx", "ACKs received" },
	{ "nak_seq_rx", "PSN sequence error NAKs received (the peer missed a packet)" },
	{ "rnr_nak_rx", "RNR NAKs received (the peer had no receive posted)" },
	{ "nak_err_rx", "error NAKs received (invalid request, remote access or operation error)" },
	{ "dup_response_rx", "responses for PSNs already acknowledged (ignored)" },
	{ "resp_packets", "request packets the responder took" },
	{ "ack_tx", "ACKs sent" },
	{ "nak_seq_tx", "PSN sequence error NAKs sent (a packet was missing)" },
	{ "rnr_nak_tx", "RNR NAKs sent (a SEND found no receive posted)" },
	{ "nak_err_tx", "error NAKs sent (invalid request, bad rkey, access)" },
	{ "dup_request_rx", "duplicate requests received (answered again, not executed again)" },
	{ "out_of_seq_rx", "requests ahead of the expected PSN (a packet before them was lost)" },
	{ "read_resp_tx", "READ response packets sent" },
	{ "read_replays", "READ responses sent again for a duplicate READ request" },
	{ "atomic_executed", "atomic operations executed" },
	{ "atomic_replays", "atomic results sent again for a duplicate request" },
	{ "rd_atomic_over", "READ/atomic requests beyond max_dest_rd_atomic (NAKed)" },
	{ "ud_sent", "UD datagrams sent" },
	{ "ud_received", "UD datagrams delivered to a receive" },
	{ "ud_unresolved", "UD sends made before their destination's MAC was known: held until ARP/ND answers (or counted in tx_drop_unresolved)" },
	{ "ud_no_wqe", "UD datagrams dropped: no receive posted" },
	{ "ud_too_long", "UD datagrams dropped: longer than the receive" },
	{ "bad_qkey", "UD datagrams dropped: wrong Q_Key" },
	{ "uc_dropped", "UC packets dropped (out of sequence or no receive)" },
	{ "sack_tx", "selective acknowledgements sent (requests held past a gap, to a peer that reads them)" },
	{ "sack_rx", "selective acknowledgements received and acted on" },
	{ "sack_ignored", "selective acknowledgements dropped: selective repeat off here, or malformed" },
	{ "sr_held", "requests held past a gap until it filled (selective repeat)" },
	{ "sr_placed", "of sr_held, WRITE packets written to memory as they came, their effects kept for the gap to fill" },
	{ "sr_hold_full", "requests past a gap dropped: too far ahead, or the worker holds its most already ([transport] sr_hold)" },
	{ "sack_unsent", "SACKs that named PSNs never sent: frames injected at the peer, a purge sent it (plain QPs)" },
	{ "sr_purged", "requests held past a gap dropped at the requester's purge: PSNs it never sent (injected)" },
	{ "sr_resends", "packets sent again selectively (a hole a SACK showed, or the oldest at a timeout)" },
	{ "sr_read_placed", "READ responses placed past a missing one (from any peer)" },
	{ "sr_read_asks", "READ requests again for responses that went missing: the runs of a selective-repeat peer, the rest of the READ of another" },
	{ "read_patches", "ranges of a READ answered again, before the rest of it (a selective-repeat requester's hole)" },
	{ "read_replays_gone", "READs asked again after every response had gone out, their memory deregistered since: given up without a NAK (the requester had them all; its timeout came too soon)" },
	{ "ce_rx", "RC/UC frames that arrived marked CE (ECN: congestion on the way)" },
	{ "cnp_tx", "CNPs sent for them ([congestion] notify; at most one per QP per cnp_interval_us)" },
	{ "cnp_rx", "CNPs received from the peer's notification point (each may cut the QP's rate: [congestion] react)" },
	{ "mw_ops", "memory window binds and local invalidations the requester carried out (failed ones included)" },
	{ "mw_remote_inv", "memory windows invalidated by a peer's SEND WITH INVALIDATE" },
	{ "cc_cuts", "rate cuts by DCQCN's reaction point (at most one per QP per rate_reduce_monitor_period)" },
	{ "cc_increases", "stages of rate increase (fast recovery, additive, hyper) with no CNP" },
	{ "cc_paced", "times the pacer held a QP until its tokens were back" },
	{ "cc_released", "QPs unpaced again (no CNP for release_periods, or back at line_rate_gbps)" },
	{ "tx_payload_copied", "frames whose payload was copied into the frame" },
	{ "tx_payload_attached", "frames whose payload was attached from the MR (zero copy)" },
	{ "rx_quarantined", "frames dropped unlooked-at: their source is quarantined ([security] quarantine_drops)" },
	{ "quarantines", "sources quarantined: quarantine_drops frames of theirs dropped within a second" },
	{ "qps", "QPs of the port, its QP1 included (a gauge)" },
	{ "qp_bytes", "the daemon's memory for its QPs beyond their queues: each QP, its READ/atomic resources (a gauge)" },
	{ "qp_queue_bytes", "the daemon's memory for its QPs' send and receive queues, sized by their caps (a gauge)" },
};

static const struct dpr_counter_help lcore_help[] = {
	{ "polls", "loops of the worker" },
	{ "idle_polls", "loops that found nothing to do" },
	{ "sleeps", "times the worker slept ([engine] idle = yield)" },
	{ "wakeups", "sleeps a command from the main lcore (a client's request) ended early" },
	{ "client_wakeups", "sleeps a client ended early: it posted while the worker napped" },
	{ "nap_aborts", "sleeps not taken: a client had posted between the last round and the nap" },
	{ "rx_wakeups", "sleeps a frame ended early: its link (memif) rang the worker's receive queue" },
	{ "rx_nap_aborts", "sleeps not taken: a frame came between the last round and the nap" },
	{ "spin_yields", "idle loops within [engine] idle_spin_us of the last work: the worker gave up the CPU (sched_yield) and polled on instead of sleeping" },
	{ "timer_naps", "sleeps cut short to end when a timer of the transport is due (a retransmission, a paced QP, a DCQCN stage), not idle_sleep_us later" },
	{ "spin_cuts", "spins stopped because a yield came back late (another thread that does not yield held the CPU): spinning then pauses, 0.2 ms doubling to 1 s while it recurs" },
	{ "rx_packets", "frames the worker received, every port" },
	{ "tx_packets", "frames the worker sent, every port" },
	{ "drops", "frames the worker dropped, every reason" },
	{ "handover_tx", "frames handed to the worker that owns their QP" },
	{ "handover_rx", "frames received from another worker" },
	{ "handover_drop", "frames not handed over: the other worker's ring was full" },
	{ "busy_cycles", "TSC cycles of loops that had work" },
	{ "idle_cycles", "TSC cycles of loops that had none (sleeps included)" },
	{ "busy_percent", "busy_cycles over all cycles, in percent" },
	{ "rx_bursts", "RX bursts that returned at least one frame" },
};

static const struct dpr_counter_help statistic_help[] = {
	{ "sent_pkts", "RoCE packets sent (rxe's sent_pkts: tx_frames)" },
	{ "rcvd_pkts", "RoCE packets received (rxe's rcvd_pkts: rx_frames)" },
	{ "duplicate_request", "duplicate requests received (dup_request_rx)" },
	{ "out_of_seq_request", "requests out of sequence (out_of_seq_rx)" },
	{ "rcvd_rnr_err", "RNR NAKs received (rnr_nak_rx)" },
	{ "send_rnr_err", "RNR NAKs sent (rnr_nak_tx)" },
	{ "rcvd_seq_err", "sequence error NAKs received (nak_seq_rx)" },
};

#define MAX_GROUPS 16

static struct {
	const char *name;
	const struct dpr_counter_help *h;
	unsigned int n;
} groups[MAX_GROUPS] = {
	{ "port", port_help, RTE_DIM(port_help) },
	{ "transport", transport_help, RTE_DIM(transport_help) },
	{ "lcore", lcore_help, RTE_DIM(lcore_help) },
	{ "statistic", statistic_help, RTE_DIM(statistic_help) },
};
static unsigned int n_groups = 4;

int
dpr_engine_counter_help(const char *group, const struct dpr_counter_help *h,
			unsigned int n)
{
	if (n_groups == MAX_GROUPS)
		return -ENOSPC;
	groups[n_groups].name = group;
	groups[n_groups].h = h;
	groups[n_groups].n = n;
	n_groups++;
	return 0;
}

static int
tel_groups(const char *cmd __rte_unused, const char *params __rte_unused,
	   struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (unsigned int i = 0; i < n_groups; i++)
		rte_tel_data_add_array_string(d, groups[i].name);
	return 0;
}

static int
tel_help(const char *cmd __rte_unused, const char *params,
	 struct rte_tel_data *d)
{
	for (unsigned int i = 0; params != NULL && i < n_groups; i++) {
		if (strcmp(params, groups[i].name) != 0)
			continue;
		rte_tel_data_start_dict(d);
		for (unsigned int k = 0; k < groups[i].n; k++)
			rte_tel_data_add_dict_string(d, groups[i].h[k].name,
						     groups[i].h[k].help);
		return 0;
	}
	return -EINVAL;
}

void
dpr_engine_register_counter_help(void)
{
	rte_telemetry_register_cmd("/dprdma/counters", tel_groups,
		"Groups of counters that have a meaning listed. No parameters");
	rte_telemetry_register_cmd("/dprdma/counters/help", tel_help,
		"What each counter of a group means. Parameter: group");
}
