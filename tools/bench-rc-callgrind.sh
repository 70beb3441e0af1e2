#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# tools/bench-rc-callgrind.sh [MESSAGES]: instructions per 64 B RDMA WRITE
# of the RC transport alone, for the requester and for the responder,
# counted by callgrind (this machine has no hardware counters for perf
# stat; callgrind counts are the same run after run).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${DPRDMA_BUILD:-$top/build}
n=${1:-20000}
command -v valgrind >/dev/null || { echo "valgrind not installed (tools/setup.sh installs it)"; exit 1; }
for side in requester_side responder_side; do
	out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		--collect-atstart=no --toggle-collect="$side" \
		"$build/tests/bench/dprdma-bench-rc" --messages "$n" 2>&1)
	ir=$(echo "$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1)
	[ -n "$ir" ] || { echo "$out" | tail -5; exit 1; }
	printf '%s: %d instructions per message (%s over %d messages)\n' \
		"${side%_side}" "$((ir / n))" "$ir" "$n"
done
