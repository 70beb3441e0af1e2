#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# tools/test.sh: the whole test suite (README's second command; .ci/run
# calls it). Sets up and builds first, checks that clang builds the tree
# without a warning too, then runs the meson suites unit, integration,
# interop and fuzz (bench is never pass/fail and not run here).
# Exit status: non-zero on any failure.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${DPRDMA_BUILD:-$top/build}
"$top/tools/setup.sh"

# gcc builds build/; clang builds build-clang/ (compile check only)
clang_build=$top/build-clang
if [ ! -f "$clang_build/build.ninja" ]; then
	CC=clang meson setup "$clang_build" "$top" -Dwerror=true \
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
meson test -C "$build" --no-suite bench --print-errorlogs "$@" || rc=$?
end=$(date +%s)

# one plain closing line, counted from meson's own log
/usr/bin/python3 - "$build/meson-logs/testlog.json" "$((end - start))" <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0, "TIMEOUT": 0, "ERROR": 0}
with open(sys.argv[1]) as f:
    for line in f:
        r = json.loads(line).get("result", "ERROR")
        counts[r] = counts.get(r, 0) + 1
failed = counts["FAIL"] + counts["TIMEOUT"] + counts["ERROR"]
print("tests: %d passed, %d failed, %d skipped (%s s)"
      % (counts["OK"], failed, counts["SKIP"], sys.argv[2]))
PY
exit $rc
