#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""
The documents say what is true:

* README.rst is valid reStructuredText (docutils reports no warning), and
  doc/ builds as a Sphinx site and as man pages with warnings as errors
  (every cross-reference resolves, every page is in a toctree);
* every path of the source tree they name in ``literal`` text exists, so a
  file that moves takes its mentions with it;
* with the programs at hand (APP_DIR), each man page names every option its
  program's --help lists, dprdmactl(8) every command, and dprdmad.conf(5)
  every configuration key: a new option cannot land undocumented.

    check_docs.py SOURCE_ROOT [APP_DIR]
"""

import glob
import io
import os
import re
import subprocess
import sys
import tempfile

import docutils.core
import docutils.utils

# literals that look like a path into the tree: a top-level directory of the
# project, then a path (a trailing / for a directory)
TOP = ("lib", "drivers", "app", "tests", "tools", "doc", "config", "drop-in")
PATH = re.compile(r"``((?:%s)/[A-Za-z0-9_./+-]*)``" % "|".join(TOP))


def check_rst(path):
    """docutils' messages at WARNING or worse for @p path."""
    out = io.StringIO()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    docutils.core.publish_doctree(
        text, source_path=path,
        settings_overrides={"report_level": docutils.utils.Reporter.WARNING_LEVEL,
                            "halt_level": docutils.utils.Reporter.SEVERE_LEVEL + 1,
                            "warning_stream": out})
    return [line for line in out.getvalue().splitlines() if line.strip()]


def check_paths(root, path):
    """Paths named in @p path's literals that the tree does not have."""
    missing = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            for m in PATH.finditer(line):
                p = m.group(1).rstrip(".")
                # build outputs are named as <builddir>/...: not in the tree
                if not os.path.exists(os.path.join(root, p)):
                    missing.append("%s:%d: ``%s`` is not in the tree" %
                                   (os.path.relpath(path, root), n, p))
    return missing


def check_sphinx(root):
    """sphinx-build -W of doc/ as HTML and as man pages; None when Sphinx
    is not installed."""
    try:
        import sphinx.cmd.build
    except ImportError:
        return None
    problems = []
    with tempfile.TemporaryDirectory() as out:
        for builder in ("html", "man"):
            r = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-W",
                                "--keep-going", "-b", builder,
                                "-d", os.path.join(out, "doctrees"),
                                os.path.join(root, "doc"),
                                os.path.join(out, builder)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                problems += ["sphinx (%s): %s" % (builder, l)
                             for l in (r.stderr + r.stdout).splitlines()
                             if l.strip()] or \
                    ["sphinx (%s) failed with status %d" % (builder, r.returncode)]
    return problems


# program -> its man page (doc/man/NAME.rst)
PROGRAMS = ("dprdmad", "dprdmactl", "dprdma-perf", "dprdma-gen", "dprdma-pcap")
LONG_OPT = re.compile(r"(?<![\w-])(--[a-z][a-z0-9_-]*)")


def help_text(app_dir, prog):
    r = subprocess.run([os.path.join(app_dir, prog), "--help"],
                       capture_output=True, text=True, timeout=30)
    return r.stdout + r.stderr


def check_man_pages(root, app_dir):
    """Options, commands and keys a program's --help lists that its man page
    does not name."""
    missing = []
    for prog in PROGRAMS:
        if not os.path.exists(os.path.join(app_dir, prog)):
            continue        # not built here (dprdma-perf needs libibverbs)
        text = help_text(app_dir, prog)
        page = "doc/man/%s.rst" % prog
        with open(os.path.join(root, page), encoding="utf-8") as f:
            man = f.read()
        # dprdmad's key descriptions name EAL options: not dprdmad's own
        own = text.split("Configuration keys:")[0]
        for opt in sorted(set(LONG_OPT.findall(own))):
            if "``%s``" % opt not in man:
                missing.append("%s: %s --help lists %s" % (page, prog, opt))
        if prog == "dprdmactl":
            cmds = text.split("Commands:")[1].split("Options:")[0]
            for cmd in re.findall(r"^  ([a-z][a-z-]*)", cmds, re.M):
                if "``%s" % cmd not in man:
                    missing.append("%s: dprdmactl --help lists the command %s"
                                   % (page, cmd))
        if prog == "dprdmad":
            keys = text.split("Configuration keys:")[1]
            with open(os.path.join(root, "doc/man/dprdmad.conf.rst"),
                      encoding="utf-8") as f:
                conf = f.read()
            for key in re.findall(r"^    ([a-z][a-z0-9_]*) ", keys, re.M):
                if "``%s``" % key not in conf:
                    missing.append("doc/man/dprdmad.conf.rst: dprdmad --help "
                                   "lists the key %s" % key)
    return missing


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    app_dir = sys.argv[2] if len(sys.argv) > 2 else None
    readme = os.path.join(root, "README.rst")
    docs = [readme] + \
        sorted(glob.glob(os.path.join(root, "doc", "*.rst"))) + \
        sorted(glob.glob(os.path.join(root, "doc", "man", "*.rst")))
    problems = check_rst(readme)
    built = check_sphinx(root)
    if built is None:
        print("python3-sphinx is not installed (tools/setup.sh installs it): "
              "doc/ cannot be checked")
        return 77
    problems += built
    for d in docs:
        problems += check_paths(root, d)
    if app_dir:
        problems += check_man_pages(root, app_dir)
    for p in problems:
        print(p)
    print("checked %d document(s)%s: %d problem(s)" %
          (len(docs), " and the programs' --help" if app_dir else "",
           len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
