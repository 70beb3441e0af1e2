#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""RDMA between two dprdmad boxes joined by net_memif: each runs the
built-in client on its port; QPs connect with QPNs, PSNs, addresses and
rkeys exchanged over telemetry as applications exchange them out of band.
RC SEND, WRITE (with immediate), READ and both atomics, 0 B to 1 MiB, on
several QPs; data checked at the far end: the daemon that received the
bytes reports a CRC-32 of its MR region over telemetry, compared with the
CRC of what the other daemon sent. The peers find each other by ARP.

With --afpacket, the two boxes sit in two network namespaces joined by a
veth pair and use net_af_packet instead (IPv6 off on the veths).

With --workers2, each box runs two workers on an af_packet port with two
queue pairs (the kernel spreads flows over them by hash): frames that land
on the worker that does not own their QP are handed over, and both the
per-worker and the handover counters must show it.

With --faults, both daemons wrap their port in the fault-injecting adapter
(1% loss, 1% reordering, 0.1% duplication, 0.1% corruption, seeded):
everything must still complete with the same data, and the counters must
show that faults were injected and repaired by retransmission. The two
boxes find on QP1 that both speak selective repeat: both must have sent
SACKs, and sent again no more than a few times what was lost. With
--faults --gbn, B says it does not (selective_repeat = off): both must
go back N, and neither may have sent a SACK.

With --secure, both boxes run [security] mode = encrypt, policy = required
with one pre-shared key: every data QP is secure (its frames sealed with
AES-GCM after a handshake on QP1), everything above must hold as it does
plain, no data QP's frame in A's capture is plain or shows B's rkey, and
the counters show every frame sealed and opened, none forged."""

import os
import re
import signal
import sys
import time

import dprtest as t

PID = os.getpid()
SOCK = "/tmp/dprt-memif-%d.sock" % PID
CAPTURE = "/tmp/dprt-memif-%d.pcapng" % PID
PCAP_TOOL = os.path.join(os.path.dirname(t.DPRDMAD), "dprdma-pcap")
PA, PB = "dprt-ma-%d" % PID, "dprt-mb-%d" % PID
MR = 16 << 20
SIZES = [0, 1, 1023, 1024, 1025, 4096, 65536, 1 << 20]


FAULTS = "--faults" in sys.argv[1:]
# every QP secure (encrypted) between the two boxes: the same transfers,
# the same checks, and no frame of a data QP readable on the wire
SECURE = "--secure" in sys.argv[1:]
PSK = os.urandom(32).hex()
GBN = "--gbn" in sys.argv[1:]
WORKERS2 = "--workers2" in sys.argv[1:]
AFPACKET = "--afpacket" in sys.argv[1:] or WORKERS2
NS = {}
MEMIF_ARGS = ""     # more memif devargs (test_tx_full.py: a tiny ring)
ATTACH_CONF = "/tmp/dprt-attach-%d.conf" % PID


def daemon(prefix, role, ip, seed, worker_cpu=1):
    """One dprdmad; its worker on worker_cpu, its main lcore on the other
    CPU (the tests' default puts every worker on CPU 1)."""
    extra = []
    if SECURE and not FAULTS:
        with open(ATTACH_CONF + prefix, "w") as f:
            f.write("[security]\nmode = encrypt\npolicy = required\npsk = %s\n" % PSK)
        extra = ["-f", ATTACH_CONF + prefix]
    if FAULTS:
        # payload attached from the MR as on a NIC that DMAs (memif copies
        # frames, so by default it is copied): both ways stay exercised
        with open(ATTACH_CONF + prefix, "w") as f:
            f.write("[engine]\ntx_payload = attach\n")
            if GBN and prefix == PB:
                f.write("[transport]\nselective_repeat = off\n")
            if SECURE:
                f.write("[security]\nmode = encrypt\npolicy = required\npsk = %s\n"
                        % PSK)
        extra = ["-f", ATTACH_CONF + prefix,
                 "--faults", "loss=0.01,reorder=0.01,dup=0.001,corrupt=0.001,"
                 "seed=%d" % seed]
    if AFPACKET:
        side = "a" if role == "server" else "b"
        vdev = "net_af_packet0,iface=dpr%s%d" % (side, PID % 100000)
        if WORKERS2:
            vdev += ",qpairs=2"
        ns = NS[side]
    else:
        vdev = ("net_memif0,role=%s,socket=%s,socket-abstract=no%s" %
                (role, SOCK, MEMIF_ARGS))
        ns = None
        # a socket file an earlier process of this PID left (the flood
        # test's server failed to bind one in CI: no port, no link)
        if role == "server" and os.path.exists(SOCK):
            os.unlink(SOCK)
    lcores = (["--lcores", "0@0,1@1,2@0"] if WORKERS2 else
              ["--lcores", "0@%d,1@%d" % (1 - worker_cpu, worker_cpu)])
    return t.Daemon(lcores + ["--no-pci", "--no-huge", "-m", "512",
                     "--file-prefix", prefix, "--vdev", vdev, "--", "--ip", ip,
                     "--idle", "yield"] + extra, prefix=prefix, ns=ns)


def cmd(prefix, c):
    r = t.telemetry(prefix, c)
    if r is None or r.get("rc") != 0:
        t.fail("%s: %s -> %r" % (prefix, c, r))
    return r


def wait_done(prefix, what, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        s = cmd(prefix, "/dprdma/client/status")
        if not s["active"]:
            if s["errors"]:
                t.fail("%s: %d errors, first status %d" %
                       (what, s["errors"], s["first_error_status"]))
            return s
        time.sleep(0.05)
    for p in (PA, PB):
        for ln in t.dprdma_state(p):
            t.log("%s: %s" % (p, ln))
    t.fail("%s: not done in %d s: %r" % (what, timeout, s))


def setup_pair(n):
    """Built-in clients on A and B with n QPs each, QP i of A connected to
    QP i of B; returns both setup replies (QPNs, PSNs, MR address, rkey)."""
    ca = cmd(PA, "/dprdma/client/setup,%d,%d" % (n, MR))
    cb = cmd(PB, "/dprdma/client/setup,%d,%d" % (n, MR))
    # (the QPNs of many QPs do not fit setup's reply: paged through)
    aq, ap = t.client_qpns(PA, n)
    bq, bp = t.client_qpns(PB, n)
    for c, q, p in ((ca, aq, ap), (cb, bq, bp)):
        c["qpns"], c["psns"] = ",".join(map(str, q)), ",".join(map(str, p))
    for i in range(n):
        cmd(PA, "/dprdma/client/connect,%d,%s,%s,%s" %
            (i, bq[i], bp[i], cb["gid_ipv4"]))
        cmd(PB, "/dprdma/client/connect,%d,%s,%s,%s" %
            (i, aq[i], ap[i], ca["gid_ipv4"]))
    return ca, cb


# Checked transfers between the built-in clients (shared with soak.py): the
# far end's CRC of the region must equal the CRC of what was sent.

def write_checked(cb, qp, size, seed, count=1):
    """WRITE A -> B at B's MR start: (crc sent, crc at B, A's status)."""
    crc = cmd(PA, "/dprdma/client/fill,0,%d,%d" % (size, seed))["crc32"]
    cmd(PA, "/dprdma/client/run,%d,write,%d,%d,0,%d,%d" %
        (qp, size, count, cb["mr_va"], cb["rkey"]))
    s = wait_done(PA, "WRITE %d B" % size)
    return crc, cmd(PB, "/dprdma/client/checksum,0,%d" % size)["crc32"], s


def read_checked(cb, qp, size, seed, count=1):
    """A READs B's MR + 2 MiB into its own + 4 MiB: (crc at B, crc at A)."""
    crc = cmd(PB, "/dprdma/client/fill,%d,%d,%d" % (2 << 20, size, seed))["crc32"]
    cmd(PA, "/dprdma/client/run,%d,read,%d,%d,%d,%d,%d" %
        (qp, size, count, 4 << 20, cb["mr_va"] + (2 << 20), cb["rkey"]))
    wait_done(PA, "READ %d B" % size)
    return crc, cmd(PA, "/dprdma/client/checksum,%d,%d" % (4 << 20, size))["crc32"]


def send_checked(qp, size, seed, op="send", count=1):
    """B SENDs from its MR + 6 MiB into receives A posts at + 8 MiB:
    (crc sent, crc A received)."""
    before = cmd(PA, "/dprdma/client/status")["recv_done"]
    cmd(PA, "/dprdma/client/recv,%d,%d,%d,%d" % (qp, count, 8 << 20, 1 << 20))
    crc = cmd(PB, "/dprdma/client/fill,%d,%d,%d" % (6 << 20, size, seed))["crc32"]
    cmd(PB, "/dprdma/client/run,%d,%s,%d,%d,%d,0,0" %
        (qp, op, size, count, 6 << 20))
    wait_done(PB, "%s %d B" % (op, size))
    t.wait_for(lambda: cmd(PA, "/dprdma/client/status")["recv_done"]
               >= before + count, 30, "the receives of %s %d B" % (op, size))
    return crc, cmd(PA, "/dprdma/client/checksum,%d,%d" % (8 << 20, size))["crc32"]


def check_selective_repeat():
    """What each box learnt of the other on QP1, and what its QPs did."""
    sacks = {}
    for p, peer in ((PA, "10.80.0.2"), (PB, "10.80.0.1")):
        peers = t.telemetry(p, "/dprdma/cm/peers")
        tr = t.telemetry(p, "/dprdma/transport/stats,0")
        fa = t.telemetry(p, "/dprdma/port/faults,0")
        t.log("%s peers %r; sack_tx %d sack_rx %d sack_ignored %d sr_held %d "
              "sr_resends %d retransmits %d, its port lost %d; %s"
              % (p, peers, tr["sack_tx"], tr["sack_rx"], tr["sack_ignored"],
                 tr["sr_held"], tr["sr_resends"], tr["retransmits"], fa["lost"],
                 " ".join("%s %d" % (k, tr[k]) for k in (
                     "local_ack_timeouts", "rto_timeouts", "rnr_waits",
                     "nak_seq_rx", "nak_seq_tx", "rnr_nak_rx", "sr_read_asks",
                     "read_patches", "read_replays", "dup_request_rx",
                     "sr_hold_full", "sr_placed", "out_of_seq_rx"))))
        # (with --gbn B knows A speaks it, and does not itself)
        want = "iba" if GBN and p == PA else "selective-repeat"
        t.check(len(peers) == 1 and peers[0].startswith("port 0 %s %s (answered"
                                                        % (peer, want)),
                "%s knows its peer speaks %s: %r" % (p, want, peers))
        sacks[p] = tr["sack_tx"]
        if not GBN:
            # what the faults cost: each lost or corrupted frame one resend
            # (a lost READ response one READ request for what is missing),
            # each frame held back 10-100 us (reordered, far past DupThresh
            # at these rates) at most one more; go-back-N sends many times
            # more (rdma_memif_faults_gbn logs its counts)
            peer = t.telemetry(PB if p == PA else PA, "/dprdma/port/faults,0")
            faults = sum(f["lost"] + f["reordered"] + f["corrupted"]
                         for f in (fa, peer))
            t.check(0 < tr["retransmits"] <= 3 * faults,
                    "%s: %d packets sent again (%d of them selectively) for "
                    "%d frames lost, reordered or corrupted on the wire"
                    % (p, tr["retransmits"], tr["sr_resends"], faults))
    # READ responses: placed past holes by both, whatever the peer; the
    # holes asked for again run by run of a peer that speaks selective
    # repeat, and of one that goes back N the rest of the READ from its
    # first hole (the duplicate READ an IBA requester sends), not every
    # READ after it
    st = [t.telemetry(p, "/dprdma/transport/stats,0") for p in (PA, PB)]
    asks = [s["sr_read_asks"] for s in st]
    placed = [s["sr_read_placed"] for s in st]
    if GBN:
        t.check(sum(placed) > 0 and sum(asks) > 0,
                "READ responses past holes kept with a go-back-N peer too "
                "(placed %r, asked again %r)" % (placed, asks))
    else:
        t.check(placed[0] > 0 and asks[0] > 0,
                "A placed READ responses past holes (%d) and asked for the "
                "holes (%d times)" % (placed[0], asks[0]))
    if GBN:
        t.check(sacks[PA] == 0 and sacks[PB] == 0,
                "no SACK either way: B said it goes back N, A did with it, "
                "and B does with everyone")
    else:
        t.check(sacks[PA] > 0 and sacks[PB] > 0,
                "both boxes held frames past gaps and sent SACKs (%d, %d)"
                % (sacks[PA], sacks[PB]))
    # WRITE packets past a gap written as they came, not held (the receive
    # fast path: plain QPs; every byte is checked by the WRITEs above)
    placed = [s["sr_placed"] for s in st]
    if GBN or SECURE:
        t.check(sum(placed) == 0, "no WRITE packet placed past a gap (%r): "
                "%s" % (placed, "nothing is held going back N" if GBN else
                                "secure QPs hold every frame past a gap"))
    else:
        t.check(sum(placed) > 0, "WRITE packets past gaps written to memory "
                "on arrival, not held (%r)" % placed)


def stop_pair(a, b):
    """Stop B, then A (DPDK 22.11's memif can crash a process whose peer
    disappears under traffic: the memif client goes first)."""
    return [d.stop() if d is not None else 0 for d in (b, a)]


def main():
    t.require_root_and_netns()
    if os.path.exists(SOCK):
        os.unlink(SOCK)
    a = b = None
    if AFPACKET:
        NS["a"] = t.Netns("dprt%d-ra" % PID)
        NS["b"] = t.Netns("dprt%d-rb" % PID)
        t.veth_pair(NS["a"], "dpra%d" % (PID % 100000), NS["b"],
                    "dprb%d" % (PID % 100000))
    try:
        a = daemon(PA, "server", "10.80.0.1/24", 1)
        b = daemon(PB, "client", "10.80.0.2/24", 2)
        # (two workers: 16 QP pairs, each with a flow of its own, so that
        # the kernel's hash of their UDP ports -- random, from random
        # QPNs -- spreads them over both queues and hands some over but
        # by a chance of 2^-15; with 4, one queue took every flow of a box
        # in one fresh-clone run)
        nqp = 16 if WORKERS2 else 4
        ca, cb = setup_pair(nqp)

        # capture A's port while the traffic runs (switched on at run time)
        r = t.telemetry(PA, "/dprdma/capture/start,0," + CAPTURE)
        t.check(r is not None and r.get("capturing") == "yes",
                "capture started on A at run time")
        for n, size in enumerate(SIZES):
            qp = n % 4
            crc, got, s = write_checked(cb, qp, size, 11 + n, count=3)
            t.check(s["completed"] == 3 and got == crc,
                    "WRITE %d B on QP %d: B holds what A sent (crc %08x)"
                    % (size, qp, crc))
            crc, got = read_checked(cb, qp, size, 23 + n, count=2)
            t.check(got == crc, "READ %d B on QP %d: A holds what B has"
                    % (size, qp))
            op = "send_imm" if n % 2 else "send"
            crc, got = send_checked(qp, size, 37 + n, op, count=2)
            t.check(got == crc, "%s %d B on QP %d: A received it" % (op, size, qp))

        for qp in range(4, nqp):
            crc, got, s = write_checked(cb, qp, 64, 51 + qp)
            t.check(s["completed"] == 1 and got == crc,
                    "WRITE 64 B on QP %d: B holds what A sent" % qp)

        r = t.telemetry(PA, "/dprdma/capture/stop,0")
        t.check(r is not None and r["captured"] > 1000 and r["failed"] == 0 and
                r["buffers_in_use"] == 0,
                "capture stopped, every copy written and given back: %r" % r)
        p = t.run([PCAP_TOOL, "-q", CAPTURE], check_rc=False)
        t.log(p.stdout)
        if FAULTS:
            # what B's adapter corrupted arrives at A, and shows
            m = re.search(r"(\d+) bad ICRC, (\d+) malformed", p.stdout)
            t.check(p.returncode == 1 and m and int(m.group(1)) +
                    int(m.group(2)) > 0 and
                    re.search(r"^%d frames" % r["captured"], p.stdout, re.M),
                    "the capture shows the corrupted frames B's adapter sent "
                    "(%s bad ICRC, %s malformed)" % (m.group(1), m.group(2)))
        else:
            t.check(p.returncode == 0 and " 0 bad ICRC, 0 malformed" in p.stdout
                    and p.stdout.startswith("%d frames" % r["captured"]),
                    "every captured frame (both directions) is well formed "
                    "with a good ICRC, as dprdma-pcap checks")
        if SECURE:
            m = re.search(r"sealed \(secure QPs\) +(\d+)", p.stdout)
            t.check(m and int(m.group(1)) > 1000,
                    "dprdma-pcap: the data QPs' frames are sealed, their ICRC "
                    "sound (%s)" % (m.group(1) if m else "none sealed"))
            with open(CAPTURE, "rb") as f:
                raw = f.read()
            va = cb["mr_va"].to_bytes(8, "big")
            t.check(va not in raw and len(raw) > 1000000,
                    "no frame of %d bytes captured shows B's MR address (the "
                    "WRITEs' RETH is encrypted)" % len(raw))
        else:
            tshark = t.run(["tshark", "-r", CAPTURE, "-Y", "infiniband"],
                           check_rc=False)
            t.check(tshark.returncode == 0 and tshark.stdout.count("RRoCE") > 1000,
                    "tshark decodes the capture as RoCEv2")

        # WRITE with immediate consumes a receive at B
        cmd(PB, "/dprdma/client/recv,1,5,%d,0" % (10 << 20))
        crc = cmd(PA, "/dprdma/client/fill,0,5000,99")["crc32"]
        cmd(PA, "/dprdma/client/run,1,write_imm,5000,5,0,%d,%d" %
            (cb["mr_va"] + (12 << 20), cb["rkey"]))
        wait_done(PA, "WRITE_IMM")
        t.wait_for(lambda: cmd(PB, "/dprdma/client/status")["recv_done"] >= 5,
                   10, "WRITE_IMM completions at B")
        got = cmd(PB, "/dprdma/client/checksum,%d,5000" % (12 << 20))["crc32"]
        t.check(got == crc, "WRITE_IMM: data and 5 receive completions at B")

        # atomics on B's memory: 100 fetch-and-adds of 1, 50 compare-swaps
        va = cb["mr_va"] + (15 << 20)
        v0 = cmd(PB, "/dprdma/client/read64,%d" % (15 << 20))["value"]
        cmd(PA, "/dprdma/client/run,2,fadd,8,100,0,%d,%d,16" % (va, cb["rkey"]))
        wait_done(PA, "FETCH_ADD")
        v1 = cmd(PB, "/dprdma/client/read64,%d" % (15 << 20))["value"]
        t.check(v1 == (v0 + 100) % (1 << 64), "100 FETCH_ADDs of 1 executed once "
                "each (%d -> %d)" % (v0, v1))
        zero = (15 << 20) + 64          # never written: the MR starts zeroed
        cmd(PA, "/dprdma/client/run,3,cas,8,50,0,%d,%d" % (cb["mr_va"] + zero,
                                                          cb["rkey"]))
        wait_done(PA, "CMP_SWAP")
        v = cmd(PB, "/dprdma/client/read64,%d" % zero)["value"]
        t.check(v == 50, "50 CMP_SWAPs each found the value the last left")

        # write_lat (as perftest's): 100 WRITE round trips on QP 0, B
        # starts; each side's last round landed in the upper half of its MR
        # (the figures mean nothing here: the workers nap when idle)
        n = 100
        half_a, half_b = ca["mr_size"] // 2, cb["mr_size"] // 2
        bad = t.telemetry(PB, "/dprdma/client/write_lat,0,4,%d,1,%d,%d"
                          % (n, ca["mr_va"] + half_a, ca["rkey"]))
        t.check(bad.get("rc", 0) != 0 and "SIZE (8 or more)" in bad.get("error", ""),
                "write_lat of 4 B refused: it carries an 8-byte round number")
        cmd(PA, "/dprdma/client/write_lat,0,64,%d,0,%d,%d"
            % (n, cb["mr_va"] + half_b, cb["rkey"]))
        cmd(PB, "/dprdma/client/write_lat,0,64,%d,1,%d,%d"
            % (n, ca["mr_va"] + half_a, ca["rkey"]))
        wait_done(PB, "write_lat")
        wait_done(PA, "write_lat")
        sb, sa = cmd(PB, "/dprdma/client/status"), cmd(PA, "/dprdma/client/status")
        last_a = cmd(PA, "/dprdma/client/read64,%d" % (half_a + 56))["value"]
        last_b = cmd(PB, "/dprdma/client/read64,%d" % (half_b + 56))["value"]
        t.check(sb["errors"] == 0 and sa["errors"] == 0 and
                sb["posted"] == sb["completed"] == n and
                sa["posted"] == sa["completed"] == n and
                sb.get("lat_samples") == n and last_a == n and last_b == n and
                0 < sb["lat_p50_ns"] <= sb["lat_p99_ns"],
                "write_lat 64 B x %d: every round answered, the last (%d, %d) "
                "in both MRs, half round trip p50 %d ns p99 %d ns"
                % (n, last_a, last_b, sb.get("lat_p50_ns", 0), sb.get("lat_p99_ns", 0)))

        # every QP as its worker has it: all work done, counters per QP
        # adding up to the port's
        qpns = [int(x) for x in ca["qpns"].split(",")]
        t.check(sorted(t.telemetry(PA, "/dprdma/qps,0")) == sorted(qpns + [1]),
                "/dprdma/qps lists A's QPs %r and QP1 (the CM's)" % qpns)
        tr = t.telemetry(PA, "/dprdma/transport/stats,0")
        sums = {"req_packets": 0, "ack_rx": 0, "resp_packets": 0}
        for i, qpn in enumerate(qpns):
            q = t.telemetry(PA, "/dprdma/qp,0,%d" % qpn)
            t.check(q["sec"] == ("encrypt" if SECURE else "none"),
                    "/dprdma/qp,0,%d: sec %s" % (qpn, q["sec"]))
            t.check(q["state"] == "RTS" and q["dest_qpn"] ==
                    int(cb["qpns"].split(",")[i]) and q["sq_posted"] > 0 and
                    q["sq_posted"] == q["sq_completed"] and
                    q["comp_psn"] == q["req_psn"] and not q["timer_armed"] and
                    q["req_packets"] > 0,
                    "/dprdma/qp,0,%d: RTS, connected to B's QP %d, every one "
                    "of %d WQEs completed, nothing unacknowledged" %
                    (qpn, q["dest_qpn"], q["sq_posted"]))
            for k in sums:
                sums[k] += q[k]
        t.check(all(sums[k] == tr[k] for k in sums),
                "the QPs' counters add up to the port's: %r" % sums)
        t.check(t.telemetry(PA, "/dprdma/qp,0,%d" % (max(qpns) + 100)) is None
                and t.telemetry(PA, "/dprdma/qp,0") is None and
                t.telemetry(PA, "/dprdma/qps,9") is None,
                "/dprdma/qp refuses an unknown QP, a missing QPN, a bad port")

        # a capture that keeps 128 bytes of each frame (tcpdump -s)
        r = t.telemetry(PA, "/dprdma/capture/start,0,128," + CAPTURE)
        t.check(r is not None and r.get("capturing") == "yes",
                "capture with a snap length started")
        crc, got, s = write_checked(cb, 0, 65536, 5)
        t.check(got == crc, "WRITE 64 KiB while capturing headers only")
        t.telemetry(PA, "/dprdma/capture/stop,0")
        p = t.run(["tshark", "-r", CAPTURE, "-T", "fields", "-e",
                   "frame.cap_len", "-e", "frame.len"], check_rc=False)
        lens = [tuple(int(x) for x in ln.split()) for ln in p.stdout.split("\n")
                if ln.strip()]
        t.check(len(lens) >= 64 and all(c <= 128 for c, _ in lens) and
                max(n for _, n in lens) > 1000,
                "%d frames captured, 128 bytes of each kept, their lengths "
                "whole (largest %d)" % (len(lens), max(n for _, n in lens)))

        retrans = invalid = 0
        for p in (PA, PB):
            tr = t.telemetry(p, "/dprdma/transport/stats,0")
            st = t.telemetry(p, "/dprdma/port/stats,0")
            fa = t.telemetry(p, "/dprdma/port/faults,0")
            t.check(tr["nak_err_tx"] == 0 and tr["nak_err_rx"] == 0 and
                    tr["rx_no_qp"] == 0 and (FAULTS or tr["rx_invalid"] == 0),
                    "%s: no error NAK%s (%d frames in, %d out)"
                    % (p, "" if FAULTS else ", no invalid frame",
                       tr["rx_frames"], tr["tx_frames"]))
            retrans += tr["retransmits"]
            invalid += tr["rx_invalid"]
            info = t.telemetry(p, "/dprdma/port/info,0")
            if FAULTS:
                t.check(tr["tx_payload_attached"] > tr["tx_payload_copied"] > 0
                        and info["tx_payload"] == "attached from 256 B",
                        "%s: payload sent from the MR where it lies (%d bytes "
                        "attached, %d bytes of small pieces copied)" %
                        (p, tr["tx_payload_attached"], tr["tx_payload_copied"]))
            else:
                t.check(tr["tx_payload_copied"] > 0 and
                        tr["tx_payload_attached"] == 0 and
                        info["tx_payload"].startswith("copied (the driver"),
                        "%s: payload copied into each frame, as the driver "
                        "copies frames anyway (%d bytes; port info: %s)" %
                        (p, tr["tx_payload_copied"], info["tx_payload"]))
            if FAULTS:
                t.log("%s faults injected: %r" % (p, fa))
                t.check(fa["lost"] > 0 and fa["reordered"] > 0,
                        "%s: its port lost %d and reordered %d frames"
                        % (p, fa["lost"], fa["reordered"]))
            t.check(st["arp_request_tx"] >= 1 or st["arp_request_rx"] >= 1,
                    "%s: the peer was found by ARP" % p)
        if WORKERS2:
            ho = 0
            for p in (PA, PB):
                for lc in (1, 2):
                    ls = t.telemetry(p, "/dprdma/lcore/stats,%d" % lc)
                    t.log("%s lcore %d: %r" % (p, lc, ls))
                    # a full handover ring drops like a full RX ring: counted,
                    # and repaired by retransmission like any loss
                    t.check(ls["rx_packets"] > 0,
                            "%s: worker on lcore %d received %d frames (%d "
                            "dropped on a full handover ring)"
                            % (p, lc, ls["rx_packets"], ls["handover_drop"]))
                    ho += ls["handover_tx"]
            t.check(ho > 0, "%d frames handed over to their QP's worker" % ho)
        if SECURE:
            for p in (PA, PB):
                tr = t.telemetry(p, "/dprdma/transport/stats,0")
                cs = t.telemetry(p, "/dprdma/cm/stats")
                t.log("%s: %s; %s" % (p, " ".join("%s %d" % (k, v) for k, v in tr.items()
                                                  if k.startswith("sec_")),
                                      " ".join("%s %d" % (k, v) for k, v in cs.items()
                                               if k.startswith("sec_"))))
                t.check(tr["sec_sealed"] > 1000 and tr["sec_opened"] > 1000 and
                        tr["sec_drop_auth"] == 0 and tr["sec_refused"] == 0 and
                        tr["sec_drop_key"] == 0 and cs["sec_handshakes"] == 4 and
                        cs["sec_failed"] == 0 and cs["sec_offers_bad_mac"] == 0,
                        "%s: 4 handshakes, %d frames sealed, %d opened, none "
                        "forged or refused" % (p, tr["sec_sealed"], tr["sec_opened"]))
        if FAULTS:
            check_selective_repeat()
            t.check(retrans > 0 and invalid > 0,
                    "the faults were real: %d packets retransmitted, %d "
                    "corrupted frames refused by the ICRC check" %
                    (retrans, invalid))
        # stop the memif client first: its server survives the peer going
        rc_b = b.stop(signal.SIGTERM)
        b = None
        rc_a = a.stop(signal.SIGTERM)
        a = None
        t.check(rc_a == 0 and rc_b == 0, "both daemons stop cleanly")
    finally:
        for d in (b, a):
            if d is not None:
                d.kill()
        for f in (SOCK, CAPTURE, ATTACH_CONF + PA, ATTACH_CONF + PB):
            if os.path.exists(f):
                os.unlink(f)
        for ns in NS.values():
            ns.close()
    t.log("PASS")


if __name__ == "__main__":
    main()
