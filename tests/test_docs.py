#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The front door stays true (issue 26): `make help` lists every .PHONY
target with one line, every `make X` that README.md or docs/ names is a
target, every relative link in README.md and docs/*.md points at a file
that exists (and at a heading of it when it names one), README.md stays a
front page (at most 150 lines), and every docs/*.md page can be reached
from README.md by following links."""
import glob
import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MAKE_RE = re.compile(r"`make ([a-z][a-z-]*)")
README_MAX_LINES = 150


def relative_links(page):
    """(link, target path, anchor) of each relative link in page."""
    with open(page) as f:
        text = f.read()
    out = []
    for link in LINK_RE.findall(text):
        if re.match(r"^[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        out.append((link, target, anchor))
    return out


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but '-' and
    '_' dropped, each space a '-'."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page):
    with open(page) as f:
        text = re.sub(r"^(```|    ).*$", "", f.read(), flags=re.M)
    return {slug(m) for m in re.findall(r"^#+ (.*)$", text, re.M)}


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
            for link, target, anchor in relative_links(page):
                where = f"{os.path.relpath(page, ROOT)}: link {link}"
                self.assertTrue(os.path.exists(target), f"{where} points at nothing")
                if anchor and target.endswith(".md"):
                    self.assertIn(anchor, anchors(target), f"{where}: no such heading")

    def test_readme_is_a_front_page(self):
        with open(PAGES[0]) as f:
            n = len(f.read().splitlines())
        self.assertLessEqual(n, README_MAX_LINES,
                             f"README.md has {n} lines; move the detail to a docs/ page")

    def test_every_page_reachable_from_readme(self):
        seen, todo = set(), [PAGES[0]]
        while todo:
            page = todo.pop()
            if page in seen:
                continue
            seen.add(page)
            todo += [t for _, t, _ in relative_links(page)
                     if t.endswith(".md") and os.path.exists(t)]
        unreached = [os.path.relpath(p, ROOT) for p in PAGES if p not in seen]
        self.assertEqual(unreached, [], "docs pages no link from README.md leads to")

if __name__ == "__main__":
    unittest.main()
