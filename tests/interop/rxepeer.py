# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""What the interop tests share: the Linux rxe peer kit (tools/rxe-peer),
its namespace, dprdmad on the guest's bridge, and the wire check."""

import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import dprtest as t  # noqa: E402

KIT = os.path.join(t.SOURCE_ROOT, "tools", "rxe-peer")
NS = "rxepeer"
OURS, GUEST, BRIDGE = "10.99.0.10", "10.99.0.2", "10.99.0.1"
PCAP_TOOL = os.path.join(os.path.dirname(t.DPRDMAD), "dprdma-pcap")
GUEST_TAP = "rxt-p1"
# what a failing interop test keeps: under the build tree, beside meson's
# logs (build/interop-failures/TEST-PID/)
BUILD = os.path.dirname(os.path.dirname(os.path.abspath(t.DPRDMAD)))


def kit(*args, check=True, timeout=300, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return t.run([os.path.join(KIT, args[0])] + list(args[1:]),
                 check_rc=check, timeout=timeout, env=e)


class KitNs:
    """The kit's namespace: net-up.sh makes it, net-down.sh deletes it."""
    name = NS

    def cmd(self, args):
        return ["ip", "netns", "exec", NS] + list(args)


def require_qemu():
    """Skip (77) where the peer cannot run; under CI=true a missing qemu
    is a failure."""
    if os.geteuid() != 0:
        t.skip("needs root")
    if shutil.which("qemu-system-x86_64") is None:
        if os.environ.get("CI") == "true":
            t.fail("qemu-system-x86_64 missing (tools/setup.sh installs it)")
        t.skip("qemu-system-x86_64 not installed")


def boot():
    """Build the image (cached), boot guest p1 on CPU 0 (TCG guests starve
    beside a poller), give dprdmad a veth on the bridge."""
    kit("build.sh", timeout=600)
    teardown()
    kit("net-up.sh")
    kit("run-peer.sh", "p1", GUEST, env={"RXEPEER_CPUS": "0"}, timeout=180)
    kit("host-port.sh", "add", "rxdpdk0")


def teardown():
    kit("stop-peer.sh", "p1", check=False)
    kit("net-down.sh", check=False)


def daemon(prefix, extra):
    """dprdmad on CPU 1, net_af_packet on the bridge's veth, yielding."""
    return t.Daemon(["--lcores", "0@1,1@1", "--no-pci", "--no-huge", "-m", "512",
                     "--file-prefix", prefix, "--vdev",
                     "net_af_packet0,iface=rxdpdk0", "--", "--ip", OURS + "/24",
                     "--idle", "yield"] + extra, ns=KitNs(), prefix=prefix)


# perftest 4.5 times its runs with the TSC, calibrated against
# gettimeofday() by a linear fit; under TCG emulation the fit can fall
# below r^2 0.9, and perftest then prints this and leaves without its
# closing exchange (the other side fails or waits): perftest's own limit
# in an emulated guest, not the data path's
PERFTEST_CLOCK = ("Correlation coefficient r^2", "Can't produce a report")
PERFTEST_CLOCK_TRIES = 3
CLOCK_RETRIES = [0]


def perftest_clock_failed(out):
    """Did a perftest program say it could not calibrate its clock?"""
    return any(x in out for x in PERFTEST_CLOCK)


def perftest_run(go, guest_is_server, what):
    """@go() runs a perftest program on both sides and returns (server rc,
    out, client rc, out). Where the guest's side could not calibrate its
    clock (and only then) it runs again, at most PERFTEST_CLOCK_TRIES
    times in all; counted in CLOCK_RETRIES, logged."""
    for attempt in range(PERFTEST_CLOCK_TRIES):
        src, sout, crc, cout = go()
        guest_out = sout if guest_is_server else cout
        if (src == 0 and crc == 0) or not perftest_clock_failed(guest_out):
            break
        CLOCK_RETRIES[0] += 1
        t.log("%s: the guest's perftest could not calibrate its clock under "
              "emulation (attempt %d of %d)" % (what, attempt + 1,
                                                PERFTEST_CLOCK_TRIES))
    return src, sout, crc, cout


def guest_install(path, name="p1"):
    """Put a program of ours where guest @name sees it (its 9p share, the
    guest's /host; the guest has rdma-core's libraries, the rxe provider
    and libc): returns its path in the guest."""
    work = os.environ.get("RXEPEER_WORK", "/tmp/rxepeer")
    share = os.path.join(os.environ.get("RXEPEER_RUN", os.path.join(work, "run")),
                         name, "share")
    shutil.copy(path, os.path.join(share, os.path.basename(path)))
    return "/host/" + os.path.basename(path)


def stop_clean(d):
    """SIGTERM dprdmad; it must exit 0."""
    t.check(d.stop(signal.SIGTERM) == 0, "dprdmad stops cleanly")


def cleanup(d, *paths):
    """After a test, passed or failed: a daemon still running (not stopped
    cleanly by the test) is killed, the guest and its namespace go, and the
    files the test made are removed."""
    if d is not None:
        d.kill()
    teardown()
    for f in paths:
        if os.path.exists(f):
            os.unlink(f)


def wire_check(prefix, capture, min_frames):
    """Stop the capture on port 0 and check every frame both ways, then
    that no frame was invalid and no error NAK went either way."""
    r = t.telemetry(prefix, "/dprdma/capture/stop,0")
    p = t.run([PCAP_TOOL, "-q", capture], check_rc=False)
    t.log(p.stdout)
    t.check(p.returncode == 0 and " 0 bad ICRC, 0 malformed" in p.stdout and
            r["captured"] > min_frames,
            "wire check: %d frames both ways, every one well formed with a "
            "good ICRC (rxe's and dprdma's)" % r["captured"])
    tr = t.telemetry(prefix, "/dprdma/transport/stats,0")
    t.log("transport: %r" % tr)
    t.check(tr["rx_invalid"] == 0 and tr["nak_err_rx"] == 0 and
            tr["nak_err_tx"] == 0, "no invalid frame, no error NAK either way")
    return tr


def artifacts(test):
    """The folder a failing run of @test keeps its captures in."""
    d = os.path.join(BUILD, "interop-failures", "%s-%d" % (test, os.getpid()))
    os.makedirs(d, exist_ok=True)
    return d


class GuestCapture:
    """Every frame the guest's NIC sends and receives (dumpcap on its tap
    in the kit's namespace: the guest's own view of the wire, before
    dprdmad's port adapter and after the guest's qdisc)."""

    def __init__(self, path):
        self.path = path
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", NS, "dumpcap", "-q", "-i", GUEST_TAP,
             "-w", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # dumpcap writes its file header once it captures
        for _ in range(50):
            if os.path.exists(path) and os.path.getsize(path) > 0:
                break
            time.sleep(0.1)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def guest_state():
    """The guest's QPs (rdma res show qp: PSNs, state) and rxe's counters."""
    p = kit("peer-exec.sh", "-t", "30", "p1",
            "rdma res show qp; rdma statistic show", check=False, timeout=60)
    return ["guest: " + x for x in p.stdout.splitlines()]


def describe(prefix, why):
    """Print both sides' per-QP state (call it while the programs still
    run: once they exit, their QPs are gone)."""
    t.log("state of both sides (%s):" % why)
    for line in t.dprdma_state(prefix) + guest_state():
        t.log("  " + line)
