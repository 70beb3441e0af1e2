#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# tools/demo.sh: the main job (README's first command). Sets up and builds,
# then runs two dprdmad boxes joined by a virtual link (net_memif between
# two DPDK processes; no NIC, no kernel networking) and makes them do RDMA
# with their built-in clients: they find each other by ARP, connect RC QPs,
# and run RDMA WRITE, READ and SEND streams of 64 KiB messages with a live
# report (messages/s, Gbit/s, retransmissions), then check that the bytes
# that arrived are the bytes that were sent. DEMO_SECONDS per stream (5).
# Then the unmodified Debian ibv_rc_pingpong runs on both boxes through the
# drop-in libibverbs (build/drop-in), as a verbs program on the box would,
# and last the same two measures over kernel TCP on this machine (iperf3,
# sockperf over loopback), for comparison.
#
# Each box's worker polls its own CPU (box a CPU 0, box b CPU 1) and the
# ping-pong programs wait for completions on their completion channels
# (ibv_rc_pingpong -e): a program that polled as well would put four busy
# pollers on two cores, and every hop would wait for the scheduler
# (1.1 ms per round trip, where this takes tens of microseconds).

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${DPRDMA_BUILD:-$top/build}
secs=${DEMO_SECONDS:-5}
sock=/tmp/dprdma-demo-$$.sock

[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (hugepages, DPDK runtime folders): sudo $0"; exit 1; }
"$top/tools/setup.sh"

step() { printf '\n== %s\n' "$*"; }
pa= pb=
logs=$(mktemp -d /tmp/dprdma-demo.XXXXXX)
cleanup() {
	# the memif client goes first: its server outlives the peer going
	[ -n "$pb" ] && kill -TERM "$pb" 2>/dev/null && wait "$pb" 2>/dev/null || true
	[ -n "$pa" ] && kill -TERM "$pa" 2>/dev/null && wait "$pa" 2>/dev/null || true
	rm -rf "$logs" "$sock"
}
trap cleanup EXIT

box() { # name role ip worker-cpu
	"$build/app/dprdmad" --lcores "0@$((1 - $4)),1@$4" --no-pci --in-memory \
		--file-prefix "dprdma-demo-$1" \
		--vdev "net_memif0,role=$2,socket=$sock,socket-abstract=no" \
		-- --ip "$3" --idle busy --socket "/run/dprdma/demo-$1.sock" \
		>"$logs/$1" 2>&1 &
}
wait_up() {
	for _ in $(seq 100); do
		grep -q '^dprdmad: running' "$logs/$1" && return 0
		sleep 0.1
	done
	cat "$logs/$1"
	echo "demo: box $1 did not start"
	exit 1
}

step "two dprdmad boxes on one virtual link (net_memif)"
box a server 10.77.0.1/24 0
pa=$!
wait_up a
box b client 10.77.0.2/24 1
pb=$!
wait_up b
for b in a b; do
	grep -A3 '^dprdmad 0' "$logs/$b" | grep -v telemetry | sed "s/^/   box $b: /"
done

step "RC QPs connected through the built-in clients; streams of 64 KiB messages"
/usr/bin/python3 "$top/tools/demo.py" dprdma-demo-a dprdma-demo-b "$secs" | tee "$logs/streams"

step "unmodified ibv_rc_pingpong on both boxes, through the drop-in libibverbs"
# (server on box a, client on box b; LD_LIBRARY_PATH only for the programs)
pp() { # box [server]
	LD_LIBRARY_PATH="$build/drop-in" DPRDMA_SOCKET="/run/dprdma/demo-$1.sock" \
		timeout 60 ibv_rc_pingpong -e -g 1 -s 4096 -n 2000 -p 18499 "${@:2}"
}
pp a >"$logs/pp-a" 2>&1 &
ppa=$!
sleep 0.5
pp b 127.0.0.1 >"$logs/pp-b" 2>&1 || { cat "$logs/pp-b"; echo "demo: ibv_rc_pingpong failed"; exit 1; }
wait "$ppa" || { cat "$logs/pp-a"; echo "demo: ibv_rc_pingpong server failed"; exit 1; }
sed 's/^/   box b: /' "$logs/pp-b"

step "what the ports saw (dpdk-telemetry.py -f dprdma-demo-a)"
printf '/dprdma/port/stats,0\n/dprdma/transport/stats,0\n' |
	/usr/bin/python3 /usr/bin/dpdk-telemetry.py -f dprdma-demo-a |
	/usr/bin/python3 -c '
import json, sys
keep = ("rx_packets", "tx_packets", "arp_request_tx", "arp_reply_rx",
        "arp_request_rx", "arp_reply_tx", "roce_rx_packets", "req_packets",
        "resp_packets", "read_resp_tx", "ack_rx", "ack_tx", "retransmits")
for line in sys.stdin:
    for cmd, v in json.loads(line).items():
        print("   " + cmd + ": " + ", ".join("%s %d" % (k, x) for k, x in v.items()
                                            if k in keep))'

step "stopping both boxes (SIGTERM)"
kill -TERM "$pb"; wait "$pb" || true; pb=
kill -TERM "$pa"; wait "$pa" || true; pa=
for b in a b; do
	grep -q 'stopped cleanly' "$logs/$b" && echo "   box $b: stopped cleanly"
done
step "the same on kernel TCP, this machine's loopback (iperf3 -l 64K, sockperf 4 KiB)"
tcp_gbit=$(timeout 60 iperf3 -s -1 -p 18498 >/dev/null 2>&1 & sleep 0.5;
	timeout 60 iperf3 -c 127.0.0.1 -p 18498 -t 3 -l 65536 -J |
	/usr/bin/python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))')
timeout 60 sockperf server --tcp -i 127.0.0.1 -p 18497 >/dev/null 2>&1 &
sps=$!
sleep 0.5
tcp_us=$(timeout 60 sockperf ping-pong --tcp -i 127.0.0.1 -p 18497 -m 4096 -t 2 2>&1 |
	sed -n 's/.*avg-latency=\([0-9.]*\).*/\1/p' | tail -1)
kill "$sps" 2>/dev/null; wait "$sps" 2>/dev/null || true
tcp_rtt=$(/usr/bin/python3 -c "print('%.1f' % (2 * float('$tcp_us')))")   # (sockperf: half)
echo "   kernel TCP: $tcp_gbit Gbit/s in one stream; 4 KiB ping-pong round trip $tcp_rtt us"

# (each line's rate is the stream's so far: the last is its whole run's)
write_gbit=$(sed -n 's/^   WRITE .* \([0-9.]*\) Gbit\/s .*/\1/p' "$logs/streams" | tail -1)
pp_us=$(sed -n 's/.* = \([0-9.]*\) usec\/iter/\1/p' "$logs/pp-b" | tail -1)
echo
echo "demo: two dprdmad boxes did RDMA WRITE, READ and SEND over a DPDK link; data verified;"
echo "      and the unmodified ibv_rc_pingpong ran on both through the drop-in libibverbs."
echo "      On this machine: 64 KiB WRITEs at $write_gbit Gbit/s against kernel TCP's $tcp_gbit Gbit/s"
echo "      (one stream each); ibv_rc_pingpong's 4 KiB round trip $pp_us us against TCP's"
echo "      $tcp_rtt us (sockperf, loopback). doc/benchmarking.rst has the whole comparison."
