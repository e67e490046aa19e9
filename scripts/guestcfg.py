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

    guestcfg.py bundled OUT      write the tickvisor.cfg for `make run`
    guestcfg.py smp OUT          write smp.cfg (the tests needing several CPUs)
"""
import configparser
import os
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


class Test:
    def __init__(self, name, sec):
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
                sys.exit(f"{UNITTESTS}: [{name}]: unknown variant '{v}'")

    def guest_line(self, run=None, extra=""):
        """The tickvisor.cfg line of this test, for one run."""
        name = self.name if not run else f"{self.name}.{run}"
        cmdline = f"{self.name} {self.args}".strip()
        opts = " ".join(o for o in (self.options, extra) if o)
        return guest_line(name, self.file, self.mem, self.vcpus, self.timeout, cmdline, opts)


def load(path=UNITTESTS):
    cp = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=("#",))
    with open(path) as f:
        cp.read_file(f)
    return [Test(name, cp[name]) for name in cp.sections()]


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
    out = bundled(load(), sys.argv[1] == "smp")
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(out)
    os.replace(sys.argv[2] + ".tmp", sys.argv[2])


if __name__ == "__main__":
    main()
