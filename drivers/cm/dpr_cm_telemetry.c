/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The RDMA CM's telemetry: /dprdma/cm/stats (its counters and the peers'
 * capabilities') and /dprdma/cm/conns (every ID: state, port, addresses).
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include "cm_private.h"
#include "dpr_cm.h"
#include "dpr_ratelimit.h"
#include "dpr_cm_mad.h"
#include "dpr_engine.h"
#include "dpr_transport.h"
#include "dpr_verbs.h"

/* ------------------------------------------------------ telemetry */

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "enabled", cm.started);
	rte_tel_data_add_dict_u64(d, "ids", __atomic_load_n(&cm.n_live, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(d, "max_ids", cm.max_ids);
	{
		uint32_t sources, n = cm_half_open_now(&sources);

		rte_tel_data_add_dict_u64(d, "half_open", n);
		rte_tel_data_add_dict_u64(d, "half_open_sources", sources);
	}
#define _(n) rte_tel_data_add_dict_u64(d, #n, __atomic_load_n(&cm.st.n, __ATOMIC_RELAXED));
	CM_STATS(_)
#undef _
	dpr_cm_caps_stats(d);
	dpr_cm_sec_stats(d);
	cm_auth_stats(d);
	return 0;
}

static void
addr_str(const struct dpr_shm_cm_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (a->family == AF_INET)
		inet_ntop(AF_INET, a->addr + 12, ip, sizeof(ip));
	else if (a->family == AF_INET6)
		inet_ntop(AF_INET6, a->addr, ip, sizeof(ip));
	else
		snprintf(ip, sizeof(ip), "-");
	snprintf(buf, len, a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip,
		 ntohs(a->port));
}

/* /dprdma/cm/conns: every ID, one line each (state, addresses, QPs). */
static int
tel_conns(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&cm.lock);
	const struct cm_id *id;

	for (id = cm.live; id != NULL; id = id->next) {
		char line[RTE_TEL_MAX_STRING_LEN], s[64], t[64];

		addr_str(&id->src, s, sizeof(s));
		addr_str(&id->dst, t, sizeof(t));
		/* at most 127 characters: two IPv6 addresses just fit */
		if (id->st == CS_LISTEN)
			snprintf(line, sizeof(line), "%u %s port %d %.48s half-open %u",
				 cm_id_handle(id), cm_state_names[id->st], id->pi, s,
				 id->n_half_open);
		else
			snprintf(line, sizeof(line), "%u %s port %d %.48s -> %.48s qp %u -> %u",
				 cm_id_handle(id), cm_state_names[id->st], id->pi, s, t,
				 id->local_qpn, id->remote_qpn);
		if (rte_tel_data_add_array_string(d, line) != 0)
			break;
	}
	pthread_mutex_unlock(&cm.lock);
	return 0;
}

void
dpr_cm_register_telemetry(void)
{
	static const struct dpr_counter_help cm_help[] = {
		{ "enabled", "1: the CM runs ([cm] enabled = yes)" },
		{ "ids", "IDs in use: listeners, connections, IDs in time-wait" },
		{ "max_ids", "IDs the CM holds at most ([cm] max_ids)" },
		{ "mads_rx", "CM MADs QP1 received" },
		{ "mads_tx", "CM MADs sent" },
		{ "mads_retried", "MADs sent again: no answer within [cm] response_timeout_ms" },
		{ "mads_tx_held", "MADs held on the main lcore until the ring to worker 0 had room" },
		{ "mads_tx_dropped", "MADs not sent: the port has no QP1, or no memory to hold them" },
		{ "mads_rx_dropped", "MADs dropped: the ring to the main lcore was full" },
		{ "mad_short", "MADs dropped: shorter than a CM MAD" },
		{ "mad_base_version", "MADs dropped: base version not 1" },
		{ "mad_class", "MADs dropped: management class not CM (7)" },
		{ "mad_class_version", "MADs dropped: CM class version not 2" },
		{ "mad_method", "MADs dropped: method not Send" },
		{ "mad_attr", "MADs dropped: attribute the CM does not know" },
		{ "mad_unknown_id", "MADs dropped: for a connection this box does not have" },
		{ "mad_wrong_state", "MADs dropped: not expected in the connection's state" },
		{ "mad_duplicate", "duplicate MADs answered from the last answer" },
		{ "mad_late", "MADs dropped: a second answer to a MAD sent again, after the first moved the connection on" },
		{ "mad_bad_pdata", "REQs refused: private data not rdma_cm's IP header" },
		{ "sidr_req_rx", "SIDR requests (UD service lookups) received" },
		{ "sidr_no_listener", "SIDR requests for a port nobody listens on" },
		{ "req_rx", "connection requests (REQ) received" },
		{ "req_no_listener", "REQs for a port nobody listens on (REJ 8 sent)" },
		{ "req_dropped_backlog", "REQs dropped: the listener held [cm] max_backlog requests not yet established" },
		{ "req_dropped_source", "REQs dropped: their source held [cm] half_open_per_source requests" },
		{ "req_rejected_source", "REQs rejected: their source held [cm] connections_per_source connections" },
		{ "half_open", "connections requested of this box and not yet established (a gauge)" },
		{ "half_open_sources", "addresses those requests came from (a gauge)" },
		{ "rej_rx", "rejects (REJ) received" },
		{ "rej_tx", "rejects sent" },
		{ "connections", "connections established (RTU sent or received)" },
		{ "timeouts", "handshakes or disconnects given up after [cm] max_retries" },
		{ "events", "events delivered to clients' event channels" },
		{ "events_held", "events a full channel held back, sent in order once the client read" },
		{ "timers_dropped", "deadlines not armed: no memory (the ID waits for its peer or owner)" },
		{ "events_lost", "events past a channel's backlog (65536 unread): lost" },
		{ "caps_get_tx", "DprdmaCaps Gets sent: a peer asked what it speaks" },
		{ "caps_get_retried", "DprdmaCaps Gets sent again: no answer yet" },
		{ "caps_get_rx", "DprdmaCaps Gets received (and answered) from peer boxes" },
		{ "caps_resp_rx", "answers to our DprdmaCaps Gets" },
		{ "caps_resp_unsolicited", "DprdmaCaps answers to nothing we asked" },
		{ "caps_peer_sr", "peers found to speak selective repeat" },
		{ "caps_peer_iba", "peers found to speak IBA only (go-back-N)" },
		{ "caps_timeouts", "peers that never answered a DprdmaCaps Get" },
		{ "caps_bad", "malformed DprdmaCaps MADs dropped" },
		{ "caps_table_full", "peers not remembered: the table of peers was full, or its share for peers that sent their own Get" },
		{ "caps_peers", "peers known or being asked (a gauge)" },
		{ "caps_peers_told", "peers known from their own Gets, never asked (a gauge; at most half the table)" },
		{ "caps_req_dropped", "questions of the workers lost: their ring was full" },
		{ "caps_unauthenticated", "DprdmaCaps Gets without a MAC from a peer whose MADs carry one: answered, not believed (the peer asked again)" },
		{ "sec_offers_tx", "secure QP handshakes: offers (nonces) sent" },
		{ "sec_offers_rx", "secure QP handshakes: offers received" },
		{ "sec_offers_bad_mac", "offers dropped: wrong MAC (another pre-shared key, or forged)" },
		{ "sec_offers_mismatch", "offers dropped: not from the address they name, or for another peer, mode or QP" },
		{ "sec_offers_early", "offers kept for a QP that had not asked yet" },
		{ "sec_early_dropped", "offers for QPs that had not asked, dropped: too many kept" },
		{ "sec_handshakes", "secure QPs given their keys" },
		{ "sec_failed", "secure QP handshakes that failed (no answer in 3 s): the QP to ERR" },
		{ "sec_req_dropped", "handshake requests of the workers lost: their ring was full" },
		{ "auth_sealed", "MADs sent with a MAC (to peers that hold our pre-shared key)" },
		{ "auth_checked", "MADs received with a MAC trailer, checked" },
		{ "auth_bad", "MADs dropped: a MAC that does not check (forged, changed, another key)" },
		{ "auth_replay", "MADs dropped: their sequence number seen before (a replay)" },
		{ "auth_missing", "MADs dropped: no MAC from a peer whose MADs carry one (forged as it)" },
		{ "auth_table_full", "MACs not made or checked: the table of peers' keys was full" },
	};

	dpr_engine_counter_help("cm", cm_help, RTE_DIM(cm_help));
	rte_telemetry_register_cmd("/dprdma/cm/stats", tel_stats,
				   "RDMA CM counters: MADs in and out, retries, drops by reason");
	rte_telemetry_register_cmd("/dprdma/cm/conns", tel_conns,
				   "RDMA CM IDs: state, addresses, QPs");
	dpr_cm_caps_register_telemetry();
}
