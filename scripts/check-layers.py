#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""make check-layers: every #include "..." / %include of the tracked C, header
and assembly sources against the layer arrows of DESIGN.md and STYLE.md
("Layers, one direction"):

    boot -> vmm -> {vmx, lapic, timer} -> drivers

and, inside vmm/, between the rooms of one vCPU's work (issue 26.5):

    exit -> apic -> emul -> vcpu

Each rule prints the offending file:line and include, then one
`PASS: layers/<rule>` or `FAIL: layers/<rule>` line (tests/harness.py counts
them); the exit status is 1 if any rule failed. An include may only stay
against the arrows through ALLOWED below, with its reason; each such line
is printed as a NOTICE on every run so it is not forgotten.

tests/ (host unit tests) is outside the layers: it compiles the pure parts
of every room on the host and may include any of them.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Includes against the arrows that stay for now: (file, included path,
# reason). Empty is the goal; never add a line without its reason.
ALLOWED = [
]

# Generated at build time (build/gen/, found through -I): the room whose
# source generates them, None for room-neutral data.
GENERATED = {
    "version.h": None,              # the git revision (Makefile)
    "offsets.inc": "vmx",           # struct offsets from vmx/offsets.c
    "x86.inc": "drivers",           # CR/EFER/MSR constants from drivers/x86_inc.c
    "font.h": "drivers",            # the screen console's font (scripts/gen-font.py)
}

SOURCE_RE = re.compile(r"\.(c|h|asm|inc|S)$")
C_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
ASM_INCLUDE_RE = re.compile(r'^\s*%include\s+"([^"]+)"')

# Hypervisor rooms, by layer: a room includes its own layer and those
# below it. Of the middle layer only lapic/ calls into a sibling (it asks
# timer/ to arm, DESIGN.md "Data flow of one guest timer tick").
LAYER = {"boot": 3, "vmm": 2, "vmm/exit": 2, "vmm/emul": 2, "vmm/apic": 2,
         "vmm/vcpu": 2, "vmm/host": 2, "vmx": 1, "lapic": 1, "timer": 1,
         "drivers": 0}
SIBLINGS = {("lapic", "timer")}
# vmm/'s rooms by job (issue 26.5): vmm/host is one of them, vmm/dev and
# vmm/loader count as vmm/ itself. vmm/'s top (vmm/*.c, vmm/*.h, dev/,
# loader/) is shared: it may include every room and every room may
# include it (order); vmm/host includes nothing else of vmm/ (vmm-host).
VMM_ROOMS = ("vmm/exit", "vmm/emul", "vmm/apic", "vmm/vcpu", "vmm/host")
VMM_ALL = ("vmm",) + VMM_ROOMS
# Between the rooms of a vCPU's work the includes point one way: a room
# includes only those ranked below it (vmm-rooms). The calls that go back
# up (the run loop dispatches exits, the APIC glue calls the exit fast
# path) are declared in the lower room's header (docs/architecture.md).
VMM_RANK = {"vmm/exit": 3, "vmm/apic": 2, "vmm/emul": 1, "vmm/vcpu": 0}


def room(path):
    """The room a tracked path belongs to, or None outside the layers."""
    for r in VMM_ROOMS:
        if path.startswith(r + "/"):
            return r
    if path.startswith("guest-tests/lib/"):
        return "guest-tests/lib"
    top = path.split("/", 1)[0]
    if top in LAYER or top == "guest-tests":
        return top
    return None


def tracked_sources():
    try:
        if not os.path.exists(os.path.join(ROOT, ".git")):
            raise OSError("not a git checkout")
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(d, f), ROOT)
               for d, _, fs in os.walk(ROOT) if "/build" not in d and "/." not in d
               for f in fs]
    return sorted(p for p in out if SOURCE_RE.search(p))


def includes(path):
    """(line number, '<' or '"', included name) of each include in path."""
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = C_INCLUDE_RE.match(line)
            if m:
                yield n, m.group(1), m.group(2)
                continue
            m = ASM_INCLUDE_RE.match(line)
            if m:
                yield n, '"', m.group(1)


def resolve(src, name, files):
    """The tracked path a quoted include names, "gen:<room>" for a generated
    one, or None. Searched like the compilers' -I lists: the root (-I.),
    guest-tests/ for guest code, then the including file's folder."""
    bases = ["guest-tests"] if src.startswith("guest-tests/") else [""]
    bases.append(os.path.dirname(src))
    for b in bases:
        p = os.path.normpath(os.path.join(b, name))
        if p in files:
            return p
    if name in GENERATED:
        return f"gen:{GENERATED[name]}"
    return None


def order_ok(s, d):
    if s == d:
        return True
    if s not in LAYER or d not in LAYER:
        return False
    return LAYER[d] < LAYER[s] or (s, d) in SIBLINGS or (s in VMM_ALL and d in VMM_ALL)


# Each rule: name, what it says, predicate(src room, dst room or None,
# bracket, name) -> True when the include breaks it. Rules only judge
# hypervisor and guest code (room() not None).
RULES = [
    ("order", "boot -> vmm -> {vmx, lapic, timer} -> drivers, nothing upwards",
     lambda s, d, b, n: b == '"' and s in LAYER and d not in ("-", None)
     and not order_ok(s, d)),
    ("vmm-host", "vmm/host/ includes nothing of vmm/ outside vmm/host/",
     lambda s, d, b, n: s == "vmm/host" and d in VMM_ALL and d != "vmm/host"),
    ("vmm-rooms", "vmm/exit -> vmm/apic -> vmm/emul -> vmm/vcpu, nothing backwards",
     lambda s, d, b, n: s in VMM_RANK and d in VMM_RANK and VMM_RANK[d] > VMM_RANK[s]),
    ("no-vmx-below", "lapic/ and timer/ never include vmx/",
     lambda s, d, b, n: s in ("lapic", "timer") and d == "vmx"),
    ("efi-boot-only", "only boot/ includes GNU-EFI (<efi.h>, <efilib.h>)",
     lambda s, d, b, n: b == "<" and s != "boot" and re.match(r"efi", n, re.I) is not None),
    ("drivers-bottom", "drivers/ includes nothing above it",
     lambda s, d, b, n: s == "drivers" and b == '"' and d not in ("drivers", "-")),
    ("guest-tests-lib", "guest-tests/ includes only its own lib/",
     lambda s, d, b, n: s in ("guest-tests", "guest-tests/lib") and b == '"'
     and d != "guest-tests/lib"),
    ("resolved", "every quoted include names a tracked or generated file",
     lambda s, d, b, n: b == '"' and d is None),
]


def dst_room(target):
    if target is None:
        return None
    if target.startswith("gen:"):
        return target[4:] if target[4:] != "None" else "-"
    return room(target) or target.split("/", 1)[0]


def main():
    global ROOT
    if len(sys.argv) == 3 and sys.argv[1] == "--root":     # for tests/test_scripts.py
        ROOT = os.path.abspath(sys.argv[2])
    files = tracked_sources()
    fileset = set(files)
    hits = {name: [] for name, _, _ in RULES}
    notices = []
    used_allow = set()
    scanned = 0
    for src in files:
        s = room(src)
        if s is None:
            continue
        for line, bracket, name in includes(src):
            scanned += 1
            target = resolve(src, name, fileset) if bracket == '"' else None
            d = dst_room(target) if bracket == '"' else "-"
            for rule, _, broken in RULES:
                if not broken(s, d, bracket, name):
                    continue
                close = ">" if bracket == "<" else '"'
                where = f"{src}:{line}: #include {bracket}{name}{close}"
                allow = next((a for a in ALLOWED if a[0] == src and a[1] == name), None)
                if allow:
                    used_allow.add((allow[0], allow[1]))
                    notices.append(f"NOTICE: layers/{rule}: allowed: {where} ({allow[2]})")
                else:
                    hits[rule].append(f"  {where} ({s} -> {d or 'unresolved'})")
    for a in ALLOWED:
        if (a[0], a[1]) not in used_allow:
            notices.append(f"NOTICE: layers: allow-list entry {a[0]}: {a[1]} matches "
                           "nothing any more: remove it")
    failed = False
    print(f"check-layers: {scanned} includes in {len(files)} tracked sources")
    for n in notices:
        print(n)
    for rule, text, _ in RULES:
        for h in hits[rule]:
            print(h)
        failed |= bool(hits[rule])
        print(f"{'FAIL' if hits[rule] else 'PASS'}: layers/{rule}: {text}"
              + (f" ({len(hits[rule])} offending)" if hits[rule] else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
