# SPDX-License-Identifier: BSD-2-Clause
"""Integration suites: one emulator boot each, many guests per boot.

A suite gives tickvisor.cfg for the boot, the emulator and CPU count, the
final status tickvisor must end with, regexes the serial log must contain,
and (guest, expected exit status) pairs. Bochs boots are budgeted by VM
exits (~4 us of wall time each), so guests are batched into few boots.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))
import guestcfg  # noqa: E402

# The Bochs CPU model of every boot that names none: all VMX features
# tickvisor uses, posted interrupts included (PLATFORM.md).
DEFAULT_MODEL = "corei7_skylake_x"


class Suite:
    def __init__(self, name, config, emu="bochs", cpus=1, status=0, expect=(), guests=(),
                 timeout=300, megs=1024, model=None, reject=(), threads=1):
        self.name = name
        self.threads = threads          # per core: cpus/threads cores (issue 22.9)
        self.config = config
        self.emu = emu
        self.cpus = cpus
        self.status = status
        self.expect = list(expect)
        self.reject = list(reject)      # regexes the serial log must not contain
        self.guests = list(guests)
        self.timeout = timeout
        self.megs = megs
        self.model = model or DEFAULT_MODEL  # Bochs `cpu: model=` (issue 12)


# A trace point's line (issue 11.9): only with log=trace or log=trace:LIST.
TRACE_LINE = r"^tickvisor: cpu\d+: trace "
# vcpu_calib.c's probe 4: this tree's Bochs carries
# scripts/bochs-patches/0006, so posted interrupts must be usable.
PI_EMPTY_ERRATUM = r"PI_EMPTY_ERRATUM"
# Probe 5: and scripts/bochs-patches/0007, so a halted guest wakes for a
# pending virtual interrupt and an interrupt window.
HLT_VINTR_ERRATUM = r"HLT_VINTR_ERRATUM"
# Probe 3: and scripts/bochs-patches/0008, so a kick ends a guest's HLT with
# IF=0 and hlt=guest needs no stop poll.
HLT_IF0_ERRATUM = r"HLT_IF0_ERRATUM"


def done_line(guests):
    """tickvisor's line after the last of these (name, expected status)
    guests: exactly how many ran and how many ended with a nonzero status
    (tests/test_harness.py holds every suite to it)."""
    failed = sum(1 for _, status in guests if status)
    return rf"^tickvisor: done: {len(guests)} guests, {failed} failed$"

# The exit fuzzer's suite: two seeds, then a guest of every kind that must
# still pass after them.
EXIT_FUZZ_CANARIES = ("basic", "timer_oneshot", "apic_basic", "dev_ports")
EXIT_FUZZ_GUESTS = [("exit_fuzz_2", 0), ("exit_fuzz_3", 0)] + \
    [(n, 0) for n in EXIT_FUZZ_CANARIES]

# guest-tests/unittests.cfg, parsed once.
TESTS = guestcfg.load()
BY_NAME = {t.name: t for t in TESTS}


def test_of(suite, guest):
    """The unittests.cfg test whose min_pass and declarations hold for
    `guest` of `suite`: the one suite.tests names for it, else the test of
    that name or of the name before its '.RUN'; None for a guest of no
    test (its every SKIP line then fails)."""
    tests = getattr(suite, "tests", {})
    if guest in tests:
        return tests[guest]
    return BY_NAME.get(guest) or BY_NAME.get(guest.split(".")[0])


# Issue 27: the backend each vCPU's APIC timer ran on. vmm/apic/vcpu_timer.c
# prints the line for every vCPU; timer_select() falls back silently to
# another backend otherwise (hpet -> lapic -> preempt), so a suite for a
# backend names it for each guest and vCPU, and rejects any fallback it
# does not declare.
BACKEND_NAMES = {"preempt": "VMX-preemption timer", "lapic": "host local APIC timer",
                 "hpet": "HPET", "posted": "housekeeping CPU (posted interrupts)"}
FALLBACK = r"\(fallback: "


def timer_backend(opts, vcpus, cpus, posted=True):
    """The backend of a guest line's options (the last timer= wins) on a
    boot of `cpus` CPUs whose model has posted interrupts or not. timer=auto
    is posted where housekeeper_plan() (vmm/apic/housekeeper.c) finds posted
    interrupts, a free CPU and virtual-interrupt delivery, else the
    preemption timer; with hlt=guest only on CPUs that wake a halted guest
    for a pending virtual interrupt (probe 5), which this tree's Bochs does
    (scripts/bochs-patches/0007; suite auto-hlt-guest has the other case)."""
    words = opts.split()
    sel = ([o[len("timer="):] for o in words if o.startswith("timer=")] or ["auto"])[-1]
    if sel != "auto":
        return sel
    if posted and vcpus < cpus and "apicv=off" not in words:
        return "posted"
    return "preempt"


def backend_line(guest, vcpu, backend):
    """The line vCPU `vcpu` of `guest` prints when its timer runs on `backend`."""
    return (rf"^tickvisor: guest {re.escape(guest)}: vcpu{vcpu}: APIC timer on the "
            rf"{re.escape(BACKEND_NAMES[backend])}$")


def expect_backends(suite, guests, extra="", posted=True):
    """Append to suite one backend line per (name, test, vcpus) and vCPU,
    and reject every fallback: none of these guests has one declared."""
    for name, t, vcpus in guests:
        backend = timer_backend(f"{t.options} {extra}", vcpus, suite.cpus, posted)
        suite.expect += [backend_line(name, n, backend) for n in range(vcpus)]
    suite.reject.append(FALLBACK)
    return suite


def guest_suite(name, tests, cpus=1, run=None, extra="", timeout=900):
    """One boot running `tests` (with one variant's options)."""
    lines = [t.guest_line(run, extra) for t in tests]
    guests = [(f"{t.name}.{run}" if run else t.name, t.status) for t in tests]
    status = 1 if any(st for _, st in guests) else 0
    return Suite(name, guestcfg.config(lines), cpus=cpus, status=status,
                 guests=guests, timeout=timeout, expect=[done_line(guests)],
                 reject=[TRACE_LINE, PI_EMPTY_ERRATUM, HLT_VINTR_ERRATUM, HLT_IF0_ERRATUM])


def guest_suites(tests):
    """The guest tests of guest-tests/unittests.cfg: every test with the
    defaults, then each variant's run of the tests that list it; tests
    needing several vCPUs boot with 2 and 4 CPUs."""
    up = [t for t in tests if t.vcpus == 1]
    out = [expect_backends(guest_suite("guests", up), [(t.name, t, 1) for t in up])]
    for variant, runs in guestcfg.VARIANT_RUNS.items():
        for run, opts in runs:
            chosen = [t for t in up if variant in t.variants]
            if chosen:
                out.append(expect_backends(
                    guest_suite(f"guests-{run}", chosen, run=run, extra=opts),
                    [(f"{t.name}.{run}", t, 1) for t in chosen], opts))
    for cpus in (2, 4):
        smp = [t for t in tests if 1 < t.vcpus <= cpus]
        if smp:
            out.append(expect_backends(guest_suite(f"smp-{cpus}cpu", smp, cpus=cpus),
                                       [(t.name, t, t.vcpus) for t in smp]))
    return out


def hpet_line(t, vcpus, args=""):
    """Test t's guest line for a timer=hpet run on vcpus vCPUs."""
    cmdline = " ".join(x for x in (t.name, t.args, args) if x)
    return guestcfg.guest_line(f"{t.name}.hpet", t.file, t.mem, vcpus, t.timeout, cmdline,
                               "timer=hpet")


# Bochs's comparators have no FSB delivery and may use any of inputs 0-23;
# 23 is a PCI-range input, level-triggered and active low (issue 22.6,
# timer/host_route.h). Bochs's hpet.cc holds a level line until the
# status bit is cleared and its ioapic.cc raises nothing new on a line
# already high: with the clearing removed (handler and arm) hpet-4cpu's
# smp_timers got 2-3 ticks of 50-100 (checked 2026-12-06).
HPET_LEVEL_ROUTE = (r"^tickvisor: HPET: comparator 0 interrupts cpu0 through I/O APIC "
                    r"input 23 \(level, active low\)$")
HPET_STUCK_LINE = r"stays asserted while comparator"


def hpet_smp_suites(tests):
    """timer=hpet on several CPUs (issue 15.6): each CPU's vCPU needs its
    own HPET comparator routed to it. 2 CPUs: the timer tests, two SMP
    guests cut down to 2 vCPUs and smp_init_kick (issue 10.8); 4 CPUs on
    Bochs's 3-comparator HPET: the CPU left without one says so and runs
    on its host LAPIC timer.

    In a 2-CPU Bochs machine a VM exit costs more emulated cycles than
    with one CPU (timer=lapic and the preemption timer show it too), and
    timer_divide's halted case counts four exits into its lateness: the
    timer tests get slack_us=100 here instead of 50. What this suite is
    for, an interrupt reaching the right CPU at all, fails by far more."""
    timer = [t for t in tests if t.vcpus == 1 and "timer" in t.variants]
    smp = [(BY_NAME["smp_timers"], 2), (BY_NAME["smp_halt_wake"], 2),
           (BY_NAME["smp_init_kick"], 2)]
    lines = [hpet_line(t, 1, "slack_us=100") for t in timer] + \
        [hpet_line(t, n) for t, n in smp]
    guests = [(f"{t.name}.hpet", 0) for t in timer] + [(f"{t.name}.hpet", 0) for t, _ in smp]
    two = Suite("hpet-2cpu", guestcfg.config(lines), cpus=2, guests=guests,
                timeout=900, expect=[done_line(guests), HPET_LEVEL_ROUTE],
                reject=[HPET_STUCK_LINE])
    expect_backends(two, [(f"{t.name}.hpet", t, 1) for t in timer] +
                    [(f"{t.name}.hpet", t, n) for t, n in smp], "timer=hpet")
    four = Suite("hpet-4cpu", guestcfg.config([hpet_line(BY_NAME["smp_timers"], 4)]), cpus=4,
                 guests=[("smp_timers.hpet", 0)], timeout=900,
                 expect=[r"^tickvisor: done: 1 guests, 0 failed$",
                         *(backend_line("smp_timers.hpet", n, "hpet") for n in range(3)),
                         # The one fallback declared: Bochs's HPET has 3
                         # comparators, CPU 3 gets none.
                         r"^tickvisor: guest smp_timers.hpet: vcpu3: APIC timer on the host "
                         r"local APIC timer \(fallback: no HPET comparator can interrupt "
                         r"this CPU\)$", HPET_LEVEL_ROUTE],
                 reject=[r"^tickvisor: guest smp_timers.hpet: vcpu[0-2]: .*\(fallback: ",
                         HPET_STUCK_LINE])
    return [two, four, hpet_strays_suite()]


def hpet_strays_suite():
    """A shared HPET line (issue 22.6): inject=hpet-strays lets
    timer_hpet_strays raise its CPU's HPET vector with the comparator idle
    until tickvisor masks the input (HPET_STRAYS_MAX in a row); its timer
    moves to the host LAPIC timer with its target kept. The next guest on
    that CPU asks for timer=hpet and is told there is no comparator left.
    Without the masking (or with the comparator kept) the strays guest's
    hypercall fails and the second guest is not on a fallback."""
    strays = BY_NAME["timer_hpet_strays"]
    after = BY_NAME["timer_oneshot"]
    lines = [posted_line(strays, "timer_hpet_strays.masked", 1, strays.options, "expect=masked"),
             hpet_line(after, 1)]
    guests = [("timer_hpet_strays.masked", 0), ("timer_oneshot.hpet", 0)]
    return Suite("hpet-strays", "inject=hpet-strays\n" + guestcfg.config(lines), guests=guests,
                 timeout=300, expect=[
                     done_line(guests), HPET_LEVEL_ROUTE,
                     backend_line("timer_hpet_strays.masked", 0, "hpet"),
                     r"^tickvisor: HPET: I/O APIC input 23 stays asserted while comparator 0 "
                     r"is idle \(a device shares the line\?\): input masked, this CPU's HPET "
                     r"timer is lost; use timer=preempt or timer=lapic$",
                     r"^tickvisor: guest timer_hpet_strays.masked: vcpu0: APIC timer moves to "
                     r"the host local APIC timer \(the HPET input was masked\)$",
                     r"^tickvisor: guest timer_oneshot.hpet: vcpu0: APIC timer on the host "
                     r"local APIC timer \(fallback: no HPET comparator can interrupt this "
                     r"CPU\)$"])

# --- Issue 13: timer=posted, guest timer expiries posted by a housekeeping CPU --
def posted_line(t, name, vcpus, opts, args=""):
    """Test t's guest line as guest `name` on vcpus vCPUs with options opts."""
    cmdline = " ".join(x for x in (t.name, t.args, args) if x)
    return guestcfg.guest_line(name, t.file, t.mem, vcpus, t.timeout, cmdline, opts)


# The one-vCPU runs of guests-posted: advance off, auto, and hlt=guest (which
# posted timers turn into HLT exits, vmm/apic/housekeeper.c says why).
POSTED_RUNS = [("posted", "timer=posted"), ("posted-auto", "timer=posted advance=auto"),
               ("posted-hlt", "timer=posted hlt=guest")]
POSTED_LINE = r"^tickvisor: guest {}: APIC timers posted by housekeeping cpu{}$"


def posted_suites(tests):
    """timer=posted on skylake_x (posted interrupts): every timer test with
    one vCPU on a 2-CPU boot (CPU 1 houses its timers), then the SMP
    timer tests on a 4-CPU boot beside a housekeeper: smp_timers on 3
    vCPUs (housekeeper CPU 3), INIT while a posted timer is due, a guest
    ending with 3 vCPUs' timers armed, the hostile timer guest, and a
    placement with the BSP as housekeeper (cpus=3,2,1 housekeeping=0).
    The 2-CPU timer tests get slack_us=100, as hpet-2cpu does and for the
    same reason (a VM exit costs more emulated cycles with 2 CPUs)."""
    timer = [t for t in tests if t.vcpus == 1 and "timer" in t.variants]
    lines, guests = [], []
    for run, opts in POSTED_RUNS:
        for t in timer:
            lines.append(posted_line(t, f"{t.name}.{run}", 1, opts, "slack_us=100"))
            guests.append((f"{t.name}.{run}", 0))
    for name in ("timer_end_armed_arm", "timer_end_armed_check", "timer_hostile"):
        lines.append(posted_line(BY_NAME[name], f"{name}.posted", 1, "timer=posted"))
        guests.append((f"{name}.posted", 0))
    # Exitless idle (issue 24.4): with scripts/bochs-patches/0007 HLT stays
    # in the guest beside posted timers and no tick takes an exit.
    lines.append(posted_line(BY_NAME["timer_posted_hlt"], "timer_posted_hlt.exitless", 1,
                             "timer=posted hlt=guest", "hlt_exits=0"))
    guests.append(("timer_posted_hlt.exitless", 0))
    # The exit fast path there: with HLT in the guest it resumes at once
    # where a pending virtual interrupt ends HLT (vmm/exit/exit_fast.c,
    # hlt_managed), so its corner cases run beside posted timers too.
    lines.append(posted_line(BY_NAME["exit_fastpath"], "exit_fastpath.posted-hlt", 1,
                             "timer=posted hlt=guest"))
    guests.append(("exit_fastpath.posted-hlt", 0))
    two = Suite("guests-posted", guestcfg.config(lines), cpus=2, guests=guests, timeout=1500,
                expect=[POSTED_LINE.format("timer_oneshot.posted", 1),
                        r"^tickvisor: guest timer_oneshot.posted: vcpu0: APIC timer on the "
                        r"housekeeping CPU \(posted interrupts\)$",
                        r"^tickvisor: guest timer_oneshot.posted-hlt: hlt=guest with "
                        r"posted timers: HLT stays in the guest on every CPU that wakes it",
                        done_line(guests)],
                reject=[HLT_VINTR_ERRATUM])
    # smp_timers.masked: coincident deadlines with LVTT masked on one CPU
    # or another each round, advance=auto (the housekeeper's posts due at
    # one TSC go as a group, which the masked one leaves).
    smp = [(BY_NAME["smp_timers"], "smp_timers.posted", 3, "", ""),
           (BY_NAME["smp_timer_init"], "smp_timer_init.posted", 2, "", ""),
           (BY_NAME["timer_end_armed_arm"], "timer_end_armed_arm.posted3", 3, "", ""),
           (BY_NAME["timer_end_armed_check"], "timer_end_armed_check.posted3", 3, "", ""),
           (BY_NAME["timer_hostile"], "timer_hostile.posted3", 3, "", ""),
           (BY_NAME["smp_timers"], "smp_timers.placed", 3, "cpus=3,2,1 housekeeping=0", ""),
           (BY_NAME["smp_timers"], "smp_timers.masked", 3, "advance=auto",
            "window_ms=10 rounds=100 masked_every=3")]
    four = Suite("smp-posted-4cpu",
                 guestcfg.config(posted_line(t, name, n, ("timer=posted " + opts).strip(), args)
                                 for t, name, n, opts, args in smp),
                 cpus=4, guests=[(name, 0) for _, name, _, _, _ in smp], timeout=900,
                 expect=[POSTED_LINE.format("smp_timers.posted", 3),
                         POSTED_LINE.format("smp_timer_init.posted", 2),
                         POSTED_LINE.format("smp_timers.placed", 0),
                         POSTED_LINE.format("smp_timers.masked", 3),
                         r"^tickvisor: done: 7 guests, 0 failed$"])
    return [two, four]


# Issue 22.9: placement by core. Bochs `count=1:2:2` (two cores of two
# threads, APIC IDs 0-3; its CPUID leaf 0BH gives per-level shifts, which
# tickvisor mends, drivers/cpu_topo.c): one vCPU on cpu0 leaves its
# sibling cpu1 alone and houses its timers on cpu2, the other core (by
# index order it was cpu1); two vCPUs take cpu0 and cpu2, one per core,
# and the housekeeper then has to share a core, which it says.
TOPOLOGY_SMT2 = (r"^tickvisor: topology: 1 package, 2 cores, 4 CPUs up \(CPUID leaf "
                       r"0xb: SMT shift 1, package shift 2, 2 threads per core\)$")
PLACEMENT_SMT2 = (r"^tickvisor: placement: vCPUs fill cpu0, cpu2, cpu1, cpu3 in that order "
                  r"\(distinct cores first, then hyperthread siblings\); the housekeeper "
                  r"takes a core with no vCPU$")


def auto_hlt_suites():
    """timer=auto with hlt=guest (issue 24.4): posted timers where the
    CPU wakes a halted guest for a pending virtual interrupt (probe 5 of
    vmm/vcpu/vcpu_calib.c; this tree's Bochs does, with
    scripts/bochs-patches/0007), so a tick costs no exit, halted or
    running (timer_posted_hlt hlt_exits=0). With inject=hlt-vintr-erratum
    (probe 5 answers "erratum") auto keeps that vCPU's timer on its own
    CPU with HLT exitless while idle: at most the 10 HLT exits of
    timer_posted_hlt's held rounds, where a blocked pending vector makes
    that entry's HLT exit on such a CPU whatever the backend
    (vapic_inject.c); an explicit timer=posted keeps posted timers and
    pays an HLT exit for every idle tick too (20 more)."""
    t = BY_NAME["timer_posted_hlt"]
    vcpu0 = r"^tickvisor: guest {}: vcpu0: APIC timer on the {}$"
    ok = Suite("auto-hlt-guest", guestcfg.config([
        posted_line(t, "timer_posted_hlt.auto", 1, "hlt=guest", "hlt_exits=0")]),
        cpus=2, guests=[("timer_posted_hlt.auto", 0)], timeout=300,
        expect=[done_line([("timer_posted_hlt.auto", 0)]),
                POSTED_LINE.format("timer_posted_hlt.auto", 1),
                r"^tickvisor: guest timer_posted_hlt.auto: hlt=guest with posted timers: HLT "
                r"stays in the guest on every CPU that wakes it for a pending virtual "
                r"interrupt \(else that vCPU's timer stays on its CPU\)$",
                vcpu0.format("timer_posted_hlt.auto",
                             r"housekeeping CPU \(posted interrupts\)")],
        reject=[HLT_VINTR_ERRATUM, FALLBACK])
    guests = [("timer_posted_hlt.auto-erratum", 0), ("timer_posted_hlt.posted-erratum", 0)]
    erratum = Suite("auto-hlt-guest-erratum", "inject=hlt-vintr-erratum\n" + guestcfg.config([
        posted_line(t, "timer_posted_hlt.auto-erratum", 1, "hlt=guest"),
        posted_line(t, "timer_posted_hlt.posted-erratum", 1, "timer=posted hlt=guest")]),
        cpus=2, guests=guests, timeout=300,
        expect=[done_line(guests),
                r"^tickvisor: guest timer_posted_hlt.auto-erratum: vcpu0: inject="
                r"hlt-vintr-erratum: probe 5 not made, its erratum assumed$",
                vcpu0.format("timer_posted_hlt.auto-erratum",
                             r"VMX-preemption timer \(fallback: this CPU does not end a "
                             r"guest's HLT for a pending virtual interrupt\)"),
                r"^tickvisor: guest timer_posted_hlt.auto-erratum: \d+ VM exits: .*HLT "
                r"([0-9]|10), ",
                vcpu0.format("timer_posted_hlt.posted-erratum",
                             r"housekeeping CPU \(posted interrupts\)"),
                r"^tickvisor: guest timer_posted_hlt.posted-erratum: \d+ VM exits: .*HLT "
                r"([3-9][0-9]|[1-9][0-9]{2,}), "])
    return [ok, erratum]


def smt_suite():
    runs = [(BY_NAME["timer_oneshot"], "timer_oneshot.smt", 1, "slack_us=100"),
            (BY_NAME["smp_timer_init"], "smp_timer_init.smt", 2, "")]
    lines = [posted_line(t, name, n, "timer=posted", args) for t, name, n, args in runs]
    guests = [(name, 0) for _, name, _, _ in runs]
    return Suite("smt-posted-4cpu", guestcfg.config(lines), cpus=4, threads=2, guests=guests,
                 timeout=900, expect=[
                     TOPOLOGY_SMT2, PLACEMENT_SMT2,
                     r"^tickvisor: topology: CPUID mended: ",
                     r"^tickvisor: guest timer_oneshot.smt: vcpu0 on cpu0 \(core 0\)$",
                     POSTED_LINE.format("timer_oneshot.smt", 2),
                     r"^tickvisor: guest smp_timer_init.smt: vcpu0 on cpu0 \(core 0\), vcpu1 "
                     r"on cpu2 \(core 1\)$",
                     r"^tickvisor: guest smp_timer_init.smt: housekeeping cpu1 shares its core "
                     r"with a vCPU \(every free CPU is a hyperthread sibling of one\)$",
                     POSTED_LINE.format("smp_timer_init.smt", 1),
                     done_line(guests)])


# Issue 13.1-13.3: vCPU placement and posted timers refused with their
# reason, a timer storm ended by the time limit; each time the next guest
# still runs. 2 CPUs: vCPU 0 on CPU 1 leaves the BSP the housekeeper.
def containment_posted():
    basic = BY_NAME["basic"]
    cases = [("cpu_missing", basic, 1, "cpus=5", 255,
              r"vcpu0: cpus= names cpu5, which does not exist \(2 CPUs are up\)"),
             ("cpu_taken", basic, 1, "cpus=1 timer=posted housekeeping=1", 255,
              r"timer=posted impossible: housekeeping=1 names cpu1, which is taken"),
             ("posted_no_vid", basic, 1, "timer=posted apicv=off", 255,
              r"timer=posted impossible: virtual-interrupt delivery is off \(apicv=off\)"),
             ("posted_no_cpu", BY_NAME["smp_ipi"], 2, "timer=posted", 255,
              r"timer=posted impossible: no free CPU for housekeeping \(all 2 CPUs up run "
              r"its vCPUs\)"),
             ("hostile_forever", BY_NAME["timer_hostile"], 1, "timer=posted", 254,
              r"vcpu0: over its time limit of 1 s"),
             ("bsp_housekeeper", basic, 1, "cpus=1 timer=posted", 0,
              r"APIC timers posted by housekeeping cpu0"),
             ("basic", basic, 1, "", 0, r"starting")]
    lines = []
    for name, t, n, opts, _, _ in cases:
        args = "mode=forever" if name == "hostile_forever" else ""
        line = posted_line(t, name, n, opts, args)
        if name == "hostile_forever":
            line = line.replace(f"timeout={t.timeout}", "timeout=1")
        lines.append(line)
    suite = Suite("containment-posted", guestcfg.config(lines), cpus=2, status=1, timeout=600,
                  guests=[(name, st) for name, _, _, _, st, _ in cases],
                  expect=[rf"^tickvisor: guest {name}: .*{msg}" for name, _, _, _, _, msg in cases]
                  + [r"^tickvisor: done: 7 guests, 5 failed$"])
    # The guests that run to the end hold basic's min_pass (test_of()).
    suite.tests = {name: t for name, t, _, _, st, _ in cases if st == 0}
    return suite


# Issue 22.4, in Bochs (QEMU's TCG CPUs have no IA32_TSC_ADJUST; Bochs's
# Skylake-X has it, and its RDTSC adds it, cpu/proc_ctrl.cc): 4 CPUs, one
# AP with a firmware's IA32_TSC_ADJUST, undone at bring-up, another put
# 10^8 cycles ahead after that check. The warp test must find that one
# and only that one; a 2-vCPU guest and a posted one are then refused
# with the reason, and a guest on one vCPU still runs. cpu3's host timer
# check finds no interrupt: Bochs 3.0 dates a TSC-deadline against its
# unadjusted tick count (cpu/apic.cc set_tsc_deadline: deadline -
# time_ticks()), not the TSC that RDTSC and the SDM's comparison use
# (time_ticks + IA32_TSC_ADJUST), so 10^8 cycles ahead it fires 2 s late.
# Unpatched (only the host's own check arms it on a moved TSC); the
# bring-up waits out the whole check and says so, where it once gave up
# on the CPU as "could not enter VMX operation".
def tsc_warp_suite():
    basic = BY_NAME["basic"]
    cases = [("warp_smp", BY_NAME["smp_ipi"], 2, "", 255,
              r"has 2 vCPUs, but the CPUs' TSCs are out of step \(warp test\): refused"),
             ("warp_posted", basic, 1, "cpus=1 timer=posted", 255,
              r"timer=posted impossible: the CPUs' TSCs are out of step \(warp test\)"),
             ("basic", basic, 1, "", 0, r"starting")]
    lines = [posted_line(t, name, n, opts) for name, t, n, opts, _, _ in cases]
    cfg = guestcfg.config(["inject=tsc-adjust:2:-3000000000 inject=tsc-warp:3:100000000"]
                          + lines)
    suite = Suite("tsc-warp-4cpu", cfg, cpus=4, status=1, timeout=600,
                  guests=[(name, st) for name, _, _, _, st, _ in cases],
                  expect=[rf"^tickvisor: guest {name}: .*{msg}" for name, _, _, _, _, msg in cases]
                  + [r"^tickvisor: cpu2: IA32_TSC_ADJUST was -3000000000 \(left by the "
                     r"firmware\): set to 0$",
                     r"^tickvisor: TSC: cpu3's TSC is at least \d{8,9} cycles ahead of cpu0's "
                     r"\(warp test\)$",
                     r"^tickvisor: TSC: unsynchronised across CPUs: guests with more than one "
                     r"vCPU, and timer=posted, are refused$",
                     r"^tickvisor: done: 3 guests, 2 failed$",
                     r"^tickvisor: 4 of 4 CPUs up \(VMX on all of them\)$",
                     r"^tickvisor: cpu3: no host timer interrupt within 1000 ms of arming its "
                     r"LAPIC timer$"],
                  reject=[r"in step on all", r"cpu[12]'s TSC is at least", TRACE_LINE,
                          r"cpu[0-2]: no host timer interrupt", r"left out"])
    suite.tests = {name: t for name, t, _, _, st, _ in cases if st == 0}
    return suite


class OnceSuite(Suite):
    """A suite whose `once` regexes must each match exactly one line: lines
    printed before ExitBootServices go to COM1 once, not once directly and
    once more through the firmware's console (issue 21.3)."""

    def __init__(self, name, config, once=(), **kw):
        super().__init__(name, config, **kw)
        self.once = list(once)

    def checks(self, serial):
        for pattern in self.once:
            n = len(re.findall(pattern, serial, re.M))
            yield n == 1, f"serial once: {pattern}", f"{n} lines match"


VERSION_LINE = r"^tickvisor: tickvisor \d+\.\d+\.\d+ \(git [0-9a-f]{7,}(-dirty)?\)"

# Issue 27: what tickvisor counted of a guest's unassigned-memory accesses
# (vmm/guest.c) against what guest-tests/unassigned_mem.c says it made.
HOLE_MADE_RE = re.compile(r"^unassigned_mem: made (\d+) reads, (\d+) writes to unassigned "
                          r"memory$", re.M)
HOLE_COUNTED = r"^tickvisor: guest {}: unassigned memory: (\d+) reads \(all ones\), (\d+) " \
               r"writes \(dropped\)$"


def hole_count_checks(serial, guest):
    """One check: tickvisor's counts for `guest` equal the guest's own."""
    import emu  # noqa: E402  (scripts/, on the path with guestcfg)
    lines = "\n".join(emu.split_guests(serial).get(guest, (None, []))[1])
    made = HOLE_MADE_RE.search(lines)
    counted = re.search(HOLE_COUNTED.format(re.escape(guest)), serial, re.M)
    got = tuple(map(int, counted.groups())) if counted else None
    want = tuple(map(int, made.groups())) if made else None
    return (want is not None and got == want,
            f"{guest}: tickvisor counts the unassigned-memory accesses the guest made",
            f"guest made (reads, writes) {want}, tickvisor counted {got}")


class HoleCountSuite(Suite):
    """A suite whose `hole_guests` each print the unassigned-memory
    accesses they made; tickvisor's count must match each."""

    def __init__(self, *args, hole_guests=(), **kw):
        super().__init__(*args, **kw)
        self.hole_guests = list(hole_guests)

    def checks(self, serial):
        return [hole_count_checks(serial, g) for g in self.hole_guests]


SUITES = [
    # Issue 2: the boot skeleton.
    OnceSuite("boot-bochs", "log=info\n", once=[VERSION_LINE],
              expect=[r"^tickvisor: VMX: preemption timer yes \(rate \d+",
                      r"^tickvisor: VMX: EPT yes .* unrestricted guest yes",
                      r"^tickvisor: TSC: 50000000 Hz from HPET",
                      r"^tickvisor: HPET: 0xfed00000 \(probe at 0xfed00000\), 100000000 Hz",
                      # Issue 22.2: Bochs claims MCA and reads its MSRs as 0.
                      r"^tickvisor: machine checks: CR4.MCE on every CPU, 0 banks \(MCG_CAP 0\), "
                      r"#MC in a guest intercepted$",
                      # Issue 22.6: every input masked before the HPET's is routed.
                      r"^tickvisor: I/O APIC: 24 inputs at 0xfec00000, all masked \(\d+ the "
                      r"firmware left unmasked\)$",
                      r"^tickvisor: done: 0 guests, 0 failed$"]),
    # Issue 21.4: VMX is checked before ExitBootServices. In an emulator
    # (end=auto: fw_cfg) tickvisor goes on to report the platform and
    # refuses after it; ...
    OnceSuite("boot-tcg-novmx", "log=info\n", emu="tcg", status=1,
              once=[VERSION_LINE, r"^tickvisor: error: VMX unavailable: this CPU has no VMX"],
              expect=[r"^tickvisor: ACPI: RSDP rev 2 .*MADT.*HPET.*FADT",
                      r"^tickvisor: TSC: \d+ Hz from HPET",
                      r"^tickvisor: error: no guest runs: VMX unavailable \(reason above\)$",
                      r"^tickvisor: final status 1$"]),
    # ... as a real PC does (end=wait), it stops at once, while the
    # firmware's console still shows the reason, and waits for a key or
    # 60 s before it powers off: nothing after ExitBootServices runs.
    Suite("boot-tcg-novmx-end-wait", "log=info\nend=wait\n", emu="tcg", status=1,
          timeout=180,
          expect=[r"^tickvisor: error: VMX unavailable: this CPU has no VMX",
                  r"^tickvisor: final status 1$",
                  r"^tickvisor: press a key to power off \(or wait 60 s\)$"],
          reject=[r"^tickvisor: memory: ", r"^tickvisor: ACPI: "]),
    Suite("config-error", "timer=auto\nguest ok x.elf\nbogus=1\n", status=1,
          expect=[r"^tickvisor: error: \\EFI\\tickvisor\\tickvisor.cfg:3: unknown option 'bogus'"]),
    Suite("guest-missing", "guest lost guests/does-not-exist.elf mem=16M\n", status=1,
          expect=[r"^tickvisor: error: \\EFI\\tickvisor\\tickvisor.cfg:1: guest lost: cannot "
                  r"read \\EFI\\tickvisor\\guests\\does-not-exist.elf: file not found"]),
    # Issue 14: a bzImage tickvisor cannot load (guest-tests/linux_bad_*.asm)
    # ends that guest with status 255 and the reason; the good bzImage and
    # a Multiboot guest after them still run.
    Suite("linux-load-errors",
          guestcfg.config([guestcfg.guest_line(n, f"{n}.bzimage", "64M", 1, 10, "linux_boot")
                           for n in ("linux_bad_protocol", "linux_bad_zimage", "linux_bad_size")] +
                          [BY_NAME["linux_boot"].guest_line(), BY_NAME["basic"].guest_line()]),
          status=1, guests=[("linux_bad_protocol", 255), ("linux_bad_zimage", 255),
                            ("linux_bad_size", 255), ("linux_boot", 0), ("basic", 0)],
          expect=[r"^tickvisor: guest linux_bad_protocol: cannot load "
                  r"guests/linux_bad_protocol.bzimage: boot protocol 2.09 is older than 2.10",
                  r"^tickvisor: guest linux_bad_zimage: cannot load guests/linux_bad_zimage."
                  r"bzimage: not a bzImage: loadflags 0x0 lack LOADED_HIGH",
                  r"^tickvisor: guest linux_bad_size: cannot load guests/linux_bad_size.bzimage: "
                  r"kernel does not fit: it runs at 0x1000000 and needs 0x40000000 bytes",
                  r"^tickvisor: done: 5 guests, 3 failed$"]),
    # Issue 3: a guest that dies is contained; the next one still runs.
    HoleCountSuite("containment",
          guestcfg.config(BY_NAME[n].guest_line() for n in
                          ("triple_fault", "bad_access", "apic_exec", "event_hole",
                           "unassigned_mem", "basic")),
          status=1, guests=[("triple_fault", 251), ("bad_access", 252), ("apic_exec", 252),
                            ("event_hole", 252), ("unassigned_mem", 0), ("basic", 0)],
          expect=[r"^tickvisor: guest triple_fault: vcpu0: triple fault \(shutdown\)",
                  r"^tickvisor:   exit reason 2 \(triple fault\)",
                  r"^tickvisor: guest bad_access: vcpu0: read of guest-physical address "
                  r"0xd0000000 outside RAM",
                  r"^tickvisor:   rip=[0-9a-f]{16} rsp=",
                  r"^tickvisor: guest apic_exec: vcpu0: APIC page used for an instruction fetch",
                  # Issue 10.3: the exception frame pushed onto a hole is the
                  # CPU's own access; the store at RIP is not emulated.
                  r"^tickvisor: guest event_hole: vcpu0: write of guest-physical address "
                  r"0xd0000ff8 \(no RAM\) while delivering vector 13 ",
                  # Unassigned memory: first accesses logged, all counted; the
                  # counts are matched against the guest's own (hole_guests).
                  r"^tickvisor: guest unassigned_mem: vcpu0: read of unassigned guest-physical "
                  r"0xd0000040 at rip 0x[0-9a-f]+: reads all ones$",
                  r"^tickvisor: done: 6 guests, 4 failed$"],
          hole_guests=["unassigned_mem"]),
    # Issue 25.3: the exit fuzzer with two more seeds, then canaries: a
    # guest of every kind that must still pass after it (the host intact:
    # timers, APIC, devices, memory).
    Suite("exit-fuzz",
          guestcfg.config(
              [guestcfg.guest_line(f"exit_fuzz_{seed}", "exit_fuzz.elf", "64M", 1, 60,
                                   f"exit_fuzz seed={seed} ops=100000") for seed in (2, 3)] +
              [BY_NAME[n].guest_line() for n in EXIT_FUZZ_CANARIES]),
          guests=EXIT_FUZZ_GUESTS,
          expect=[done_line(EXIT_FUZZ_GUESTS),
                  r"^PASS: x2APIC MSRs in xAPIC mode: #GP every time",
                  r"^INFO: seed 2: 100000 operations ran to the end$",
                  r"^INFO: seed 3: 100000 operations ran to the end$"]),
    # Issue 14: reset and power-off requests end their guest with a status
    # (vmm/dev/dev_power.h), hostile widths on the device ports are
    # answered, string I/O ends the guest; each time the next guest runs.
    Suite("containment-devices",
          guestcfg.config(BY_NAME[n].guest_line() for n in
                          ("power_reset_kbc", "power_reset_kbc_outport", "power_reset_cf9",
                           "power_off_acpi", "dev_hostile", "basic")),
          status=1, guests=[("power_reset_kbc", 249), ("power_reset_kbc_outport", 249),
                            ("power_reset_cf9", 249), ("power_off_acpi", 0),
                            ("dev_hostile", 250), ("basic", 0)],
          # Each guest's exact end: the device and the write that asked
          # (vmm/dev/dev_power.c), as the guest announced it just before.
          expect=[r"^INFO: power_reset: kbc: writing 0xfe to port 0x64 \(8042 command: pulse "
                  r"the reset line\): tickvisor must end this guest$",
                  r"^tickvisor: guest power_reset_kbc: vcpu0: reset by the keyboard controller "
                  r"\(reset pulse command\): 0xfe written to port 0x64; the guest ends "
                  r"\(status 249\)$",
                  r"^INFO: power_reset: kbc-outport: writing 0xfe to port 0x60 \(8042 output "
                  r"port after command 0xd1, reset line low\): tickvisor must end this guest$",
                  r"^tickvisor: guest power_reset_kbc_outport: vcpu0: reset by the keyboard "
                  r"controller \(output port bit 0 cleared\): 0xfe written to port 0x60; the "
                  r"guest ends \(status 249\)$",
                  r"^INFO: power_reset: cf9: writing 0x06 to port 0xcf9 \(0xcf9: SYS_RST \| "
                  r"RST_CPU, hard reset\): tickvisor must end this guest$",
                  r"^tickvisor: guest power_reset_cf9: vcpu0: reset by the reset control "
                  r"register 0xcf9 \(hard reset\): 0x06 written to port 0xcf9; the guest ends "
                  r"\(status 249\)$",
                  r"^INFO: power_reset: acpi-s5: writing 0x34 to port 0x600 \(ACPI sleep "
                  r"control: SLP_TYP S5 \| SLP_EN, soft off\): tickvisor must end this guest$",
                  r"^tickvisor: guest power_off_acpi: vcpu0: power-off by ACPI sleep control "
                  r"\(S5, soft off\): 0x34 written to port 0x600; the guest ends \(status 0\)$",
                  r"^tickvisor: guest dev_hostile: vcpu0: string I/O \(INS/OUTS\) on port "
                  r"0x3f8 is not supported",
                  r"^tickvisor: done: 6 guests, 4 failed$"]),
    # Issue 10.7 / 15.7: no guest state hangs the boot; the time limit ends
    # each (status 254) and the next guest runs. 2 CPUs for smp_stop_cli.
    Suite("containment-hangs",
          guestcfg.config(BY_NAME[n].guest_line() for n in
                          ("time_limit_init_self", "time_limit_spin", "time_limit_cli_hlt",
                           "time_limit_cli_hlt_exit", "timer_tscdl_past", "smp_stop_cli",
                           "smp_stop_cli_hlt", "basic")),
          cpus=2, status=1, timeout=240,
          guests=[("time_limit_init_self", 254), ("time_limit_spin", 254),
                  ("time_limit_cli_hlt", 254), ("time_limit_cli_hlt_exit", 254),
                  ("timer_tscdl_past", 0), ("smp_stop_cli", 0),
                  ("smp_stop_cli_hlt", 0), ("basic", 0)],
          expect=[r"^tickvisor: guest time_limit_init_self: vcpu0: over its time limit "
                  r"of 1 s \(waiting for SIPI\)",
                  r"^tickvisor: guest time_limit_spin: vcpu0: over its time limit of 1 s$",
                  r"^tickvisor: guest time_limit_cli_hlt: vcpu0: over its time limit of 1 s",
                  # A lone vCPU halted with IF=0 sleeps until its time
                  # limit (vmm/apic/vcpu_timer.c, halt_hopeless()), no earlier.
                  r"^tickvisor: guest time_limit_cli_hlt_exit: vcpu0: over its time limit "
                  r"of 1 s \(halted\)$",
                  r"^tickvisor: done: 8 guests, 4 failed$"]),
    # Issue 11.9: trace points by subsystem, off by default (the guest
    # suites, trace_points among them, reject TRACE_LINE). log=trace:timer,ipi
    # traces those two and not the exits, APICv on (RVI) and off (event
    # injection).
    Suite("trace-timer-ipi",
          guestcfg.config(
              ["log=trace:timer,ipi",
               BY_NAME["trace_points"].guest_line(),
               BY_NAME["trace_points"].guest_line("apicv-off", "apicv=off")]),
          guests=[("trace_points", 0), ("trace_points.apicv-off", 0)],
          expect=[r"^tickvisor: cpu0: trace timer: vcpu0: arm one-shot, target 0x[0-9a-f]+ "
                  r"\(in \d+ TSC cycles\)$",
                  r"^tickvisor: cpu0: trace timer: vcpu0: stop$",
                  r"^tickvisor: cpu0: trace timer: vcpu0: expire at 0x[0-9a-f]+, inject vector "
                  r"0x40 \(virtual-interrupt delivery\), entry wait until (0|0x[0-9a-f]+)$",
                  r"^tickvisor: cpu0: trace timer: vcpu0: expire at 0x[0-9a-f]+, inject vector "
                  r"0x40 \(event injection\), entry wait until (0|0x[0-9a-f]+)$",
                  r"^tickvisor: cpu0: trace timer: vcpu0: arm TSC-deadline, target 0x[0-9a-f]+ "
                  r"\(in \d+ TSC cycles\)$",
                  r"^tickvisor: cpu0: trace ipi: vcpu0: send fixed vector 0x70 to physical 0 "
                  r"\(self\)$",
                  r"^tickvisor: cpu0: trace ipi: vcpu0: deliver fixed vector 0x70 to vcpu0$",
                  r"^tickvisor: done: 2 guests, 0 failed$"],
          reject=[r"^tickvisor: cpu\d+: trace exit: "]),
    # ... and log=trace:exit every exit, with its reason's name. Each of
    # basic's ~3,300 exits (one per serial byte) then costs a trace line
    # of ~8 ms at 115200 baud, which is guest time: 120 s, not 30.
    Suite("trace-exit",
          guestcfg.config(["log=trace:exit",
                           BY_NAME["basic"].guest_line().replace(
                               f"timeout={BY_NAME['basic'].timeout} ", "timeout=120 ")]),
          guests=[("basic", 0)],
          expect=[r"^tickvisor: cpu0: trace exit: vcpu0: exit 10 \(CPUID\) at rip 0x[0-9a-f]+, "
                  r"qualification 0$",
                  r"^tickvisor: cpu0: trace exit: vcpu0: exit 30 \(I/O instruction\) at rip "
                  r"0x[0-9a-f]+, qualification 0x[0-9a-f]+$",
                  r"^tickvisor: done: 1 guests, 0 failed$"],
          reject=[r"^tickvisor: cpu\d+: trace (timer|ipi): "]),
] + guest_suites(TESTS) + hpet_smp_suites(TESTS) + posted_suites(TESTS) + auto_hlt_suites() + [containment_posted(), smt_suite()]


# --- Issue 12: the CPU-model matrix ------------------------------------------
# Users boot tickvisor on whatever Intel part they have, so make test also
# boots the bundled guests on Bochs models with smaller VMX feature sets
# (PLATFORM.md, "Bochs CPU models as a VMX feature matrix"), and expects the
# exact refusal on models that lack what tickvisor cannot do without. Each
# suite is named cpu-MODEL-... so `--only cpu-` runs the whole matrix.

# model -> the APIC-virtualization features tickvisor must find on it (its
# "VMX: TPR shadow ..." line), so a suite also fails when it did not boot
# the model it names.
MATRIX_GUEST_MODELS = {
    # Virtual-interrupt delivery, no posted interrupts.
    "corei7_haswell_4770": "APIC-register virtualization yes, virtual-interrupt delivery yes, "
                           "x2APIC virtualization yes, posted interrupts no",
    # TPR shadow and the APIC-access page only: every APIC access exits.
    "corei7_sandy_bridge_2600k": "APIC-register virtualization no, virtual-interrupt delivery "
                                 "no, x2APIC virtualization no, posted interrupts no",
    # x2APIC virtualization without APIC-register virtualization or VID.
    "corei3_cnl": "APIC-register virtualization no, virtual-interrupt delivery no, "
                  "x2APIC virtualization yes, posted interrupts no",
}
# The SMP set runs here: VID, but IPIs kick the target with a host IPI.
MATRIX_SMP_MODEL = "corei7_haswell_4770"
MATRIX_SMP_CPUS = 4
# model -> the line tickvisor stops with (status 1, no guest runs).
MATRIX_REFUSED_MODELS = {
    "corei5_lynnfield_750": "tickvisor: error: VMX unavailable: the CPU has no unrestricted "
                            "guest (needed to start guests with paging off)",
    "core2_penryn_t9600": "tickvisor: error: VMX unavailable: the CPU has no usable EPT "
                          "(needed to give guests their RAM: 4-level walk, write-back, "
                          "single-context INVEPT)",
}


def matrix_apicv_line(features):
    return r"^tickvisor: VMX: TPR shadow yes, APIC-access yes, " + re.escape(features) + "$"


def matrix_suites(tests):
    """The 1-CPU guests of the default "guests" suite on each model of
    MATRIX_GUEST_MODELS, the SMP set on MATRIX_SMP_MODEL, and one refused
    boot per model of MATRIX_REFUSED_MODELS."""
    out = []
    up = [t for t in tests if t.vcpus == 1]
    for model, apicv in MATRIX_GUEST_MODELS.items():
        suite = guest_suite(f"cpu-{model}-guests", up)
        suite.model = model
        suite.expect.append(matrix_apicv_line(apicv))
        out.append(expect_backends(suite, [(t.name, t, 1) for t in up],
                                   posted="posted interrupts yes" in apicv))
    smp = [t for t in tests if 1 < t.vcpus <= MATRIX_SMP_CPUS]
    if smp:
        suite = guest_suite(f"cpu-{MATRIX_SMP_MODEL}-smp-{MATRIX_SMP_CPUS}cpu", smp,
                            cpus=MATRIX_SMP_CPUS)
        suite.model = MATRIX_SMP_MODEL
        apicv = MATRIX_GUEST_MODELS[MATRIX_SMP_MODEL]
        suite.expect.append(matrix_apicv_line(apicv))
        out.append(expect_backends(suite, [(t.name, t, t.vcpus) for t in smp],
                                   posted="posted interrupts yes" in apicv))
    for model, line in MATRIX_REFUSED_MODELS.items():
        # A guest is listed so the refusal is the one a real config meets.
        out.append(Suite(f"cpu-{model}-refused", guestcfg.config([BY_NAME["basic"].guest_line()]),
                         model=model, status=1,
                         expect=[r"^" + re.escape(line) + r"$",
                                 r"^tickvisor: final status 1$"]))
    return out


SUITES += matrix_suites(TESTS)


def matrix_posted_refused():
    """timer=posted on a model without posted interrupts (issue 13.2): the
    guest is refused, naming what is missing, and the next one runs (on
    the per-CPU backend timer=auto falls back to there)."""
    basic = BY_NAME["basic"]
    suite = Suite(f"cpu-{MATRIX_SMP_MODEL}-posted-refused",
                  guestcfg.config([posted_line(basic, "posted", 1, "timer=posted"),
                                   posted_line(basic, "auto", 1, "")]),
                  cpus=2, status=1, guests=[("posted", 255), ("auto", 0)],
                  expect=[r"^tickvisor: guest posted: timer=posted impossible: the CPU has no "
                          r"posted interrupts$",
                          r"^tickvisor: guest auto: vcpu0: APIC timer on the VMX-preemption "
                          r"timer$",
                          r"^tickvisor: done: 2 guests, 1 failed$"])
    suite.model = MATRIX_SMP_MODEL
    suite.tests = {"auto": basic}      # its min_pass holds there (test_of())
    return suite


SUITES.append(matrix_posted_refused())


# --- Issue 12: one guest of your own (make run KERNEL=, scripts/tickvisor-run) --
class RunnerCheck(Suite):
    """A command instead of a boot made by the harness: `argv` (with {build}
    for the build folder and {work} for the suite's own folder) must exit
    with `status`; `expect` and the guests are checked against its output
    (stdout and stderr; the runners echo the serial log), `reject` lists
    regexes that must not appear."""

    def __init__(self, name, argv, status=0, expect=(), reject=(), guests=(), timeout=600,
                 emu="bochs", cpus=1):
        super().__init__(name, None, emu=emu, cpus=cpus, status=status, expect=expect,
                         guests=guests, timeout=timeout)
        self.argv = list(argv)
        self.reject = list(reject)


RUNNER = "scripts/tickvisor-run"
# The runner never gets as far as an emulator after a refusal: no
# "booting" line, no firmware boot manager (OVMF's BdsDxe, under Bochs as
# under QEMU) and no tickvisor. These runners name Bochs, so a QEMU command
# line could never appear (tests/test_harness.py keeps it so).
NO_BOOT = [r"^tickvisor-run: booting", r"^BdsDxe: ", r"^tickvisor: "]

SUITES += [
    # The README's example: a bundled guest as KERNEL=, through make.
    RunnerCheck("runner-make-kernel",
                ["make", "--no-print-directory", "run", "BUILD={build}", "EMU=bochs",
                 "KERNEL={build}/guests/basic.elf", "APPEND=expect=tickvisor", "MEM=64M"],
                guests=[("basic", 0)],
                expect=[r"^tickvisor: guest basic: starting \(guests/basic.elf, mem 64 MiB, "
                        r"1 vCPU, ",
                        r"^tickvisor-run: guest basic: status 0$"]),
    # QEMU's spellings; the exit status is the guest's (5), not tickvisor's
    # final status (1); -smp and -m reach the guest, a module rides along.
    RunnerCheck("runner-qemu-options",
                [RUNNER, "-kernel", "{build}/guests/exit_status.elf", "-append", "status=5",
                 "-smp", "2", "-m", "32M", "-initrd", "{build}/guests/basic.elf",
                 "--opts", "apicv=off log=info", "--emu", "bochs",
                 "--efi", "{build}/tickvisor.efi", "--workdir", "{work}"],
                status=5, cpus=2, guests=[("exit_status", 5)],
                expect=[r"^tickvisor: guest exit_status: starting \(guests/exit_status.elf, "
                        r"mem 32 MiB, 2 vCPUs, .*apicv off",
                        r"^tickvisor: 2 CPUs",
                        r"^tickvisor-run: guest exit_status: status 5$"]),
    # Issue 26.4: --smp 2 with timer=posted boots a 3-CPU machine, so the
    # housekeeper has a CPU of its own (before, 2 CPUs and "timer=posted
    # impossible: no free CPU for housekeeping").
    RunnerCheck("runner-posted-cpus",
                [RUNNER, "--kernel", "{build}/guests/smp_timers.elf", "--smp", "2",
                 "--opts", "timer=posted log=info", "--emu", "bochs",
                 "--efi", "{build}/tickvisor.efi", "--workdir", "{work}"],
                cpus=3, guests=[("smp_timers", 0)],
                expect=[r"^tickvisor-run: booting \S+ under tickvisor in bochs \(2 vCPUs on 3 "
                        r"CPUs, ",
                        r"^tickvisor: 3 CPUs",
                        r"^tickvisor: guest smp_timers: APIC timers posted by housekeeping cpu2$",
                        r"^tickvisor-run: guest smp_timers: status 0$"]),
    RunnerCheck("runner-not-multiboot",
                [RUNNER, "--kernel", "{build}/tickvisor.efi", "--emu", "bochs",
                 "--workdir", "{work}"],
                status=2, reject=NO_BOOT,
                expect=[r"^tickvisor-run: error: \S+/tickvisor.efi: neither a Multiboot kernel nor "
                        r"a bzImage: no Multiboot header \(magic 0x1BADB002\) in its first 8192 "
                        r"bytes$"]),
    RunnerCheck("runner-missing-kernel",
                ["make", "--no-print-directory", "run", "BUILD={build}", "EMU=bochs",
                 "KERNEL={build}/guests/no-such-kernel.elf"],
                status=2, reject=NO_BOOT,
                expect=[r"^tickvisor-run: error: \S+/guests/no-such-kernel.elf: file not found$"]),
    # EMU=kvm --dry-run: the exact QEMU line, QEMU and OVMF checked (no /dev/kvm needed).
    RunnerCheck("runner-kvm-dry-run",
                ["make", "--no-print-directory", "run", "BUILD={build}", "EMU=kvm", "DRY_RUN=1",
                 "KERNEL={build}/guests/exit_status.elf", "SMP=2", "MEM=64M"],
                emu="kvm", reject=[r"^tickvisor-run: booting", r"^tickvisor: "],
                expect=[r"^qemu-system-x86_64 -machine q35 -m 1024 -smp 2 -display none "
                        r"-monitor none -no-reboot -nodefaults -bios /usr/share/ovmf/OVMF.fd "
                        r"-drive format=raw,file=\S+/run/kernel-exit_status/esp.img -serial "
                        r"file:\S+/run/kernel-exit_status/com1.log -device "
                        r"isa-debug-exit,iobase=0xf4,iosize=0x04 -enable-kvm -cpu host,\+vmx,\+invtsc$"]),
    RunnerCheck("runner-kvm-dry-run-esp",
                ["make", "--no-print-directory", "run", "BUILD={build}", "EMU=kvm", "DRY_RUN=1"],
                emu="kvm", reject=[r"^tickvisor-run: booting", r"^tickvisor: "],
                expect=[r"^qemu-system-x86_64 -machine q35 -m 1024 -smp 1 .* -drive "
                        r"format=raw,file=\S+/esp.img -serial file:\S+/run/kvm/com1.log .* "
                        r"-enable-kvm -cpu host,\+vmx,\+invtsc$"]),
]


# --- Issue 11: make bench's figures held at their reference -------------------
import bench_budget  # noqa: E402  (tests/; the harness puts it on the path)


class BudgetSuite(Suite):
    """bench_timer in the advance=off configurations; each figure's p50
    within 3 cycles of its reference (tests/bench_budget.py says why and
    how a reference moves)."""

    def checks(self, serial):
        return bench_budget.checks(serial)


# Run by `make bench` (after the full bench), not by make test: speed is
# checked by the benchmarks, and a change that costs cycles on purpose
# should not fail the tests of its behaviour.
BUDGET = BudgetSuite("bench-budget", bench_budget.config(), guests=bench_budget.guests(),
                     timeout=600)


# --- Issue 14: an unmodified Linux guest ---------------------------------------
import linux_guest  # noqa: E402  (tests/; the harness puts it on the path)


def repeat_checks(suite, serial):
    """One check: the second boot of the suite's image (tests/harness.py's
    run_suite boots it again into again/ when suite.repeat) printed the
    same serial log as the first, byte for byte (issue 24.1). Bochs's clock
    is instruction-driven (scripts/emu.py: `clock: sync=none` and a fixed
    time0), RDRAND draws from a fixed seed (scripts/bochs-patches/0011) and
    no timer follows the host's clock (0013), so a boot repeats to the
    instruction whatever else the host runs beside it, and a rare fault
    make bench showed comes back when its boot runs again, under the trace
    build too (docs/testing.md). Without 0013 two boots of linux-2cpu's
    image parted ways (its kernel log 4.94 s in)."""
    again = getattr(suite, "again", None)
    a, b = serial.splitlines(), (again or "").splitlines()
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    if first is None and len(a) != len(b):
        first = min(len(a), len(b))
    if again is None:
        detail = "no second boot"
    elif first is None:
        detail = f"{len(a)} lines, identical"
    else:
        detail = (f"line {first + 1} differs: {a[first] if first < len(a) else '(end)'!r} "
                  f"then {b[first] if first < len(b) else '(end)'!r}")
    yield again is not None and first is None and len(a) > 10, \
        "a second boot of the same image prints the same serial log", detail


class LinuxSuite(Suite):
    """One boot of Debian's cloud kernel with the cyclictest initramfs
    (scripts/linux-guest.py) on `cpus` vCPUs. The kernel and initrd are
    made (or found in the cache) when the suite's image is built, and
    copied onto the ESP next to the bundled guests (esp_files). A boot
    takes a minute or more: the harness starts it first (slow)."""

    def __init__(self, name, cpus, opts="", timeout=900, stress=0, repeat=False):
        extra = linux_guest.PANIC + (f" linuxguest.stress={stress}" if stress else "")
        cfg = guestcfg.config([guestcfg.guest_line(
            "linux", "vmlinuz", "256M", cpus, 120,
            linux_guest.cmdline(cpus, "lapic-deadline", extra),
            f"module=guests/initrd.gz {opts}".strip())])
        super().__init__(name, cfg, cpus=cpus, timeout=timeout, guests=[("linux", 0)], expect=[
            rf"linux-guest: cpus online: 0-{cpus - 1} \({cpus}\)$",
            *(rf"linux-guest: clockevent: clockevent{n}: lapic-deadline$" for n in range(cpus)),
            r"linux-guest: cyclictest: # Max Latencies:( +\d+){%d}$" % cpus,
            rf"linux-guest: SUMMARY: {linux_guest.init_checks()} checks, 0 failed$",
            # The kernel's default on Bochs's Skylake-X (Meltdown-affected
            # by its CPU tables): PTI, whose entry code died of an
            # interrupt taken with IF=0 (guest-tests/intr_if_blocked.c).
            r"Kernel/User page tables isolation: enabled$",
            r"^tickvisor: done: 1 guests, 0 failed$"])
        # The kernel reporting a bug of its own (WARN, BUG, oops), not /init
        # quoting it (guest-tests/linux/init explains the patterns); and a
        # driver refusing a device the platform offers ("probe of rtc_cmos
        # failed with error -22" while the RTC came with IRQ 8 and the
        # hardware-reduced guest has no legacy IRQs).
        self.slow = True
        self.repeat = repeat
        self.reject = [r"^(?!.*linux-guest: ).*(" + linux_guest.KERNEL_BAD_RE.pattern + ")",
                       r"probe of \S+ failed with error"]

    def esp_files(self):
        return list(zip(linux_guest.image(), linux_guest.ESP_FILES))

    def checks(self, serial):
        return repeat_checks(self, serial) if self.repeat else ()

    def summary(self, serial):
        """The figures worth a line in make test's output, and the first
        lines of any kernel complaint (the serial tail printed on failure
        may not reach back to them)."""
        ct = linux_guest.cyclictest(serial)
        lines = ["linux: no cyclictest summary" if not ct else
                 "linux: cyclictest min/avg/max per thread (us): " + ", ".join(
                     f"{t['min']}/{t['avg']}/{t['max']}" for t in ct["threads"])]
        lines += [f"linux: kernel: {l}" for l in linux_guest.kernel_complaints(serial)[:8]]
        return "\n".join(lines)


# The Linux guest (issue 14) on 2 vCPUs, as make bench boots it: plain, and
# with advance=auto after 100 rounds of fork/exec/pipe stress from /init.
# The stress is what made the guest kernel die within seconds on Bochs 3.0
# with more than one CPU, which saved a stale RIP at VM exits that came
# right after an exception's delivery (scripts/bochs-patches/,
# guest-tests/smp_exc_exit.c, docs/linux-guest.md). The plain one boots
# twice and must repeat (repeat_checks, scripts/bochs-patches/0013).
SUITES += [LinuxSuite("linux-2cpu", 2, repeat=True),
           LinuxSuite("linux-2cpu-advance-auto", 2, "timer=preempt advance=auto", stress=100)]

# --- Issue 21.6: the QEMU platform matrix --------------------------------------
# QEMU TCG has no VMX, but its platform shapes are the host code's only
# machines besides Bochs's one (PLATFORM.md): QEMU's own ACPI tables, the
# i440FX and Q35 PM blocks, no HPET, more CPUs than tickvisor used to hold,
# RAM above 4 GiB. Each boot reports the platform and refuses (status 1).
REFUSAL = [r"^tickvisor: error: VMX unavailable: this CPU has no VMX",
           r"^tickvisor: error: no guest runs: VMX unavailable \(reason above\)$",
           r"^tickvisor: final status 1$"]
TSC_RE = re.compile(r"^tickvisor: TSC: (\d+) Hz from ", re.M)
APIC_HZ_RE = re.compile(r"^tickvisor: guest APIC timer: (\d+) Hz \(TSC / (\d+)\)$", re.M)


class PlatformSuite(Suite):
    """One QEMU TCG platform shape: `machine` is QEMU's -machine. Beside
    its expectations, the guest APIC timer must be the TSC rate divided
    exactly (DESIGN.md: an exact integer divisor, which CPUID 0x15 states;
    issue 22.3: TCG's 2.6 GHz TSC gave TSC / 3 rounded down)."""

    def __init__(self, name, machine="q35", cpus=1, megs=1024, expect=(), reject=(),
                 debug_exit=True, uart="com1", config="log=info\n", acpi_tables=(),
                 threads=1):
        # Issue 21.5: every CPU takes a host timer interrupt before the
        # refusal; the warp test does not find QEMU's CPUs apart. (It did
        # twice on 2026-12-07, tcg-smp80 and tcg-smp64: "cpu39's TSC is at
        # least 1495 cycles behind cpu0's". Cause: one warp test shared by
        # every AP, set up again for each, so an AP TCG had descheduled
        # before it saw its own test end took the next AP's turns too.
        # Each AP has its own test now, vmm/host/smp.c.)
        super().__init__(name, config, emu="tcg", cpus=cpus, megs=megs, status=1,
                         timeout=180, expect=list(expect) + REFUSAL + [
                             r"^tickvisor: host timer: an interrupt taken on (1 CPU|every one "
                             rf"of the {min(cpus, 64)} CPUs) \(LAPIC one-shot\)$",
                             rf"^tickvisor: platform: {min(cpus, 64)} of {cpus} CPUs up \(APIC "
                             r"IDs? [\d,-]+\), xAPIC, TSC \d+ Hz \((HPET|ACPI PM timer), not "
                             r"invariant(, CPUs in step)?\), (no )?HPET, (no )?(ACPI )?PM timer$",
                             r"^tickvisor: platform: VMX unusable: this CPU has no VMX"],
                         reject=list(reject) + [r"no host timer interrupt", r"warp test\)$"],
                         threads=threads)
        self.machine = machine
        self.debug_exit = debug_exit
        self.uart = uart
        self.acpi_tables = acpi_tables

    def checks(self, serial):
        tsc, apic = TSC_RE.search(serial), APIC_HZ_RE.search(serial)
        if not tsc or not apic:
            yield False, "guest APIC timer divides the TSC", "no TSC or APIC timer line"
            return
        hz, div, rate = int(apic.group(1)), int(apic.group(2)), int(tsc.group(1))
        yield hz * div == rate, "guest APIC timer divides the TSC", \
            f"{hz} Hz x {div} = {hz * div}, TSC {rate} Hz"
        # The report comes first, the refusal after it (issue 21.5).
        report = serial.find("tickvisor: platform: ")
        refusal = serial.find("tickvisor: error: no guest runs")
        yield 0 <= report < refusal, "platform report before the refusal", \
            f"report at {report}, refusal at {refusal}"


class ResetSuite(PlatformSuite):
    """end=reset (issue 22.7) on a QEMU shape: after the refusal's final
    status the reset way `way` is announced and is the log's last line -
    QEMU runs with -no-reboot, so the emulator ended there. One that did
    not take would print 'did not take' RESET_TAKE_MS later and go on to
    the next way, or halt."""

    def __init__(self, name, way, machine="q35", inject=None, expect=()):
        cfg = "log=info\nend=reset\n" + (f"inject=reset-from:{inject}\n" if inject else "")
        super().__init__(name, machine=machine, config=cfg,
                         expect=list(expect) + [rf"^tickvisor: reset: by the {way}"],
                         reject=[r"did not take", r"reset failed"])
        self.way = way

    def checks(self, serial):
        yield from super().checks(serial)
        lines = [ln for ln in serial.splitlines() if ln.strip()]
        last = lines[-1] if lines else ""
        yield bool(re.match(rf"tickvisor: reset: by the {self.way}", last)), \
            "the reset took: its announcement is the last line", f"last line: {last!r}"


Q35_ACPI = r"^tickvisor: ACPI: RSDP rev 2 \(BOCHS \), MADT, HPET, FADT, I/O APIC$"
PLATFORM_SUITES = [
    PlatformSuite("tcg-q35", expect=[
        Q35_ACPI, r"^tickvisor: ACPI: MADT lists 1 CPU, local APIC at 0xfee00000$",
        r"^tickvisor: ACPI: FADT PM1a_CNT 0x604, PM timer 0x608 \(24-bit\), reset register$",
        r"^tickvisor: HPET: 0xfed00000 \(ACPI HPET table\), 100000000 Hz",
        r"^tickvisor: TSC: \d+ Hz from HPET", r"^tickvisor: 1 CPU \(",
        # Issue 22.2: QEMU's MCA, 10 banks with software error recovery.
        r"^tickvisor: machine checks: CR4.MCE on every CPU, 10 banks \(MCG_CAP 0x100010a, "
        r"software error recovery\)",
        r"^tickvisor: I/O APIC: 24 inputs at 0xfec00000, all masked \(\d+ the firmware left "
        r"unmasked\)$",
        # Issue 22.6: QEMU's MADT wires LINT1 of every CPU to NMI.
        r"^tickvisor: host APIC: LINT1 delivers NMI, as the MADT says \(active high, edge\) "
        r"on every CPU$"]),
    # Issue 22.7: without QEMU's status port, as on a PC, the machine
    # goes off by ACPI S5 (the DSDT's \_S5 through PM1a_CNT), before
    # ResetSystem is asked; the warning says when S5 did not take.
    PlatformSuite("tcg-q35-s5", debug_exit=False, expect=[
        r"^tickvisor: ACPI: \\_S5 SLP_TYP 0/0 \(DSDT\): power-off by PM1a_CNT$"],
        reject=[r"ACPI S5 power-off did not take", r"power-off failed"]),
    # Issue 22.7, end=reset: every way of drivers/reset.h resets QEMU by
    # itself (inject=reset-from: skips those before it); q35's FADT has
    # RESET_REG (I/O 0xCF9 <- 0xF), pc's does not set RESET_REG_SUP, so the
    # plan starts at 0xCF9 there.
    ResetSuite("tcg-reset-fadt", r"FADT reset register \(I/O 0xcf9 <- 0xf\)$"),
    ResetSuite("tcg-reset-pc", r"0xCF9 reset control$", machine="pc", expect=[
        r"^tickvisor: reset: the FADT reset register is not used: the FADT does not set "
        r"RESET_REG_SUP$"]),
    ResetSuite("tcg-reset-kbc", r"8042 reset line$", inject="kbc"),
    ResetSuite("tcg-reset-efi", r"UEFI ResetSystem$", inject="efi"),
    PlatformSuite("tcg-pc", machine="pc", expect=[
        r"^tickvisor: ACPI: FADT PM1a_CNT 0xb004, PM timer 0xb008 \(24-bit\), reset unsupported$",
        r"^tickvisor: ACPI: \\_S5 SLP_TYP 0/0 \(DSDT\): power-off by PM1a_CNT$",
        r"^tickvisor: HPET: 0xfed00000 \(ACPI HPET table\)", r"^tickvisor: TSC: \d+ Hz from HPET"]),
    PlatformSuite("tcg-q35-nohpet", machine="q35,hpet=off", expect=[
        r"^tickvisor: ACPI: RSDP rev 2 \(BOCHS \), MADT, FADT, I/O APIC$",
        r"^tickvisor: HPET: none", r"^tickvisor: ACPI PM timer: port 0x608 \(FADT\)$",
        r"^tickvisor: TSC: \d+ Hz from ACPI PM timer"]),
    # Issue 22.4: an HPET whose counter stands still (its GEN_CONF.ENABLE
    # left clear, as a chipset may) is found not counting within 2^20 TSC
    # cycles and used neither to calibrate nor as a timer: the PM timer
    # measures the TSC instead, and calibration ends in well under a
    # second (before: a stall of 10^11 TSC cycles, tens of seconds).
    PlatformSuite("tcg-hpet-stuck", config="log=info\ninject=hpet-stuck\n", expect=[
        r"^tickvisor: inject=hpet-stuck: the HPET's main counter is left halted$",
        r"^tickvisor: TSC: the HPET does not count: not used, neither as a clock "
        r"nor as a timer$",
        r"^tickvisor: TSC: \d+ Hz from ACPI PM timer",
        r"^tickvisor: TSC: measured \d+ Hz against the ACPI PM timer \(calibration took "
        r"([1-9]?\d|[1-4]\d\d) ms\)$"]),
    PlatformSuite("tcg-smp4", cpus=4, expect=[
        r"^tickvisor: ACPI: MADT lists 4 CPUs, ", r"^tickvisor: 4 CPUs \(",
        r"^tickvisor: placement: vCPUs fill cpu0-3 in that order \(one CPU per core\)"]),
    # Issue 22.9: two threads per core, as QEMU encodes them in CPUID leaf
    # 0BH (correct shifts: nothing to mend), and vCPUs placed on distinct
    # cores first.
    PlatformSuite("tcg-smt2", cpus=4, threads=2, expect=[
        TOPOLOGY_SMT2, PLACEMENT_SMT2], reject=[r"topology: CPUID mended"]),
    # More CPUs than tickvisor runs vCPUs on (issue 22.1): the MADT's
    # count as it is.
    # Every AP is parked in INIT, out of the firmware's loop, before
    # tickvisor goes on; without VMX tickvisor then starts
    # each into its own loop all the same and checks its TSC (issue 21.5).
    PlatformSuite("tcg-smp20", cpus=20, expect=[
        r"^tickvisor: ACPI: MADT lists 20 CPUs, ", r"^tickvisor: 20 CPUs \(",
        r"^tickvisor: 19 other CPUs parked by INIT \(wait-for-SIPI\), out of the firmware's "
        r"AP loop$",
        r"^tickvisor: 20 of 20 CPUs up \(no VMX: each waits in tickvisor's loop\)$",
        r"^tickvisor: TSC: in step on all 20 CPUs \(warp test"]),
    PlatformSuite("tcg-smp64", cpus=64, expect=[
        r"^tickvisor: ACPI: MADT lists 64 CPUs, ", r"^tickvisor: 64 CPUs \(",
        r"^tickvisor: 63 other CPUs parked by INIT \(wait-for-SIPI\)"]),
    # An AP slow to take its warp-test turns is slow, not out of step: each
    # turn may take TSC_WARP_TURN_US (1 s). tcg-smp64 once read "CPUs out of
    # step" under the 200 ms bound before it (QEMU's 64 vCPU threads on 2
    # busy host cores), so cpu1 here waits 300 ms before its first turn
    # (inject=tsc-slow), which the old bound refused.
    PlatformSuite("tcg-tsc-slow-ap", cpus=3, config="log=info\ninject=tsc-slow:1:300\n",
                  expect=[r"^tickvisor: inject=tsc-slow: cpu1 waits 300 ms before its "
                          r"warp-test turns$",
                          r"^tickvisor: TSC: in step on all 3 CPUs \(warp test",
                          r"CPUs in step\), "],
                  reject=[r"stopped taking its turns"]),
    # ... and one that takes none within it has stopped: named, and the
    # TSCs are not vouched for (cpu2 waits 2 s). Not a PlatformSuite,
    # whose platform line is that of CPUs in step.
    Suite("tcg-tsc-stalled-ap", "log=info\ninject=tsc-slow:2:2000\n", emu="tcg", cpus=3,
          status=1, timeout=180,
          expect=[r"^tickvisor: inject=tsc-slow: cpu2 waits 2000 ms before its warp-test "
                  r"turns$",
                  r"^tickvisor: TSC: cpu2 stopped taking its turns in the warp test \(after "
                  r"\d+ of 64 round trips\)$",
                  r"^tickvisor: TSC: unsynchronised across CPUs: guests with more than one "
                  r"vCPU, and timer=posted, are refused$",
                  r"^tickvisor: platform: 3 of 3 CPUs up .*, CPUs out of step\), "] + REFUSAL,
          reject=[r"cpu1 stopped taking"]),
    # Beyond TV_MAX_CPUS (64): counted and parked all the same.
    PlatformSuite("tcg-smp80", cpus=80, expect=[
        r"^tickvisor: ACPI: MADT lists 80 CPUs, ", r"^tickvisor: 80 CPUs \(",
        r"^tickvisor: 16 CPUs beyond the first 64 are left unused$",
        r"^tickvisor: 79 other CPUs parked by INIT \(wait-for-SIPI\)"]),
    # Issue 21.3: a server whose console is COM2, nothing at 0x3f8.
    # serial=0x2f8 takes it, and it shows the whole log from the first
    # line (printed before the configuration named the port).
    PlatformSuite("tcg-com2", uart="com2", config="log=info\nserial=0x2f8\n", expect=[
        r"^tickvisor: tickvisor \S+ \(git \S+\), BSD-2-Clause$",
        r"^tickvisor: serial: 16550 at 0x2f8, 115200 baud \(serial=0x2f8\)$", Q35_ACPI],
        # OVMF's console writes that lone UART before ExitBootServices:
        # tickvisor must not write those lines a second time.
        reject=[r"no 16550 answers", r"^(tickvisor: .*)\n\1$"]),
    # ... and the same server telling its console by ACPI SPCR: the
    # default serial=auto takes it (baud rate and all).
    PlatformSuite("tcg-spcr", uart="com2", acpi_tables=("spcr-com2",), expect=[
        r"^tickvisor: tickvisor \S+ \(git \S+\), BSD-2-Clause$",
        r"^tickvisor: serial: 16550 at 0x2f8, 115200 baud \(ACPI SPCR\)$",
        r"^tickvisor: ACPI: RSDP rev 2 \(BOCHS \), MADT, HPET, FADT, I/O APIC, SPCR$"],
        reject=[r"no 16550 answers", r"^(tickvisor: .*)\n\1$"]),
    # An SPCR naming a UART that is not there (COM2 absent, COM1 present):
    # reported and ignored, the log stays on COM1.
    PlatformSuite("tcg-spcr-nothing", acpi_tables=("spcr-com2",), expect=[
        r"^tickvisor: serial: ACPI SPCR names a 16550 at 0x2f8, but none answers there: "
        r"not used$"], reject=[r"^tickvisor: serial: 16550 at"]),
    # MMIO 16550s (issue 21.3). No emulator here has one on x86 (QEMU's
    # pci-serial has an I/O BAR; docs/hardware.md), so what a TCG boot
    # can show is the refusals: an SPCR naming an MMIO 16550 with 32-bit
    # registers (an Intel LPSS UART's form) where nothing answers is
    # probed and not used, the log stays on COM1 ...
    PlatformSuite("tcg-spcr-mmio-absent", acpi_tables=("spcr-mmio-absent",), expect=[
        r"^tickvisor: serial: ACPI SPCR names an MMIO 16550 at 0xfe030000 that does not "
        r"answer: not used$"], reject=[r"^tickvisor: serial: 16550 at"]),
    # ... one inside RAM by the UEFI memory map is refused unprobed ...
    PlatformSuite("tcg-spcr-mmio-ram", acpi_tables=("spcr-mmio-ram",), expect=[
        r"^tickvisor: serial: ACPI SPCR names an MMIO 16550 at 0x1000000, inside RAM by the "
        r"UEFI memory map: not used$"],
        reject=[r"^tickvisor: serial: 16550 at", r"does not answer"]),
    # Issue 22.7: boot-services memory stays the firmware's (OVMF: 37-39 MiB).
    PlatformSuite("tcg-512m", megs=512, expect=[
        r"^tickvisor: memory: [34]\d\d MiB free for guests and tickvisor \(largest block "
        r"\d+ MiB\); [1-9]\d MiB of UEFI boot-services memory kept for the firmware$"]),
    # RAM above 4 GiB in the memory map.
    PlatformSuite("tcg-6g", megs=6144, expect=[r"^tickvisor: memory: 6\d{3} MiB free"]),
]
SUITES += PLATFORM_SUITES


def spare_cpus_suite():
    """More CPUs than any guest's vCPUs (issue 22.1), in Bochs: every AP is
    parked in INIT, out of the firmware's AP loop, then each is
    INIT-SIPIed out of the park into tickvisor, where the two the guest's
    vCPUs leave (one of them its housekeeper) wait for work: none is left
    parked."""
    suite = guest_suite("smp-spare-4cpu", [BY_NAME["smp_ipi"]], cpus=4, timeout=300)
    suite.expect += [
        r"^tickvisor: 3 other CPUs parked by INIT \(wait-for-SIPI\), out of the firmware's "
        r"AP loop$",
        r"^tickvisor: 4 of 4 CPUs up \(VMX on all of them\)$",
        # Issues 21.5, 22.4: a host timer interrupt on each, TSCs in step.
        r"^tickvisor: host timer: an interrupt taken on every one of the 4 CPUs \(LAPIC "
        r"TSC-deadline\)$",
        r"^tickvisor: TSC: in step on all 4 CPUs \(warp test against cpu0: 64 round trips "
        r"each, no read went backwards\)$",
        r"^tickvisor: guest smp_ipi exited with status 0$"]
    suite.reject += [r"^tickvisor: \d+ CPUs? parked \(INIT, wait-for-SIPI\)"]
    return suite


def tscdl_erratum_suite():
    """Issue 22.4: Bochs's Skylake-X with a microcode revision below what
    Linux's deadline_match list asks of it (tests/data/msrs/
    ucode-skx-old.def): the host APIC leaves TSC-deadline mode for
    one-shot, and the guest timer tests still pass on timer=lapic, now
    armed through TMICT at the calibrated APIC timer rate."""
    chosen = [BY_NAME[n] for n in ("timer_oneshot", "timer_periodic", "timer_tscdeadline",
                                   "timer_modes", "timer_tscdl_past")]
    suite = expect_backends(
        guest_suite("tscdl-erratum", chosen, run="lapic", extra="timer=lapic"),
        [(f"{t.name}.lapic", t, 1) for t in chosen], "timer=lapic")
    suite.msrs = "ucode-skx-old"
    suite.expect += [
        r"^tickvisor: host APIC: TSC-deadline mode not used \(TSC-deadline timer broken before "
        r"microcode 0x02000014 on Skylake-SP \(family 6 model 0x55 stepping 4\), this one has "
        r"0x2000013\): one-shot instead$",
        r"^tickvisor: host APIC: x2APIC mode, id 0, TSC-deadline no$",
        r"^tickvisor: host APIC timer: \d+ Hz \(one-shot mode, no TSC-deadline\)$"]
    suite.tests = {f"{t.name}.lapic": t for t in chosen}
    return suite


SUITES.append(spare_cpus_suite())
SUITES.append(tsc_warp_suite())
SUITES.append(tscdl_erratum_suite())

# Suites make test leaves out; `tests/harness.py --only REGEX` runs those the
# regex names.
OPT_IN = [BUDGET]


# --- Issue 21.2: the screen console, as QEMU's VGA shows it --------------------
FONT_ROW_RE = re.compile(r"^\t\{ ([^}]*) \},", re.M)


def load_font(path):
    """The glyph rows of build/gen/font.h (scripts/gen-font.py), 0x20..0x7e."""
    with open(path) as f:
        rows = FONT_ROW_RE.findall(f.read())
    return [[int(b, 16) for b in r.split(", ")] for r in rows]


def read_ppm(path):
    """(width, height, RGB bytes) of a binary PPM as QEMU's screendump writes."""
    with open(path, "rb") as f:
        data = f.read()
    magic, dims, maxval, pixels = data.split(b"\n", 3)
    if magic != b"P6" or maxval != b"255":
        raise ValueError(f"{path}: not an 8-bit P6 PPM")
    w, h = (int(x) for x in dims.split())
    return w, h, pixels[:w * h * 3]


def screen_colour(line):
    """What tickvisor's screen should colour a line (DESIGN.md, "Consoles"):
    errors and failures red, passes green, skips yellow, the rest grey."""
    for prefix, rgb in (("tickvisor: error", (0xff, 0x50, 0x50)), ("FAIL:", (0xff, 0x50, 0x50)),
                        ("PASS:", (0x40, 0xe0, 0x40)), ("SKIP:", (0xf0, 0xd0, 0x40))):
        if line.startswith(prefix):
            return rgb
    return (0xc0, 0xc0, 0xc0)


def screen_mismatches(lines, font, w, pixels, height=16, first_row=0):
    """Pixels of the text region where the screen differs from `lines`
    drawn with `font` (8 x height cells from the top left, from text row
    first_row), at most 5."""
    bad = []
    for row, line in enumerate(lines, first_row):
        fg = screen_colour(line)
        for col, ch in enumerate(line[:w // 8]):
            glyph = font[ord(ch) - 0x20] if 0x20 <= ord(ch) <= 0x7e else font[ord("?") - 0x20]
            for y in range(height):
                for x in range(8):
                    want = fg if glyph[y] & (0x80 >> x) else (0, 0, 0)
                    off = ((row * height + y) * w + col * 8 + x) * 3
                    got = tuple(pixels[off:off + 3])
                    if got != want and len(bad) < 5:
                        bad.append(f"row {row} col {col} ({ch!r}) pixel {x},{y}: {got} != {want}")
    return bad


def screendump(suite):
    """(font, width, height, pixels) of the suite's screendump
    (build/test/NAME/screen.ppm) and the font it should be drawn in, or
    None when QEMU left no screendump."""
    shot = os.path.join(suite.workdir, "screen.ppm")
    if not os.path.exists(shot):
        return None
    font = load_font(os.path.join(suite.workdir, "..", "..", "gen", "font.h"))
    return (font, *read_ppm(shot))


class ScreenSuite(PlatformSuite):
    """QEMU TCG with its standard VGA (OVMF's GOP, 32 bpp): tickvisor must
    draw on the screen exactly the lines it printed on the serial port,
    from the first one (printed before ExitBootServices, drawn again
    after it) to the final status. end=halt keeps the machine running for
    the screendump (PPM, build/test/NAME/screen.ppm)."""

    def __init__(self, name):
        super().__init__(name, expect=[r"^tickvisor: screen: 1280x800, 32 bpp BGR at 0x[0-9a-f]+ "
                                       r"\(160 x 50 characters\)$"])
        self.config = "log=info\nend=halt\n"
        self.screen = True

    def checks(self, serial):
        yield from super().checks(serial)
        lines = []
        for line in serial.splitlines():
            if line.startswith("tickvisor: "):
                lines.append(line)
            if line.startswith("tickvisor: final status"):
                break
        shot = screendump(self)
        if not shot:
            yield False, "screen shows the serial lines", "no screendump"
            return
        font, w, _, pixels = shot
        bad = screen_mismatches(lines, font, w, pixels)
        yield not bad and len(lines) > 10, "screen shows the serial lines", \
            f"{len(lines)} lines compared: " + "; ".join(bad)


SUITES.append(ScreenSuite("tcg-screen"))


class ConfigRefusalSuite(Suite):
    """A configuration tickvisor refuses before ExitBootServices (QEMU
    TCG, q35, COM1): the error line, then final status 1 and nothing
    of the platform bring-up after it."""

    def __init__(self, name, config, error):
        super().__init__(name, config, emu="tcg", status=1, timeout=120, expect=[
            r"^tickvisor: tickvisor \S+ \(git \S+\), BSD-2-Clause$", error,
            r"^tickvisor: final status 1$"], reject=[r"^tickvisor: platform: "])
        self.machine, self.debug_exit, self.uart = "q35", True, "com1"


# serial=mmio32: at an address that is RAM by the UEFI memory map: a typo,
# not a UART, refused before anything writes there (issue 21.3).
SUITES.append(ConfigRefusalSuite(
    "tcg-serial-mmio-ram", "log=info\nserial=mmio32:0x1000000,115200\n",
    r"^tickvisor: error: serial=mmio32:0x1000000,115200: 0x1000000 is RAM by the UEFI memory "
    r"map, not a UART$"))


class NoSerialScreenSuite(Suite):
    """A laptop (issue 21.3): no UART at all, serial=auto. tickvisor must
    find no 16550 at COM1 and say so, and the screen is then all there
    is: each of `lines` must be drawn on some text row of it. Without a
    serial log the harness cannot see the final line; the screendump is
    taken `screendump_after` seconds into the boot (a TCG boot reaches
    its final line in about 4 s)."""

    def __init__(self, name, lines):
        import emu as emu_mod  # noqa: E402  (scripts/, on the path with guestcfg)
        super().__init__(name, "log=info\nend=halt\n", emu="tcg",
                         status=emu_mod.STATUS_NO_RESULT, timeout=180)
        self.machine, self.debug_exit, self.uart = "q35", True, "none"
        self.screen, self.screendump_after = True, 30
        self.lines = lines

    def checks(self, serial):
        yield serial == "", "no serial output", f"{len(serial)} bytes"
        shot = screendump(self)
        if not shot:
            yield False, "screen shows the lines", "no screendump"
            return
        font, w, h, pixels = shot
        for line in self.lines:
            rows = [r for r in range(h // 16)
                    if not screen_mismatches([line], font, w, pixels, first_row=r)]
            yield bool(rows), f"screen shows: {line}", "on no text row of the screendump"


SUITES.append(NoSerialScreenSuite("tcg-screen-nocom1", [
    "tickvisor: serial: no 16550 at COM1 (0x3f8): the log is on the screen only "
    "(serial=PORT names another)",
    "tickvisor: error: no guest runs: VMX unavailable (reason above)",
    "tickvisor: final status 1"]))


# --- Issue 22.10: nested KVM (make test EMU=kvm) -----------------------------
# Under nested KVM the platform is the runner's: QEMU's ACPI tables with
# KVM's CPU count, a TSC rate of whatever the host has, an HPET or not. So
# these suites run the guests whose expectations are tickvisor's own (the
# guest tests, their backend lines, the done line), and match the platform
# lines by pattern; the guests' timer slack is scaled by the exit cost
# tickvisor measures at start (TV_HC_EXIT_COST, guest-tests/exit_cost.c).
# A SKIP the runner's CPU decides is declared maybe_skip@kvm-* in
# guest-tests/unittests.cfg. The patterns are also held against a QEMU TCG
# boot in every make test (KVM_PATTERNS_TCG), which is all this machine can
# check: it has no nested VMX (docs/ci-nested-kvm.md).
KVM_PLATFORM = [
    r"^tickvisor: ACPI: RSDP rev \d \(.{6}\), MADT",
    r"^tickvisor: ACPI: MADT lists \d+ CPUs?, local APIC at 0x[0-9a-f]+$",
    r"^tickvisor: \d+ CPUs? \(",
    r"^tickvisor: TSC: \d+ Hz from (HPET|ACPI PM timer|CPUID 0x1[56])",
    r"^tickvisor: guest APIC timer: \d+ Hz \(TSC / \d+\)$",
    r"^tickvisor: memory: \d+ MiB free for guests",
]
# Guests (unittests.cfg names) left out of the KVM suites, with the reason.
KVM_EXCLUDED = {
    # Its expectation is Bochs's panic, not tickvisor's (unittests.cfg).
    "apic_exec": "APICv off only because Bochs 3.0 panics on an APIC-page fetch",
}
KVM_CPUS = 4


class KvmSuite(Suite):
    """A Bochs suite (`like`) repeated under nested KVM: the same config,
    guests and expectations, plus the platform patterns; the guests'
    unittests.cfg declarations for `like` apply too (aliases)."""

    def __init__(self, name, like, suite):
        super().__init__(name, suite.config, emu="kvm", cpus=suite.cpus, status=suite.status,
                         expect=suite.expect + KVM_PLATFORM, guests=suite.guests,
                         timeout=suite.timeout, reject=suite.reject)
        self.aliases = (like,)


def kvm_suites(tests):
    """The suites of make test EMU=kvm: every 1-vCPU guest test (APICv on,
    and its apicv-off run), and the SMP tests on KVM_CPUS CPUs, each with
    the backend lines the Bochs suites expect and the platform patterns."""
    chosen = [t for t in tests if t.name not in KVM_EXCLUDED]
    up = [t for t in chosen if t.vcpus == 1]
    off = [t for t in up if "apicv" in t.variants]
    smp = [t for t in chosen if 1 < t.vcpus <= KVM_CPUS]
    return [
        KvmSuite("kvm-guests", "guests", expect_backends(guest_suite("kvm-guests", up),
                                               [(t.name, t, 1) for t in up])),
        KvmSuite("kvm-guests-apicv-off", "guests-apicv-off", expect_backends(
            guest_suite("kvm-guests-apicv-off", off, run="apicv-off", extra="apicv=off"),
            [(f"{t.name}.apicv-off", t, 1) for t in off], "apicv=off")),
        KvmSuite(f"kvm-smp-{KVM_CPUS}cpu", f"smp-{KVM_CPUS}cpu", expect_backends(
            guest_suite(f"kvm-smp-{KVM_CPUS}cpu", smp, cpus=KVM_CPUS),
            [(t.name, t, t.vcpus) for t in smp])),
    ]


KVM_SUITES = kvm_suites(TESTS)
# The KVM suites' platform patterns against what QEMU's tables and a real
# TSC give under TCG (q35 and pc, 4 CPUs): a pattern that only ever matched
# Bochs fails here first.
SUITES += [
    PlatformSuite("kvm-patterns-tcg-q35", cpus=4, expect=KVM_PLATFORM),
    PlatformSuite("kvm-patterns-tcg-pc", machine="pc", expect=KVM_PLATFORM),
]
