/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * The fault-injecting port adapter: wraps any port's TX with seeded loss,
 * reordering, duplication, corruption and delay, so that tests (and users
 * who want to see the box survive a bad fabric) get a bad link on demand.
 */

#ifndef DPR_FAULTS_H
#define DPR_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "dpr_config.h"
#include "dpr_engine.h"

/** Faults a port's TX injects, for tests and for seeing the box survive
 * a bad fabric: the [portN] faults key. */
struct dpr_fault_conf {
	bool on;
	double loss;        /**< probability a frame is dropped */
	double reorder;     /**< probability it is held back 10-100 us */
	double dup;         /**< probability it is sent twice */
	double corrupt;     /**< probability one bit is flipped */
	uint32_t delay_us;  /**< every frame held this long */
	uint64_t seed;
	/* a bottleneck: the link leaves at rate_mbps, a FIFO of queue_kb
	 * before it (tail drop past it), frames sent ECN-capable marked CE
	 * while more than mark_kb wait (DCTCP's step marking); 0: none */
	uint32_t rate_mbps;
	uint32_t queue_kb;
	uint32_t mark_kb;
};

/** Add the [portN] faults key to the configuration (lib/config): call
 * before the first dpr_config_defaults(). */
void dpr_faults_config_register(void);

/** Port @p pi's faults in @p conf. */
const struct dpr_fault_conf *dpr_faults_conf(const struct dpr_config *conf,
		unsigned int pi);

/** Parse "loss=P,reorder=P,dup=P,corrupt=P,delay_us=N,seed=N,
 * rate_mbps=N,queue_kb=N,mark_kb=N" (any subset); @return 0, or -1 with
 * what is wrong in @p why. */
int dpr_parse_faults(const char *s, struct dpr_fault_conf *f, char *why,
		size_t len);

/** The engine hook: an adapter for every (port, worker) whose [portN]
 * faults are on. @p arg is the struct dpr_config. */
int dpr_faults_port_adapter(void *arg, uint16_t port_index, unsigned int worker,
		struct rte_mempool *pool, dpr_tx_adapter_fn *fn, void **state);

/** Telemetry /dprdma/port/faults,N: what was injected, all workers. */
void dpr_faults_register_telemetry(void);

#endif /* DPR_FAULTS_H */
