#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The bundled guest tests, declared in guest-tests/unittests.cfg, and the
tickvisor.cfg files made from them.

unittests.cfg (kvm-unit-tests style): one [NAME] section per test with
  file     = image in EFI/tickvisor/guests (default NAME.elf)
  args     = command line after the test name
  vcpus    = vCPUs (default 1)
  mem      = guest RAM (default 64M)
  timeout  = tickvisor's guest-time limit in seconds (default 30)
  status   = expected exit status (default 0)
  variants = which extra runs it takes part in: apicv (APICv off),
             timer (timer=lapic, timer=hpet), hlt (hlt=guest),
             advance (advance=auto); default none
  options  = extra tickvisor options for every run of it, KEY=VALUE ...

and what make test (tests/harness.py) holds each run of it to:
  min_pass = N   required: the fewest PASS lines a run may print; fewer
                 fails the run ("ran 3 of at least 12 checks"). Set it to
                 the count a run prints today.
  skip     = REGEX => REASON
                 a SKIP line the test prints on purpose: REGEX is searched
                 (Python re) in the text after "SKIP: ", REASON says why.
                 One per line; indent the lines after the first.
  xfail    = REGEX => REASON
                 a known bug: a SKIP or XFAIL line matching REGEX counts as
                 XFAIL with REASON; a PASS line matching it is XPASS, a
                 failure that says the bug is fixed and the declaration
                 is to go. Same form as skip.
  maybe_skip@GLOB = REGEX => REASON
                 a SKIP that depends on the machine the suite runs on, not
                 on tickvisor: a CPU feature the nested-KVM runner's own
                 CPU may lack (kvm-* suites). Counted as a declared skip
                 when it happens, never stale when it does not. Always
                 qualified by a suite glob.
  KEY@GLOB = ...
                 min_pass, skip or xfail for the make test suites whose
                 name matches the fnmatch GLOB only (skip@smp-4cpu,
                 min_pass@cpu-*-guests). A qualified min_pass replaces the
                 plain one (the first that matches, in file order);
                 qualified skips and xfails add to the plain ones.
Every other SKIP or XFAIL line fails the run, and so does a declaration
that applies to a run and matches none of its lines (a stale one: the
skip no longer happens, remove it).

    guestcfg.py bundled OUT      write the tickvisor.cfg for `make run`
    guestcfg.py smp OUT          write smp.cfg (the tests needing several CPUs)
"""
import configparser
import fnmatch
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNITTESTS = os.path.join(ROOT, "guest-tests", "unittests.cfg")

# name -> tickvisor options for one extra run of the tests in a variant
VARIANT_RUNS = {
    "apicv": [("apicv-off", "apicv=off")],
    "timer": [("lapic", "timer=lapic"), ("hpet", "timer=hpet")],
    "hlt": [("hlt-guest", "hlt=guest")],
    "advance": [("advance-auto", "advance=auto")],
}

# The global options of the generated configs (the bundled ones, make test's).
GLOBALS = ["timer=auto", "advance=off", "apicv=on", "log=info"]


def guest_line(name, file, mem, vcpus, timeout, cmdline, opts=""):
    """A tickvisor.cfg guest statement for the image EFI/tickvisor/guests/FILE."""
    return (f'guest {name} guests/{file} mem={mem} vcpus={vcpus} '
            f'timeout={timeout} cmdline="{cmdline}"' + (f" {opts}" if opts else ""))


def config(guest_lines):
    """A tickvisor.cfg: GLOBALS, then the guest lines."""
    return "\n".join(GLOBALS + list(guest_lines)) + "\n"


class ConfigError(ValueError):
    """unittests.cfg says something impossible, or leaves out min_pass."""


class Declaration:
    """One skip or xfail of a test: kind, the suites it applies to (an
    fnmatch glob), the regex of the line's text and the reason."""

    def __init__(self, kind, glob, regex, reason):
        self.kind, self.glob, self.reason = kind, glob, reason
        self.regex = re.compile(regex)

    def applies(self, suite):
        return fnmatch.fnmatchcase(suite, self.glob)

    def matches(self, text):
        return self.regex.search(text) is not None

    def __repr__(self):
        where = "" if self.glob == "*" else f"@{self.glob}"
        return f"{self.kind}{where} = {self.regex.pattern} => {self.reason}"


def _key(key):
    """'min_pass@cpu-*' -> ('min_pass', 'cpu-*'); a plain key applies to
    every suite ('*')."""
    base, _, glob = key.partition("@")
    return base, glob or "*"


def _declarations(where, kind, glob, value):
    out = []
    for line in value.splitlines():
        if not line.strip():
            continue
        regex, sep, reason = line.partition(" => ")
        if not sep or not regex.strip() or not reason.strip():
            raise ConfigError(f"{where}: {kind}: '{line.strip()}' is not 'REGEX => REASON'")
        try:
            out.append(Declaration(kind, glob, regex.strip(), reason.strip()))
        except re.error as e:
            raise ConfigError(f"{where}: {kind}: bad regex '{regex.strip()}': {e}")
    return out


class Test:
    def __init__(self, name, sec, path=UNITTESTS):
        where = f"{path}: [{name}]"
        self.name = name
        self.file = sec.get("file", f"{name}.elf")
        self.args = sec.get("args", "")
        self.vcpus = int(sec.get("vcpus", "1"))
        self.mem = sec.get("mem", "64M")
        self.timeout = int(sec.get("timeout", "30"))
        self.status = int(sec.get("status", "0"))
        self.variants = sec.get("variants", "").split()
        self.options = sec.get("options", "")
        for v in self.variants:
            if v not in VARIANT_RUNS:
                raise ConfigError(f"{where}: unknown variant '{v}'")
        self.min_pass = []      # (glob, N): qualified in file order, then '*'
        self.declarations = []
        for key, value in sec.items():
            base, glob = _key(key)
            if base == "min_pass":
                try:
                    n = int(value)
                except ValueError:
                    raise ConfigError(f"{where}: {key} = {value}: not a number")
                self.min_pass.append((glob, n))
            elif base in ("skip", "xfail"):
                self.declarations += _declarations(where, base, glob, value)
            elif base == "maybe_skip":
                if glob == "*":
                    raise ConfigError(f"{where}: {key}: maybe_skip needs @SUITE (the suites "
                                      "whose machine may lack the feature)")
                self.declarations += _declarations(where, base, glob, value)
            elif glob != "*":
                raise ConfigError(f"{where}: {key}: only min_pass, skip, maybe_skip and xfail "
                                  "take @SUITE")
        self.min_pass.sort(key=lambda g: g[0] == "*")     # stable: file order kept
        if not any(g == "*" for g, _ in self.min_pass):
            raise ConfigError(f"{where}: no min_pass (the fewest PASS lines a run prints)")

    def min_pass_for(self, suite, *aliases):
        """The fewest PASS lines this test's run in `suite` may print.
        aliases: other names the suite answers to (a kvm-* suite also to
        the Bochs suite it repeats); the first qualified min_pass matching
        any of them wins."""
        names = (suite,) + aliases
        return next(n for g, n in self.min_pass
                    if any(fnmatch.fnmatchcase(s, g) for s in names))

    def declarations_for(self, suite, *aliases):
        """The skips and xfails that apply to this test's run in `suite`
        (or under one of its aliases)."""
        return [d for d in self.declarations if any(d.applies(s) for s in (suite,) + aliases)]

    def guest_line(self, run=None, extra=""):
        """The tickvisor.cfg line of this test, for one run."""
        name = self.name if not run else f"{self.name}.{run}"
        cmdline = f"{self.name} {self.args}".strip()
        opts = " ".join(o for o in (self.options, extra) if o)
        return guest_line(name, self.file, self.mem, self.vcpus, self.timeout, cmdline, opts)


def load(path=UNITTESTS):
    cp = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=("#",))
    with open(path) as f:
        try:
            cp.read_file(f)
        except configparser.Error as e:
            raise ConfigError(f"{path}: {e}")
    return [Test(name, cp[name], path) for name in cp.sections()]


def bundled(tests, smp):
    """The configs on the ESP: every test expected to pass, once, with the
    defaults. tickvisor.cfg has the 1-vCPU ones (any machine runs them),
    smp.cfg those needing more CPUs (load option config=..., or
    `make run CFG=smp`). Tests that end on purpose with another status
    (triple faults, bad accesses) are make test's business."""
    return ("# Generated from guest-tests/unittests.cfg by scripts/guestcfg.py.\n" +
            config(t.guest_line() for t in tests if t.status == 0 and (t.vcpus > 1) == smp))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("bundled", "smp"):
        sys.exit(__doc__)
    try:
        out = bundled(load(), sys.argv[1] == "smp")
    except ConfigError as e:
        sys.exit(f"guestcfg: error: {e}")
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(out)
    os.replace(sys.argv[2] + ".tmp", sys.argv[2])


if __name__ == "__main__":
    main()
