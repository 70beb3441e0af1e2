#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""The Debian package (debian/): dpkg-buildpackage -b -us -uc builds the
.debs from a copy of the source tree; lintian finds no error in them; the
packages unpacked into a scratch root (not installed on this machine) hold
what an operator needs where Debian puts it, and the programs run from
there: dprdmad --check on the installed configuration, dprdmactl --help,
dprdma-run, the man pages; the systemd unit is enabled at install as
Debian's units are, and the drop-in libraries sit in a private directory,
not in the system's library path."""

import glob
import os
import shutil
import subprocess
import tempfile

import dprtest as t

TRIPLET = "x86_64-linux-gnu"


def copy_tree(src, dst):
    """The source tree without build directories or VCS data."""
    skip = shutil.ignore_patterns(".git", "build", "build-*", "__pycache__",
                                  "*.pyc")
    shutil.copytree(src, dst, ignore=skip, symlinks=True)


def main():
    if os.geteuid() != 0:
        t.skip("needs root (dpkg-buildpackage and its build dependencies)")
    tmp = tempfile.mkdtemp(prefix="dprdma-pkg-")
    try:
        src = os.path.join(tmp, "dprdma")
        copy_tree(t.SOURCE_ROOT, src)
        env = dict(os.environ, DEB_BUILD_OPTIONS="parallel=%d nocheck noautodbgsym"
                   % (os.cpu_count() or 1))
        for k in ("CFLAGS", "LDFLAGS", "MAKEFLAGS"):
            env.pop(k, None)
        r = subprocess.run(["dpkg-buildpackage", "-b", "-us", "-uc"], cwd=src,
                           env=env, capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            t.log(r.stdout[-4000:] + r.stderr[-4000:])
        t.check(r.returncode == 0, "dpkg-buildpackage -b -us -uc builds the "
                "packages from a copy of the tree")
        debs = sorted(glob.glob(os.path.join(tmp, "*.deb")))
        names = sorted(os.path.basename(d).split("_")[0] for d in debs)
        t.check(names == ["dprdma", "libdprdma-dev"],
                "two packages: %r" % names)
        changes = glob.glob(os.path.join(tmp, "*.changes"))
        r = subprocess.run(["lintian", "--no-tag-display-limit"] + changes,
                           capture_output=True, text=True, timeout=600)
        t.log("lintian:\n" + r.stdout)
        errors = [l for l in r.stdout.splitlines() if l.startswith("E:")]
        t.check(not errors, "lintian: no error (%d warnings)"
                % sum(1 for l in r.stdout.splitlines() if l.startswith("W:")))

        root = os.path.join(tmp, "root")
        for d in debs:
            t.run(["dpkg-deb", "-x", d, root])
        want = ["usr/sbin/dprdmad", "usr/bin/dprdmactl", "usr/bin/dprdma-run",
                "usr/bin/dprdma-gen", "usr/bin/dprdma-pcap",
                "etc/dprdma/dprdmad.conf", "lib/systemd/system/dprdmad.service",
                "usr/lib/%s/libdprdma.so.0" % TRIPLET,
                "usr/lib/%s/dprdma/libibverbs.so.1" % TRIPLET,
                "usr/lib/%s/dprdma/librdmacm.so.1" % TRIPLET,
                "usr/include/dprdma/dprdma.h",
                "usr/share/man/man8/dprdmad.8.gz",
                "usr/share/man/man8/dprdmactl.8.gz",
                "usr/share/man/man5/dprdmad.conf.5.gz",
                "usr/share/man/man1/dprdma-run.1.gz"]
        missing = [w for w in want if not os.path.lexists(os.path.join(root, w))]
        t.check(not missing, "the packages hold the daemon, tools, unit, "
                "configuration, libraries and man pages (missing: %r)" % missing)
        t.check(not glob.glob(os.path.join(root, "usr/lib", TRIPLET,
                                           "libibverbs.so*")) and
                not glob.glob(os.path.join(root, "usr/lib", TRIPLET,
                                           "librdmacm.so*")),
                "no drop-in in the system's library path (the system's "
                "rdma-core stays)")
        ctrl = subprocess.run(["dpkg-deb", "-I", [d for d in debs if
                               os.path.basename(d).startswith("dprdma_")][0],
                               "postinst"], capture_output=True, text=True)
        t.check("deb-systemd-helper" in ctrl.stdout and "enable" in ctrl.stdout,
                "the postinst enables dprdmad.service as Debian's units are")

        lib = os.path.join(root, "usr/lib", TRIPLET)
        renv = dict(os.environ, LD_LIBRARY_PATH=lib)
        r = subprocess.run([os.path.join(root, "usr/sbin/dprdmad"), "-f",
                            os.path.join(root, "etc/dprdma/dprdmad.conf"),
                            "--check"], env=renv, capture_output=True, text=True,
                           timeout=60)
        t.check(r.returncode == 0, "dprdmad --check on the packaged "
                "configuration, from the package: %s" % (r.stdout + r.stderr).strip()[-300:])
        r = subprocess.run([os.path.join(root, "usr/bin/dprdmactl"), "--help"],
                           env=renv, capture_output=True, text=True, timeout=60)
        t.check(r.returncode == 0 and "dprdmactl" in r.stdout + r.stderr,
                "dprdmactl --help from the package")
        r = subprocess.run(["sh", os.path.join(root, "usr/bin/dprdma-run"),
                            "sh", "-c", "echo $LD_LIBRARY_PATH $DPRDMA_SOCKET"],
                           capture_output=True, text=True, timeout=60)
        t.check(r.stdout.split()[:2] == ["/usr/lib/%s/dprdma" % TRIPLET,
                                          "/run/dprdma/dprdmad.sock"],
                "dprdma-run puts the private drop-in directory first and names "
                "the default socket: %r" % r.stdout.strip())
        r = subprocess.run(["man", "-l", os.path.join(root,
                            "usr/share/man/man8/dprdmad.8.gz")],
                           env=dict(os.environ, MANPAGER="cat", MANWIDTH="80"),
                           capture_output=True, text=True, timeout=60)
        t.check(r.returncode == 0 and "dprdmad" in r.stdout,
                "man dprdmad renders from the package")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t.log("PASS")


if __name__ == "__main__":
    main()
