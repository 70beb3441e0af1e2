#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# rc_oracle.sh PROPERTY [ARGS...]: the fast path against its oracle. The
# same seeded run of dprdma-rc-property (random traffic of every operation
# through loss, reordering, duplication and corruption) twice: as built,
# and with --slow-only (every frame through the full parse and the general
# builder). Every frame each transport emits, every completion and the
# final counters must be the same, in the same order, at the same virtual
# time; the first difference is printed.
set -euo pipefail
prop=$1
shift
work=$(mktemp -d /tmp/dprdma-oracle.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$prop" "$@" --trace "$work/fast" > "$work/fast.log" || { cat "$work/fast.log"; exit 1; }
"$prop" "$@" --slow-only --trace "$work/slow" > "$work/slow.log" || { cat "$work/slow.log"; exit 1; }
frames=$(grep -c ' tx ' "$work/fast" || true)
cqes=$(grep -c ' cqe ' "$work/fast" || true)
if ! cmp -s "$work/fast" "$work/slow"; then
	line=$( (cmp "$work/fast" "$work/slow" || true) | sed -n 's/.* line \([0-9]*\).*/\1/p')
	line=${line:-$(wc -l < "$work/slow")}
	echo "the fast path differs from the slow path at event $line of $(wc -l < "$work/slow"):"
	echo "  fast: $(sed -n "${line}p" "$work/fast")"
	echo "  slow: $(sed -n "${line}p" "$work/slow")"
	echo "  (the events before it:)"
	sed -n "$((line > 3 ? line - 3 : 1)),$((line - 1))p" "$work/slow" | sed 's/^/    /'
	echo "replay: $prop $* --trace FILE [--slow-only]"
	exit 1
fi
grep 'the fast way' "$work/fast.log" || true
echo "fast and slow paths agree on $frames frames and $cqes completions"
