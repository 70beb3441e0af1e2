#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# tools/demo.sh: the main job (README's first command). Sets up and builds,
# then runs dprdmad with no argument at all -- its compiled-in default, a
# virtual net_tap port 'dprdma0' at 10.77.0.1/24 -- inside a network
# namespace of its own, and shows it at work from the other end of the tap:
# the kernel's ping and arping answered, and the daemon's counters read
# over DPDK telemetry. Everything stays inside the namespace.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${DPRDMA_BUILD:-$top/build}
ns=dprdma-demo
count=${DEMO_PINGS:-10}

[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (network namespace, tap device): sudo $0"; exit 1; }
"$top/tools/setup.sh"

step() { printf '\n== %s\n' "$*"; }
pid=
cleanup() {
	[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT

ip netns del "$ns" 2>/dev/null || true
ip netns add "$ns"
ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1

step "starting dprdmad with no arguments in network namespace '$ns'"
log=$(mktemp /tmp/dprdma-demo.XXXXXX)
ip netns exec "$ns" "$build/app/dprdmad" >"$log" 2>&1 &
pid=$!
for _ in $(seq 100); do
	grep -q '^dprdmad: running' "$log" && break
	kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "demo: dprdmad exited"; exit 1; }
	sleep 0.1
done
grep -v '^EAL:\|^TELEMETRY:\|qdisc\|eth_dev_tap_create\|tap_mp_req' "$log" | sed 's/^/   /'

step "the kernel's end of the tap: dprdma0 = 10.77.0.2/24"
ip netns exec "$ns" sh -c 'ip addr add 10.77.0.2/24 dev dprdma0 && ip link set dprdma0 up'
ip netns exec "$ns" ip -br addr show dprdma0 | sed 's/^/   /'

step "ping -c $count 10.77.0.1 (answered by dprdmad's worker lcore)"
ip netns exec "$ns" ping -c "$count" -i 0.1 -W 2 10.77.0.1 | sed 's/^/   /'

step "arping -c 3 10.77.0.1"
ip netns exec "$ns" arping -c 3 -w 5 -I dprdma0 10.77.0.1 | sed 's/^/   /'

step "dprdmad's counters over DPDK telemetry (dpdk-telemetry.py -f dprdmad)"
printf '/dprdma/port/info,0\n/dprdma/port/stats,0\n' |
	/usr/bin/python3 /usr/bin/dpdk-telemetry.py -f dprdmad |
	/usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    for cmd, v in json.loads(line).items():
        print("   " + cmd)
        for k, x in v.items():
            if x or "drop" not in k:
                print("     %-28s %s" % (k, x))'

step "stopping dprdmad (SIGINT)"
kill -INT "$pid"
wait "$pid" || true
pid=
sed -n '/^dprdmad: stopping/,$p' "$log" | sed 's/^/   /'
rm -f "$log"
echo
echo "demo: dprdmad answered ping and ARP on a DPDK port and stopped cleanly."
