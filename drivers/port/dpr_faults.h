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

#include "dpr_config.h"
#include "dpr_engine.h"

/** The engine hook: an adapter for every (port, worker) whose [portN]
 * faults are on. @p arg is the struct dpr_config. */
int dpr_faults_port_adapter(void *arg, uint16_t port_index, unsigned int worker,
		struct rte_mempool *pool, dpr_tx_adapter_fn *fn, void **state);

/** Telemetry /dprdma/port/faults,N: what was injected, all workers. */
void dpr_faults_register_telemetry(void);

#endif /* DPR_FAULTS_H */
