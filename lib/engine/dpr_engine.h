/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * The dprdmad engine: ports, worker lcores and their poll loops, counters
 * and the /dprdma/ telemetry commands. One engine per process.
 */

#ifndef DPR_ENGINE_H
#define DPR_ENGINE_H

#include <stdio.h>

#include "dpr_config.h"

/**
 * Set up every port the EAL probed and start one poll loop on every worker
 * lcore. Call after rte_eal_init().
 *
 * @param err
 *   On failure, a message that says what to change.
 * @return
 *   0; -EINVAL for a configuration the ports cannot take (such as an MTU
 *   out of the device's range or too few queues), another negative errno
 *   for other failures. On failure nothing is left running.
 */
int dpr_engine_start(const struct dpr_config *conf, char *err, size_t errlen);

/** Ask the workers to stop, wait for them, stop and close the ports. */
void dpr_engine_stop(void);

/** Print one line of counters per port (periodic stats). */
void dpr_engine_print_stats(FILE *f);

/** Print what the engine runs: ports, addresses, workers. */
void dpr_engine_print_setup(FILE *f);

/** Print the counters of every port, drop reasons included. */
void dpr_engine_print_summary(FILE *f);

/** RoCE path MTU that Linux rxe derives from an Ethernet MTU (0: none). */
unsigned int dpr_active_mtu(unsigned int eth_mtu);

#endif /* DPR_ENGINE_H */
