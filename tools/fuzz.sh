#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# tools/fuzz.sh [SECONDS]: run every libFuzzer target long (default 600 s
# each) in the clang build, on a copy of its seed corpus. Findings are kept
# in fuzz-artifacts/; put each one, once fixed, in
# tests/fuzz/regressions/TARGET/ so that the fuzz suite replays it.
# FUZZ_SEED=N picks libFuzzer's random seed (default 1, as CI), so a
# second long run explores other paths than the first.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
"$top/tools/setup.sh"
clang_build=${DPRDMA_CLANG_BUILD:-$top/build-clang}
if [ ! -f "$clang_build/build.ninja" ]; then
	CC=clang meson setup "$clang_build" "$top" -Dwerror=true -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
ninja -C "$clang_build" >/dev/null
mkdir -p "$top/fuzz-artifacts"
rc=0
for t in "$clang_build"/tests/fuzz/fuzz_*; do
	[ -f "$t" ] && [ -x "$t" ] || continue   # not the fuzz_*.p folders
	name=$(basename "$t")
	FUZZ_ARTIFACTS="$top/fuzz-artifacts" "$top/tests/fuzz/run-fuzz.sh" "$t" \
		"$top/tests/fuzz/corpus/$name" "$seconds" || rc=1
done
exit $rc
