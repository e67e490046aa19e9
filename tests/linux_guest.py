# SPDX-License-Identifier: BSD-2-Clause
"""The Linux guest (issue 14) for make test and make bench: its image
(scripts/linux-guest.py), its command line, a native GRUB ISO of it, and
what its serial output says (guest-tests/linux/init prints it).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGE_SCRIPT = os.path.join(ROOT, "scripts", "linux-guest.py")

# cyclictest as /init runs it (rt-tests 2.4 has no -n any more: it always
# sleeps with clock_nanosleep): one thread per CPU, each pinned to its CPU,
# SCHED_FIFO 99, memory locked, 1 ms interval, 2,000 loops, a histogram to
# 1,000 us (in Bochs a wake-up takes 100-300 us: one us is 50 instructions;
# 200 us left a quarter of one thread's samples in its overflow count).
# -A 0 (aligned): every thread waits at a barrier until the last one is
# created, then all start from one time. Without it thread 0 measured while
# the main thread was still creating thread 1 on its CPU, and the Debian
# kernel (PREEMPT_VOLUNTARY) finishes that clone() before it switches to a
# woken SCHED_FIFO thread: thread 0's first wake-up came 470-800 us late in
# 1-3 of make bench's 36 boots, natively as much as under tickvisor, by
# where its first deadline fell (issue 24.1, docs/linux-guest.md).
# Commas stand for spaces on the kernel command line.
CYCLICTEST = "-m,-q,-t,2,-a,-A,0,-i,1000,-l,2000,-h,1000,--priority=99,--policy=fifo"

# The kernel's part of the command line. console=ttyS0 puts the kernel log
# (and with it /init's lines, written to /dev/kmsg) on COM1; the console
# writes the UART polled, so no IRQ is needed for it.
CONSOLE = "console=ttyS0,115200"


# Under tickvisor a kernel panic reboots at once (the reset ends the guest
# with status 249) instead of spinning out the guest's time limit.
PANIC = "panic=-1"


# What make bench adds so that a boot repeats as far as Bochs lets it
# (issue 24.1; docs/linux-guest.md, "Repeatable boots"). Bochs's RDRAND and
# RDSEED are the C library's rand(), seeded with the host's wall clock at
# start (cpu/init.cc: srand(time(NULL))), so every value the kernel draws
# from them differs from boot to boot: the KASLR offsets, the slab freelist
# order, stack canaries, hash seeds, user-space ASLR. nokaslr fixes the
# kernel's text and its direct map; clearcpuid takes RDRAND (feature bit
# 4*32+30) and RDSEED (9*32+18) away from the kernel (6.1 takes numbers,
# not names), whose entropy then comes only from what the instruction-
# driven emulator repeats (TSC, interrupt timing, the RTC's time0);
# norandmaps and randomize_kstack_offset=off need no entropy at all.
REPEATABLE = "nokaslr clearcpuid=158,306 norandmaps randomize_kstack_offset=off"


def cmdline(cpus, clockevent=None, extra=PANIC, kernel="", cyclictest=CYCLICTEST):
    """The full command line: kernel options (extra, then kernel), then
    /init's expectations and cyclictest's options (commas for spaces)."""
    words = [CONSOLE, extra, kernel, f"linuxguest.cpus={cpus}",
             f"linuxguest.clockevent={clockevent}" if clockevent else "",
             f"linuxguest.cyclictest={cyclictest}"]
    return " ".join(w for w in words if w)


def native_cmdline(cpus, tsc_hz, clockevent=None, kernel="", cyclictest=CYCLICTEST):
    """Natively in Bochs, CPUID 0x15/0x16 claim a TSC of some GHz while it
    ticks at `ips` (PLATFORM.md): Linux would trust CPUID and keep time 70
    times too slow. tsc_early_khz skips that and Linux refines the TSC
    rate against the HPET, as tickvisor's guests get it from CPUID. No
    panic=-1: a native reboot would start GRUB again. NATIVE_IDLE: idle
    with HLT, as tickvisor's guests do (it hides MONITOR/MWAIT)."""
    return cmdline(cpus, clockevent, f"tsc_early_khz={tsc_hz // 1000} {NATIVE_IDLE}", kernel,
                   cyclictest)


# tickvisor hides MONITOR/MWAIT from its guests (CPUID.1:ECX bit 3,
# vmm/exit/exit_cpuid.c), so the guest kernel idles with HLT; natively
# Bochs's Skylake-X offers it and Linux idled with MWAIT ("process: using
# mwait in idle threads"), woken by a store to the monitored line where
# the guest is woken by an IPI. Not like for like, and under Bochs not
# reliable either: two native-dedicated boots of make bench (d70e0be,
# boots 4 and 5) hung 8.3 s in, stop_machine's migration/0 waiting for CPU
# 1, which sat in MWAIT from 19.2 s of Bochs's clock with no interrupt
# and no wake-up after one last store-woken pass (traced: its H lines say
# MWAIT, and no I or W line follows). idle=halt makes the native kernel
# idle with HLT (kernel-parameters.txt: "Halt is forced to be used for
# CPU idle"); a second clearcpuid= beside REPEATABLE's would not be read.
NATIVE_IDLE = "idle=halt"


# Bochs's Skylake-X (model 0x55 stepping 4) has no IA32_BIOS_SIGN_ID, so a
# native Linux reads microcode revision 0 and, by its TSC-deadline errata
# table (arch/x86/kernel/apic/apic.c, apic_validate_deadline_timer: Skylake-X
# stepping 4 needs 0x02000014), falls back to the one-shot APIC timer.
# Under tickvisor it skips that table (CPUID's hypervisor bit) and uses the
# TSC-deadline timer. So that the baseline runs the same timer mode, the
# native machine reports a fixed revision: one MSR line in Bochs's
# msrs.def format (address, type, reset hi/lo, reserved hi/lo, ignored
# hi/lo; all bits ignored, so the update handshake's write of 0 leaves it).
BOCHS_MSRS = ("0x08b 0 02006e05 00000000 00000000 00000000 ffffffff ffffffff"
              "  # IA32_BIOS_SIGN_ID: microcode revision 0x2006e05\n")


def bochs_msrs(path):
    """Write BOCHS_MSRS to path (for emu.run(msrs=path))."""
    with open(path, "w") as f:
        f.write(BOCHS_MSRS)
    return path


class ImageMissing(Exception):
    pass


def image():
    """(kernel, initrd): scripts/linux-guest.py downloads and builds them
    once (~/.cache/tickvisor/linux), later calls only check."""
    r = subprocess.run([sys.executable, IMAGE_SCRIPT], capture_output=True, text=True)
    paths = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    if r.returncode or "kernel" not in paths or "initrd" not in paths:
        raise ImageMissing(f"{IMAGE_SCRIPT} failed (status {r.returncode}):\n"
                           f"{r.stderr.strip()}")
    return paths["kernel"], paths["initrd"]


ESP_FILES = ("vmlinuz", "initrd.gz")       # in EFI/tickvisor/guests/

# guest-tests/linux/init's checks: each `check` call, the clockevent and
# CPU-count ones included (cmdline() passes both). Its SUMMARY must name
# exactly as many: 0 checks would mean /init checked nothing.
INIT = os.path.join(ROOT, "guest-tests", "linux", "init")


def init_checks(path=INIT):
    """How many checks /init makes (its `check $...` calls)."""
    with open(path) as f:
        return len(re.findall(r"^[^#\n]*\bcheck \$", f.read(), re.M))


def copy_to_esp(img, kernel, initrd):
    """Put the kernel and initrd into an ESP image as guests/vmlinuz and
    guests/initrd.gz (what cmdline()'s guest lines name)."""
    for src, name in zip((kernel, initrd), ESP_FILES):
        subprocess.run(["mcopy", "-o", "-i", img, src, f"::/EFI/tickvisor/guests/{name}"],
                       check=True)


def native_iso(kernel, initrd, args, out):
    """A GRUB rescue ISO that boots kernel + initrd with args: the native
    (no hypervisor) baseline in the same Bochs machine, legacy BIOS."""
    root = tempfile.mkdtemp(prefix="tickvisor-linux-iso-")
    try:
        os.makedirs(os.path.join(root, "boot", "grub"))
        shutil.copyfile(kernel, os.path.join(root, "boot", "vmlinuz"))
        shutil.copyfile(initrd, os.path.join(root, "boot", "initrd.gz"))
        with open(os.path.join(root, "boot", "grub", "grub.cfg"), "w") as f:
            f.write("set timeout=0\nset default=0\n"
                    "serial --unit=0 --speed=115200\nterminal_input serial\n"
                    "terminal_output serial\n"
                    f'menuentry "linux" {{\n  linux /boot/vmlinuz {args}\n'
                    "  initrd /boot/initrd.gz\n  boot\n}\n")
        subprocess.run(["grub-mkrescue", "-o", out, root], check=True, capture_output=True)
    finally:
        shutil.rmtree(root)
    return out


# --- what the guest printed ---------------------------------------------------

# A kernel log line: optional printk time stamp, then the text.
_STAMP = r"^(?:\[ *\d+\.\d+\] )?"
GUEST_RE = re.compile(_STAMP + r"linux-guest: (.*)$", re.M)
CYCLIC_RE = re.compile(_STAMP + r"linux-guest: cyclictest: (.*)$", re.M)
# The kernel's own complaints (guest-tests/linux/init checks the same).
KERNEL_BAD_RE = re.compile(r"WARNING: CPU: |kernel BUG at|BUG: |Oops|Call Trace|cut here \]")


def cyclictest(serial):
    """{"threads": [{"min", "avg", "max", "overflows", "wakeups"}...],
    "hist": {us: [count per thread]}} from cyclictest's -h output, or None
    when its summary is missing. Latencies in microseconds, as cyclictest
    prints. With -h cyclictest prints no "C:" loop count; its "# Total:"
    row sums the histogram, which leaves out the overflows, so a thread's
    wake-ups (loops) are its total plus its overflows (None without a
    total)."""
    lines = CYCLIC_RE.findall(serial)
    rows = {}
    for key in ("Total", "Min Latencies", "Avg Latencies", "Max Latencies",
                "Histogram Overflows"):
        for line in lines:
            if line.startswith(f"# {key}:"):
                rows[key] = [int(v) for v in line.split(":", 1)[1].split()]
    if "Max Latencies" not in rows:
        return None
    n = len(rows["Max Latencies"])
    threads = [{"min": rows.get("Min Latencies", [None] * n)[i],
                "avg": rows.get("Avg Latencies", [None] * n)[i],
                "max": rows["Max Latencies"][i],
                "overflows": rows.get("Histogram Overflows", [0] * n)[i]} for i in range(n)]
    for i, t in enumerate(threads):
        t["wakeups"] = rows["Total"][i] + t["overflows"] if "Total" in rows else None
    hist = {}
    for line in lines:
        m = re.match(r"^(\d+)((?: \d+)+)$", line.strip())
        if m:
            hist[int(m.group(1))] = [int(v) for v in m.group(2).split()]
    return {"threads": threads, "hist": hist}


def guest_facts(serial):
    """{"clocksource", "clockevents": [...], "cpus_online", "checks":
    [(ok, what)], "summary"} from /init's lines."""
    facts = {"clockevents": [], "checks": []}
    for line in GUEST_RE.findall(serial):
        if line.startswith("clocksource: "):
            facts["clocksource"] = line.split(": ", 1)[1].split(" ")[0]
        elif line.startswith("clockevent: "):
            facts["clockevents"].append(line.rsplit(": ", 1)[1])
        elif line.startswith("cpus online: "):
            facts["cpus_online"] = line.split(": ", 1)[1]
        elif line.startswith(("PASS: ", "FAIL: ")):
            facts["checks"].append((line.startswith("PASS"), line[6:]))
        elif line.startswith("SUMMARY: "):
            facts["summary"] = line[9:]
    return facts


def kernel_complaints(serial):
    """The kernel log lines that report a kernel bug (not /init's own)."""
    return [l for l in serial.splitlines()
            if KERNEL_BAD_RE.search(l) and "linux-guest: " not in l]
