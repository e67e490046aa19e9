#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The front door stays true (issue 26): `make help` lists every .PHONY
target with one line, every `make X` that README.md or docs/ names is a
target, and every relative link in README.md and docs/*.md points at a
file that exists."""
import glob
import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MAKE_RE = re.compile(r"`make ([a-z][a-z-]*)")


def phony_targets():
    with open(os.path.join(ROOT, "Makefile")) as f:
        text = f.read()
    return set(re.search(r"^\.PHONY:(.*)$", text, re.M).group(1).split())


def help_targets():
    out = subprocess.run(["make", "--no-print-directory", "-C", ROOT, "help"],
                         capture_output=True, text=True, check=True).stdout
    lines = [ln.split(None, 1) for ln in out.splitlines() if ln.strip()]
    return {ln[0]: (ln[1] if len(ln) > 1 else "") for ln in lines}


class Help(unittest.TestCase):
    def test_every_target_has_a_line(self):
        listed = help_targets()
        self.assertEqual(set(listed), phony_targets())
        for target, text in listed.items():
            self.assertTrue(text.strip(), f"make help: {target} has no description")


class Pages(unittest.TestCase):
    def test_make_targets_named_exist(self):
        targets = phony_targets()
        for page in PAGES:
            with open(page) as f:
                for n, line in enumerate(f, 1):
                    for t in MAKE_RE.findall(line):
                        self.assertIn(t, targets, f"{os.path.relpath(page, ROOT)}:{n}: "
                                      f"`make {t}` is no target")

    def test_relative_links_exist(self):
        for page in PAGES:
            with open(page) as f:
                text = f.read()
            for link in LINK_RE.findall(text):
                if re.match(r"^[a-z]+:", link) or link.startswith("#"):
                    continue
                path = link.split("#", 1)[0]
                target = os.path.normpath(os.path.join(os.path.dirname(page), path))
                self.assertTrue(os.path.exists(target),
                                f"{os.path.relpath(page, ROOT)}: link {link} points at nothing")


if __name__ == "__main__":
    unittest.main()
