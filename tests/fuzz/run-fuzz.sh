#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# run-fuzz.sh TARGET CORPUS SECONDS: run a libFuzzer target for SECONDS on a
# copy of its seed corpus (the repository's corpus is never written), then
# replay every kept regression input. Prints the executions reached; a
# crash prints its input (hex) and keeps it in FUZZ_ARTIFACTS (default: a
# folder /tmp/dprdma-fuzz-artifacts.* that outlives the run), and fails.
set -euo pipefail
target=$1 corpus=$2 seconds=$3
work=$(mktemp -d /tmp/dprdma-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
artifacts=${FUZZ_ARTIFACTS:-$(mktemp -d /tmp/dprdma-fuzz-artifacts.XXXXXX)}
mkdir -p "$work/corpus" "$artifacts"
cp "$corpus"/* "$work/corpus/"
seeds=$(ls "$work/corpus" | wc -l)
# regression inputs of earlier findings: replayed, must not crash
if [ -d "$corpus/../../regressions/$(basename "$corpus")" ]; then
	"$target" "$corpus/../../regressions/$(basename "$corpus")"/* >/dev/null 2>&1 ||
		{ echo "a regression input crashes $(basename "$target")"; exit 1; }
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
"$target" -max_total_time="$seconds" -seed="${FUZZ_SEED:-1}" -artifact_prefix="$artifacts/" \
	-print_final_stats=1 "$work/corpus" >"$work/log" 2>&1 || {
	tail -60 "$work/log"
	for a in "$artifacts"/*; do
		[ -f "$a" ] || continue
		echo "--- $a ($(stat -c %s "$a") bytes):"
		od -A d -t x1z -v "$a" | head -40
	done
	echo "$(basename "$target"): FAILED; the input is in $artifacts (add it" \
		"to tests/fuzz/regressions/$(basename "$corpus")/ once fixed)"
	exit 1
}
rmdir "$artifacts" 2>/dev/null || true
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$')
cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1)
echo "$(basename "$target"): $runs executions in $seconds s from $seeds seeds, $cov, no finding"
