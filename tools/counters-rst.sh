#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# tools/counters-rst.sh: write doc/counters.rst from what a dprdmad of this
# build says its counters mean (dprdmactl counters --rst needs a running
# daemon: a throwaway one on a memif port with no peer). Run it after adding
# or changing a counter; the dprdmactl test checks the file against it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${DPRDMA_BUILD:-$top/build}
tmp=$(mktemp -d /tmp/dprdma-rst.XXXXXX)
"$build/app/dprdmad" -l 0-1 --no-pci --no-huge -m 256 --file-prefix "dprdma-rst-$$" \
	--vdev "net_memif0,role=server,socket=$tmp/memif.sock,socket-abstract=no" \
	-- --ip 10.255.0.1/24 --socket "$tmp/dprdmad.sock" --idle yield >"$tmp/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do
	grep -q '^dprdmad: running' "$tmp/log" && break
	sleep 0.1
done
"$build/app/dprdmactl" -p "dprdma-rst-$$" counters --rst >"$top/doc/counters.rst"
echo "counters-rst: wrote doc/counters.rst"
