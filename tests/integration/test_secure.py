#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Secure QPs' policy between two fresh dprdmad over memif (doc/security.rst):
which QPs are secure, which plain, which refused, for each pair of
[security] settings, and that a QP refused says why. Each case on new
daemons, from cold (the boxes learn each other's capabilities on QP1 as
the QPs connect). The built-in clients connect one QP each way and WRITE
64 KiB, checked at the far end.

- both encrypt, one key, required: secure (encrypt), data intact
- auth (opportunistic) and encrypt: secure in the stronger mode, encrypt
- opportunistic with a box without [security]: plain, data intact
- required with a box without [security]: A's QP to ERR, the log says
  the peer runs no secure QPs, the WRITE completes in error
- required on both, two keys: refused, the log names the key; the
  handshake never starts (each sees the other's key is not its own)
- per peer subnet ([security] subnets): required, but opportunistic for
  B's address, with a plain B: plain, not refused; both encrypt with one
  key, but none for B's subnet on A: plain on both (A tells B it runs no
  secure QPs)
- mode without a key, a subnet written wrong: dprdmad refuses to start
  and says what to set

The data path under loss, reordering and corruption with every QP secure
is test_rdma.py --secure --faults; the frame format, tampering and replays
are the unit suite's (sec, rc_property_secure)."""

import os
import time

import dprtest as t

PID = os.getpid()
SOCK = "/tmp/dprt-sec-%d.sock" % PID
PA, PB = "dprt-sa-%d" % PID, "dprt-sb-%d" % PID
K1, K2 = os.urandom(32).hex(), os.urandom(32).hex()
MR = 4 << 20


def conf(prefix, text):
    path = "/tmp/dprt-sec-%s.conf" % prefix
    with open(path, "w") as f:
        f.write(text)
    return path


def daemons(sec_a, sec_b):
    a = t.memif_daemon(PA, "server", "10.81.0.1/24", SOCK,
                       ["-f", conf(PA, sec_a)] if sec_a else [])
    try:
        b = t.memif_daemon(PB, "client", "10.81.0.2/24", SOCK,
                           ["-f", conf(PB, sec_b)] if sec_b else [])
    except BaseException:
        a.kill()
        raise
    return a, b


def cmd(prefix, c):
    r = t.telemetry(prefix, c)
    if r is None or r.get("rc") != 0:
        t.fail("%s: %s -> %r" % (prefix, c, r))
    return r


def connect():
    ca = cmd(PA, "/dprdma/client/setup,1,%d" % MR)
    cb = cmd(PB, "/dprdma/client/setup,1,%d" % MR)
    cmd(PA, "/dprdma/client/connect,0,%s,%s,%s" % (cb["qpns"], cb["psns"], cb["gid_ipv4"]))
    cmd(PB, "/dprdma/client/connect,0,%s,%s,%s" % (ca["qpns"], ca["psns"], ca["gid_ipv4"]))
    return ca, cb


def write(cb, timeout=30):
    """WRITE 64 KiB A -> B: (A's status, crc sent, crc at B)."""
    crc = cmd(PA, "/dprdma/client/fill,0,65536,7")["crc32"]
    cmd(PA, "/dprdma/client/run,0,write,65536,2,0,%d,%d" % (cb["mr_va"], cb["rkey"]))
    end = time.time() + timeout
    while time.time() < end:
        s = cmd(PA, "/dprdma/client/status")
        if not s["active"]:
            return s, crc, cmd(PB, "/dprdma/client/checksum,0,65536")["crc32"]
        time.sleep(0.05)
    t.fail("WRITE not done in %d s: %r" % (timeout, s))


def sec_of(prefix, qpns):
    return t.telemetry(prefix, "/dprdma/qp,0,%d" % int(qpns))


def case(what, sec_a, sec_b, want_a, want_b, refused=None):
    t.log("--- %s" % what)
    a, b = daemons(sec_a, sec_b)
    try:
        ca, cb = connect()
        s, crc, got = write(cb)
        qa, qb = sec_of(PA, ca["qpns"]), sec_of(PB, cb["qpns"])
        ta = t.telemetry(PA, "/dprdma/transport/stats,0")
        if refused is None:
            t.check(s["errors"] == 0 and s["completed"] == 2 and got == crc,
                    "%s: WRITE 64 KiB x 2 completed, B holds what A sent" % what)
            t.check(qa["sec"] == want_a and qb["sec"] == want_b and
                    qa["state"] == "RTS",
                    "%s: A's QP %s, B's %s" % (what, qa["sec"], qb["sec"]))
            if want_a != "none":
                t.check(ta["sec_sealed"] > 0 and ta["sec_opened"] > 0 and
                        ta["sec_drop_auth"] == 0,
                        "%s: A sealed %d frames and opened %d" %
                        (what, ta["sec_sealed"], ta["sec_opened"]))
                ctl = os.path.join(os.path.dirname(t.DPRDMAD), "dprdmactl")
                qps = t.run([ctl, "-p", PA, "qps"]).stdout
                peers = t.run([ctl, "-p", PA, "peers"]).stdout
                t.check(" %s " % want_a in qps and
                        "secure %s, our key" % want_b in peers,
                        "%s: dprdmactl shows the QP %s and the peer's key as "
                        "ours:\n%s%s" % (what, want_a, qps, peers))
            else:
                t.check(ta["sec_sealed"] == 0, "%s: nothing sealed" % what)
        else:
            t.check(s["errors"] > 0 and qa["state"] == "ERR" and
                    ta["sec_refused"] >= 1,
                    "%s: A's QP refused (ERR, %d errors, sec_refused %d)" %
                    (what, s["errors"], ta["sec_refused"]))
            t.wait_for(lambda: refused in a.output(), 10,
                       "A's log to say '%s'" % refused)
            t.check(ta["sec_sealed"] == 0 and
                    t.telemetry(PB, "/dprdma/transport/stats,0")["sec_opened"] == 0,
                    "%s: no frame sealed, none opened" % what)
    finally:
        b.stop()
        a.stop()


def main():
    t.require_root_and_netns()
    enc = "[security]\nmode = encrypt\npolicy = required\npsk = %s\n"
    try:
        case("encrypt, one key, required", enc % K1, enc % K1, "encrypt", "encrypt")
        case("auth and encrypt, one key",
             "[security]\nmode = auth\npsk = %s\n" % K1,
             "[security]\nmode = encrypt\npsk_file = %s\n" %
             conf("key", K1 + "\n"), "encrypt", "encrypt")
        case("opportunistic with a plain box", "[security]\nmode = auth\npsk = %s\n" % K1,
             None, "none", "none")
        case("required with a plain box", enc % K1, None, None, None,
             refused="security required and the peer runs no secure QPs")
        case("required, two keys", enc % K1, enc % K2, None, None,
             refused="security required and the peer holds another pre-shared key")
        case("required, opportunistic for B's address, with a plain box",
             enc % K1 + "subnets = 10.81.0.2/32=opportunistic 10.0.0.0/8=required\n",
             None, "none", "none")
        case("encrypt both, one key, but none for B's subnet on A",
             enc % K1 + "subnets = 10.81.0.0/24=none\n",
             "[security]\nmode = encrypt\npsk = %s\n" % K1, "none", "none")
        p = t.run([t.DPRDMAD, "-l", "0-1", "--no-pci", "--no-huge", "-m", "256",
                   "--file-prefix", "dprt-sk-%d" % PID, "--vdev",
                   "net_memif0,role=server,socket=/tmp/dprt-sk-%d.sock,socket-abstract=no" % PID,
                   "--", "-f", conf("nokey", "[security]\nmode = encrypt\n")],
                  check_rc=False, timeout=60)
        t.check(p.returncode != 0 and "needs psk or psk_file" in p.stderr,
                "mode without a key: dprdmad refuses to start and says what to "
                "set (exit %d: %s)" % (p.returncode, p.stderr.strip()[-200:]))
        p = t.run([t.DPRDMAD, "--check", "-f",
                   conf("nokey", "[security]\nsubnets = 10.1.0.0/16\n")],
                  check_rc=False, timeout=60)
        t.check(p.returncode != 0 and "subnets" in p.stderr and
                "PREFIX/LEN=POLICY" in p.stderr,
                "a subnet without its policy: refused, the form said (exit %d: "
                "%s)" % (p.returncode, p.stderr.strip()[-200:]))
    finally:
        for f in ("/tmp/dprt-sec-%s.conf" % x for x in (PA, PB, "key", "nokey")):
            if os.path.exists(f):
                os.unlink(f)
        if os.path.exists(SOCK):
            os.unlink(SOCK)
    t.log("PASS")


if __name__ == "__main__":
    main()
