#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Configuration mistakes stop dprdmad with exit status 2 and one error
line that names the file, line, section and key (or the command-line
option) and what is expected, before the EAL is initialised; mistakes
only a device can reveal (MTU range, queue count, no port) also exit 2,
after the EAL is cleaned up."""

import os
import re
import shutil
import tempfile

import dprtest as t

PID = os.getpid()


def dprdmad(args, conf=None, timeout=60):
    path = None
    if conf is not None:
        fd, path = tempfile.mkstemp(prefix="dprt-", suffix=".conf")
        os.write(fd, conf.encode())
        os.close(fd)
        args = [a.replace("CONF", path) for a in args]
    p = t.run([t.DPRDMAD] + args, check_rc=False, timeout=timeout)
    if path:
        os.unlink(path)
    return p, path


def expect(args, conf, rc, needles, what):
    p, path = dprdmad(args, conf)
    err = p.stderr.strip()
    lines = [x for x in err.splitlines() if x.startswith("dprdmad: error")]
    needles = [n.replace("CONF", path or "") for n in needles]
    t.check(p.returncode == rc and len(lines) == 1 and
            all(n in lines[0] for n in needles),
            "%s -> exit %d, '%s' (got %d: %s)" %
            (what, rc, "', '".join(needles), p.returncode, err))
    return p


def main():
    if not os.path.exists(t.DPRDMAD):
        t.fail("dprdmad not built")
    prefix = "dprt-conf-%d" % PID
    # a run long ago with this PID left its EAL folder (DPDK keeps them):
    # only what this run leaves counts
    shutil.rmtree("/var/run/dpdk/%s" % prefix, ignore_errors=True)
    eal = "[eal]\nfile_prefix = %s\nhuge = no\n" % prefix

    expect(["-f", "CONF"], eal + "[engine]\nburst = 8\n[bogus]\n", 2,
           ["CONF:6:", "unknown section [bogus]"], "unknown section")
    expect(["-f", "CONF"], eal + "[engine]\nwrkers = 2\n", 2,
           ["CONF:5:", "[engine] has no key 'wrkers'", "known: burst"],
           "unknown key")
    expect(["-f", "CONF"], eal + "[port0]\nip = 10.1.1.300/24\n", 2,
           ["CONF:5:", "[port0] ip = '10.1.1.300/24'", "IPv4 address"],
           "bad IPv4 address")
    expect(["-f", "CONF"], eal + "[port0]\nipv6 = fe80::1/64\n", 2,
           ["CONF:5:", "[port0] ipv6 = 'fe80::1/64'", "link-local",
            "every port has one from its MAC"], "link-local IPv6 address")
    expect(["-f", "CONF"], eal + "[port0]\nipv6 = fd77::1\n", 2,
           ["CONF:5:", "[port0] ipv6 = 'fd77::1'", "prefix length",
            "fd77::1/64"], "IPv6 address without a prefix length")
    expect(["-f", "CONF"], "[eal]\nfile_prefix =\nhuge = no\n", 2,
           ["CONF:2:", "[eal] file_prefix: empty value", "--file-prefix"],
           "empty file_prefix (found by fuzz_config)")
    expect(["-f", "CONF"], eal + "[port0]\nmtu = 65000\n", 2,
           ["CONF:5:", "[port0] mtu = '65000'", "576 to 9216"],
           "MTU out of range")
    expect(["-f", "CONF"], "[eal]\nlcores = 0,97\n", 2,
           ["CONF:2:", "[eal] lcores", "lcore 97", "not available"],
           "lcore not available")
    expect(["-f", "CONF"], eal + "[engine]\nidle = sometimes\n", 2,
           ["CONF:5:", "[engine] idle", "busy, yield"], "bad enum value")
    expect(["-f", "/nonexistent/x.conf"], None, 2,
           ["/nonexistent/x.conf", "cannot open"], "missing file")
    expect(["--ip", "10.0.0.256/24"], None, 2,
           ["command line --ip", "IPv4 address"], "bad --ip")
    expect(["--ipv6", "ff02::1/64"], None, 2,
           ["command line --ipv6", "multicast"], "multicast --ipv6")
    expect(["--idle", "lazy"], None, 2, ["command line --idle", "busy, yield"],
           "bad --idle")
    expect(["--frobnicate"], None, 2, ["unknown option '--frobnicate'"],
           "unknown option")
    expect(["-l", "0-1"], None, 2, ["EAL options go before '--'"],
           "EAL option without --")
    expect(["--", "--duration", "soon"], None, 2,
           ["--duration = 'soon'"], "bad --duration")
    t.check(not os.path.exists("/var/run/dpdk/%s" % prefix),
            "no EAL state left behind by configuration errors")

    # mistakes found only once the device is probed: EAL cleaned up, exit 2
    base = ["-l", "0-1", "--no-pci", "--no-huge", "-m", "256",
            "--file-prefix", prefix, "--log-level", "*:error"]
    expect(base + ["--"], None, 2, ["no ports"], "no port at all")
    expect(base + ["--vdev", "net_af_packet0,iface=lo", "--", "--mtu", "9216"],
           None, 2, ["[port0] mtu = 9216", "takes an MTU from"],
           "MTU beyond the device's maximum")
    expect(["--lcores", "0@0,1@1,2@1", "--no-pci", "--no-huge", "-m", "256",
            "--file-prefix", prefix, "--log-level", "*:error",
            "--vdev", "net_af_packet0,iface=lo", "--"], None, 2,
           ["runs 2 workers", "qpairs=2"], "fewer device queues than workers")
    expect(base[:-2] + ["--vdev", "net_nonexistent0", "--"], None, 1,
           ["EAL initialisation failed"], "EAL failure")

    p, _ = dprdmad(["--help"])
    t.check(p.returncode == 0 and "Configuration keys" in p.stdout and
            "idle_sleep_us" in p.stdout and "net_tap0,iface=dprdma0,mac=fixed" in p.stdout,
            "--help lists every key and the compiled-in default")
    p, _ = dprdmad(["-f", "CONF", "--check", "--ip", "10.9.9.9/16"],
                   "[eal]\nvdev = net_null0\nhuge = no\n")
    t.check(p.returncode == 0 and "ip = 10.9.9.9/16" in p.stdout and
            "--vdev net_null0" in p.stdout and "--no-huge" in p.stdout and
            "net_tap" not in p.stdout,
            "--check prints the merged configuration and EAL arguments")
    # a config a pipe gives (bash's <(...)) is read once: each of the two
    # readers opened the path anew, and the second read an empty pipe --
    # the built-in default ran, without a word
    piped = t.run(["bash", "-c", '"$0" -f <(printf "$1") --check', t.DPRDMAD,
                   "[eal]\\nvdev = net_null0\\nhuge = no\\n[port0]\\n"
                   "ip = 10.9.8.7/16\\n"], check_rc=False, timeout=60)
    t.check(piped.returncode == 0 and "ip = 10.9.8.7/16" in piped.stdout and
            "--vdev net_null0" in piped.stdout and "net_tap" not in piped.stdout,
            "a config through a pipe (-f <(...)): its settings, not the "
            "defaults (%s)" % (piped.stdout + piped.stderr).strip()[-300:])
    piped = t.run(["bash", "-c", '"$0" -f <(printf "$1") --check', t.DPRDMAD,
                   "[eal]\\nhuge = no\\n[engine]\\nwrkers = 2\\n"],
                  check_rc=False, timeout=60)
    t.check(piped.returncode == 2 and
            re.search(r"/dev/fd/\d+:4: \[engine\] has no key 'wrkers'",
                      piped.stderr) is not None,
            "an error in a piped config names the pipe and the line: %s"
            % piped.stderr.strip())
    p, _ = dprdmad(["-f", os.path.join(t.SOURCE_ROOT, "config/dprdmad.conf"),
                    "--check"])
    t.check(p.returncode == 0, "the shipped example config is valid: %s"
            % p.stderr)
    # the real-NIC example: its cores and hugepages are a gateway box's, so
    # they are fitted to this machine; every other key must be valid as is
    with open(os.path.join(t.SOURCE_ROOT, "config/dprdmad-nic.conf")) as f:
        nic = f.read()
    fitted = nic.replace("lcores = 1-3", "lcores = 0-1").replace(
        "huge = yes", "huge = no")
    t.check(fitted != nic, "dprdmad-nic.conf still names lcores 1-3 and huge = yes")
    p, _ = dprdmad(["-f", "CONF", "--check"], fitted)
    t.check(p.returncode == 0 and "-a 0000:3b:00.0" in p.stdout and
            "[port1]" in p.stdout and "idle = busy" in p.stdout,
            "config/dprdmad-nic.conf (two PCI ports, busy workers) is valid: %s"
            % p.stderr)
    t.log("PASS")


if __name__ == "__main__":
    main()
