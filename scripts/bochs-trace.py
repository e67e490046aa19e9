#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Read the event trace of a Bochs run (scripts/bochs-debug/0001: Bochs
built by `scripts/build-bochs.sh --trace`, run with
TICKVISOR_BOCHS_TRACE=FILE) and name the guest timer expiries that came
late: each TSC-deadline write a guest made (a WRMSR exit for MSR 0x6e0)
against the first VM entry after it that hands that vCPU its timer vector
(RVI, the low byte of the guest interrupt status), or the next write that
replaced it undelivered. For each expiry later than --late microseconds,
every event of every CPU from the write to the delivery is printed, which
says what the host did meanwhile.

Bochs's clock is the TSC (ips=50000000: --hz), and a traced run is the same
run as an untraced one, so a boot that showed a spike in make bench can be
booted again under the trace build and read here. --serial prints the
guest's COM1 lines with the clock of their first byte instead (the writes
to port 0x3f8 that exited), to find a window such as cyclictest's; --from
and --to keep expiries whose deadline lies in it.

--profile reads the S lines of a run with TICKVISOR_BOCHS_PROFILE=FROM:TO
(scripts/bochs-debug/0002: the instructions each CPU ran in that window, by
the RIP they ended at) and prints each CPU's functions by instructions run,
guest (non-root) and tickvisor (root) apart: guest addresses named from
--guest-map (a System.map, e.g. from Debian's linux-image-*-dbg package,
or `nm` output of a guest ELF), tickvisor's from --host-elf
(build/tickvisor.so) at --host-base (the "image at" line of its log).

Usage: scripts/bochs-trace.py TRACE [--late US] [--vector HEX] [--posted HEX]
                                    [--from T] [--to T] [--top N] [--serial]
       scripts/bochs-trace.py TRACE --profile [--guest-map FILE]
                                    [--host-elf ELF --host-base HEX] [--top N]
"""
import argparse
import bisect
import subprocess
import sys
from collections import Counter
from collections import namedtuple

WRMSR_EXIT = 32
IO_EXIT = 30
MSR_TSC_DEADLINE = 0x6e0
COM1 = 0x3f8

Expiry = namedtuple("Expiry", "cpu deadline written ended how")


def parse(lines):
    """The trace's events as (letter, cpu, tick, fields) tuples."""
    for line in lines:
        f = line.split()
        if len(f) >= 3 and len(f[0]) == 1 and f[1].isdigit() and f[2].isdigit():
            yield f[0], int(f[1]), int(f[2]), f[3:]


def expiries(events, vector, posted=None):
    """Each guest TSC-deadline write with how it ended: 'delivered' at the
    first entry after its deadline whose RVI is `vector` (or, with
    `posted`, the first posted-interrupt notification of that vector to the
    vCPU's CPU: timer=posted), 'replaced' by the next write after its
    deadline passed, or 'cancelled' (a write before the deadline, or 0)."""
    armed = {}          # cpu -> (deadline, written)
    for kind, cpu, t, f in events:
        if kind == "X" and int(f[0]) == WRMSR_EXIT and int(f[4], 16) == MSR_TSC_DEADLINE:
            deadline = (int(f[5], 16) << 32) | (int(f[3], 16) & 0xffffffff)
            if cpu in armed:
                d, w = armed.pop(cpu)
                yield Expiry(cpu, d, w, t, "replaced" if t >= d else "cancelled")
            if deadline:
                armed[cpu] = (deadline, t)
        elif kind == "E" and cpu in armed:
            d, w = armed[cpu]
            if t >= d and int(f[3], 16) & 0xff == vector:
                del armed[cpu]
                yield Expiry(cpu, d, w, t, "delivered")
        elif kind == "I" and posted is not None and cpu in armed:
            d, w = armed[cpu]
            if t >= d and int(f[0], 16) == posted:
                del armed[cpu]
                yield Expiry(cpu, d, w, t, "delivered")


def serial_lines(events):
    """(tick, text) of each COM1 line the guest wrote through I/O exits."""
    line, start = "", None
    for kind, _, t, f in events:
        if kind != "X" or int(f[0]) != IO_EXIT:
            continue
        q = int(f[1], 16)
        if (q >> 16) & 0xffff != COM1 or q & 8:        # port, IN
            continue
        c = int(f[3], 16) & 0xff
        start = t if start is None else start
        if c == 10:
            yield start, line
            line, start = "", None
        elif c != 13:
            line += chr(c)


class Symbols:
    """Address -> "function" from `nm`-style lines (ADDR TYPE NAME), code
    symbols only, each shifted by `base`."""

    def __init__(self, lines, base=0):
        syms = sorted((int(f[0], 16) + base, f[2]) for f in (ln.split() for ln in lines)
                      if len(f) >= 3 and f[1] in "tTwW" and set(f[0]) <= set("0123456789abcdefABCDEF"))
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]

    def name(self, rip):
        i = bisect.bisect_right(self.addrs, rip) - 1
        return self.names[i] if i >= 0 else None


def profile(events, guest_syms=None, host_syms=None):
    """{(cpu, guest): Counter(function -> instructions)} of the S lines."""
    out = {}
    for kind, cpu, _, f in events:
        if kind != "S":
            continue
        guest, rip, n = f[0] == "1", int(f[1], 16), int(f[2])
        syms = guest_syms if guest else host_syms
        name = syms.name(rip) if syms else None
        if name is None:
            name = ("user" if rip < 1 << 47 else "kernel") if guest else "root"
            name = f"{name} {rip:#x}" if not syms else f"({name})"
        out.setdefault((cpu, guest), Counter())[name] += n
    return out


def print_profile(prof, top):
    if not prof:
        print("no S lines: run with TICKVISOR_BOCHS_PROFILE=FROM:TO (scripts/bochs-debug/0002) "
              "and a window the run reached")
        return 1
    for (cpu, guest), c in sorted(prof.items()):
        total = sum(c.values())
        print(f"cpu{cpu} {'guest' if guest else 'tickvisor (root)'}: {total} instructions")
        for name, n in c.most_common(top):
            print(f"  {n:>12} {100.0 * n / total:5.1f}%  {name}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--late", type=float, default=100.0,
                    help="name expiries later than this, in microseconds (100)")
    ap.add_argument("--vector", type=lambda s: int(s, 16), default=0xec,
                    help="the guest's timer vector, hexadecimal (ec: Linux's)")
    ap.add_argument("--posted", type=lambda s: int(s, 16), default=None,
                    help="tickvisor's posted-interrupt notification vector, hexadecimal "
                         "(f0): count it as the delivery (timer=posted)")
    ap.add_argument("--hz", type=int, default=50000000, help="Bochs's clock rate (ips)")
    ap.add_argument("--from", dest="lo", type=int, default=0, help="first deadline kept")
    ap.add_argument("--to", dest="hi", type=int, default=None, help="last deadline kept")
    ap.add_argument("--top", type=int, default=None,
                    help="how many late expiries (5) or functions per CPU (20) to show")
    ap.add_argument("--serial", action="store_true", help="print the guest's COM1 lines")
    ap.add_argument("--profile", action="store_true",
                    help="print each CPU's functions by instructions run (S lines)")
    ap.add_argument("--guest-map", help="System.map or nm output naming guest addresses")
    ap.add_argument("--host-elf", help="tickvisor's ELF (build/tickvisor.so)")
    ap.add_argument("--host-base", type=lambda s: int(s, 16), default=0,
                    help="where tickvisor was loaded (its log's 'image at' line)")
    a = ap.parse_args(argv)
    with open(a.trace) as f:
        events = list(parse(f))
    if a.profile:
        guest_syms = host_syms = None
        if a.guest_map:
            with open(a.guest_map) as f:
                guest_syms = Symbols(f)
        if a.host_elf:
            nm = subprocess.run(["nm", a.host_elf], capture_output=True, text=True, check=True)
            host_syms = Symbols(nm.stdout.splitlines(), a.host_base)
        return print_profile(profile(events, guest_syms, host_syms), a.top or 20)
    if a.serial:
        for t, text in serial_lines(events):
            print(t, text)
        return 0
    limit = a.late * a.hz / 1e6
    kept = [e for e in expiries(events, a.vector, a.posted)
            if e.how != "cancelled" and a.lo <= e.deadline and (a.hi is None or e.deadline <= a.hi)]
    late = sorted((e for e in kept if e.ended - e.deadline > limit),
                  key=lambda e: e.deadline - e.ended)
    print(f"{len(kept)} expiries, {len(late)} later than {a.late:g} us")
    for e in late[:a.top or 5]:
        us = (e.ended - e.deadline) * 1e6 / a.hz
        print(f"\ncpu{e.cpu}: deadline {e.deadline} written at {e.written}, {e.how} at "
              f"{e.ended}: {us:.0f} us late")
        for kind, cpu, t, f in events:
            if e.written <= t <= e.ended:
                print(f"  {kind} {cpu} {t} {' '.join(f)}")
    return 1 if late else 0


if __name__ == "__main__":
    sys.exit(main())
