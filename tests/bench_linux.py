# SPDX-License-Identifier: BSD-2-Clause
"""make bench, the Linux part (issue 14.5): cyclictest in Debian's cloud
kernel on 2 CPUs, natively (GRUB, legacy BIOS, the same Bochs machine)
and under tickvisor with timer=preempt advance=off and advance=auto, and
timer=posted where tickvisor has it; and seed 002's dedicated CPU
(issue 24.5): cyclictest alone on an isolated, tickless vCPU 1 under
timer=posted hlt=guest, with that vCPU's VM exits per wake-up.

Each configuration is RUNS boots of its own (a configuration tickvisor
refuses, such as timer=posted before it exists, then costs only its own
row). Figures are cyclictest's, in microseconds of the guest's clock; in
Bochs one microsecond is 50 instructions (ips=50000000).

Why several boots: Bochs's clock is instruction-driven, so a boot repeats
exactly, and cyclictest's 1 ms wake-ups fall at the same phase against
everything else periodic (the guest's tick, tickvisor's 1 ms stop poll,
console output) in every repeat. A change anywhere in the boot path moves
that phase, and one thread's average jumps between modes some 60 us apart
(2026-12-03: one build gave thread averages from 88 to 177 us over six
paddings; natively five of six padded boots sat near 137 us, one near 88). So each run pads the command line differently
(`linuxguest.pad=`, which nothing reads: it only moves the boot), and
cyclictest starts at a phase of its own against the kernel's tick grid
(PHASES: `--secaligned=US`, the same per run in every configuration,
native too, so that each row samples the same phases), two
boots run at a time, and a row pools its runs: the smallest min, the mean
of the threads' averages, the largest max, each run's averages and maxima
beside. Every kernel gets linux_guest.REPEATABLE (nokaslr and friends), so
that what varies between boots is the padding and little else; a boot whose
max exceeds twice native's pooled max is named in the report and on stderr.

Environment, for a shorter run by hand (make bench sets neither):
TICKVISOR_LINUX_RUNS=N boots per configuration instead of RUNS;
TICKVISOR_LINUX_CONFIGS=NAME,... only those configurations (native needs a
tickvisor one beside it: it is told the TSC rate tickvisor measured). A
configuration left out reads "not run" and fails its goals.
"""
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor

import emu
import guestcfg
import linux_guest

CPUS = 2                # the guest's (v)CPUs
MEGS = 1024
GUEST_MEM = "256M"
# (name, tickvisor options or None for native, what the row stands for)
CONFIGS = [
    ("native", None, "GRUB, no hypervisor"),
    ("native-3cpu", None, "GRUB, no hypervisor, on the 3-CPU machine of the posted rows, "
     "the third CPU left parked (nr_cpus=2)"),
    ("native-dedicated", None, "GRUB, no hypervisor, the dedicated row's kernel words and "
     "one cyclictest thread on isolated CPU 1, on the 3-CPU machine, the third CPU parked"),
    ("preempt/off", "timer=preempt advance=off", "VMX-preemption timer, no advance"),
    ("preempt/auto", "timer=preempt advance=auto", "VMX-preemption timer, adaptive advance"),
    ("posted", "timer=posted advance=auto",
     "exitless timer on a housekeeping CPU (posted interrupts)"),
    ("posted/hlt-guest", "timer=posted advance=auto hlt=guest",
     "exitless timer and idle: HLT stays in the guest (issue 24.4)"),
    ("dedicated", "timer=posted advance=auto hlt=guest",
     "seed 002's dedicated CPU: one cyclictest thread on isolated, tickless CPU 1 "
     "(issue 24.5)"),
]
# Seed 002's "dedicated instance": the vCPU that runs the real-time task
# is isolated from the scheduler (isolcpus), its tick stopped while one
# task runs (nohz_full) and its RCU callbacks run elsewhere (rcu_nocbs);
# cyclictest's one thread is pinned to it. Its figures are vCPU 1's exits
# per wake-up, and its latency against native-dedicated, the same kernel
# words and cyclictest natively (not against the other rows' two threads).
DEDICATED_KERNEL = "nohz_full=1 isolcpus=1 rcu_nocbs=1"
KERNEL_ARGS = {"dedicated": DEDICATED_KERNEL, "native-3cpu": "nr_cpus=2",
               "native-dedicated": DEDICATED_KERNEL + " nr_cpus=2"}
CYCLICTEST_ARGS = {n: linux_guest.CYCLICTEST.replace("-t,2,-a,", "-t,1,-a,1,")
                   for n in ("dedicated", "native-dedicated")}
DEDICATED_VCPU = 1
# vmm/guest.c counts a vCPU's exits over the whole boot, and the boot's
# share is large: its bring-up, and on a Bochs without
# scripts/bochs-patches/0008, under hlt=guest, the 1 ms stop poll
# (vmm/apic/vcpu_timer.c): an exit per millisecond of the ~45 s boot.
# So each dedicated boot has a twin that differs only in cyclictest's loop
# count (the same length of command line, the same padding): Bochs repeats
# a boot to the instruction (docs/testing.md), so the
# difference of the two is what the extra wake-ups cost.
BASE_LOOPS = ("-l,2000,", "-l,0001,")
# timer=posted needs a CPU that runs no vCPU (DESIGN.md, "Exitless
# timer"): that boot has one CPU more than the guest sees.
HOST_CPUS = {"posted": CPUS + 1, "posted/hlt-guest": CPUS + 1, "dedicated": CPUS + 1,
             "native-3cpu": CPUS + 1, "native-dedicated": CPUS + 1}
# Each row's native baseline: the same Bochs machine. Before
# scripts/bochs-patches/0012 Bochs advanced the clock by the mean of what
# each CPU ran in a round, a halted (or parked) CPU counting as a whole
# quantum, so a third CPU that idled slowed the other two against the TSC
# (natively, cyclictest's min went from 68 to 108-116 us with a third CPU
# parked). With each CPU in lockstep the third CPU no longer matters
# (make bench on 47458c1: native-3cpu avg 76 us, native 77), and the
# like-for-like baseline stays.
NATIVES = [n for n, o, _ in CONFIGS if o is None]
BASELINE = {n: "native-dedicated" if n == "dedicated" else
            "native-3cpu" if HOST_CPUS.get(n) == CPUS + 1 else "native"
            for n, o, _ in CONFIGS if o is not None}
RUNS = int(os.environ.get("TICKVISOR_LINUX_RUNS", 6))  # boots per configuration
SPIKE = 2               # a boot's max above SPIKE x native's pooled max is named
PARALLEL = 2            # boots at a time (one emulator is one host thread)
TSC_RE = re.compile(r"^tickvisor: TSC: (\d+) Hz", re.M)
CONFIG_ERROR_RE = re.compile(r"^tickvisor: error: .*$", re.M)


def _pad(run):
    """Run `run`'s command-line padding (see the docstring)."""
    return f" linuxguest.pad={'0' * (run + 1)}"


def selected(env=None):
    """The configuration names TICKVISOR_LINUX_CONFIGS picks (all by default)."""
    env = os.environ.get("TICKVISOR_LINUX_CONFIGS", "") if env is None else env
    names = [n for n, _, _ in CONFIGS]
    want = [w for w in env.split(",") if w]
    unknown = [w for w in want if w not in names]
    if unknown:
        sys.exit(f"bench: linux: TICKVISOR_LINUX_CONFIGS: unknown {', '.join(unknown)} "
                 f"(configurations: {', '.join(names)})")
    return [n for n in names if not want or n in want]


def _kernel(name):
    """The kernel words of configuration name's boots."""
    return " ".join(w for w in (linux_guest.REPEATABLE, KERNEL_ARGS.get(name)) if w)


# cyclictest's start per run: --secaligned=US starts every thread (after
# all are created, as -A) at the next whole second of CLOCK_MONOTONIC plus
# US. The kernel's tick falls on multiples of its period (4 ms, HZ=250:
# tick_init_jiffy_update() aligns it), so US fixes where the 1 ms wake-ups
# fall against the tick; thread 1 (1.5 ms) repeats every 500 us of phase.
# Six runs take six evenly spaced phases of the 1 ms period. With -A 0 the
# phase was wherever the boot left it: a boot in a worse one raised both
# threads' averages by some 15 us (make bench on dc3c778: one or two boots
# of six per row, natively too), so rows compared by their averages
# sampled different phases (issue 24.1).
PHASES = (0, 167, 333, 500, 667, 833)


def _cyclictest(name, base=False, run=0):
    """cyclictest's options for configuration name's boot `run`; base: its
    twin of one loop (BASE_LOOPS)."""
    args = CYCLICTEST_ARGS.get(name, linux_guest.CYCLICTEST)
    args = args.replace(",-A,0,", f",--secaligned={PHASES[run % len(PHASES)]},")
    return args.replace(*BASE_LOOPS) if base else args


def _run_tickvisor(build, out, name, opts, run=0, base=False):
    """One tickvisor boot of the Linux guest; (result, serial). base: the
    twin of one cyclictest loop (BASE_LOOPS)."""
    kernel, initrd = linux_guest.image()
    work = os.path.join(out, f"linux-{name.replace('/', '-')}-{run}" + ("-base" if base else ""))
    os.makedirs(work, exist_ok=True)
    line = guestcfg.guest_line("linux", "vmlinuz", GUEST_MEM, CPUS, 300,
                               linux_guest.cmdline(CPUS, "lapic-deadline", kernel=_kernel(name),
                                                   cyclictest=_cyclictest(name, base, run)) +
                               _pad(run),
                               f"module=guests/initrd.gz {opts}")
    img = emu.esp_with_config(os.path.join(build, "esp.img"), os.path.join(work, "esp.img"),
                              os.path.join(work, "tickvisor.cfg"), f"log=info\n{line}\n")
    linux_guest.copy_to_esp(img, kernel, initrd)
    status, serial, _ = emu.run(img, "bochs", cpus=HOST_CPUS.get(name, CPUS), megs=MEGS,
                                timeout=1800, workdir=work, quiet=True)
    guest = emu.split_guests(serial).get("linux")
    refused = CONFIG_ERROR_RE.search(serial)
    res = _result(serial, guest[0] if guest else None, work)
    res["exits"] = _exits(serial)
    res["vcpu_exits"] = vcpu_exits(serial)
    if guest is None and refused:
        res["na"] = refused.group(0)
    return res, serial


def _run_native(out, tsc_hz, run=0, name="native"):
    kernel, initrd = linux_guest.image()
    work = os.path.join(out, f"linux-{name}-{run}")
    os.makedirs(work, exist_ok=True)
    iso = linux_guest.native_iso(kernel, initrd,
                                 linux_guest.native_cmdline(CPUS, tsc_hz, "lapic-deadline",
                                                            _kernel(name), _cyclictest(name, run=run))
                                 + _pad(run),
                                 os.path.join(work, "linux.iso"))
    msrs = linux_guest.bochs_msrs(os.path.join(work, "msrs.def"))
    status, serial, _ = emu.run(iso, "native", cpus=HOST_CPUS.get(name, CPUS), megs=MEGS,
                                timeout=1800, workdir=work, quiet=True, msrs=msrs)
    return _result(serial, status, work)


EXITS_RE = re.compile(r"^tickvisor: guest linux: (\d+) VM exits: (.*)$", re.M)


# vmm/guest.c's per-vCPU line, printed for a guest of more than one vCPU.
VCPU_EXITS_RE = re.compile(r"^tickvisor: guest linux: vcpu(\d+): (\d+) VM exits(?:: (.*))?$",
                           re.M)


def _by_reason(total, reasons):
    out = {"total": int(total)}
    for part in (reasons or "").split(", "):
        name, _, n = part.rpartition(" ")
        if n.isdigit():
            out[name] = int(n)
    return out


def _exits(serial):
    """{"total": N, "<reason>": N, ...} from the guest's closing exit
    summary, {} without one."""
    m = EXITS_RE.search(serial)
    return _by_reason(m.group(1), m.group(2)) if m else {}


def vcpu_exits(serial):
    """{vcpu: {"total": N, "<reason>": N, ...}} from the per-vCPU lines."""
    return {int(m.group(1)): _by_reason(m.group(2), m.group(3))
            for m in VCPU_EXITS_RE.finditer(serial)}


def _wakeups(res):
    return sum(t.get("wakeups") or 0 for t in
               (res.get("cyclictest") or {}).get("threads") or [])


def exits_per_wakeup(res, vcpu=DEDICATED_VCPU):
    """{"total": x, "<reason>": x, ...}: vcpu's VM exits per cyclictest
    wake-up (all its threads' loops), counted as the difference between
    the boot and its one-loop twin (res["base"], BASE_LOOPS); None without
    the twin or either figure."""
    base = res.get("base") or {}
    ex = (res.get("vcpu_exits") or {}).get(vcpu)
    ex0 = (base.get("vcpu_exits") or {}).get(vcpu)
    wake = _wakeups(res) - _wakeups(base)
    if not ex or not ex0 or wake <= 0:
        return None
    keys = list(ex) + [k for k in ex0 if k not in ex]
    return {k: (ex.get(k, 0) - ex0.get(k, 0)) / wake for k in keys}


def _result(serial, status, work):
    facts = linux_guest.guest_facts(serial)
    return {"status": status, "log": os.path.join(work, "com1.log"),
            "clocksource": facts.get("clocksource"), "clockevents": facts["clockevents"],
            "cpus_online": facts.get("cpus_online"),
            "checks": len(facts["checks"]),
            "checks_failed": [w for ok, w in facts["checks"] if not ok],
            "cyclictest": linux_guest.cyclictest(serial)}


def pool(runs):
    """One result from a configuration's runs: every run's threads and
    histogram counts together (so overall() gives the pooled figures), the
    first failing status, every failed check, and "runs" with each run's
    own cyclictest threads; "na" if tickvisor refused any."""
    res = dict(runs[0])
    res["status"] = next((r["status"] for r in runs if r["status"] != 0), runs[0]["status"])
    res["checks_failed"] = [c for r in runs for c in r.get("checks_failed", [])]
    res["checks"] = min(r.get("checks", 0) for r in runs)     # the fewest of any run
    res["runs"] = [(r.get("cyclictest") or {}).get("threads") for r in runs]
    res["logs"] = [r.get("log") for r in runs]
    res["hlt_exits"] = [r.get("exits", {}).get("HLT", 0) if r.get("exits") else None
                        for r in runs]
    if any(r.get("base") for r in runs):        # the dedicated configuration's
        res["per_wakeup"] = [exits_per_wakeup(r) for r in runs]
        res["dedicated_runs"] = [_dedicated_figures(r) for r in runs]
    na = [r["na"] for r in runs if r.get("na")]
    if na:
        res["na"] = na[0]
    cts = [r.get("cyclictest") for r in runs]
    if not all(cts):
        res["cyclictest"] = None
        return res
    hist = {}
    for ct in cts:
        for us, counts in ct["hist"].items():
            hist[us] = hist.get(us, 0) + sum(counts)
    res["cyclictest"] = {"threads": [t for ct in cts for t in ct["threads"]],
                         "hist": {us: [n] for us, n in hist.items()}}
    return res


def run(build, out):
    """{"tsc_hz", "runs", "configs": {name: pooled result}}; tickvisor
    first, since the native kernel is told the TSC rate tickvisor
    measured."""
    configs, tsc_hz, chosen = {}, None, selected()
    jobs = [(name, opts, r, base) for name, opts, _ in CONFIGS if opts is not None
            and name in chosen for base in (False, True) if not base or name == "dedicated"
            for r in range(RUNS)]
    print(f"bench: linux under tickvisor: {len(jobs)} boots ({RUNS} per configuration"
          + (", each dedicated one with its twin" if "dedicated" in chosen else "") +
          f", {PARALLEL} at a time)", file=sys.stderr)
    with ThreadPoolExecutor(PARALLEL) as ex:
        done = list(ex.map(lambda j: _run_tickvisor(build, out, *j), jobs))
    bases = {}
    for (name, _, r, base), (res, serial) in zip(jobs, done):
        if base:
            bases[name, r] = res
        else:
            configs.setdefault(name, []).append(res)
        m = TSC_RE.search(serial)
        tsc_hz = tsc_hz or (int(m.group(1)) if m else None)
    for (name, r), res in bases.items():
        configs[name][r]["base"] = {k: res.get(k) for k in ("vcpu_exits", "cyclictest",
                                                            "status", "log")}
    if not tsc_hz:
        sys.exit("bench: linux: tickvisor printed no 'tickvisor: TSC: N Hz' line; "
                 f"see the logs in {out}/linux-*")
    natives = [n for n in NATIVES if n in chosen]
    if natives:
        print(f"bench: linux natively (GRUB): {RUNS} boots each of {', '.join(natives)}",
              file=sys.stderr)
        jobs = [(n, r) for n in natives for r in range(RUNS)]
        with ThreadPoolExecutor(PARALLEL) as ex:
            done = list(ex.map(lambda j: _run_native(out, tsc_hz, j[1], j[0]), jobs))
        for (n, _), res in zip(jobs, done):
            configs.setdefault(n, []).append(res)
    linux = {"tsc_hz": tsc_hz, "runs": RUNS,
             "configs": {n: pool(configs[n]) if n in configs else {"not_run": True}
                         for n, _, _ in CONFIGS}}
    for line in spike_lines(linux):
        print(f"bench: linux: {line}", file=sys.stderr)
    return linux


# --- figures -------------------------------------------------------------------

def overall(res):
    """(min, avg, max) over the threads: the smallest min, the mean of the
    averages, the largest max; None when cyclictest gave no summary."""
    ct = res.get("cyclictest")
    if not ct:
        return None
    th = ct["threads"]
    return (min(t["min"] for t in th), sum(t["avg"] for t in th) / len(th),
            max(t["max"] for t in th))


def baseline(linux, name):
    """(name of configuration name's native baseline, its pooled overall()
    or None)."""
    base = BASELINE.get(name, "native")
    return base, overall(linux["configs"].get(base) or {})


def spikes(linux):
    """[(config, run, thread, max, baseline, its pooled max)]: every boot's
    thread whose max exceeds SPIKE x its native baseline's pooled max
    (issue 24.1), in configuration order; none for a configuration without
    a baseline figure."""
    out = []
    for name, opts, _ in CONFIGS:
        base, nat = baseline(linux, name)
        if opts is None or not nat:
            continue
        out += [(name, run, i, t["max"], base, nat[2])
                for run, threads in enumerate((linux["configs"].get(name) or {}).get("runs")
                                              or [])
                for i, t in enumerate(threads or []) if t["max"] > SPIKE * nat[2]]
    return out


def spike_lines(linux):
    """The report's and stderr's words for spikes(): one line each."""
    return [f"SPIKE: {name} boot {run} (linuxguest.pad={'0' * (run + 1)}) thread {th}: "
            f"max {mx} us > {SPIKE}x {base}'s pooled max {nat} us ({mx / nat:.2f}x)"
            for name, run, th, mx, base, nat in spikes(linux)]


def tail_goals(linux):
    """Issue 24's goals, in every configuration (the dedicated one against
    native-dedicated): cyclictest's pooled max at most 1.5x its native
    baseline's (BASELINE), its avg at most that + 5%."""
    out = []
    for name, opts, _ in CONFIGS:
        if opts is None:
            continue
        base, nat = baseline(linux, name)
        o = overall(linux["configs"].get(name) or {})
        for what, i, limit in (("max at most 1.5x", 2, 1.5), ("avg at most 1.05x", 1, 1.05)):
            goal = f"linux {name}: cyclictest {what} {base} (issue 24)"
            if not (o and nat):
                out.append((goal, False, "figure missing: no cyclictest summary from " +
                            ", ".join(n for n, f in ((name, o), (base, nat)) if not f)))
                continue
            out.append((goal, o[i] <= nat[i] * limit,
                        f"{o[i]:.1f} vs {nat[i]:.1f} us ({o[i] / nat[i]:.2f}x)"))
    return out


def goals(linux):
    """Issue 14's goals: with advance=auto, cyclictest max at most 2x
    native's and avg at most native's + 10%; and in every configuration
    each boot ended with status 0 after all of /init's checks held (a
    figure from a boot that failed is no figure)."""
    out = []
    for name, _, _ in CONFIGS:
        res = linux["configs"].get(name) or {}
        want = linux_guest.init_checks()
        if res.get("not_run"):
            out.append((f"linux {name}: every boot ended with status 0, all {want} checks held",
                        False, "not run (TICKVISOR_LINUX_CONFIGS)"))
            continue
        out.append((f"linux {name}: every boot ended with status 0, all {want} checks held",
                    res.get("status") == 0 and not res.get("checks_failed") and
                    res.get("checks", 0) >= want and not res.get("na"),
                    f"status {res.get('status')}, fewest checks of a boot {res.get('checks', 0)}"
                    + (f", failed: {'; '.join(res['checks_failed'])}"
                       if res.get("checks_failed") else "")
                    + (f", refused: {res['na']}" if res.get("na") else "")))
    nat = overall(linux["configs"].get("native") or {})
    auto = overall(linux["configs"].get("preempt/auto") or {})
    gone = [n for n, o in (("native", nat), ("preempt/auto", auto)) if not o]
    names = ("linux cyclictest: max with advance=auto at most 2x native",
             "linux cyclictest: avg with advance=auto at most native + 10%")
    hg = linux["configs"].get("posted/hlt-guest") or {}
    hlts = hg.get("hlt_exits") or []
    out.append(("linux posted/hlt-guest: no HLT exit in any boot (issue 24.4)",
                bool(hlts) and all(h == 0 for h in hlts), f"HLT exits per boot: {hlts}"))
    out += tail_goals(linux)
    if gone:
        return out + [(n, False, "figure missing: no cyclictest summary from " +
                       ", ".join(gone)) for n in names]
    return out + [(names[0], auto[2] <= 2 * nat[2],
                   f"{auto[2]} vs {nat[2]} us ({auto[2] / nat[2]:.2f}x)"),
                  (names[1], auto[1] <= nat[1] * 1.10, f"{auto[1]:.1f} vs {nat[1]:.1f} us "
                   f"({auto[1] / nat[1]:.2f}x)")]


def _cell(res, nat):
    """Pooled 'min / avg / max', each run's thread averages, and the avg
    and max ratios to native."""
    if res.get("na"):
        return "n/a", "n/a", "n/a"
    ct = res.get("cyclictest")
    if not ct:
        return f"no summary (status {res.get('status')})", "–", "–"
    o, n = overall(res), overall(nat) if nat else None
    per = f"{o[0]} / {o[1]:.0f} / {o[2]}"
    runs = "; ".join(", ".join(str(t["avg"]) for t in th or []) for th in
                     res.get("runs") or [ct["threads"]])
    ratio = f"avg {o[1] / n[1]:.2f}×, max {o[2] / n[2]:.2f}×" if n else "–"
    return per, runs, ratio


def _maxima(res):
    """Each run's thread maxima, as the averages beside them (issue 24.1:
    a rare spike is one boot's, and the pooled max alone hides which)."""
    return "; ".join(", ".join(str(t["max"]) for t in th or []) if th else "–"
                     for th in res.get("runs") or []) or "–"


def _dedicated_figures(r, vcpu=DEDICATED_VCPU):
    """(vcpu's exits in the boot, in its twin, the extra wake-ups), each
    None where missing."""
    base = r.get("base") or {}
    ex = ((r.get("vcpu_exits") or {}).get(vcpu) or {}).get("total")
    ex0 = ((base.get("vcpu_exits") or {}).get(vcpu) or {}).get("total")
    return ex, ex0, (_wakeups(r) - _wakeups(base)) if base else None


def dedicated_md(linux):
    """The dedicated-CPU section (issue 24.5): per boot, vCPU 1's exits per
    cyclictest wake-up, in all and by reason."""
    res = linux["configs"].get("dedicated") or {}
    if res.get("not_run") or res.get("na"):
        return []
    v = DEDICATED_VCPU
    lines = ["", "### Dedicated CPU (seed 002, issue 24.5)", "",
             f"`{_kernel('dedicated')}`, `cyclictest "
             f"{_cyclictest('dedicated').replace(',', ' ')}` (boot N: "
             "`--secaligned=PHASES[N]`), "
             f"`{dict((n, o) for n, o, _ in CONFIGS)['dedicated']}`. vCPU {v}'s VM exits per "
             "cyclictest wake-up: the boot's count less that of its twin, whose cyclictest "
             f"makes one loop (`{BASE_LOOPS[1].strip(',').replace(',', ' ')}`), over the "
             "wake-ups between them (loops: the histogram's total plus its overflows).", "",
             f"| boot | vCPU {v} exits (twin) | extra wake-ups | exits per wake-up "
             "| by reason, per wake-up |",
             "|---|---|---|---|---|"]
    figs = res.get("dedicated_runs") or []
    for run, per in enumerate(res.get("per_wakeup") or []):
        ex, ex0, wake = ("–" if x is None else x for x in
                         (figs[run] if run < len(figs) else (None, None, None)))
        head = f"| {run} | {ex} ({ex0}) | {wake}"
        if not per:
            lines.append(head + " | – | – |")
            continue
        reasons = ", ".join(f"{k} {x:.2f}" for k, x in per.items() if k != "total" and x)
        lines.append(f"{head} | {per['total']:.2f} | {reasons} |")
    return lines


def report_md(linux):
    lines = ["## Linux guest: cyclictest (issue 14)", "",
             "Debian's cloud kernel on 2 CPUs, `cyclictest " +
             _cyclictest("native").replace(",", " ") + "` from the initramfs of "
             "`scripts/linux-guest.py`; microseconds of the guest's clock (in Bochs one "
             "microsecond is 50 instructions). Natively: GRUB with legacy BIOS in the same "
             "Bochs machine, the kernel told the TSC rate tickvisor measured "
             f"(`tsc_early_khz={linux['tsc_hz'] // 1000}`). {linux.get('runs', 1)} boots "
             "per configuration, each command line padded differently, boot N's cyclictest "
             f"started at `--secaligned=` {', '.join(map(str, PHASES))} us (the phase of its "
             "1 ms wake-ups against the kernel's tick, the same per boot in every row); pooled: the smallest min, the mean of the "
             "threads' averages, the largest max. Every kernel also gets "
             f"`{linux_guest.REPEATABLE}` (repeatable boots, issue 24.1). Each row's ratio is "
             "to the native row of its machine: 3-CPU rows (a housekeeper beside the 2 "
             "vCPUs) to native-3cpu, the dedicated row (one thread on an isolated CPU) to "
             "native-dedicated (BASELINE in tests/bench_linux.py).", "",
             "| configuration | clockevent | min / avg / max (us) | thread averages per boot "
             "| thread maxima per boot | vs native baseline |",
             "|---|---|---|---|---|---|"]
    for name, opts, what in CONFIGS:
        res = linux["configs"].get(name, {})
        if res.get("not_run"):
            lines.append(f"| {name} | – | not run | – | – | – |")
            continue
        base = linux["configs"].get(BASELINE[name]) if name in BASELINE else None
        per, runs, ratio = _cell(res, base)
        if ratio.startswith("avg") and name in BASELINE:
            ratio += f" ({BASELINE[name]})"
        ce = ", ".join(sorted(set(res.get("clockevents") or []))) or "–"
        label = f"{name} ({what})" + (f": `{opts}`" if opts else "") + \
            (f", {HOST_CPUS[name]} CPUs" if name in HOST_CPUS else "")
        lines.append(f"| {label} | {ce} | {per} | {runs} | {_maxima(res)} | "
                     f"{ratio if name in BASELINE else '1.00×'} |")
    spiked = spike_lines(linux)
    lines += ([""] + [f"**{line}**" for line in spiked]) if spiked else \
        ["", f"No boot's thread max exceeds {SPIKE}x its native baseline's pooled max."]
    lines += dedicated_md(linux)
    for name, _, _ in CONFIGS:
        res = linux["configs"].get(name, {})
        if res.get("na"):
            lines.append(f"\n{name}: n/a — tickvisor refused it: `{res['na']}`")
        elif res.get("checks_failed"):
            lines.append(f"\n{name}: /init's checks failed: " + "; ".join(res["checks_failed"]))
    lines += ["", f"Histogram: `{linux.get('plot', '–')}`", ""]
    return "\n".join(lines)


def plot(linux, out, gnuplot, root):
    """One PNG: each configuration's cyclictest histogram, threads added."""
    dat = os.path.join(out, "linux_cyclictest.dat")
    series = []
    with open(dat, "w") as f:
        for name, _, _ in CONFIGS:
            ct = linux["configs"].get(name, {}).get("cyclictest")
            if not ct or not ct["hist"]:
                continue
            f.write(f"# {name}\n")
            for us in sorted(ct["hist"]):
                f.write(f"{us} {sum(ct['hist'][us])}\n")
            f.write("\n\n")
            series.append(name)
    if not series:
        return None
    png = os.path.join(out, "linux_cyclictest.png")
    plots = ", ".join(f"'{dat}' index {i} with steps lw 2 title '{s}'"
                      for i, s in enumerate(series))
    gnuplot(f"set terminal png size 1000,600 noenhanced\nset output '{png}'\n"
            "set title 'Linux guest: cyclictest latency histogram (2 threads added)'\n"
            "set xlabel 'latency (us)'\nset ylabel 'wake-ups'\nset logscale y\n"
            f"set yrange [0.8:*]\nplot {plots}\n")
    return os.path.relpath(png, root)
