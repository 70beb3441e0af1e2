#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# tools/test.sh: the whole test suite (README's second command; .ci/run
# calls it). Sets up and builds first (gcc in build/, clang with ASan,
# UBSan and libFuzzer in build-clang/), then runs the meson suites unit,
# integration and interop from build/, and unit, integration and fuzz from
# build-clang/ under the sanitizers (bench is never pass/fail and not run
# here). Arguments go to meson test for build/
# (e.g. --suite unit); the fuzz suite runs when there are none.
# Exit status: non-zero on any failure.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${DPRDMA_BUILD:-$top/build}
"$top/tools/setup.sh"

# gcc builds build/; clang builds build-clang/ with ASan + UBSan and the
# libFuzzer targets (every file compiled warning-free by both compilers)
clang_build=${DPRDMA_CLANG_BUILD:-$top/build-clang}
if [ ! -f "$clang_build/build.ninja" ]; then
	CC=clang meson setup "$clang_build" "$top" -Dwerror=true -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false \
		>/tmp/dprdma-meson-clang.log 2>&1 || {
		cat /tmp/dprdma-meson-clang.log
		exit 1
	}
fi
if ! out=$(ninja -C "$clang_build" 2>&1); then
	echo "$out"
	echo "test: clang build failed"
	exit 1
fi

start=$(date +%s)
rc=0
meson test -C "$build" --no-suite bench --no-suite fuzz --print-errorlogs "$@" || rc=$?
# the clang build (ASan, UBSan) runs the unit and integration suites again
# and the fuzz suite (libFuzzer). The sanitizers halt on the first error,
# so a report fails the test (dprtest.Daemon.stop also fails a test whose
# daemon printed one); LeakSanitizer runs at every exit. DPDK under ASan:
# clang needs -Db_lundef=false (the runtime is linked into executables
# only); Debian's DPDK itself is not instrumented, so tests keep untrusted
# bytes in exact-size malloc'd buffers where a bound matters (fuzz/).
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
if [ $# -eq 0 ]; then
	meson test -C "$clang_build" --suite unit --suite integration \
		--suite fuzz --print-errorlogs || rc=$?
	grep -h "executions in" "$clang_build/meson-logs/testlog.txt" | sed 's/^/test: /' || true
elif [[ " $* " == *" fuzz"* ]]; then
	meson test -C "$clang_build" --suite fuzz --print-errorlogs || rc=$?
	grep -h "executions in" "$clang_build/meson-logs/testlog.txt" | sed 's/^/test: /' || true
fi
end=$(date +%s)

# one plain closing line, counted from meson's own logs
/usr/bin/python3 - "$((end - start))" "$build/meson-logs/testlog.json" \
	"$clang_build/meson-logs/testlog.json" <<'PY'
import json, os, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0, "TIMEOUT": 0, "ERROR": 0}
for path in sys.argv[2:]:
    if not os.path.exists(path):
        continue
    with open(path) as f:
        for line in f:
            r = json.loads(line).get("result", "ERROR")
            counts[r] = counts.get(r, 0) + 1
failed = counts["FAIL"] + counts["TIMEOUT"] + counts["ERROR"]
print("tests: %d passed, %d failed, %d skipped (%s s)"
      % (counts["OK"], failed, counts["SKIP"], sys.argv[1]))
PY
exit $rc
