#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""
The documents say what is true: README.rst and doc/*.rst are valid
reStructuredText (docutils reports no warning), and every path of the
source tree they name in ``literal`` text exists, so a file that moves
takes its mentions with it.

    check_docs.py SOURCE_ROOT
"""

import glob
import io
import os
import re
import sys

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


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    docs = [os.path.join(root, "README.rst")] + \
        sorted(glob.glob(os.path.join(root, "doc", "*.rst")))
    problems = []
    for d in docs:
        problems += check_rst(d)
        problems += check_paths(root, d)
    for p in problems:
        print(p)
    print("checked %d document(s): %d problem(s)" % (len(docs), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
