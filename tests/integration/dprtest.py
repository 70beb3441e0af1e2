# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Helpers for integration tests: network namespaces joined by veth pairs,
a dprdmad running in one of them, and its telemetry socket.

Every name carries the test's PID, so a test never touches what another
(or an earlier, crashed) run created. Traffic stays inside namespaces the
test creates."""

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

SKIP = 77
DPRDMAD = os.environ.get("DPRDMAD", "build/app/dprdmad")
SOURCE_ROOT = os.environ.get("DPR_SOURCE_ROOT", ".")


def _asan():
    try:
        with open(DPRDMAD, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


# the daemon under test is the ASan+UBSan build
ASAN = _asan()


def log(*args):
    print(*args, flush=True)


# called (once, in order) by fail() before the test exits: what a failing
# test should leave behind or print (state of the daemons, captures kept)
_on_fail = []


def on_fail(fn):
    """Run fn() when the test fails (before it exits)."""
    _on_fail.append(fn)


def fail(msg):
    log("FAIL: " + msg)
    while _on_fail:
        fn = _on_fail.pop(0)
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the failure itself matters more
            log("(while describing the failure: %r)" % e)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    log("ok: " + msg)


def skip(msg):
    log("SKIP: " + msg)
    sys.exit(SKIP)


def run(cmd, check_rc=True, timeout=60, **kw):
    """Run a command (list), return CompletedProcess with text output
    (bytes that are not UTF-8 replaced, never an exception)."""
    kw.setdefault("errors", "replace")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       **kw)
    if check_rc and p.returncode != 0:
        fail("%s exited %d: %s %s" % (" ".join(cmd), p.returncode,
                                      p.stdout, p.stderr))
    return p


def require_root_and_netns():
    if os.geteuid() != 0:
        skip("needs root (network namespaces, DPDK ports)")
    if run(["ip", "netns", "list"], check_rc=False).returncode != 0:
        skip("'ip netns' does not work here")
    if not os.path.exists(DPRDMAD):
        fail("dprdmad not built at %s" % DPRDMAD)


class Netns:
    """A network namespace; deleted on close."""

    def __init__(self, name):
        self.name = name
        run(["ip", "netns", "del", name], check_rc=False)
        run(["ip", "netns", "add", name])
        self.sh("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
                "net.ipv6.conf.default.disable_ipv6=1")
        self.sh("ip link set lo up")

    def cmd(self, args):
        return ["ip", "netns", "exec", self.name] + list(args)

    def sh(self, script, check_rc=True, timeout=60):
        return run(self.cmd(["sh", "-c", script]), check_rc=check_rc,
                   timeout=timeout)

    def close(self):
        run(["ip", "netns", "del", self.name], check_rc=False)


def veth_pair(ns_a, if_a, ns_b, if_b):
    """Join two namespaces with a veth pair; both ends up, IPv6 off (the
    kernel's ND/MLD frames would skew the counters)."""
    run(["ip", "link", "add", if_a, "netns", ns_a.name, "type", "veth",
         "peer", "name", if_b, "netns", ns_b.name])
    for ns, ifname in ((ns_a, if_a), (ns_b, if_b)):
        ns.sh("sysctl -qw net.ipv6.conf.%s.disable_ipv6=1; "
              "ip link set %s up" % (ifname, ifname))


def bridged_namespaces(tag):
    """Namespaces A and B, each joined by a veth pair to a Linux bridge in
    a third, R (multicast snooping and IPv6 off): a switch between two
    boxes, where nftables (bridge family) can count, rewrite or mark what
    passes. @return (A, B, R, A's interface, B's interface); close all
    three."""
    pid = os.getpid() % 100000
    na, nb, br = (Netns("dprt%d-%s%s" % (os.getpid(), tag, x)) for x in ("a", "b", "r"))
    ia, ib = "%sa%d" % (tag, pid), "%sb%d" % (tag, pid)
    veth_pair(na, ia, br, "r%sa%d" % (tag, pid))
    veth_pair(nb, ib, br, "r%sb%d" % (tag, pid))
    br.sh("ip link add br0 type bridge mcast_snooping 0 && "
          "ip link set r%sa%d master br0 && ip link set r%sb%d master br0 && "
          "sysctl -qw net.ipv6.conf.br0.disable_ipv6=1 && ip link set br0 up"
          % (tag, pid, tag, pid))
    return na, nb, br, ia, ib


def af_packet_daemon(prefix, ns, ifname, ip, extra=()):
    """dprdmad on an af_packet port on @ifname in @ns, address @ip/len,
    with @extra arguments of its own."""
    return Daemon(["-l", "0-1", "--no-pci", "--no-huge", "-m", "512",
                   "--file-prefix", prefix, "--vdev",
                   "net_af_packet0,iface=%s" % ifname, "--", "--ip", ip,
                   "--idle", "yield"] + list(extra), prefix=prefix, ns=ns)


def stop_and_close(daemons, namespaces):
    """Stop each daemon (None: none) in turn, then close the namespaces.
    @return the daemons' exit statuses (0 for None)."""
    rcs = [d.stop() if d else 0 for d in daemons]
    for ns in namespaces:
        ns.close()
    return rcs


def telemetry_ok(prefix, c):
    """A telemetry command that must succeed: its answer."""
    r = telemetry(prefix, c)
    if r is None or r.get("rc") != 0:
        fail("%s: %s -> %r" % (prefix, c, r))
    return r


def link_stats(ns, ifname):
    """Kernel counters of an interface: dict rx_packets, tx_packets..."""
    out = ns.sh("cat /sys/class/net/%s/statistics/rx_packets "
                "/sys/class/net/%s/statistics/tx_packets" % (ifname, ifname))
    rx, tx = (int(x) for x in out.stdout.split())
    return {"rx_packets": rx, "tx_packets": tx}


class Daemon:
    """dprdmad in a namespace (or in this one), output collected."""

    def __init__(self, args, ns=None, prefix=None, ready=True, timeout=60,
                 wrapper=()):
        """@wrapper: a command that runs dprdmad (valgrind ...), or none."""
        self.prefix = prefix
        args = list(args)
        # each daemon serves verbs clients on its own socket (several run
        # at once in a test); clients find it through DPRDMA_SOCKET
        self.socket = None
        if prefix is not None and "--" in args and "--socket" not in args:
            self.socket = "/tmp/dprt-%s.sock" % prefix
            args[args.index("--") + 1:args.index("--") + 1] = [
                "--socket", self.socket]
        cmd = list(wrapper) + [DPRDMAD] + args
        if ns is not None:
            cmd = ns.cmd(cmd)
        log("start: " + " ".join(cmd))
        # never the drop-in libibverbs for the daemon (meson puts its
        # folder on LD_LIBRARY_PATH for tests; DESIGN.md)
        env = dict(os.environ)
        env.pop("LD_LIBRARY_PATH", None)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     errors="replace", env=env)
        self.lines = []
        self._running = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if ready:
            self.wait_running(timeout)

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            sys.stdout.write("  | " + line)
            if line.startswith("dprdmad: running"):
                self._running.set()
        self._running.set()

    def output(self):
        return "\n".join(self.lines)

    def usage(self):
        """(resident memory in KiB, open descriptors) of the daemon"""
        pid = self.proc.pid
        with open("/proc/%d/status" % pid) as f:
            rss = next(int(x.split()[1]) for x in f if x.startswith("VmRSS:"))
        return rss, len(os.listdir("/proc/%d/fd" % pid))

    def wait_running(self, timeout):
        if not self._running.wait(timeout) or self.proc.poll() is not None:
            self.proc.kill()
            fail("dprdmad did not come up in %d s:\n%s" %
                 (timeout, self.output()))

    def stop(self, sig=signal.SIGINT, timeout=30):
        """Stop with a signal; return the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("dprdmad did not stop within %d s of signal %d" %
                 (timeout, sig))
        self._reader.join(5)
        # under the sanitizer build (tools/test.sh), a report fails the test
        reports = [x for x in self.lines if "Sanitizer" in x or
                   "runtime error:" in x]
        if reports:
            fail("dprdmad: sanitizer report:\n" + "\n".join(self.lines[-60:]))
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def cm_listening(prefix, port):
    """Whether the daemon @prefix's RDMA CM has a listener on @port."""
    return any(" listen " in c and ":%d " % port in c + " "
               for c in telemetry(prefix, "/dprdma/cm/conns"))


def mpi_rank_wrapper(path, sock_a, sock_b, dropin):
    """Write @path: the rank wrapper of doc/clients.rst that puts each MPI
    rank on a box by its local rank (Open MPI's or MPICH's variable):
    even ones through the daemon at @sock_a, odd ones at @sock_b, with
    the drop-in folder @dropin first on the library path."""
    with open(path, "w") as f:
        f.write("""#!/bin/sh
# rank -> box: even local ranks on A, odd on B (doc/clients.rst)
r=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-0}}
if [ $((r %% 2)) -eq 0 ]; then
	DPRDMA_SOCKET=%s
else
	DPRDMA_SOCKET=%s
fi
export DPRDMA_SOCKET LD_LIBRARY_PATH=%s
exec "$@"
""" % (sock_a, sock_b, dropin))
    os.chmod(path, 0o755)
    return path


def memif_daemon(prefix, role, ip, sock, extra=(), lcores="0-1"):
    """A dprdmad on one end of a memif link (role server or client) with a
    yielding worker (tests share 2 cores), serving verbs clients on its own
    socket (Daemon.socket). @lcores: EAL's --lcores (the first the main
    lcore, the second the worker; by default on CPUs 0 and 1)."""
    vdev = "net_memif0,role=%s,socket=%s,socket-abstract=no" % (role, sock)
    # a socket file an earlier process of this PID left: a memif server
    # cannot bind over it
    if role == "server" and os.path.exists(sock):
        os.unlink(sock)
    return Daemon(["--lcores", lcores, "--no-pci", "--no-huge", "-m", "512",
                   "--file-prefix", prefix, "--vdev", vdev, "--", "--ip", ip,
                   "--idle", "yield"] + list(extra), prefix=prefix)


def telemetry_path(prefix):
    return "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix


def client_qpns(prefix, n):
    """The QPNs and first PSNs of the built-in client's n QPs, as ints:
    setup lists them only when they fit one telemetry string (QPNs are
    random), /dprdma/client/qpns pages through them."""
    qpns, psns = [], []
    while len(qpns) < n:
        r = telemetry(prefix, "/dprdma/client/qpns,%d,%d" % (len(qpns), n - len(qpns)))
        if not r or r.get("rc") != 0 or not r.get("count"):
            fail("/dprdma/client/qpns on %s: %r" % (prefix, r))
        qpns += [int(x) for x in r["qpns"].split(",")]
        psns += [int(x) for x in r["psns"].split(",")]
    return qpns, psns


def telemetry(prefix, command, timeout=10):
    """One telemetry command, straight over the socket; returns the value
    of the reply (the dict or list under the command's name)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    s.connect(telemetry_path(prefix))
    hello = json.loads(s.recv(16384).decode())
    s.send(command.encode())
    reply = json.loads(s.recv(hello["max_output_len"]).decode())
    s.close()
    key = command.split(",")[0]
    if key not in reply:
        fail("telemetry %s: unexpected reply %r" % (command, reply))
    return reply[key]


def dprdma_state(prefix):
    """Every QP of port 0 as dprdmad's transport has it, the shim's clients
    with their rings (posted/taken, completions produced/consumed), and the
    port's transport counters."""
    lines = []
    try:
        for qpn in telemetry(prefix, "/dprdma/qps,0"):
            q = telemetry(prefix, "/dprdma/qp,0,%d" % qpn)
            lines.append("dprdma QP %s" % json.dumps(q))
        clients = telemetry(prefix, "/dprdma/shim/clients")
        for cid in clients:
            c = telemetry(prefix, "/dprdma/shim/client,%s" % cid)
            lines.append("dprdma client %s: %s" % (cid, json.dumps(c)))
        lines.append("dprdma transport: %s" % json.dumps(
            telemetry(prefix, "/dprdma/transport/stats,0")))
    except Exception as e:  # noqa: BLE001 - a dead daemon says so itself
        lines.append("dprdma state unavailable: %r" % e)
    return lines


def telemetry_py(prefix, commands):
    """The same through Debian's dpdk-telemetry.py, as a user runs it."""
    p = run(["/usr/bin/python3", "/usr/bin/dpdk-telemetry.py", "-f", prefix],
            input="\n".join(commands) + "\n")
    return [json.loads(line) for line in p.stdout.splitlines()
            if line.startswith("{")]


def parse_ping(out):
    m = re.search(r"(\d+) packets transmitted, (\d+) received", out)
    if not m:
        fail("cannot parse ping output:\n" + out)
    return int(m.group(1)), int(m.group(2))


def parse_arping(out):
    m = re.search(r"Sent (\d+) probes.*\nReceived (\d+) response", out)
    if not m:
        fail("cannot parse arping output:\n" + out)
    return int(m.group(1)), int(m.group(2))


def wait_stderr_line(p, text, timeout, what):
    """Read process @p p's stderr (a text pipe) until a line holds @p text
    (dprdma-gen's "port 0 started": a memif server refuses clients until
    then): what it read."""
    got, end = "", time.monotonic() + timeout
    while time.monotonic() < end:
        if not select.select([p.stderr], [], [], 0.5)[0]:
            continue
        line = p.stderr.readline()
        if line == "":
            fail("%s ended before its port started: %s" % (what, got[-1500:]))
        got += line
        if text in line:
            return got
    fail("%s's port did not start within %d s: %s" % (what, timeout, got[-1500:]))


def wait_for(pred, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.1)
    fail("timed out after %d s waiting for %s" % (timeout, what))
