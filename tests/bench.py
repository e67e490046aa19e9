#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""make bench: the benchmark guests natively and under tickvisor, side by
side, in one run.

Native: each benchmark image boots through GRUB in the same emulated
machine (same CPU model, same instruction-driven clock) without tickvisor.
tickvisor: one boot runs the same images once per configuration (timer
backend x advance x APICv), as separate guests.

Writes build/bench/results.json, build/bench/report.md (every figure with
its virtualized/native ratio, the cost of the exits the fast path takes,
and the goals) and PNG plots. --baseline OLD/results.json adds every
figure's p50/p99/max before and after, flagging what got worse.
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import emu  # noqa: E402
import guestcfg  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests"))
import bench_goals  # noqa: E402
import bench_linux  # noqa: E402

BENCH_RE = re.compile(r"^BENCH name=(\S+) unit=(\S+) n=(\d+) min=(-?\d+) p50=(-?\d+) "
                      r"p99=(-?\d+) max=(-?\d+) mean=(-?\d+)")
HIST_RE = re.compile(r"^HIST name=(\S+) lo=(-?\d+) width=(\d+) counts=([\d,]+)")
SERIES_RE = re.compile(r"^SERIES name=(\S+) every=(\d+) values=([-\d,]+)")
TSC_RE = re.compile(r"^tickvisor: TSC: (\d+) Hz", re.M)

# delta_us: in Bochs an exit plus entry costs ~800 TSC cycles (one per
# instruction), so a 25 us (1,250-cycle) timer is often already inside the
# advance window at the exit that programs it and the figure measures that
# folding, not the backend; 100 us keeps the ratio nearer real hardware's.
TIMER_ARGS = "n=1000 periods=10000 delta_us=100"
# (config name, tickvisor guest options)
CONFIGS = [
    (f"{timer}/{adv}/apicv-{apicv}", f"timer={timer} advance={adv} apicv={apicv}")
    for timer in ("preempt", "lapic", "hpet")
    for adv in ("off", "auto")
    for apicv in ("on", "off")
]
# (config name, tickvisor guest options, smp_pingpong arguments): xAPIC
# (the ICR write is an APIC-write or APIC-access exit) and x2APIC (one
# WRMSR, the exit fast path of vmm/exit/exit_fast.c).
SMP_CONFIGS = [(f"smp{m}/apicv-{a}", f"apicv={a}", args)
               for m, args in (("", ""), ("-x2apic", "apic=x2apic"))
               for a in ("on", "off")]
# The exits the fast path takes (issue 13.4): a figure each, its native
# cost, and so what tickvisor adds per exit. In Bochs one TSC cycle is
# one instruction, so that is the hypervisor's instructions per exit
# (its root-mode code, the stub and the VM exit and entry).
EXIT_COSTS = [
    ("CPUID", "cpuid_roundtrip", "preempt/off/apicv-on"),
    ("WRMSR IA32_TSC_DEADLINE", "program_tscdeadline", "preempt/off/apicv-on"),
    ("WRMSR x2APIC ICR (to a running vCPU)", "ipi_send_x2apic", "smp-x2apic/apicv-on"),
    ("xAPIC ICR write (APIC-write exit)", "ipi_send", "smp/apicv-on"),
]
# timer=posted (issue 13): bench_timer's vCPU on CPU 0, the housekeeping
# CPU 1 posting its expiries (a 2-CPU boot), and smp_timers on 3 vCPUs
# beside a housekeeper (4 CPUs) against the preemption timer there. In
# Bochs every CPU of the machine takes its share of the instruction-driven
# clock (a 2-CPU machine counts about twice the TSC cycles for the same
# path: CPUID, a self-IPI), so the posted figures are held against
# bench_timer natively on 2 CPUs too ("native-2cpu").
POSTED_CONFIGS = [(f"posted/{adv}/apicv-on", f"timer=posted advance={adv}")
                  for adv in ("off", "auto")]
SMP_TIMER_CONFIGS = [(f"smp-timers/{t}", f"timer={t} advance=auto")
                     for t in ("preempt", "posted")]
# Issue 24.2, a fresh guest's first expiries: one guest per backend and
# timer kind (the advance tuner is per vCPU, so a guest's second kind is
# no longer cold), advance=auto; natively the same figures come from the
# one native boot (cold_first=1: no tuner there to warm).
COLD_KINDS = ("tscdeadline", "oneshot", "periodic")
COLD_CONFIGS = [(f"cold/{t}", f"timer={t} advance=auto") for t in ("preempt", "lapic", "hpet")]
COLD_POSTED = [("cold/posted", "timer=posted advance=auto")]
SMP_TIMER_VCPUS = 3


def parse(lines):
    """{figure: {...}} from one guest's serial output."""
    out = {}
    for line in lines:
        line = line.strip()
        m = BENCH_RE.match(line)
        if m:
            name, unit, n, mn, p50, p99, mx, mean = m.groups()
            out.setdefault(name, {}).update(
                unit=unit, n=int(n), min=int(mn), p50=int(p50), p99=int(p99), max=int(mx),
                mean=int(mean))
            continue
        m = HIST_RE.match(line)
        if m:
            out.setdefault(m.group(1), {})["hist"] = {
                "lo": int(m.group(2)), "width": int(m.group(3)),
                "counts": [int(c) for c in m.group(4).split(",")]}
            continue
        m = SERIES_RE.match(line)
        if m:
            out.setdefault(m.group(1), {})["series"] = {
                "every": int(m.group(2)), "values": [int(v) for v in m.group(3).split(",")]}
    return out


def run_native(work, elf, args, cpus, emu_name, tag=""):
    iso = os.path.join(work, os.path.basename(elf) + tag + ".iso")
    emu.make_native_iso(elf, args, iso)
    status, serial, _ = emu.run(iso, emu_name, cpus=cpus, timeout=900,
                                workdir=os.path.join(work, "native-" + os.path.basename(elf) + tag))
    if status != 0:
        print(f"bench: native {os.path.basename(elf)} ended with status {status}",
              file=sys.stderr)
    return parse(serial.splitlines())


def tv_config(guests):
    lines = ["log=info"]
    for name, file, opts, args, vcpus in guests:
        lines.append(guestcfg.guest_line(name, file, "64M", vcpus, 600, args, opts))
    return "\n".join(lines) + "\n"


def run_tickvisor(build, work, guests, cpus, emu_name, tag=""):
    tag = tag or f"{cpus}"
    img = emu.esp_with_config(os.path.join(build, "esp.img"),
                              os.path.join(work, f"esp-{tag}.img"),
                              os.path.join(work, f"tickvisor-{tag}.cfg"), tv_config(guests))
    status, serial, _ = emu.run(img, emu_name, cpus=cpus, timeout=1800,
                                workdir=os.path.join(work, f"tickvisor-{tag}cpu"))
    per_guest = emu.split_guests(serial)
    results = {}
    for name, *_ in guests:
        st, lines = per_guest.get(name, (None, []))
        if st != 0:
            print(f"bench: tickvisor guest {name} ended with status {st}", file=sys.stderr)
        results[name] = parse(lines)
    return results, serial


def tsc_rate(serial, where):
    """The TSC rate tickvisor measured (its "tickvisor: TSC: N Hz" line).
    The native run is told this rate and every figure is scaled by it, so
    a run without it is refused: assuming Bochs's 50 MHz would be wrong
    under KVM or with another ips."""
    m = TSC_RE.search(serial)
    if not m or int(m.group(1)) == 0:
        sys.exit(f"bench: cannot learn the TSC rate: tickvisor printed no "
                 f"'tickvisor: TSC: N Hz' line (serial log in {where}); it did not "
                 "boot far enough to calibrate its TSC")
    return int(m.group(1))


def ratio(v, n):
    if n is None or v is None:
        return None
    if n == 0:
        return None if v else 1.0
    return v / n


def fmt_ratio(r):
    return "–" if r is None else f"{r:.2f}×"


def headline_value(fig):
    """p50 for distributions, the value for single figures."""
    return fig.get("p50") if fig else None


def missing(name, *what):
    """A goal whose figures are missing: not met, saying which."""
    return (name, False, "figure missing: " + ", ".join(what))


def p50_of(res, cfg, name):
    return headline_value(res["configs"].get(cfg, {}).get(name))


def goal(name, values, ok, detail):
    """(name, ok, detail) over values {label: figure or None}: not met,
    naming the missing figures, if any is None."""
    gone = [k for k, v in values.items() if v is None]
    if gone:
        return missing(name, *gone)
    return (name, bool(ok(*values.values())), detail(*values.values()))


def goals(res):
    """The goals of issue 7, evaluated on the measured figures. Every goal
    is evaluated: one whose figure is missing (a configuration that
    crashed) is not met. Exit counts are compared exactly, as integers."""
    out = []
    if res["configs"]:
        out += latency_goals(res) + [drift_goal(res)] + cost_goals(res)
    if "linux" in res:
        out += bench_linux.goals(res["linux"])
    if res["configs"]:
        out += posted_goals(res) + cold_goals(res) + tail_goals(res) + coincident_goals(res)
    return out


def latency_goals(res):
    """Timer latency with the preemption timer against native."""
    out = []
    for name in ("tscdeadline_spin_lat", "oneshot_spin_lat_before"):
        n = p50_of(res, "native", name)
        off = p50_of(res, "preempt/off/apicv-on", name)
        auto = p50_of(res, "preempt/auto/apicv-on", name)
        out.append(goal(f"{name}: advance=off within 10% of native",
                        {f"native {name}": n, f"preempt/off/apicv-on {name}": off},
                        lambda n, v: v * 100 <= n * 110,
                        lambda n, v: f"{v} vs {n} cycles ({fmt_ratio(ratio(v, n))})"))
        out.append(goal(f"{name}: advance=auto not later than native",
                        {f"native {name}": n, f"preempt/auto/apicv-on {name}": auto},
                        lambda n, v: v <= n, lambda n, v: f"{v} vs {n} cycles"))
    return out


def cost_goals(res):
    """Exits per periodic tick, the cost of arming, the fast path's."""
    ex = res["configs"].get("preempt/off/apicv-on", {}).get("exits_periodic_tick")
    out = [goal("periodic: at most 1 VM exit per tick with EOI virtualization",
                {"preempt/off/apicv-on exits_periodic_tick": ex},
                lambda e: e["p50"] <= e["n"],
                lambda e: f"{e['p50']} exits in {e['n']} ticks "
                          f"({e['p50'] / max(e['n'], 1):.3f} per tick)")]
    # A far IA32_TSC_DEADLINE (the bench writes now + 2^40) must arm a host
    # timer no dearer than a TMICT write does: both are one exit and one
    # arming. It once cost 2x under timer=hpet (a 128-bit division by
    # shift-and-subtract in timebase_mul_div for every such arming).
    for timer in ("preempt", "lapic", "hpet"):
        cfg = f"{timer}/off/apicv-on"
        out.append(goal(f"program_tscdeadline: timer={timer} no dearer than program_tmict",
                        {f"{cfg} program_tscdeadline": p50_of(res, cfg, "program_tscdeadline"),
                         f"{cfg} program_tmict": p50_of(res, cfg, "program_tmict")},
                        lambda dl, tm: dl <= tm, lambda dl, tm: f"{dl} vs {tm} cycles"))
    # The fast path's goals: issue 13's CPUID bound, then issue 24.6's
    # (cheaper exits).
    for bound, issue in ((200, ""), (150, " (issue 24.6)")):
        out.append(goal(f"CPUID round trip at most {bound} cycles{issue}",
                        {"preempt/off/apicv-on cpuid_roundtrip":
                         p50_of(res, "preempt/off/apicv-on", "cpuid_roundtrip")},
                        lambda v, b=bound: v <= b, lambda v: f"{v} cycles"))
    out.append(goal("TSC-deadline WRMSR at most 250 cycles (issue 24.6)",
                    {"preempt/off/apicv-on program_tscdeadline":
                     p50_of(res, "preempt/off/apicv-on", "program_tscdeadline")},
                    lambda v: v <= 250, lambda v: f"{v} cycles"))
    # The IPI round trip: issue 13's bound, then 24.6's.
    for bound, issue in ((4, ""), (3, " (issue 24.6)")):
        for cfg, name in (("smp/apicv-on", "ipi_roundtrip"),
                          ("smp-x2apic/apicv-on", "ipi_roundtrip_x2apic")):
            out.append(goal(f"{name}: IPI round trip at most {bound}× native{issue}",
                            {f"native {name}": p50_of(res, "native", name),
                             f"{cfg} {name}": p50_of(res, cfg, name)},
                            lambda n, v, b=bound: v <= b * n,
                            lambda n, v: f"{v} vs {n} cycles ({fmt_ratio(ratio(v, n))})"))
    return out


def drift_goal(res):
    """Cumulative drift after 10,000 periods in every bench_timer
    configuration under tickvisor: under 1% of one period."""
    name = "periodic: zero cumulative drift (bounded, not growing)"
    cfgs = [c for c, _ in CONFIGS] + [c for c, _ in POSTED_CONFIGS]
    finals = {c: headline_value(res["configs"].get(c, {}).get("periodic_drift_final"))
              for c in cfgs}
    gone = [f"{c} periodic_drift_final" for c, v in finals.items() if v is None]
    period = res.get("period_tsc") or 0
    if gone or not period:
        return missing(name, *(gone or ["period_tsc"]))
    worst_cfg = max(finals, key=lambda c: abs(finals[c]))
    worst = abs(finals[worst_cfg])
    return (name, worst * 100 < period,
            f"worst final drift {worst} cycles ({worst_cfg}) after 10,000 periods of {period}")


def posted_goals(res):
    """Issue 13's goals for timer=posted: exits on the vCPU's CPU per
    periodic tick and per TSC-deadline interrupt (the guest's WRMSR),
    compared exactly (0 means none at all), and TSC-deadline latency with
    advance=auto against native."""
    out = []
    for cfg, name, want in (("posted/off/apicv-on", "exits_periodic_tick", 0),
                            ("smp-timers/posted", "exits_smp_periodic_tick", 0),
                            ("posted/off/apicv-on", "exits_tscdeadline_spin", 1)):
        what = f"{cfg}: {want:.2f} VM exits per operation ({name})"
        fig = res["configs"].get(cfg, {}).get(name)
        if not fig:
            out.append(missing(what, f"{cfg} {name}"))
            continue
        out.append((what, fig["p50"] <= want * fig["n"],
                    f"{fig['p50']} exits in {fig['n']} operations "
                    f"({fig['p50'] / max(fig['n'], 1):.3f} per operation)"))
    auto = res["configs"].get("posted/auto/apicv-on", {}).get("tscdeadline_spin_lat")
    for base in ("native-2cpu", "native"):
        nat = res["configs"].get(base, {}).get("tscdeadline_spin_lat")
        p50 = f"posted/auto: TSC-deadline latency p50 at {base} p50 + 5 or better"
        p99 = f"posted/auto: TSC-deadline latency p99 within 2× {base} p99"
        if not (nat and auto):
            gone = [f"{c} tscdeadline_spin_lat" for c, f in
                    (("posted/auto/apicv-on", auto), (base, nat)) if not f]
            out += [missing(p50, *gone), missing(p99, *gone)]
            continue
        out.append((p50, auto["p50"] <= nat["p50"] + 5,
                    f"p50 {auto['p50']} vs {nat['p50']} cycles"))
        out.append((p99, auto["p99"] <= 2 * nat["p99"],
                    f"p99 {auto['p99']} vs {nat['p99']} cycles"))
    return out


def exit_costs_md(res):
    """What each exit of the fast path costs, against native."""
    lines = ["## Cost of the exits the fast path takes (p50; Bochs: 1 cycle = 1 instruction)",
             "", "| exit | figure | native | tickvisor | added per exit |", "|---|---|---|---|---|"]
    for what, name, cfg in EXIT_COSTS:
        n = headline_value(res["configs"]["native"].get(name))
        v = headline_value(res["configs"].get(cfg, {}).get(name))
        if v is None:
            continue
        added = "–" if n is None else str(v - n)
        lines.append(f"| {what} | `{name}` ({cfg}) | {'–' if n is None else n} | {v} | {added} |")
    return lines + [""]


def cold_md(res):
    """A fresh guest's first 20 expiries per kind (issue 24.2)."""
    cfgs = ["native"] + [c for c, _ in COLD_CONFIGS + COLD_POSTED]
    lines = ["## Cold start: a fresh guest's first 20 expiries (p50 / p99 / max, advance=auto)",
             "", "| kind | " + " | ".join(cfgs) + " |", "|---|" + "---|" * len(cfgs)]
    for k in COLD_KINDS:
        row = [f"`cold_{k}_lat`"]
        for c in cfgs:
            f = res["configs"].get(c, {}).get(f"cold_{k}_lat")
            row.append(" / ".join(str(f[x]) for x in ("p50", "p99", "max")) if f else "–")
        lines.append("| " + " | ".join(row) + " |")
    return lines + [""]


def baseline_md(res, base):
    """Every figure before (base) and after (res): p50 / p99 / max."""
    lines = ["## Against the baseline (p50 / p99 / max, before → after)", "",
             f"Baseline: {base.get('date', '?')}. **worse** marks a value more than 3 "
             "cycles above the baseline.", "", "| config | figure | before | after | |",
             "|---|---|---|---|---|"]
    for cfg, figs in res["configs"].items():
        for name in sorted(figs):
            a, b = base.get("configs", {}).get(cfg, {}).get(name), figs[name]
            if not a or "p50" not in a or "p50" not in b:
                continue
            keys = ("p50", "p99", "max")
            worse = any(b[k] - a[k] > 3 for k in keys)
            lines.append(f"| {cfg} | {name} | {' / '.join(str(a[k]) for k in keys)} | "
                         f"{' / '.join(str(b[k]) for k in keys)} | {'**worse**' if worse else ''} |")
    return lines + [""]


def report_md(res):
    cfgs = [c for c in res["configs"] if c != "native"]
    nat = res["configs"].get("native", {})
    names = sorted({f for r in res["configs"].values() for f in r})
    lines = [f"# tickvisor benchmarks — {res['date']}", "",
             f"Machine: {res['machine']}. Emulator: {res['emulator']}. TSC {res['tsc_hz']} Hz "
             "(Bochs: instruction-driven, 1 TSC cycle per instruction). All figures in TSC "
             "cycles unless the unit says otherwise; `p50 (ratio)` against native.", "",
             "## Goals", ""]
    lines += bench_goals.report_lines(bench_goals.verdicts(goals(res)))
    lines += [""] + (exit_costs_md(res) if cfgs else []) + (cold_md(res) if cfgs else [])
    if res.get("baseline"):
        lines += baseline_md(res, res["baseline"])
    if cfgs:
        lines += ["## All figures (p50; ratio to native)", ""]
        lines.append("| figure | native | " + " | ".join(cfgs) + " |")
        lines.append("|---|---|" + "---|" * len(cfgs))
    for name in names if cfgs else []:
        n = headline_value(nat.get(name))
        row = [name, "–" if n is None else str(n)]
        for c in cfgs:
            v = headline_value(res["configs"][c].get(name))
            row.append("–" if v is None else
                       f"{v} ({fmt_ratio(ratio(v, n))})" if n is not None else str(v))
        lines.append("| " + " | ".join(row) + " |")
    if cfgs:
        lines += ["", "Exit figures (`exits_*`) are total VM exits over n operations."]
    lines += ["", "Plots: " + ", ".join(f"`{p}`" for p in res.get("plots", [])), ""]
    if "linux" in res:
        lines.append(bench_linux.report_md(res["linux"]))
    return "\n".join(lines)


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def plots(res, out):
    made = []
    for fig in ("tscdeadline_spin_lat", "oneshot_spin_lat_after", "periodic_period_error"):
        dat = os.path.join(out, f"{fig}.dat")
        series = []
        with open(dat, "w") as f:
            for cfg in ["native"] + [c for c, _ in CONFIGS if c.endswith("apicv-on")]:
                h = res["configs"].get(cfg, {}).get(fig, {}).get("hist")
                if not h:
                    continue
                f.write(f"# {cfg}\n")
                for i, c in enumerate(h["counts"][:-1]):
                    f.write(f"{h['lo'] + i * h['width']} {c}\n")
                f.write("\n\n")
                series.append(cfg)
        if not series:
            continue
        png = os.path.join(out, f"{fig}.png")
        plot = ", ".join(f"'{dat}' index {i} with steps title '{s}'" for i, s in enumerate(series))
        gnuplot(f"set terminal png size 1000,600 noenhanced\nset output '{png}'\n"
                f"set title '{fig}: histogram (TSC cycles)'\nset xlabel 'cycles'\n"
                f"set ylabel 'count'\nset logscale x 2\nplot {plot}\n")
        made.append(os.path.relpath(png, ROOT))
    dat = os.path.join(out, "periodic_drift.dat")
    series = []
    with open(dat, "w") as f:
        for cfg in ["native"] + [c for c, _ in CONFIGS]:
            s = res["configs"].get(cfg, {}).get("periodic_drift", {}).get("series")
            if not s:
                continue
            f.write(f"# {cfg}\n")
            for i, v in enumerate(s["values"]):
                f.write(f"{i * s['every']} {v}\n")
            f.write("\n\n")
            series.append(cfg)
    if series:
        png = os.path.join(out, "periodic_drift.png")
        plot = ", ".join(f"'{dat}' index {i} with lines title '{s}'" for i, s in enumerate(series))
        gnuplot(f"set terminal png size 1000,600 noenhanced\nset output '{png}'\n"
                "set title 'periodic timer: cumulative drift against the ideal'\n"
                "set xlabel 'period'\nset ylabel 'drift (TSC cycles)'\n"
                f"set key outside\nplot {plot}\n")
        made.append(os.path.relpath(png, ROOT))
    return made


def timer_configs(build, out, emu_name):
    """The bench_timer and smp_pingpong figures: ({config: figures},
    tsc_hz), natively and under tickvisor."""
    native_emu = "native" if emu_name == "bochs" else "native-kvm"
    guests = os.path.join(build, "guests")
    # tickvisor first: it reports the TSC rate the native run is told.
    tv, serial = run_tickvisor(build, out, [
        (c.replace("/", "."), "bench_timer.elf", opts, f"bench_timer {TIMER_ARGS}", 1)
        for c, opts in CONFIGS] + cold_guests(COLD_CONFIGS), 1, emu_name)
    tsc_hz = tsc_rate(serial, os.path.join(out, "tickvisor-1cpu"))
    smp, _ = run_tickvisor(build, out, [
        (c.replace("/", "."), "smp_pingpong.elf", opts, f"smp_pingpong {args}".strip(), 2)
        for c, opts, args in SMP_CONFIGS], 2, emu_name) \
        if os.path.exists(os.path.join(guests, "smp_pingpong.elf")) else ({}, None)
    posted, _ = run_tickvisor(build, out, [
        (c.replace("/", "."), "bench_timer.elf", opts, f"bench_timer {TIMER_ARGS}", 1)
        for c, opts in POSTED_CONFIGS] + cold_guests(COLD_POSTED), 2, emu_name, tag="posted-2")
    smp_timers, _ = run_tickvisor(build, out, [
        (c.replace("/", "."), "smp_timers.elf", opts, "smp_timers", SMP_TIMER_VCPUS)
        for c, opts in SMP_TIMER_CONFIGS], SMP_TIMER_VCPUS + 1, emu_name, tag="posted-4")
    native = run_native(out, os.path.join(guests, "bench_timer.elf"),
                        f"bench_timer {TIMER_ARGS} tsc_hz={tsc_hz} cold_first=1", 1, native_emu)
    if os.path.exists(os.path.join(guests, "smp_pingpong.elf")):
        for args in ("", "apic=x2apic"):
            native.update(run_native(out, os.path.join(guests, "smp_pingpong.elf"),
                                     f"smp_pingpong cpus=2 {args}".strip(), 2, native_emu))
    # smp_timers' coincident TSC deadlines on as many CPUs as its vCPUs.
    native.update(run_native(out, os.path.join(guests, "smp_timers.elf"),
                             f"smp_timers cpus={SMP_TIMER_VCPUS}", SMP_TIMER_VCPUS, native_emu,
                             tag=f"-{SMP_TIMER_VCPUS}cpu"))
    native2 = run_native(out, os.path.join(guests, "bench_timer.elf"),
                         f"bench_timer {TIMER_ARGS} tsc_hz={tsc_hz}", 2, native_emu, tag="-2cpu")
    configs = {"native": native, "native-2cpu": native2}
    for c, _ in CONFIGS:
        configs[c] = tv.get(c.replace("/", "."), {})
    for c, _, _ in SMP_CONFIGS:
        configs[c] = smp.get(c.replace("/", "."), {})
    for c, _ in POSTED_CONFIGS:
        configs[c] = posted.get(c.replace("/", "."), {})
    for c, _ in SMP_TIMER_CONFIGS:
        configs[c] = smp_timers.get(c.replace("/", "."), {})
    for c, _ in COLD_CONFIGS + COLD_POSTED:
        configs[c] = {}
        for k in COLD_KINDS:
            configs[c].update((tv if c != "cold/posted" else posted).get(
                f"{c.replace('/', '.')}.{k}", {}))
    return configs, tsc_hz


def cold_guests(cfgs):
    """The cold-start guests of cfgs: one per timer kind, each alone."""
    return [(f"{c.replace('/', '.')}.{k}", "bench_timer.elf", opts,
             f"bench_timer delta_us=100 period_us=200 cold={k}", 1)
            for c, opts in cfgs for k in COLD_KINDS]


def tail_goals(res):
    """Issue 24.3: one-shot p99 and the periodic period error's worst
    (either sign) with advance=auto, every host backend, within 2x
    native's."""
    out = []
    nat = res["configs"].get("native", {})
    for timer in ("preempt", "lapic", "hpet"):
        cfg = f"{timer}/auto/apicv-on"
        got = res["configs"].get(cfg, {})
        n, v = nat.get("oneshot_spin_lat_before"), got.get("oneshot_spin_lat_before")
        out.append(goal(f"{cfg}: one-shot latency p99 at most 2x native p99",
                        {"native oneshot_spin_lat_before": (n or {}).get("p99"),
                         f"{cfg} oneshot_spin_lat_before": (v or {}).get("p99")},
                        lambda n, v: v <= 2 * max(n, 1),
                        lambda n, v: f"p99 {v} vs {n} cycles ({fmt_ratio(ratio(v, n))})"))
        n, v = nat.get("periodic_period_error"), got.get("periodic_period_error")
        worst = (lambda f: max(abs(f["min"]), abs(f["max"])) if f and "min" in f else None)
        out.append(goal(f"{cfg}: periodic period error at most 2x native's worst",
                        {"native periodic_period_error": worst(n),
                         f"{cfg} periodic_period_error": worst(v)},
                        lambda n, v: v <= 2 * max(n, 1),
                        lambda n, v: f"worst {v} vs {n} cycles ({fmt_ratio(ratio(v, n))})"))
    return out


def coincident_goals(res):
    """TSC deadlines of every vCPU due at once (smp_timers, 3 vCPUs,
    advance=auto): the latest CPU's latency in each round, p99, at most
    2x native's on as many CPUs. Each vCPU's own preemption timer serves
    it alone; timer=posted's one housekeeper posts them one after
    another."""
    out = []
    n = res["configs"].get("native", {}).get("coincident_deadline_last")
    for c, _ in SMP_TIMER_CONFIGS:
        v = res["configs"].get(c, {}).get("coincident_deadline_last")
        out.append(goal(f"{c}: coincident TSC deadlines, the last CPU's latency p99 at most "
                        "2x native's",
                        {"native coincident_deadline_last": (n or {}).get("p99"),
                         f"{c} coincident_deadline_last": (v or {}).get("p99")},
                        lambda n, v: v <= 2 * max(n, 1),
                        lambda n, v: f"p99 {v} vs {n} cycles ({fmt_ratio(ratio(v, n))})"))
    return out


def cold_goals(res):
    """Issue 24.2: the max of a fresh guest's first 20 expiries of each
    kind, every backend, advance=auto, at most 2x native's max of the
    same figure."""
    out = []
    for c, _ in COLD_CONFIGS + COLD_POSTED:
        for k in COLD_KINDS:
            name = f"cold_{k}_lat"
            n = res["configs"].get("native", {}).get(name)
            v = res["configs"].get(c, {}).get(name)
            out.append(goal(f"{c}: {name} max at most 2x native max",
                            {f"native {name}": (n or {}).get("max"), f"{c} {name}": (v or {}).get("max")},
                            lambda n, v: v <= 2 * max(n, 1),
                            lambda n, v: f"max {v} vs {n} cycles ({fmt_ratio(ratio(v, n))})"))
    return out


def verdict(vs):
    """make bench's exit status: 1 when a goal not declared a known miss
    is not met (each named on stderr), else 0; a known miss met again is
    a notice."""
    for name, v, detail, _ in vs:
        if v == "met, known miss":
            print(f"bench: notice: known miss met: {name} ({detail}): remove it from "
                  "KNOWN_MISSES in tests/bench_goals.py", file=sys.stderr)
    bad = bench_goals.failed(vs)
    for name, _, detail, _ in bad:
        print(f"bench: goal not met: {name} ({detail})", file=sys.stderr)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--emu", default=None, choices=["bochs", "kvm"])
    ap.add_argument("--only", default=None, choices=["timer", "linux"],
                    help="only the timer/IPI benchmark guests, or only the Linux guest")
    ap.add_argument("--baseline", default=None,
                    help="an earlier results.json: every figure before and after")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    emu_name = a.emu or emu.default_emu()
    out = os.path.join(build, "bench")
    os.makedirs(out, exist_ok=True)
    configs, tsc_hz = timer_configs(build, out, emu_name) if a.only != "linux" else ({}, None)
    res = {
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.machine()}",
        "emulator": "Bochs 3.0 (corei7_skylake_x, ips=50000000)" if emu_name == "bochs"
                    else "QEMU/KVM nested",
        "tsc_hz": tsc_hz,
        "period_tsc": 200 * tsc_hz // 1000000 if tsc_hz else 0,
        "configs": configs,
    }
    if a.only != "timer":
        if emu_name == "bochs":
            res["linux"] = bench_linux.run(build, out)
            res["tsc_hz"] = res["tsc_hz"] or res["linux"]["tsc_hz"]
        else:
            print("bench: the Linux guest is measured in Bochs only (EMU=bochs)",
                  file=sys.stderr)
    if a.baseline:
        with open(a.baseline) as f:
            res["baseline"] = {k: v for k, v in json.load(f).items() if k != "baseline"}
    res["plots"] = plots(res, out)
    if "linux" in res:
        res["linux"]["plot"] = bench_linux.plot(res["linux"], out, gnuplot, ROOT)
        res["plots"] += [res["linux"]["plot"]] if res["linux"]["plot"] else []
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = report_md(res)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(md)
    print(md)
    print(f"bench: wrote {os.path.relpath(out, ROOT)}/results.json, report.md and "
          f"{len(res['plots'])} plots")
    sys.exit(verdict(bench_goals.verdicts(goals(res))))


if __name__ == "__main__":
    main()
