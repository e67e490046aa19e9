# SPDX-License-Identifier: BSD-2-Clause
"""make bench, the Linux part (issue 14.5): cyclictest in Debian's cloud
kernel on 2 CPUs, natively (GRUB, legacy BIOS, the same Bochs machine)
and under tickvisor with timer=preempt advance=off and advance=auto, and
timer=posted where tickvisor has it.

Each configuration is one boot of its own (a configuration tickvisor
refuses, such as timer=posted before it exists, then costs only its own
row). Figures are cyclictest's, in microseconds of the guest's clock; in
Bochs one microsecond is 50 instructions (ips=50000000).
"""
import os
import re
import sys

import emu
import guestcfg
import linux_guest

CPUS = 2                # the guest's (v)CPUs
MEGS = 1024
GUEST_MEM = "256M"
# (name, tickvisor options or None for native, what the row stands for)
CONFIGS = [
    ("native", None, "GRUB, no hypervisor"),
    ("preempt/off", "timer=preempt advance=off", "VMX-preemption timer, no advance"),
    ("preempt/auto", "timer=preempt advance=auto", "VMX-preemption timer, adaptive advance"),
    ("posted", "timer=posted advance=auto",
     "exitless timer on a housekeeping CPU (posted interrupts)"),
]
# timer=posted needs a CPU that runs no vCPU (DESIGN.md, "Exitless
# timer"): that boot has one CPU more than the guest sees.
HOST_CPUS = {"posted": CPUS + 1}
TSC_RE = re.compile(r"^tickvisor: TSC: (\d+) Hz", re.M)
CONFIG_ERROR_RE = re.compile(r"^tickvisor: error: .*$", re.M)


def _run_tickvisor(build, out, name, opts):
    """One tickvisor boot of the Linux guest; (result, serial)."""
    kernel, initrd = linux_guest.image()
    work = os.path.join(out, "linux-" + name.replace("/", "-"))
    os.makedirs(work, exist_ok=True)
    line = guestcfg.guest_line("linux", "vmlinuz", GUEST_MEM, CPUS, 300,
                               linux_guest.cmdline(CPUS, "lapic-deadline"),
                               f"module=guests/initrd.gz {opts}")
    img = emu.esp_with_config(os.path.join(build, "esp.img"), os.path.join(work, "esp.img"),
                              os.path.join(work, "tickvisor.cfg"), f"log=info\n{line}\n")
    linux_guest.copy_to_esp(img, kernel, initrd)
    status, serial, _ = emu.run(img, "bochs", cpus=HOST_CPUS.get(name, CPUS), megs=MEGS,
                                timeout=1800, workdir=work, quiet=True)
    guest = emu.split_guests(serial).get("linux")
    refused = CONFIG_ERROR_RE.search(serial)
    res = _result(serial, guest[0] if guest else None, work)
    if guest is None and refused:
        res["na"] = refused.group(0)
    return res, serial


def _run_native(out, tsc_hz):
    kernel, initrd = linux_guest.image()
    work = os.path.join(out, "linux-native")
    os.makedirs(work, exist_ok=True)
    iso = linux_guest.native_iso(kernel, initrd,
                                 linux_guest.native_cmdline(CPUS, tsc_hz, "lapic-deadline"),
                                 os.path.join(work, "linux.iso"))
    msrs = linux_guest.bochs_msrs(os.path.join(work, "msrs.def"))
    status, serial, _ = emu.run(iso, "native", cpus=CPUS, megs=MEGS, timeout=1800,
                                workdir=work, quiet=True, msrs=msrs)
    return _result(serial, status, work)


def _result(serial, status, work):
    facts = linux_guest.guest_facts(serial)
    return {"status": status, "log": os.path.join(work, "com1.log"),
            "clocksource": facts.get("clocksource"), "clockevents": facts["clockevents"],
            "cpus_online": facts.get("cpus_online"),
            "checks_failed": [w for ok, w in facts["checks"] if not ok],
            "cyclictest": linux_guest.cyclictest(serial)}


def run(build, out):
    """{"tsc_hz", "configs": {name: result}}; tickvisor first, since the
    native kernel is told the TSC rate tickvisor measured."""
    configs, tsc_hz = {}, None
    for name, opts, _ in CONFIGS:
        if opts is None:
            continue
        print(f"bench: linux under tickvisor, {name} ({opts})", file=sys.stderr)
        configs[name], serial = _run_tickvisor(build, out, name, opts)
        m = TSC_RE.search(serial)
        tsc_hz = tsc_hz or (int(m.group(1)) if m else None)
    if not tsc_hz:
        sys.exit("bench: linux: tickvisor printed no 'tickvisor: TSC: N Hz' line; "
                 f"see the logs in {out}/linux-*")
    print("bench: linux natively (GRUB)", file=sys.stderr)
    configs["native"] = _run_native(out, tsc_hz)
    return {"tsc_hz": tsc_hz, "configs": {n: configs[n] for n, _, _ in CONFIGS}}


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


def goals(linux):
    """Issue 14's goals: with advance=auto, cyclictest max at most 2x
    native's and avg at most native's + 10%."""
    nat, auto = overall(linux["configs"]["native"]), overall(linux["configs"]["preempt/auto"])
    if not nat or not auto:
        return [("linux: cyclictest under tickvisor and natively", False,
                 "a run gave no cyclictest summary")]
    return [("linux cyclictest: max with advance=auto at most 2x native", auto[2] <= 2 * nat[2],
             f"{auto[2]} vs {nat[2]} us ({auto[2] / nat[2]:.2f}x)"),
            ("linux cyclictest: avg with advance=auto at most native + 10%",
             auto[1] <= nat[1] * 1.10, f"{auto[1]:.1f} vs {nat[1]:.1f} us "
             f"({auto[1] / nat[1]:.2f}x)")]


def _cell(res, nat):
    """'min/avg/max' per thread, with the avg and max ratios to native."""
    if res.get("na"):
        return "n/a", "n/a"
    ct = res.get("cyclictest")
    if not ct:
        return f"no summary (status {res.get('status')})", "–"
    per = "; ".join(f"{t['min']}/{t['avg']}/{t['max']}" for t in ct["threads"])
    o, n = overall(res), overall(nat) if nat else None
    ratio = f"avg {o[1] / n[1]:.2f}×, max {o[2] / n[2]:.2f}×" if n else "–"
    return per, ratio


def report_md(linux):
    nat = linux["configs"]["native"]
    lines = ["## Linux guest: cyclictest (issue 14)", "",
             "Debian's cloud kernel on 2 CPUs, `cyclictest " +
             linux_guest.CYCLICTEST.replace(",", " ") + "` from the initramfs of "
             "`scripts/linux-guest.py`; microseconds of the guest's clock (in Bochs one "
             "microsecond is 50 instructions). Natively: GRUB with legacy BIOS in the same "
             "Bochs machine, the kernel told the TSC rate tickvisor measured "
             f"(`tsc_early_khz={linux['tsc_hz'] // 1000}`).", "",
             "| configuration | clockevent | min/avg/max per thread (us) | vs native |",
             "|---|---|---|---|"]
    for name, opts, what in CONFIGS:
        res = linux["configs"].get(name, {})
        per, ratio = _cell(res, nat if name != "native" else None)
        ce = ", ".join(sorted(set(res.get("clockevents") or []))) or "–"
        label = f"{name} ({what})" + (f": `{opts}`" if opts else "") + \
            (f", {HOST_CPUS[name]} CPUs" if name in HOST_CPUS else "")
        lines.append(f"| {label} | {ce} | {per} | {ratio if name != 'native' else '1.00×'} |")
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
