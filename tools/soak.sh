#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# tools/soak.sh [SECONDS] [gcc|asan]: the soak test run long (default 600 s)
# on the gcc build (default) or the ASan+UBSan build: two dprdmad over
# memif through injected faults, mixed RC traffic checked end to end,
# resident memory and open descriptors of both daemons sampled every
# second; fails if they grow after the first quarter of the run. The test
# suite runs the same for 20 s (soak_short).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
"$top/tools/setup.sh"
case "${2:-gcc}" in
gcc) build=${DPRDMA_BUILD:-$top/build} ;;
asan)
	build=${DPRDMA_CLANG_BUILD:-$top/build-clang}
	if [ ! -f "$build/build.ninja" ]; then
		CC=clang meson setup "$build" "$top" -Dwerror=true -Dfuzz=true \
			-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
	fi
	export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_leaks=1}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
	;;
*) echo "usage: $0 [SECONDS] [gcc|asan]" >&2; exit 2 ;;
esac
ninja -C "$build" >/dev/null
DPRDMAD="$build/app/dprdmad" DPR_SOURCE_ROOT="$top" PYTHONDONTWRITEBYTECODE=1 \
	exec /usr/bin/python3 "$top/tests/integration/soak.py" "$seconds"
