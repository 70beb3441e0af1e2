#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""lib/wire against Wireshark, asked at test time:

1. every RoCEv2 frame of the real Linux rxe captures in tests/data/captures
   is parsed by lib/wire (through dprdma-pcap --fields) into the same
   header fields tshark decodes, and its ICRC is good;
2. frames built by lib/wire for every opcode, over IPv4, IPv6 and VLAN,
   decode in tshark -V into the fields they were built from, with no
   malformed frame and no checksum error;
3. dprdma-pcap exits 1 on a frame with a bad ICRC or a bad length.

tshark options used, and why:
- The protocols whose heuristic dissectors claim InfiniBand payloads
  (rpcordma, iser, smb_direct, nvme-rdma, lnet, smc, infiniband_sdp,
  fcoib) read arbitrary SEND payloads as their own and flag them
  malformed: they are disabled (--disable-protocol; tshark 4.0 takes no
  heuristic names for them), since the payloads here are test bytes.
- udp.ignore_ipv6_zero_checksum: RoCEv2 senders (Linux rxe, ConnectX) send
  UDP checksum 0 over IPv6 too, as IBTA Annex A17 and RFC 6935/6936 allow.
- ip.check_checksum: tshark checks our IPv4 header checksums.
- CNP (opcode 0x81) is unknown to Debian 12's tshark 4.0: only decoded
  as 'Unknown OpCode', so its fields are not compared; nor are those of
  dprdma's SACK (0xC0, a manufacturer-specific opcode)."""

import glob
import os
import shutil
import subprocess
import tempfile

import dprtest as t

PCAP = os.path.join(os.path.dirname(t.DPRDMAD), "dprdma-pcap")
CAPTURES = os.path.join(t.SOURCE_ROOT, "tests/data/captures")

# tshark field for each dprdma-pcap --fields column (after frame.number)
FIELDS = [
    "infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m",
    "infiniband.bth.padcnt", "infiniband.bth.p_key",
    "infiniband.bth.destqp", "infiniband.bth.a", "infiniband.bth.psn",
    "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome", "infiniband.aeth.msn",
    "infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
    "infiniband.atomicacketh.origremdt", "infiniband.immdt",
    "infiniband.ieth", "infiniband.deth.q_key", "infiniband.deth.srcqp",
    "infiniband.invariant.crc", None, "udp.srcport",
]
PAYLOAD_PROTOCOLS = ["smc", "smb_direct", "rpcordma", "nvme-rdma", "lnet",
                     "iser", "infiniband_sdp", "fcoib"]
TSHARK_OPTS = ["-o", "udp.ignore_ipv6_zero_checksum:TRUE",
               "-o", "ip.check_checksum:TRUE"]
for proto in PAYLOAD_PROTOCOLS:
    TSHARK_OPTS += ["--disable-protocol", proto]


# byte fields tshark prints as bare hex ("deadbeef")
HEX_BYTES = ("infiniband.immdt", "infiniband.ieth")


def norm(v, field=None):
    if v in ("", None):
        return None
    if field in HEX_BYTES and not v.startswith("0x"):
        return int(v, 16)
    if v in ("True", "False"):
        return int(v == "True")
    return int(v, 0)


def ours(path):
    p = t.run([PCAP, "--fields", path], check_rc=False)
    if p.returncode != 0:
        t.fail("dprdma-pcap --fields %s exited %d: %s" % (path, p.returncode,
                                                         p.stderr))
    rows = {}
    for line in p.stdout.splitlines():
        cols = line.split("\t")
        rows[int(cols[0])] = cols[1:]
    return rows


def theirs(path):
    cmd = ["tshark", "-r", path, "-Y", "infiniband && !icmp", "-T", "fields",
           "-E", "separator=\t", "-E", "occurrence=f", "-e", "frame.number"]
    for f in FIELDS:
        cmd += ["-e", f or "frame.len"]  # placeholder: not compared
    p = t.run(cmd + TSHARK_OPTS)
    rows = {}
    for line in p.stdout.splitlines():
        cols = line.split("\t")
        rows[int(cols[0])] = cols[1:]
    return rows


def compare(path, skip_opcodes=()):
    a, b = ours(path), theirs(path)
    if sorted(a) != sorted(b):
        t.fail("%s: lib/wire sees RoCEv2 frames %s, tshark %s" %
               (path, sorted(a)[:20], sorted(b)[:20]))
    compared = 0
    for n in sorted(a):
        if norm(a[n][0]) in skip_opcodes:
            continue
        for i, f in enumerate(FIELDS):
            if f is None:
                continue
            if norm(a[n][i], f) != norm(b[n][i], f):
                t.fail("%s frame %d: %s: lib/wire %r, tshark %r" %
                       (os.path.basename(path), n, f, a[n][i], b[n][i]))
        compared += 1
    return compared


def main():
    if shutil.which("tshark") is None:
        t.skip("tshark not installed (tools/setup.sh installs it)")
    caps = sorted(glob.glob(os.path.join(CAPTURES, "*.pcap")))
    t.check(len(caps) >= 9, "%d captures of Linux rxe" % len(caps))
    total = 0
    for c in caps:
        n = compare(c)
        p = t.run([PCAP, "-q", c], check_rc=False)
        t.check(p.returncode == 0 and " 0 bad ICRC, 0 malformed" in p.stdout,
                "%s: %d frames decode as tshark does, ICRC good"
                % (os.path.basename(c), n))
        total += n
    t.check(total > 300, "%d real rxe frames compared field by field" % total)

    d = tempfile.mkdtemp(prefix="dprt-wire-")
    try:
        gen = os.path.join(d, "gen.pcap")
        t.run([PCAP, "--generate", gen])
        n = compare(gen, skip_opcodes=(0x81, 0xc0, 0xc1))
        t.check(n == 37 * 3, "%d built frames (every opcode but CNP and "
                "dprdma's SACK and PURGE, over IPv4, IPv6, VLAN) decode into the "
                "fields they were built from" % n)
        v = t.run(["tshark", "-r", gen, "-V"] + TSHARK_OPTS).stdout
        bad = [x for x in v.splitlines() if "Malformed" in x or
               "Expert Info (Error" in x or "Bad checksum" in x or
               "[Checksum Status: Bad]" in x]
        t.check(not bad, "tshark -V: no malformed frame, no checksum error "
                "(%s)" % bad[:3])
        t.check(v.count("Invariant CRC") == 37 * 3 and
                v.count("Opcode: Unknown (129)") == 3 and
                v.count("Opcode: Unknown (192)") == 3,
                "every frame decoded as RoCEv2; CNP and SACK (a "
                "manufacturer-specific opcode) unknown to tshark 4.0")

        # a flipped payload bit and a lying IP length are caught
        src = os.path.join(CAPTURES, "write_bw.pcap")
        with open(src, "rb") as f:
            data = bytearray(f.read())
        bad_icrc = os.path.join(d, "bad_icrc.pcap")
        data[24 + 16 + 200] ^= 0x01     # inside frame 1's payload
        with open(bad_icrc, "wb") as f:
            f.write(data)
        p = t.run([PCAP, bad_icrc], check_rc=False)
        t.check(p.returncode == 1 and "icrc=BAD" in p.stdout and
                "1 bad ICRC" in p.stdout, "a flipped payload bit: icrc=BAD, "
                "exit 1")
        data[24 + 16 + 200] ^= 0x01
        data[24 + 16 + 14 + 3] ^= 0x40  # frame 1's IPv4 total length
        bad_len = os.path.join(d, "bad_len.pcap")
        with open(bad_len, "wb") as f:
            f.write(data)
        p = t.run([PCAP, bad_len], check_rc=False)
        t.check(p.returncode == 1 and "MALFORMED" in p.stdout and
                "1 malformed" in p.stdout, "a wrong IP length: MALFORMED, "
                "exit 1")
        p = t.run([PCAP, os.path.join(d, "missing.pcap")], check_rc=False)
        t.check(p.returncode == 2 and "missing.pcap" in p.stderr,
                "an unreadable file: exit 2, named")
    finally:
        shutil.rmtree(d)
    t.log("PASS")


if __name__ == "__main__":
    main()
