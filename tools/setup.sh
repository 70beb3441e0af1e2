#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# tools/setup.sh: everything dprdma needs on a fresh Debian 12, then the
# build. Idempotent and quiet when there is nothing to do.
#   1. installs the Debian packages for build, tests, interop and benchmarks
#   2. reserves 2 MB hugepages (DPRDMA_HUGEPAGES, default 512 = 1 GiB) and
#      mounts hugetlbfs at /dev/hugepages if nothing is mounted there
#   3. configures (meson, werror) and builds into build/ (DPRDMA_BUILD)
# Without root it installs and reserves nothing and says so; the build then
# runs with whatever is installed, and dprdmad falls back to --no-huge.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${DPRDMA_BUILD:-$top/build}
hugepages=${DPRDMA_HUGEPAGES:-512}

say() { echo "setup: $*"; }

packages=(
	# build
	gcc clang meson ninja-build pkg-config
	dpdk dpdk-dev libdpdk-dev libnuma-dev libbsd-dev libisal-dev libpcap-dev
	libipsec-mb-dev libssl-dev
	python3-pyelftools libibverbs-dev librdmacm-dev libjansson-dev
	# tests: namespaces, kernel ping/arping, decoding and crafting frames,
	# checking the documents
	iproute2 procps iputils-ping iputils-arping tshark python3-scapy nftables
	# rdma-core's Python bindings and its own tests (the pyverbs suite)
	python3-pyverbs
	valgrind gdb python3-docutils python3-sphinx python3-prometheus-client curl
	# interop: a Linux Soft-RoCE peer in a qemu guest, and the unmodified
	# rdma-core / perftest programs run through the drop-in libibverbs
	qemu-system-x86 cpio ibverbs-utils ibverbs-providers rdmacm-utils perftest qperf
	# UCX's own tests (ucx_perftest) and libfabric's fi_pingpong through the
	# drop-ins; librpma for a client and server of our own (rpma_test.c)
	ucx-utils libfabric-bin librpma-dev
	# MPI as users run it: Open MPI and MPICH over UCX, NetPIPE for each,
	# and their headers for a collectives program of our own (test_mpi.py)
	openmpi-bin libopenmpi-dev mpich libmpich-dev netpipe-openmpi netpipe-mpich2
	# benchmarks: kernel TCP baselines and plots
	iperf3 sockperf python3-matplotlib
	# the Debian package (debian/; tests/integration/test_package.py)
	debhelper dpkg-dev lintian man-db
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		say "not root: cannot install ${missing[*]}"
		say "run as root (sudo $0) to install them"
	else
		say "installing ${#missing[@]} package(s): ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		echo "wireshark-common wireshark-common/install-setuid boolean false" |
			debconf-set-selections
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" \
			>/tmp/dprdma-apt.log 2>&1 || {
			tail -20 /tmp/dprdma-apt.log
			say "apt-get install failed (log: /tmp/dprdma-apt.log)"
			exit 1
		}
	fi
fi

# hugepages: 2 MB pages; dprdmad uses them through --in-memory (memfd), the
# mount is for users who run the EAL's default file-backed mode.
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
have=$(cat "$nr" 2>/dev/null || echo 0)
if [ "$have" -lt "$hugepages" ]; then
	if [ "$(id -u)" -eq 0 ] && echo "$hugepages" >"$nr" 2>/dev/null &&
	   [ "$(cat "$nr")" -ge "$hugepages" ]; then
		say "reserved $hugepages 2 MB hugepages"
	else
		say "could not reserve $hugepages 2 MB hugepages (have $(cat "$nr" 2>/dev/null || echo 0));" \
		    "dprdmad will run with --no-huge (slower, no zero-copy DMA)"
	fi
fi
if [ "$(id -u)" -eq 0 ] && ! grep -qs ' /dev/hugepages hugetlbfs ' /proc/mounts; then
	mkdir -p /dev/hugepages
	mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null &&
		say "mounted hugetlbfs at /dev/hugepages" ||
		say "could not mount hugetlbfs (dprdmad uses --in-memory and does not need it)"
fi

if [ ! -f "$build/build.ninja" ]; then
	say "configuring $build"
	meson setup "$build" "$top" -Dwerror=true >/tmp/dprdma-meson.log 2>&1 || {
		cat /tmp/dprdma-meson.log
		exit 1
	}
fi
if ! out=$(ninja -C "$build" 2>&1); then
	echo "$out"
	say "build failed"
	exit 1
fi
case "$out" in
	*"no work to do"*) ;;
	*) say "built $build" ;;
esac
