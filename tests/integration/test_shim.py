#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""The verbs shim: local clients of two dprdmad joined by net_memif.

  libdprdma  dprdma-shim-test (a libdprdma client with a context on each
             daemon): every RC operation 0 B - 1 MiB with the data checked,
             polling and then sleeping on completion channels; another
             client's lkey, an MR without remote write, a file mapping, a UD
             QP, an oversized QP: refused and nothing touched; QPs and MRs
             until the per-client quotas ([limits] client_qps = 256,
             client_mrs = 1024 in its config), then ENOMEM; a client
             that stops consuming its CQ (CQ_ERR, its QP to ERR, QP_FATAL)
             between two healthy runs; then hostile
             control messages on the socket (garbage, wrong magic/version,
             unknown ops, requests before open, other clients' handles,
             unsealed or missing memory): each refused with an errno and
             counted, the daemon and a client's objects unharmed.
  dropin     the unmodified Debian programs with LD_LIBRARY_PATH at the
             drop-in libibverbs: ibv_devices, ibv_devinfo, ibv_rc_pingpong
             (sizes below, at and above the MTU, events, the ibv_wr API,
             and with both ends on one daemon)
             and perftest's bandwidth and latency tests; outputs parsed, and
             the daemons' WQE counters, in all and per QP (the line dprdmad
             logs when a QP goes), must match the iterations reported.
  death      100 clients killed with SIGKILL while they have WQEs posted
             and a WRITE stream into their memory runs, next to a healthy
             client whose traffic is checked throughout; then one client
             takes every QP of the port and every connection (ENOMEM and
             EUSERS, each logged with its limit) while the healthy one
             goes on: daemons alive, every object count back to its
             baseline."""

import errno
import json
import os
import random
import re
import signal
import socket
import shutil
import struct
import subprocess
import sys
import time

import dprtest as t

PID = os.getpid()
MEMIF = "/tmp/dprt-shim-%d.sock" % PID
PA, PB = "dprt-sa-%d" % PID, "dprt-sb-%d" % PID
SHIM_TEST = os.environ.get("DPR_SHIM_TEST", "build/tests/dprdma-shim-test")
DROPIN = os.environ.get("DPR_DROPIN", "build/drop-in")
MODE = sys.argv[1] if len(sys.argv) > 1 else "libdprdma"
DAEMONS = {}


def daemon(prefix, role, ip, ip6, small_limits):
    # payload attached from the MR even on memif (which copies frames, so
    # the default copies them): the MR mappings the frames in flight hold
    # are what mr_mappings_released() checks
    conf = "/tmp/dprt-shim-attach-%s.conf" % prefix
    with open(conf, "w") as f:
        f.write("[engine]\ntx_payload = attach\n")
        if small_limits:
            # A: the quotas the tests fill, lower than the defaults; B
            # keeps the defaults (a client of many QPs: many())
            f.write("[limits]\nqps = 4096\nclient_qps = 256\nclient_mrs = 1024\n")
    return t.memif_daemon(prefix, role, ip, MEMIF,
                          extra=["-f", conf, "--ipv6", ip6])


def stats(prefix):
    r = t.telemetry(prefix, "/dprdma/shim/stats")
    if r is None:
        t.fail("%s: no /dprdma/shim/stats" % prefix)
    return r


def run_client(args, timeout=120):
    r = subprocess.run([SHIM_TEST] + args, capture_output=True, text=True,
                       timeout=timeout)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    return r


# ------------------------------------------------------------ libdprdma

def raw_conn(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.settimeout(5)
    return s


def shm_header_version():
    """DPR_SHM_VERSION as lib/shm/dpr_shm.h defines it (the test speaks
    the protocol of the tree it tests)."""
    root = os.environ.get("DPR_SOURCE_ROOT",
                          os.path.join(os.path.dirname(__file__), "..", ".."))
    with open(os.path.join(root, "lib", "shm", "dpr_shm.h")) as f:
        return int(re.search(r"#define DPR_SHM_VERSION (\d+)", f.read()).group(1))


MAGIC, VERSION = 0x31525044, shm_header_version()
OPS = {"open": 1, "query_port": 2, "alloc_pd": 3, "dealloc_pd": 4,
       "reg_mr": 5, "dereg_mr": 6, "create_channel": 7, "destroy_channel": 8,
       "create_cq": 9, "destroy_cq": 10, "create_qp": 11, "modify_qp": 12,
       "query_qp": 13, "destroy_qp": 14, "list_devices": 15}


def msg(op, body=b"", magic=MAGIC, version=VERSION, seq=1):
    m = struct.pack("<IHHIi", magic, version, op, seq, 0) + body
    return m + b"\0" * (256 - len(m))


def ask(s, m, fds=None):
    if fds:
        socket.send_fds(s, [m], fds)
    else:
        s.send(m)
    data = s.recv(4096)
    if len(data) != 256:
        t.fail("an answer of %d bytes, not 256" % len(data))
    magic, version, op, seq, status = struct.unpack("<IHHIi", data[:16])
    return status, data


def hostile_control(sock):
    """Garbage and impersonation on the control socket of daemon A."""
    # the clients of the step before may still be leaving (a socket's
    # close is seen on the daemon's next control poll): wait for them, so
    # the count compared at the end is this step's own
    t.wait_for(lambda: stats(PA)["clients"] == 0, 10,
               "the clients of the step before to leave")
    before = stats(PA)
    # a client with objects of its own, to be left unharmed
    owner = raw_conn(sock)
    st, _ = ask(owner, msg(OPS["open"], struct.pack("<I", 0)))
    t.check(st == 0, "owner: open")
    st, d = ask(owner, msg(OPS["alloc_pd"]))
    t.check(st == 0, "owner: alloc_pd")
    pd = struct.unpack("<I", d[16:20])[0]
    st, d = ask(owner, msg(OPS["create_cq"], struct.pack("<Ii", 16, -1)))
    t.check(st == 0, "owner: create_cq")
    cq = struct.unpack("<I", d[16:20])[0]
    # its rings, as an operator sees them: the client with our pid holds
    # one CQ, with nothing produced or consumed yet
    mine = [cid for cid, c in t.telemetry(PA, "/dprdma/shim/clients").items()
            if c["pid"] == PID]
    detail = t.telemetry(PA, "/dprdma/shim/client,%s" % mine[-1])
    t.check(len(mine) >= 1 and detail["qps"] == [] and len(detail["cqs"]) == 1
            and re.match(r"cq %d cqe \d+ prod 0 cons 0 " % cq, detail["cqs"][0]),
            "/dprdma/shim/client shows the owner's CQ ring: %r" % detail)
    t.check(t.telemetry(PA, "/dprdma/shim/client,999999") is None and
            t.telemetry(PA, "/dprdma/shim/client,x") is None,
            "/dprdma/shim/client refuses an unknown client id and garbage")

    h = raw_conn(sock)
    cases = [
        ("a short datagram", b"\x01\x02\x03", -71),
        ("wrong magic", msg(OPS["open"], magic=0xdeadbeef), -71),
        ("another version", msg(OPS["open"], version=99), -71),
        ("unknown op", msg(200), -71),
        ("op 0", msg(0), -71),
        ("a request before open", msg(OPS["alloc_pd"]), -71),
    ]
    for what, m, want in cases:
        h.send(m)
        data = h.recv(4096)
        st = struct.unpack("<i", data[12:16])[0] if len(data) >= 16 else None
        t.check(st == want, "%s: refused with %s (got %s)" % (what, want, st))
    st, _ = ask(h, msg(OPS["open"], struct.pack("<I", 7)))
    t.check(st == -19, "open of a device that does not exist: ENODEV (%d)" % st)
    st, _ = ask(h, msg(OPS["open"], struct.pack("<I", 0)))
    t.check(st == 0, "hostile client: open")
    st, _ = ask(h, msg(OPS["open"], struct.pack("<I", 0)))
    t.check(st == -16, "a second open on one connection: EBUSY (%d)" % st)
    # the owner's handles mean nothing on another connection
    for what, op, handle in [("dealloc_pd", "dealloc_pd", pd),
                             ("destroy_cq", "destroy_cq", cq),
                             ("destroy_qp", "destroy_qp", 1),
                             ("query_qp", "query_qp", 2),
                             ("dereg_mr", "dereg_mr", 3),
                             ("huge handle", "destroy_cq", 0xffffffff),
                             ("handle 0", "dealloc_pd", 0)]:
        st, _ = ask(h, msg(OPS[op], struct.pack("<I", handle)))
        t.check(st == -22, "%s of a handle it does not own: EINVAL (%d)"
                % (what, st))
    st, d = ask(h, msg(OPS["alloc_pd"]))
    hpd = struct.unpack("<I", d[16:20])[0]
    # registrations: no memory, memory that can shrink, out of range
    body = struct.pack("<IIQQQQQ", hpd, 1, 0x1000, 4096, 0, 4096, 0)
    st, _ = ask(h, msg(OPS["reg_mr"], body))
    t.check(st == -22, "reg_mr without memory: EINVAL (%d)" % st)
    fd = os.memfd_create("hostile", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, 8192)
    st, _ = ask(h, msg(OPS["reg_mr"], body), [fd])
    t.check(st == -9, "reg_mr of memory that may shrink: EBADF (%d)" % st)
    import fcntl
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
    for what, b in [
            ("past the end", struct.pack("<IIQQQQQ", hpd, 1, 0x1000, 4096, 8192, 4096, 0)),
            ("unaligned offset", struct.pack("<IIQQQQQ", hpd, 1, 0x1000, 4096, 100, 4096, 0)),
            ("length past the mapping", struct.pack("<IIQQQQQ", hpd, 1, 0x1000, 8192, 0, 4096, 0)),
            ("offset wrapping", struct.pack("<IIQQQQQ", hpd, 1, 0x1000, 4096, (1 << 64) - 4096, 8192, 0)),
            ("zero length", struct.pack("<IIQQQQQ", hpd, 1, 0x1000, 0, 0, 4096, 0)),
            ("bad access bits", struct.pack("<IIQQQQQ", hpd, 1 << 12, 0x1000, 4096, 0, 4096, 0)),
            ("remote write without local write", struct.pack("<IIQQQQQ", hpd, 2, 0x1000, 4096, 0, 4096, 0)),
            ("the owner's PD", struct.pack("<IIQQQQQ", pd + 100, 1, 0x1000, 4096, 0, 4096, 0))]:
        st, _ = ask(h, msg(OPS["reg_mr"], b), [fd])
        t.check(st == -22, "reg_mr %s: EINVAL (%d)" % (what, st))
    st, d = ask(h, msg(OPS["reg_mr"], body), [fd])
    t.check(st == 0, "a sealed, in-range registration works (%d)" % st)
    os.close(fd)
    # channel with something that is not a pipe; QPs of other types
    sfd = os.open("/dev/null", os.O_WRONLY)
    st, _ = ask(h, msg(OPS["create_channel"]), [sfd])
    t.check(st == -9, "a completion channel that is not a pipe: EBADF (%d)" % st)
    os.close(sfd)
    st, d = ask(h, msg(OPS["create_cq"], struct.pack("<Ii", 0, -1)))
    t.check(st == -22, "create_cq of 0 entries: EINVAL (%d)" % st)
    st, d = ask(h, msg(OPS["create_cq"], struct.pack("<Ii", 8, 5)))
    t.check(st == -22, "create_cq on a channel it does not have: EINVAL (%d)" % st)
    st, d = ask(h, msg(OPS["create_cq"], struct.pack("<Ii", 8, -1)))
    hcq = struct.unpack("<I", d[16:20])[0]
    for what, qpt, want in [("XRC", 9, -95), ("raw packet", 8, -95)]:
        b = struct.pack("<IIIII IIIII", hpd, hcq, hcq, qpt, 0, 16, 16, 1, 1, 0)
        st, _ = ask(h, msg(OPS["create_qp"], b))
        t.check(st == want, "a %s QP: EOPNOTSUPP (%d)" % (what, st))
    b = struct.pack("<IIIII IIIII", hpd, hcq, hcq, 4, 0, 16, 16, 1, 1, 0)
    st, d = ask(h, msg(OPS["create_qp"], b))
    t.check(st == 0, "a UD QP is made (%d)" % st)
    if st == 0:
        hud = struct.unpack("<I", d[16:20])[0]
        st, _ = ask(h, msg(OPS["destroy_qp"], struct.pack("<I", hud)))
        t.check(st == 0, "and destroyed (%d)" % st)
    b = struct.pack("<IIIII IIIII", hpd, hcq, hcq, 2, 0, 1 << 20, 16, 1, 1, 0)
    st, _ = ask(h, msg(OPS["create_qp"], b))
    t.check(st == -22, "a QP over the WR limit: EINVAL (%d)" % st)
    b = struct.pack("<IIIII IIIII", hpd, cq, cq, 2, 0, 16, 16, 1, 1, 0)
    st, _ = ask(h, msg(OPS["create_qp"], b))
    t.check(st == -22 or cq != hcq, "a QP on the owner's CQ handle refused "
            "unless that number is its own (%d)" % st)
    # a flood of garbage in batches of 50 (a client that does not read its
    # answers loses them: the daemon never blocks on it), then it closes
    # without cleaning up
    got = 0
    h.settimeout(5)
    for batch in range(40):
        for i in range(50):
            h.send(os.urandom(random.choice([1, 16, 255, 256, 257, 1000])))
        try:
            for i in range(50):
                data = h.recv(4096)
                if struct.unpack("<i", data[12:16])[0] == -71:
                    got += 1
        except (socket.timeout, OSError):
            break
    t.check(got == 2000, "every garbage datagram refused with EPROTO "
            "(%d of 2000)" % got)
    h.close()
    # the owner's objects still work
    st, _ = ask(owner, msg(OPS["dealloc_pd"], struct.pack("<I", pd)))
    t.check(st == -16 or st == 0, "owner's PD still there (%d)" % st)
    st, _ = ask(owner, msg(OPS["destroy_cq"], struct.pack("<I", cq)))
    t.check(st == 0, "owner's CQ destroyed by its owner (%d)" % st)
    owner.close()
    t.wait_for(lambda: stats(PA)["clients"] == before["clients"], 10,
               "the hostile client and the owner to be released")
    after = stats(PA)
    t.check(after["bad_messages"] - before["bad_messages"] >= 2000,
            "garbage counted as bad messages (%d)" %
            (after["bad_messages"] - before["bad_messages"]))
    t.check(after["refused"] > before["refused"], "refusals counted")
    for k in ("clients", "verbs_pds", "verbs_mrs", "verbs_cqs", "verbs_qps"):
        t.check(after[k] == before[k], "%s back to %d after the hostile client "
                "left (%d)" % (k, before[k], after[k]))


def many(sock, n=4200):
    """Two clients of B with N QPs each (past a client's first 4,096
    doorbell slots), QP i of one connected to QP i of the other: a WRITE
    each way on every pair lands; what the QPs cost the daemon while they
    are there (an idle RC QP: at most 4 KiB beyond its queues); everything
    given back."""
    base = stats(PB)
    tbase = t.telemetry(PB, "/dprdma/transport/stats,0")
    p = subprocess.Popen([SHIM_TEST, "many", sock, str(n)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, DPR_MANY_HOLD="1"))
    out, j = [], {}
    for line in p.stdout:
        out.append(line)
        if line.startswith("{"):
            j = json.loads(line)
            break
    if j:
        tr, sh = t.telemetry(PB, "/dprdma/transport/stats,0"), stats(PB)
        nq = tr["qps"] - tbase["qps"]
        per = (tr["qp_bytes"] - tbase["qp_bytes"] + sh["qp_bytes"] -
               base["qp_bytes"]) / max(nq, 1)
        queues = (tr["qp_queue_bytes"] - tbase["qp_queue_bytes"]) / max(nq, 1)
        # (B's QPs: the many client's, and a few others' of this test
        # still going)
        t.check(2 * n <= nq <= 2 * n + 16 and per <= 4096,
                "%d QPs: %.0f bytes each in dprdmad beyond their queues "
                "(%.0f of queues: 2 send, 1 receive WQE)" % (nq, per, queues))
    try:
        rest, _ = p.communicate("\n", timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        rest, _ = p.communicate()
    sys.stdout.write("".join(out) + rest)
    t.log("many: %r" % j)
    t.check(p.returncode == 0 and "FAIL" not in "".join(out) + rest and
            j.get("qps") == 2 * n,
            "two clients of %d QPs each, a WRITE each way on every one of "
            "the %d pairs, data checked (made in %.1f s, connected in %.1f "
            "s)" % (n, n, j.get("create_s", 0), j.get("connect_s", 0)))
    t.wait_for(lambda: stats(PB)["verbs_qps"] == base["verbs_qps"], 30,
               "B: the %d QPs given back" % (2 * n))


def test_libdprdma(sa, sb):
    # a client that stops consuming its CQ between two healthy runs
    for mode in (["ops", sa, sb], ["ops", sa, sb, "events"],
                 ["isolation", sa, sb], ["memory", sa, sb], ["srq", sa, sb],
                 ["overflow", sa, sb],
                 ["ops", sa, sb]):
        r = run_client(mode)
        t.check(r.returncode == 0 and "FAIL" not in r.stdout,
                "dprdma-shim-test %s passes" % " ".join(mode[:1] + mode[3:]))
    many(sb)
    # two QPs of one daemon connected to each other: the frames loop back
    # inside its worker (two clients on one box)
    lb0 = t.telemetry(PA, "/dprdma/port/stats,0")["loopback_packets"]
    r = run_client(["bench", sa, "1", "4096", "16"])
    m = re.search(r'"messages": (\d+).*"errors": (\d+)', r.stdout)
    lb1 = t.telemetry(PA, "/dprdma/port/stats,0")["loopback_packets"]
    t.check(r.returncode == 0 and m is not None and int(m.group(1)) > 100 and
            int(m.group(2)) == 0 and lb1 - lb0 >= int(m.group(1)) * 4,
            "loopback: QPs of one daemon connected to each other, %s WRITEs "
            "of 4 KiB completed without error, %d frames looped back"
            % (m.group(1) if m else "?", lb1 - lb0))
    s = stats(PB)
    t.check(s["channel_signals"] > 0, "completion channels signalled (%d)"
            % s["channel_signals"])
    s = stats(PA)
    t.check(s["cq_overflows"] == 1 and s["async_events"] >= 2,
            "A: one CQ overflow, its CQ_ERR and QP_FATAL events (%d, %d)"
            % (s["cq_overflows"], s["async_events"]))
    ring_scribbled(sa, sb)
    hostile_control(sa)
    mr_mappings_released(sa, DAEMONS["a"], "zero copy on")
    # the same with every payload copied ([engine] zero_copy = 0): the
    # transport never holds the memory, the MR's owner is called at once
    conf = "/tmp/dprt-shim-%d.conf" % PID
    with open(conf, "w") as f:
        f.write("[engine]\nzero_copy = 0\n")
    pc = "dprt-sc-%d" % PID
    c = t.Daemon(["-l", "0-1", "--no-pci", "--no-huge", "-m", "256",
                  "--file-prefix", pc, "--vdev", "net_null0", "--", "-f", conf,
                  "--ip", "10.81.0.9/24", "--idle", "yield"], prefix=pc)
    try:
        mr_mappings_released(c.socket, c, "zero copy off")
    finally:
        t.check(c.stop() == 0, "the third daemon stops cleanly")
        os.unlink(conf)


def ring_scribbled(sa, sb):
    """A client moves its send ring's producer a lap past the consumer: the
    worker breaks that QP off its rings, counted once, and goes on (the
    client's own checks: a WRITE into that QP's memory still lands)."""
    before = stats(PA)["ring_index_errors"]
    p = subprocess.Popen([SHIM_TEST, "scribble", sa, sb], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        t.check(line.strip() == "SCRIBBLED", "scribble: the producer moved (%r)" % line)
        t.wait_for(lambda: stats(PA)["ring_index_errors"] > before, 10,
                   "the worker to find the scribbled ring")
        p.stdin.write("go\n")
        p.stdin.flush()
        out = p.stdout.read()
    finally:
        p.stdin.close()         # (a client still waiting reads EOF: exits)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    t.check(p.returncode == 0 and "FAIL" not in out,
            "dprdma-shim-test scribble passes: %s" % out.strip().splitlines()[-1:])
    n = stats(PA)["ring_index_errors"] - before
    t.check(n == 1, "A: the send ring whose producer its client moved a lap "
            "past the consumer broken off, once (%d)" % n)


def mr_mappings_released(sock, d, what):
    """200 MRs registered and deregistered: the daemon maps none of the
    client's memory afterwards (each mapping went back with its MR)."""
    def mapped():
        with open("/proc/%d/maps" % d.proc.pid) as f:
            return sum("dprdma-buf" in x for x in f)

    p = subprocess.Popen([SHIM_TEST, "mrloop", sock, "200"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    held = mapped()
    p.stdin.write("quit\n")
    p.stdin.flush()
    t.check(p.wait(10) == 0 and '"mrs": 200' in line and held == 0,
            "%s: 200 MRs registered and deregistered, none of the client's "
            "memory still mapped by the daemon (%d mappings)" % (what, held))


# ------------------------------------------------------------- drop-in

def dropin_env(sock, extra=None):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = DROPIN
    env["DPRDMA_SOCKET"] = sock
    env.update(extra or {})
    return env


def listening(port):
    r = subprocess.run(["ss", "-ltnH", "sport = :%d" % port],
                       capture_output=True, text=True)
    return str(port) in r.stdout


PORT = [18600 + PID % 1000]


def pair_run(prog, args, sa, sb, timeout=60, env=None):
    """Server on A, client on B (127.0.0.1): both outputs."""
    PORT[0] += 1
    port = PORT[0]
    pflag = ["-p", str(port)]
    srv = subprocess.Popen(["stdbuf", "-oL", prog] + args + pflag,
                           env=dropin_env(sa, env), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    t.wait_for(lambda: listening(port), 20, "%s server listening" % prog)
    try:
        cli = subprocess.run(["stdbuf", "-oL", prog] + args + pflag +
                             ["127.0.0.1"], env=dropin_env(sb, env),
                             capture_output=True, text=True, timeout=timeout)
        sout, _ = srv.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as e:
        srv.kill()
        sout, _ = srv.communicate()
        got = e.output if isinstance(e.output, str) else (e.output or b"").decode()
        for name, out in (("server", sout), ("client", got)):
            sys.stdout.write("".join("  %s| %s\n" % (name, x)
                                     for x in (out or "").splitlines()))
        t.fail("%s %s: timed out" % (prog, " ".join(args)))
    cout = cli.stdout + cli.stderr
    for name, out in (("server", sout), ("client", cout)):
        sys.stdout.write("".join("  %s| %s\n" % (name, x)
                                 for x in out.splitlines()))
    return srv.returncode, sout, cli.returncode, cout


PERFTEST_CLOCK = re.compile(r"Correlation coefficient r\^2: \S+ < 0\.9")
ERR = re.compile(r"(?i)\b(error|fail|couldn't|unable|cannot)")


def qp_send_wqes(daemon_, out, since):
    """The send WQEs dprdmad counted for the QPs a program printed as its
    own ("local address: ... QPN 0x..."), from the line it logs when a
    QP is destroyed (the last such line of each QPN after line @since)."""
    qpns = [int(x, 16) for x in
            re.findall(r"local address:.*?QPN (0x[0-9a-fA-F]+)", out)]
    total = 0
    for qpn in qpns:
        pat = re.compile(r"QP 0x%06x destroyed: (\d+) send WQEs" % qpn)
        found = None

        def seen():
            nonlocal found
            for line in reversed(daemon_.lines[since:]):
                m = pat.search(line)
                if m:
                    found = int(m.group(1))
                    return True
            return False
        t.wait_for(seen, 10, "dprdmad's record of QP 0x%x" % qpn)
        total += found
    return len(qpns), total


def pingpong_ok(prog, args, sa, sb, gid=1):
    """One of the ibv_*_pingpong programs, server on A: both sides did -n
    iterations without an error line and exit 0."""
    what = "%s -g %d %s" % (prog, gid, " ".join(args))
    n = int(args[args.index("-n") + 1])
    srv_rc, sout, cli_rc, cout = pair_run(prog, ["-g", str(gid)] + args, sa, sb)
    for side, out in (("server", sout), ("client", cout)):
        m = re.search(r"(\d+) iters in [\d.]+ seconds", out)
        t.check(m is not None and int(m.group(1)) == n and not ERR.search(out),
                "%s: %s did %d iterations" % (what, side, n))
    t.check(srv_rc == 0 and cli_rc == 0, "%s: both exit 0" % what)


def test_dropin(sa, sb):
    r = subprocess.run(["ibv_devices"], env=dropin_env(sa),
                       capture_output=True, text=True)
    t.check(r.returncode == 0 and re.search(r"dprdma0\s+[0-9a-f]{16}", r.stdout),
            "ibv_devices lists dprdma0 with its GUID")
    r = subprocess.run(["ibv_devinfo", "-v"], env=dropin_env(sa),
                       capture_output=True, text=True)
    out = r.stdout
    for what, pat in [("hca_id", r"hca_id:\s+dprdma0"),
                      ("port active", r"state:\s+PORT_ACTIVE"),
                      ("Ethernet", r"link_layer:\s+Ethernet"),
                      ("active MTU 1024", r"active_mtu:\s+1024"),
                      ("GID 0 link-local", r"GID\[\s*0\]:\s+fe80::.*RoCE v2"),
                      ("GID 1 IPv4", r"GID\[\s*1\]:\s+::ffff:10\.82\.0\.1, RoCE v2"),
                      ("GID 2 IPv6", r"GID\[\s*2\]:\s+fd82::1, RoCE v2")]:
        t.check(r.returncode == 0 and re.search(pat, out), "ibv_devinfo: " + what)
    # the extended CQ, AHs from completions, ibv_create_srq_ex, the refusals
    vt = os.environ.get("DPR_VERBS_TEST", "build/tests/dprdma-verbs-test")
    if not os.path.exists(vt):
        t.fail("%s missing: build first" % vt)
    r = subprocess.run([vt], env=dropin_env(sa), capture_output=True, text=True,
                       timeout=120)
    sys.stdout.write(r.stdout + r.stderr)
    t.check(r.returncode == 0 and "verbs-test: 0 failures" in r.stdout,
            "dprdma-verbs-test: ibv_create_cq_ex and the ibv_wc_read_* poll, "
            "UD with ibv_create_ah_from_wc, ibv_query_qp's Q_Key, "
            "ibv_create_srq_ex, what is refused, and SIGALRM ending "
            "ibv_get_cq_event and ibv_get_async_event with EINTR")
    r = subprocess.run(["ibv_devices"], env=dropin_env("/tmp/nowhere-%d" % PID),
                       capture_output=True, text=True)
    t.check(r.returncode == 0 and "dprdma" not in r.stdout,
            "no daemon: no devices, no crash")

    # ibv_rc_pingpong: sizes below, at, above the path MTU; events; the
    # ibv_wr API; data checked (-c). The events run is long: a lost CQ
    # wake-up (the arm/produce race) hung it about once in 2,500 waits
    def client_wakeups(key="client_wakeups"):
        return sum(t.telemetry(p, "/dprdma/lcore/stats,1")[key]
                   for p in (PA, PB))

    woke0 = client_wakeups()
    rx_woke0 = client_wakeups("rx_wakeups")
    for args in (["-s", "64", "-n", "200", "-c"], ["-s", "1024", "-n", "200"],
                 ["-s", "4096", "-n", "100", "-c"], ["-s", "65536", "-n", "50"],
                 ["-e", "-s", "4096", "-n", "1000"], ["-N", "-s", "1024", "-n", "100"]):
        sb0, sa0 = stats(PB), stats(PA)
        since = len(DAEMONS["b"].lines)
        srv_rc, sout, cli_rc, cout = pair_run("ibv_rc_pingpong", ["-g", "1"] + args, sa, sb)
        n = int(args[args.index("-n") + 1])
        for side, out in (("server", sout), ("client", cout)):
            m = re.search(r"(\d+) iters in [\d.]+ seconds", out)
            t.check(m is not None and int(m.group(1)) == n and not ERR.search(out),
                    "ibv_rc_pingpong %s: %s did %d iterations" %
                    (" ".join(args), side, n))
        t.check(srv_rc == 0 and cli_rc == 0, "ibv_rc_pingpong %s: both exit 0"
                % " ".join(args))
        nq, wq = qp_send_wqes(DAEMONS["b"], cout, since)
        t.check(nq == 1 and wq == n, "ibv_rc_pingpong %s: dprdmad B's record of "
                "the client's QP: %d send WQEs (%d)" % (" ".join(args), n, wq))
        sa1, sb1 = stats(PA), stats(PB)
        # each side sends n messages
        for p, s0, s1 in (("A", sa0, sa1), ("B", sb0, sb1)):
            t.check(s1["send_wqes"] - s0["send_wqes"] == n,
                    "dprdmad %s took %d send WQEs (%d)" %
                    (p, n, s1["send_wqes"] - s0["send_wqes"]))

    # the yielding workers nap between the messages of a ping-pong: a
    # client that posts meanwhile wakes its worker (lib/shm/dpr_shm.h,
    # Naps) instead of its post waiting for the nap to end
    woke = client_wakeups() - woke0
    t.check(woke > 0, "ibv_rc_pingpong: clients woke their napping workers "
            "%d times" % woke)
    # ... and frames did: memif rings the receive queue of a napping
    # worker (lib/engine/dpr_rxwake.c) instead of the frame waiting for
    # the nap to end
    rx_woke = client_wakeups("rx_wakeups") - rx_woke0
    t.check(rx_woke > 0, "ibv_rc_pingpong: frames woke their napping workers "
            "%d times" % rx_woke)

    # UD: ibv_ud_pingpong (address handles, the GRH in front of every
    # receive), small, at the port MTU, with events; then both ends on one
    # daemon
    for args, same in ((["-s", "64", "-n", "200"], False),
                       (["-s", "1024", "-n", "200"], False),
                       (["-e", "-s", "512", "-n", "200"], False),
                       (["-s", "1024", "-n", "100"], True)):
        what = "ibv_ud_pingpong %s%s" % (" ".join(args), " (one daemon)" if same else "")
        n = int(args[args.index("-n") + 1])
        tb0 = t.telemetry(PB, "/dprdma/transport/stats,0")
        srv_rc, sout, cli_rc, cout = pair_run("ibv_ud_pingpong", ["-g", "1"] + args,
                                              sa, sa if same else sb)
        for side, out in (("server", sout), ("client", cout)):
            m = re.search(r"(\d+) iters in [\d.]+ seconds", out)
            t.check(m is not None and int(m.group(1)) == n and not ERR.search(out),
                    "%s: %s did %d iterations" % (what, side, n))
        t.check(srv_rc == 0 and cli_rc == 0, "%s: both exit 0" % what)
        if not same:
            tb1 = t.telemetry(PB, "/dprdma/transport/stats,0")
            sent = tb1["ud_sent"] - tb0["ud_sent"]
            got = tb1["ud_received"] - tb0["ud_received"]
            t.check(sent == n and got == n and tb1["bad_qkey"] == tb0["bad_qkey"],
                    "%s: dprdmad B sent %d datagrams and received %d (%d, %d)"
                    % (what, n, n, sent, got))

    # UC: ibv_uc_pingpong below, at and above the path MTU, with events
    for args in (["-s", "64", "-n", "200"], ["-s", "1024", "-n", "200"],
                 ["-s", "4096", "-n", "100"], ["-e", "-s", "4096", "-n", "100"]):
        tb0 = t.telemetry(PB, "/dprdma/transport/stats,0")
        pingpong_ok("ibv_uc_pingpong", args, sa, sb)
        tb1 = t.telemetry(PB, "/dprdma/transport/stats,0")
        t.check(tb1["ack_tx"] == tb0["ack_tx"] and tb1["ack_rx"] == tb0["ack_rx"],
                "ibv_uc_pingpong %s: no ACK either way" % " ".join(args))

    # SRQ: ibv_srq_pingpong, 16 QPs (its default) receiving from one SRQ,
    # below and above the path MTU (a SEND's packets of several QPs
    # interleave), with events, with 4 QPs and a shallow SRQ
    for args in (["-s", "64", "-n", "200"], ["-s", "4096", "-n", "100"],
                 ["-e", "-s", "1024", "-n", "100"],
                 ["-q", "4", "-r", "8", "-s", "1024", "-n", "200"]):
        pingpong_ok("ibv_srq_pingpong", args, sa, sb)

    # both ends on one daemon (the frames loop back inside it)
    srv_rc, sout, cli_rc, cout = pair_run("ibv_rc_pingpong",
                                          ["-g", "1", "-s", "4096", "-n", "200", "-c"],
                                          sa, sa)
    t.check(srv_rc == 0 and cli_rc == 0 and "200 iters" in sout and
            "200 iters" in cout, "ibv_rc_pingpong with both ends on one dprdmad")

    n = 500
    perf = [("ib_write_bw", []), ("ib_read_bw", []), ("ib_send_bw", []),
            ("ib_atomic_bw", ["-A", "FETCH_AND_ADD"]),
            ("ib_atomic_bw", ["-A", "CMP_AND_SWAP"]),
            ("ib_write_bw", ["-q", "4"]), ("ib_write_bw", ["--use_old_post_send"]),
            # System V hugepage segments, attached by the daemon
            ("ib_write_bw", ["--use_hugepages"]), ("ib_read_bw", ["--use_hugepages"]),
            ("ib_send_bw", ["--use_old_post_send", "-s", "4096"]),
            ("ib_write_lat", []), ("ib_read_lat", []), ("ib_send_lat", []),
            # UD: address handles from the exchanged GIDs
            ("ib_send_bw", ["-c", "UD"]), ("ib_send_lat", ["-c", "UD"]),
            # UC: no ACKs
            ("ib_send_bw", ["-c", "UC"]), ("ib_write_bw", ["-c", "UC"]),
            # receives from an SRQ
            ("ib_send_bw", ["--use-srq"]), ("ib_send_bw", ["--use-srq", "-q", "4"])]
    for prog, extra in perf:
        what = "%s %s" % (prog, " ".join(extra))
        for attempt in (1, 2):
            sb0 = stats(PB)
            since = len(DAEMONS["b"].lines)
            srv_rc, sout, cli_rc, cout = pair_run(prog, ["-x", "1", "-n", str(n)] + extra,
                                                  sa, sb)
            # perftest times its own loops to find the CPU's clock and
            # gives up when they scatter (a loaded 2-CPU machine, the
            # sanitizer build): its measurement, not the traffic's
            if attempt == 1 and (srv_rc or cli_rc) and PERFTEST_CLOCK.search(sout + cout):
                t.log("%s: perftest could not measure the CPU clock; again" % what)
                continue
            break
        t.check(srv_rc == 0 and cli_rc == 0, "%s: both exit 0" % what)
        t.check(not ERR.search(cout) and not ERR.search(sout),
                "%s: no error lines" % what)
        m = re.search(r"#bytes\s+#iterations.*\n\s*(\d+)\s+(\d+)\s", cout)
        qps = int(extra[extra.index("-q") + 1]) if "-q" in extra else 1
        t.check(m is not None and int(m.group(2)) == n * qps,
                "%s: %d iterations reported" % (what, n * qps))
        sb1 = stats(PB)
        posted = sb1["send_wqes"] - sb0["send_wqes"]
        t.check(posted == n * qps, "%s: dprdmad B took %d send WQEs (%d)"
                % (what, n * qps, posted))
        nq, wq = qp_send_wqes(DAEMONS["b"], cout, since)
        t.check(nq == qps and wq == n * qps, "%s: dprdmad B's per-QP records "
                "of the client's %d QP(s): %d send WQEs (%d)"
                % (what, qps, n * qps, wq))


def test_dropin_ucx(sa, sb):
    """UCX through the drop-in, unmodified ucx_perftest: UCT over rc_verbs
    (RDMA WRITE and READ zero-copy, active messages) and ud_verbs, and
    UCP's READ and tag matching over them (its wire-up over UD). UCX sees only devices with
    a node under /dev/infiniband (dprdmad makes them: [control]
    dev_nodes), and finds a UD datagram's destination GID in the GRH by
    the packet type ConnectX reports in ibv_wc.sl (dprdma does too)."""
    if shutil.which("ucx_perftest") is None:
        t.fail("ucx_perftest missing (tools/setup.sh installs ucx-utils)")
    t.check(os.path.exists("/dev/infiniband/dprdma0"),
            "dprdmad made /dev/infiniband/dprdma0 for UCX")
    ucp = {"UCX_NET_DEVICES": "dprdma0:1", "UCX_TLS": "rc_verbs,ud_verbs"}
    for args, env in ((["-t", "put_bw", "-x", "rc_verbs", "-D", "zcopy", "-s", "65536",
                        "-n", "200"], None),
                      (["-t", "am_bw", "-x", "rc_verbs", "-D", "bcopy", "-s", "1024",
                        "-n", "2000"], None),
                      # RDMA READ: what UCX's rendezvous (MPI's large
                      # messages) uses by default
                      (["-t", "get", "-x", "rc_verbs", "-D", "zcopy", "-s", "65536",
                        "-n", "200"], None),
                      (["-t", "ucp_get", "-s", "65536", "-n", "200"], ucp),
                      (["-t", "am_lat", "-x", "ud_verbs", "-n", "200"], None),
                      (["-t", "tag_bw", "-s", "65536", "-n", "200"], ucp),
                      (["-t", "tag_lat", "-s", "8", "-n", "200"],
                       dict(ucp, UCX_TLS="ud_verbs"))):
        if "-x" in args:
            args = args + ["-d", "dprdma0:1"]
        n = int(args[args.index("-n") + 1])
        tb0 = t.telemetry(PB, "/dprdma/transport/stats,0")
        srv_rc, sout, cli_rc, cout = pair_run("ucx_perftest", args, sa, sb, env=env)
        what = "ucx_perftest %s%s" % (" ".join(args), " (%s)" % env["UCX_TLS"]
                                      if env else "")
        m = re.search(r"^Final:\s+(\d+)\s", cout, re.M)
        t.check(srv_rc == 0 and cli_rc == 0 and m is not None and
                int(m.group(1)) == n and "ERROR" not in cout + sout,
                "%s: both exit 0, %d iterations" % (what, n))
        tb1 = t.telemetry(PB, "/dprdma/transport/stats,0")
        moved = {k: tb1[k] - tb0[k] for k in ("req_packets", "ud_sent", "ud_received")}
        t.check(moved["req_packets"] + moved["ud_sent"] > 0,
                "%s: it went through dprdmad B (%r)" % (what, moved))


def test_dropin_port_events(sa):
    """The port's link as verbs events: unmodified ibv_asyncwatch on A
    sees IBV_EVENT_PORT_ERR when B (its memif peer) goes away and
    IBV_EVENT_PORT_ACTIVE when B is back; dprdmad A logs both."""
    w = subprocess.Popen(["stdbuf", "-oL", "ibv_asyncwatch", "-d", "dprdma0"],
                         env=dropin_env(sa), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1)
        since = len(DAEMONS["a"].lines)
        t.check(DAEMONS["b"].stop() == 0, "dprdmad B stops")
        DAEMONS.pop("b")
        t.wait_for(lambda: any("dprdma0 (net_memif0): link down" in x
                               for x in DAEMONS["a"].lines[since:]), 10,
                   "dprdmad A to log its link down")
        DAEMONS["b"] = daemon(PB, "client", "10.82.0.2/24", "fd82::2/64", False)
        t.wait_for(lambda: any("dprdma0 (net_memif0): link up" in x
                               for x in DAEMONS["a"].lines[since:]), 20,
                   "dprdmad A to log its link up again")
        time.sleep(0.5)
    finally:
        w.terminate()
        out = w.communicate(timeout=10)[0]
    sys.stdout.write("".join("  asyncwatch| %s\n" % x for x in out.splitlines()))
    events = re.findall(r"event_type (\w+) \((\d+)\), port (\d+)", out)
    t.check([(e[0], e[2]) for e in events] == [("IBV_EVENT_PORT_ERR", "1"),
                                               ("IBV_EVENT_PORT_ACTIVE", "1")],
            "ibv_asyncwatch: PORT_ERR, then PORT_ACTIVE, on port 1 (%r)" % events)


def port_counters(prefix):
    return t.telemetry(prefix, "/dprdma/port/stats,0")


def test_dropin_ipv6(sa, sb):
    """RoCEv2 over IPv6 GIDs: the link-local one (GID 0, from the MAC)
    and the configured one (GID 2), each daemon finding the other's MAC
    by neighbour discovery; RC, UC, UD and perftest, data checked."""
    pa0, pb0 = port_counters(PA), port_counters(PB)
    for gid, prog, args in ((0, "ibv_rc_pingpong", ["-s", "4096", "-n", "200", "-c"]),
                            (2, "ibv_rc_pingpong", ["-s", "64", "-n", "200", "-c"]),
                            (2, "ibv_rc_pingpong", ["-e", "-s", "65536", "-n", "50"]),
                            (0, "ibv_uc_pingpong", ["-s", "4096", "-n", "100"]),
                            (2, "ibv_ud_pingpong", ["-s", "1024", "-n", "200"]),
                            (0, "ibv_ud_pingpong", ["-s", "64", "-n", "200"]),
                            (2, "ibv_srq_pingpong", ["-q", "4", "-s", "1024", "-n", "100"])):
        pingpong_ok(prog, args, sa, sb, gid=gid)
    n = 500
    for prog, extra in (("ib_write_bw", ["-x", "2"]), ("ib_read_lat", ["-x", "0"]),
                        ("ib_send_bw", ["-x", "0", "-c", "UD"])):
        srv_rc, sout, cli_rc, cout = pair_run(prog, ["-n", str(n)] + extra, sa, sb)
        what = "%s %s" % (prog, " ".join(extra))
        m = re.search(r"#bytes\s+#iterations.*\n\s*(\d+)\s+(\d+)\s", cout)
        t.check(srv_rc == 0 and cli_rc == 0 and not ERR.search(cout + sout) and
                m is not None and int(m.group(2)) == n,
                "%s: both exit 0, %d iterations reported" % (what, n))
        gids = re.findall(r"GID: ([0-9a-f:]+)", cout)
        t.check(len(gids) == 2 and all(not g.startswith("00:00:00:00:00:00:00:00:00:00:255:255")
                                       for g in gids),
                "%s: both ends exchanged IPv6 GIDs (%s)" % (what, gids))
    pa1, pb1 = port_counters(PA), port_counters(PB)
    for who, c0, c1 in (("A", pa0, pa1), ("B", pb0, pb1)):
        t.check(c1["rx_drop_ipv6_malformed"] == c0["rx_drop_ipv6_malformed"] and
                c1["rx_drop_icmp6_malformed"] == c0["rx_drop_icmp6_malformed"],
                "dprdmad %s: no malformed IPv6 or ICMPv6 frame" % who)
    # whoever connects first (the server: it has the client's address
    # first) asks for the other's two addresses; the other answers, and
    # learns the asker from the solicitation (RFC 4861 7.2.3), so never
    # needs to ask back
    d = {k: pa1[k] - pa0[k] + pb1[k] - pb0[k]
         for k in ("nd_solicit_tx", "nd_solicit_rx", "nd_advert_tx", "nd_advert_rx")}
    t.check(d["nd_solicit_tx"] == 2 and d["nd_solicit_rx"] == 2 and
            d["nd_advert_tx"] == 2 and d["nd_advert_rx"] == 2,
            "neighbour discovery: the link-local and the global address each "
            "solicited and advertised once (%r)" % d)


# ---------------------------------------------------------------- death

def exhaust(sock):
    """One client takes every QP of the port (context after context, each
    up to its quota) and then every connection: both refusals are clear
    (ENOMEM below the quota, with the port's limit logged; EUSERS for the
    connection, naming [control] max_clients); the healthy client's QP,
    made before, keeps serving; once given back, a new client gets a QP."""
    # the killed clients' objects go asynchronously: wait until only the
    # healthy client is left
    t.wait_for(lambda: stats(PA)["clients"] == 1, 20,
               "only the healthy client left on A")
    base = stats(PA)
    since = len(DAEMONS["a"].output())
    x = subprocess.Popen([SHIM_TEST, "exhaust", sock], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        line = x.stdout.readline()
        if not line.startswith("{"):
            t.fail("dprdma-shim-test exhaust: %r (exit %s)" % (line, x.wait(10)))
        r = json.loads(line)
        t.log("exhaust: %r" % r)
        s = stats(PA)
        limit = 4096      # daemon(): [limits] qps
        t.check(r["qp_errno"] == errno.ENOMEM and
                r["qps"] + base["verbs_qps"] == limit and
                r["qp_contexts"] == -(-limit // 256) and
                s["verbs_qps"] == limit,
                "QPs taken context after context (256 each) until the "
                "port's %d were all in use, then ENOMEM (%d QPs in %d "
                "contexts, errno %d)" % (limit, r["qps"], r["qp_contexts"],
                                         r["qp_errno"]))
        log = DAEMONS["a"].output()[since:]
        t.check("QP refused: all %d QPs of port 0 are in use" % limit in log
                and s["limit_refused"] > base["limit_refused"],
                "the daemon logs the port's limit and counts the refusal")
        t.check(r["open_errno"] == errno.EUSERS and s["clients"] == 256,
                "connections until [control] max_clients (256 served, %d of "
                "them this client's), then EUSERS (errno %d)"
                % (r["contexts"], r["open_errno"]))
        # each full context's next QP, and the connection, in quota_refused
        t.check(s["quota_refused"] - base["quota_refused"] == r["qp_contexts"],
                "quota refusals counted: %d QP quotas and 1 connection (%d)"
                % (r["qp_contexts"] - 1,
                   s["quota_refused"] - base["quota_refused"]))
        t.wait_for(lambda: "a client refused: 256 connections already "
                   "([control] max_clients)" in DAEMONS["a"].output()[since:],
                   10, "the daemon logs the refusal, naming the key")
        x.stdin.write("release\n")
        x.stdin.flush()
        line = x.stdout.readline()
        t.check(line.startswith("{") and json.loads(line)["after"] == 0,
                "all given back, a new client gets a context and a QP (%r)"
                % line)
        t.check(x.wait(30) == 0, "the exhausting client leaves cleanly")
    finally:
        if x.poll() is None:
            x.kill()
            x.wait()


def test_death(sa, sb):
    base_a, base_b = stats(PA), stats(PB)
    healthy = subprocess.Popen([SHIM_TEST, "stream", sa, sb, "3600"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    time.sleep(1)
    t.check(healthy.poll() is None, "the healthy client runs")
    rnd = random.Random(PID)
    killed = 0
    for i in range(100):
        v = subprocess.Popen([SHIM_TEST, "victim", sa, sb],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        line = v.stdout.readline()
        if "READY" not in line:
            v.kill()
            v.wait()
            t.fail("victim %d did not come up: %r" % (i, line + v.stdout.read()))
        # mid-transfer: WRITEs into its memory run, receives are posted
        time.sleep(rnd.uniform(0.005, 0.05))
        v.send_signal(signal.SIGKILL)
        v.wait()
        killed += 1
        if healthy.poll() is not None:
            break
    t.check(killed == 100, "100 clients killed mid-transfer (%d)" % killed)
    t.check(healthy.poll() is None, "the healthy client kept running")
    exhaust(sa)
    t.check(healthy.poll() is None, "the healthy client kept running while "
            "another took every QP and connection")
    healthy.send_signal(signal.SIGINT)
    try:
        out, _ = healthy.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        healthy.kill()
        out, _ = healthy.communicate()
    sys.stdout.write(out)
    # SIGINT ends the stream after the round it is in; every round checked
    m = re.search(r"stream: (\d+) rounds, 0 failures", out)
    t.check(healthy.returncode == 0 and m is not None and int(m.group(1)) > 100
            and "FAIL" not in out,
            "the healthy client's traffic stayed correct throughout (%s rounds "
            "of WRITE, READ, SEND checked)" % (m.group(1) if m else "?"))
    for p, base in ((PA, base_a), (PB, base_b)):
        def back():
            s = stats(p)
            return all(s[k] == base[k] for k in
                       ("clients", "verbs_pds", "verbs_mrs", "verbs_cqs",
                        "verbs_qps"))
        t.wait_for(back, 20, "%s: clients and verbs objects back to baseline" % p)
        s = stats(p)
        t.log("%s after: %r" % (p, s))
        t.check(s["clients_closed"] - base["clients_closed"] >= 100,
                "%s: %d client deaths handled" % (p, s["clients_closed"] -
                                                    base["clients_closed"]))


def main():
    t.require_root_and_netns()
    if not os.path.exists(SHIM_TEST):
        t.fail("%s missing: build first" % SHIM_TEST)
    if MODE == "dropin" and not os.path.exists(os.path.join(DROPIN, "libibverbs.so.1")):
        t.fail("the drop-in libibverbs is not built (libibverbs-dev missing?)")
    if os.path.exists(MEMIF):
        os.unlink(MEMIF)
    a = b = None
    try:
        a = daemon(PA, "server", "10.82.0.1/24", "fd82::1/64", True)
        b = daemon(PB, "client", "10.82.0.2/24", "fd82::2/64", False)
        sa, sb = a.socket, b.socket
        DAEMONS.update(a=a, b=b)
        if MODE == "libdprdma":
            test_libdprdma(sa, sb)
        elif MODE == "dropin":
            test_dropin(sa, sb)
            test_dropin_ipv6(sa, sb)
            test_dropin_ucx(sa, sb)
            test_dropin_port_events(sa)
        elif MODE == "death":
            test_death(sa, sb)
        else:
            t.fail("unknown mode " + MODE)
    finally:
        # B (the memif client) first: DPDK 22.11's memif can crash when
        # its peer disappears under traffic (B may have been restarted)
        b = DAEMONS.get("b", b)
        rcs = [d.stop() if d else 0 for d in (b, a)]
    t.check(rcs == [0, 0], "both daemons stop cleanly (%r)" % rcs)
    t.log("PASS")


if __name__ == "__main__":
    main()
