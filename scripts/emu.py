#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Boot an ESP image in an emulator, bounded by a timeout, and read
tickvisor's result from its last serial line.

Emulators (EMULATORS below; `--emu NAME`, `make run EMU=NAME`):
  bochs       Bochs 3.0 (built once by `make deps`) with OVMF; VMX,
              preemption timer, APICv. Instruction-driven clock: repeatable
              runs. Falls back to Debian's Bochs 2.7 with a notice. `--model`
              picks the Bochs CPU model (default corei7_skylake_x).
  tcg         QEMU TCG with OVMF: boots the EFI app but has no VMX.
  kvm         QEMU with KVM and nested VMX (-cpu host,+vmx), where /dev/kvm
              allows.
  native      no tickvisor: a GRUB ISO (make_native_iso) booting one
              Multiboot guest in the same Bochs machine; the benchmarks'
              baseline. Ends on the guest's "EXIT: status N" line.
  native-kvm  the same GRUB ISO in QEMU/KVM.

Bochs and QEMU exit codes carry nothing reliable (Bochs always exits 1),
so the status is the N of "tickvisor: final status N". On a timeout or
when that line is missing the tail of the serial log and the emulator's
own diagnostics (Bochs's VM-entry check names) are printed. `--dry-run`
prints the emulator command instead of starting it, after checking that
the emulator and its firmware are installed (for EMU=kvm without /dev/kvm
too: the line to run where KVM is).
"""
import argparse
import codecs
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The firmware: Debian's combined image, or another one by the environment
# (OVMF=path), or split code and variable stores as most distributions
# ship them (OVMF_CODE= and OVMF_VARS=; QEMU only: the variables are copied
# into the work directory, the firmware writes them). Bochs loads a
# combined image only.
OVMF = os.environ.get("OVMF") or "/usr/share/ovmf/OVMF.fd"
OVMF_CODE = os.environ.get("OVMF_CODE") or None
OVMF_VARS = os.environ.get("OVMF_VARS") or None
VGABIOS = "/usr/share/vgabios/vgabios.bin"
FINAL_RE = re.compile(r"^tickvisor: final status (-?\d+)", re.M)
# A guest booted natively (GRUB, no tickvisor) ends with this line; a Linux
# guest prints it through the kernel log, after a printk time stamp.
NATIVE_FINAL_RE = re.compile(r"^(?:\[ *\d+\.\d+\] )?EXIT: status (-?\d+)", re.M)
# tickvisor's markers around each guest's own serial output.
GUEST_START_RE = re.compile(r"^tickvisor: guest (\S+): starting", re.M)
GUEST_END_RE = re.compile(r"^tickvisor: guest (\S+) exited with status (-?\d+)", re.M)
BIOS = "/usr/share/bochs/BIOS-bochs-latest"
QEMU = "qemu-system-x86_64"
DEFAULT_MODEL = "corei7_skylake_x"
# Every emulator run() accepts, and what it boots (the docstring says more).
EMULATORS = {
    "bochs": "Bochs 3.0 + OVMF, VMX (the CI test bed)",
    "tcg": "QEMU TCG + OVMF, no VMX",
    "kvm": "QEMU/KVM + OVMF, nested VMX",
    "native": "GRUB ISO in Bochs, no tickvisor (benchmark baseline)",
    "native-kvm": "GRUB ISO in QEMU/KVM, no tickvisor",
}
# Those make run / tickvisor-run offer for booting tickvisor.
TICKVISOR_EMULATORS = ("bochs", "kvm", "tcg")
STATUS_TIMEOUT = 124
STATUS_NO_RESULT = 125
# After the final line, give the emulator this long to power off by itself.
POWEROFF_GRACE_S = 15


# What nested KVM must offer tickvisor, from kvm_intel's parameters in
# sysfs: (parameter, what it gives, how to get it). tickvisor refuses
# without EPT and unrestricted guest; without APICv it runs, but the suites
# expect virtual-interrupt delivery.
KVM_PARAMS = "/sys/module/kvm_intel/parameters"
KVM_NEEDS = (
    ("nested", "nested VMX", "modprobe kvm_intel nested=1"),
    ("ept", "EPT", "modprobe kvm_intel ept=1"),
    ("unrestricted_guest", "unrestricted guest", "modprobe kvm_intel unrestricted_guest=1"),
    ("enable_apicv", "APICv", "modprobe kvm_intel enable_apicv=1; the CPU must have it"),
)


def kvm_missing(dev="/dev/kvm", params=KVM_PARAMS):
    """What stops a nested KVM boot of tickvisor here, each named with the
    way to get it; empty when /dev/kvm works with nested VMX, EPT,
    unrestricted guest and APICv."""
    if not os.path.exists(dev):
        return [f"{dev} does not exist (no KVM: load kvm_intel, or run where the "
                "CPU has VT-x)"]
    if not os.access(dev, os.R_OK | os.W_OK):
        return [f"{dev} is not readable and writable by this user (add it to group kvm)"]
    if not os.path.isdir(params):
        return [f"{params} does not exist: this /dev/kvm is not kvm_intel (another KVM "
                "module, e.g. kvm_amd or kvm_pvm, has no nested VMX for tickvisor)"]
    missing = []
    for name, what, how in KVM_NEEDS:
        try:
            with open(os.path.join(params, name)) as f:
                value = f.read().strip()
        except OSError:
            value = "absent"
        if value not in ("Y", "1"):
            missing.append(f"kvm_intel {name}={value}: no {what} ({how})")
    return missing


def kvm_usable():
    """True when /dev/kvm offers what kvm_missing() asks."""
    return not kvm_missing()


def default_emu():
    return "kvm" if kvm_usable() else "bochs"


_bochs = None
_bochs_lock = threading.Lock()


def bochs_binary():
    """(path, is_30), looked up once per process (the harness boots from
    several threads): the cached 3.0 build, which scripts/deps.sh makes
    (`make run`, `make test` and `make bench` run it first), else
    Debian's 2.7 with a notice; TICKVISOR_BOCHS=PATH names another 3.0."""
    global _bochs
    with _bochs_lock:
        forced = os.environ.get("TICKVISOR_BOCHS")
        if _bochs is None and forced:
            # Another Bochs 3.0, e.g. the trace build
            # (scripts/build-bochs.sh --trace, scripts/bochs-trace.py).
            if not os.access(forced, os.X_OK):
                sys.exit(f"tickvisor-run: TICKVISOR_BOCHS={forced}: not an executable file")
            _bochs = forced, True
        if _bochs is None:
            r = subprocess.run([os.path.join(ROOT, "scripts/build-bochs.sh"), "--find"],
                               capture_output=True, text=True)
            path = r.stdout.strip()
            if r.returncode == 0 and os.access(path, os.X_OK):
                _bochs = path, True
            elif shutil.which("bochs"):
                print("tickvisor-run: NOTICE: using Debian's Bochs 2.7 (slow fallback, no "
                      "posted interrupts): Bochs 3.0 is not built (`make deps` builds it)",
                      file=sys.stderr)
                _bochs = shutil.which("bochs"), False
            else:
                sys.exit("tickvisor-run: no Bochs: run `make deps` first")
        return _bochs


def bochsrc(img, workdir, cpus, megs, is_30, model, native=False, msrs=None, threads=1):
    if native:
        # The same machine without tickvisor: legacy BIOS, GRUB from a CD.
        firmware = [f"romimage: file={BIOS}", "ata0-master: type=cdrom, path="
                    f"{img}, status=inserted", "boot: cdrom"]
    else:
        firmware = [f"romimage: file={OVMF}, address=0xffe00000",
                    f"ata0-master: type=disk, path={img}, mode=flat", "boot: disk"]
    lines = [
        f"megs: {megs}",
        firmware[0],
        f"vgaromimage: file={VGABIOS}",
        # ips fixes the TSC rate (1 tick per instruction at 50 MHz) and
        # sync=none with a fixed time0 makes time instruction-driven (runs
        # repeat to the instruction with scripts/bochs-patches/0011 and
        # 0013: docs/testing.md).
        # threads > 1: one package of cpus/threads cores (Bochs's
        # count=processors:cores:threads; APIC IDs are the CPU indices).
        # quantum: how far (instructions) one CPU may run ahead of another
        # in the lockstep of scripts/bochs-patches/0012; Bochs's 16 let a
        # posted interrupt reach its guest 26 cycles "earlier" than at 4 or
        # less (a fresh guest's TSC-deadline latency, p50: 4 cycles at 16,
        # 15 at 8, 26 at 4, 24 at 1, where each halving of it below 4
        # costs ~1.5x in time). TICKVISOR_BOCHS_QUANTUM=1 makes the trace
        # build's profile exact (each turn one instruction: docs/testing.md).
        f"cpu: model={model}, count={smp_bochs(cpus, threads)}, ips=50000000, "
        f"quantum={bochs_quantum()}, reset_on_triple_fault=0"
        # msrs: MSRs the model lacks, from a Bochs msrs.def-style file.
        + (f", msrs=\"{msrs}\"" if msrs else ""),
        "clock: sync=none, time0=946684800",
        firmware[1],
        firmware[2],
        f"com1: enabled=1, mode=file, dev={workdir}/com1.log",
        "panic: action=fatal",
        "error: action=report",
        "info: action=ignore",
        f"log: {workdir}/bochs.log",
        "pci: enabled=1, chipset=i440fx",
        # Port 0xE9 reads back 0xE9: how tickvisor's end=auto knows it runs
        # in an emulator and powers off (drivers/machine.c).
        "port_e9_hack: enabled=1",
    ]
    if not is_30:
        lines.append('display_library: rfb, options="timeout=0"')
    path = os.path.join(workdir, "bochsrc")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def smp_cores(cpus, threads):
    """Cores of `threads` threads that make `cpus` CPUs (one package)."""
    if threads < 1 or cpus % threads:
        sys.exit(f"tickvisor-run: {cpus} CPUs do not split into cores of {threads} threads")
    return cpus // threads


def bochs_quantum():
    """Bochs's SMP quantum: 4 (above), or TICKVISOR_BOCHS_QUANTUM."""
    q = os.environ.get("TICKVISOR_BOCHS_QUANTUM", "4")
    if not q.isdigit() or not 1 <= int(q) <= 16:
        sys.exit(f"TICKVISOR_BOCHS_QUANTUM={q}: not a number from 1 to 16")
    return int(q)


def smp_bochs(cpus, threads):
    """Bochs's CPU count: `cpus` packages, or with SMT one package of
    cpus/threads cores of `threads` threads each."""
    return str(cpus) if threads == 1 else f"1:{smp_cores(cpus, threads)}:{threads}"


def smp_qemu(cpus, threads):
    """QEMU's -smp: as smp_bochs, in QEMU's spelling."""
    return str(cpus) if threads == 1 else \
        f"{cpus},sockets=1,cores={smp_cores(cpus, threads)},threads={threads}"


def bochs_cmd(img, workdir, cpus, megs, model, native=False, msrs=None, threads=1):
    binary, is_30 = bochs_binary()
    rc = bochsrc(img, workdir, cpus, megs, is_30, model, native, msrs, threads)
    if is_30:
        return [binary, "-q", "-unlock", "-f", rc]
    cont = os.path.join(workdir, "bochs.cont")
    with open(cont, "w") as f:
        f.write("c\n")
    return [binary, "-q", "-unlock", "-f", rc, "-rc", cont]


def uart_args(uart, log):
    """QEMU's UART, whose output goes to log (the harness's serial log,
    com1.log whichever port it is): "com1" at 0x3f8 as on most machines,
    "com2" alone at 0x2f8 (a server whose console is COM2: tickvisor must
    be told serial=0x2f8), "none" (a laptop: no UART at all)."""
    if uart == "com1":
        return ["-serial", f"file:{log}"]
    if uart == "com2":
        return ["-chardev", f"file,id=uart,path={log}",
                "-device", "isa-serial,chardev=uart,index=1"]
    if uart == "none":
        return []
    sys.exit(f"tickvisor-run: unknown UART '{uart}' (com1, com2, none)")


def qemu_cmd(img, workdir, cpus, megs, kvm, cdrom=False, machine="q35", screen=False,
             debug_exit=True, uart="com1", acpi_tables=(), threads=1):
    # A GRUB ISO (native baseline) boots with SeaBIOS, an ESP with OVMF.
    # machine: QEMU's -machine value, the platform shape (q35, pc,
    # q35,hpet=off: PLATFORM.md). screen: a VGA (OVMF gives it a GOP) and a
    # monitor socket in workdir for `screendump`.
    if cdrom:
        boot = ["-cdrom", img]
    elif OVMF_CODE or OVMF_VARS:
        if not (OVMF_CODE and OVMF_VARS):
            sys.exit("tickvisor-run: OVMF_CODE and OVMF_VARS go together (split firmware "
                     "images), or set OVMF= to one combined image")
        varstore = os.path.join(workdir, "OVMF_VARS.fd")
        shutil.copyfile(OVMF_VARS, varstore)
        boot = ["-drive", f"if=pflash,format=raw,readonly=on,file={OVMF_CODE}",
                "-drive", f"if=pflash,format=raw,file={varstore}",
                "-drive", f"format=raw,file={img}"]
    else:
        boot = ["-bios", OVMF, "-drive", f"format=raw,file={img}"]
    monitor = [f"unix:{workdir}/monitor.sock,server,nowait"] if screen else ["none"]
    cmd = [QEMU, "-machine", machine, "-m", str(megs), "-smp", smp_qemu(cpus, threads),
           "-display", "none", "-monitor", *monitor, "-no-reboot", "-nodefaults", *boot,
           *uart_args(uart, f"{workdir}/com1.log")]
    # debug_exit=False: a QEMU without the status port, as a PC is: the
    # run ends by tickvisor's ACPI S5 power-off (issue 22.7).
    if debug_exit:
        cmd += ["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
    # acpi_tables: compiled tables (.aml) QEMU adds to its own, e.g. an
    # SPCR (tests/data/acpi/spcr-com2.asl).
    for t in acpi_tables:
        cmd += ["-acpitable", f"file={t}"]
    if screen:
        cmd += ["-vga", "std"]
    if kvm:
        # invtsc: the host's invariant TSC bit, which tickvisor's timebase
        # and the guests' CPUID 0x15 rely on (QEMU hides it by default).
        cmd += ["-enable-kvm", "-cpu", "host,+vmx,+invtsc"]
    return cmd


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").replace("\r", "")
    except OSError:
        return ""


def diagnose(workdir, serial, why, tail=40):
    """Print why a run failed: serial tail and the emulator's own words."""
    print(f"tickvisor-run: {why}; last {tail} lines of the serial log "
          f"({workdir}/com1.log):", file=sys.stderr)
    for line in serial.splitlines()[-tail:]:
        print("  | " + line, file=sys.stderr)
    log = read(os.path.join(workdir, "bochs.log"))
    vmx = [l for l in log.splitlines() if "VMFAIL" in l or "VMENTER" in l or "VMEXIT" in l]
    if vmx:
        print("tickvisor-run: Bochs VMX diagnostics:", file=sys.stderr)
        for l in vmx[-20:]:
            print("  | " + l, file=sys.stderr)
    err = read(os.path.join(workdir, "emu.err")).strip().splitlines()
    if err:
        print("tickvisor-run: emulator stderr (tail):", file=sys.stderr)
        for l in err[-10:]:
            print("  | " + l, file=sys.stderr)


def make_native_iso(elf, cmdline, out):
    """A GRUB rescue ISO that boots `elf` as a Multiboot kernel: the native
    (no hypervisor) baseline in the same Bochs machine."""
    root = tempfile.mkdtemp(prefix="tickvisor-iso-")
    os.makedirs(os.path.join(root, "boot", "grub"))
    shutil.copyfile(elf, os.path.join(root, "boot", "kernel.elf"))
    with open(os.path.join(root, "boot", "grub", "grub.cfg"), "w") as f:
        f.write("set timeout=0\nset default=0\n"
                "serial --unit=0 --speed=115200\nterminal_input serial\nterminal_output serial\n"
                f'menuentry "native" {{\n  multiboot /boot/kernel.elf {cmdline}\n  boot\n}}\n')
    subprocess.run(["grub-mkrescue", "-o", out, root], check=True, capture_output=True)
    shutil.rmtree(root)
    return out


def emulator_command(img, emu, workdir, cpus=1, megs=1024, model=DEFAULT_MODEL,
                     need_kvm=True, msrs=None, machine="q35", screen=False, debug_exit=True,
                     uart="com1", acpi_tables=(), threads=1):
    """The command that boots img in emu (writing Bochs's bochsrc into
    workdir). need_kvm=False skips the /dev/kvm check (--dry-run);
    machine is QEMU's -machine (Bochs has one)."""
    if emu not in EMULATORS:
        sys.exit(f"tickvisor-run: unknown emulator '{emu}' ({', '.join(EMULATORS)})")
    if emu.endswith("kvm") and need_kvm and not kvm_usable():
        sys.exit(f"tickvisor-run: EMU={emu} cannot run here: " + "; ".join(kvm_missing()) +
                 " (EMU=bochs runs everywhere; docs/ci-nested-kvm.md)")
    if emu in ("bochs", "native"):
        return bochs_cmd(img, workdir, cpus, megs, model, native=emu == "native", msrs=msrs,
                         threads=threads)
    return qemu_cmd(img, workdir, cpus, megs, emu != "tcg", cdrom=emu == "native-kvm",
                    machine=machine, screen=screen, debug_exit=debug_exit, uart=uart,
                    acpi_tables=acpi_tables, threads=threads)


def dry_run(img, emu, workdir, cpus=1, megs=1024, model=DEFAULT_MODEL, threads=1):
    """Print the exact command that would boot img in emu, having checked
    that the emulator and the firmware it loads are installed; 0 when the
    command could run (given /dev/kvm for the KVM ones), 1 otherwise."""
    os.makedirs(workdir, exist_ok=True)
    missing = []
    # bochs_binary() itself stops with the way to get Bochs when it has none.
    if emu not in ("bochs", "native") and not shutil.which(QEMU):
        missing.append(f"{QEMU} (apt-get install qemu-system-x86)")
    if emu == "native":
        firmware = [BIOS]
    elif emu == "native-kvm":
        firmware = []               # SeaBIOS, QEMU's own
    elif emu != "bochs" and (OVMF_CODE or OVMF_VARS):
        firmware = [f for f in (OVMF_CODE, OVMF_VARS) if f]
    else:
        firmware = [OVMF]
    no_firmware = [f for f in firmware if not os.path.exists(f)]
    for f in no_firmware:
        missing.append(f"{f} (apt-get install {'bochsbios' if emu == 'native' else 'ovmf'})")
    if no_firmware:
        # Without its firmware the command cannot even be put together (a
        # split variable store is copied into the work directory).
        for what in missing:
            print(f"tickvisor-run: dry run: missing {what}", file=sys.stderr)
        return 1
    cmd = emulator_command(os.path.abspath(img), emu, workdir, cpus, megs, model,
                           need_kvm=False, threads=threads)
    print(shlex.join(cmd))
    for what in missing:
        print(f"tickvisor-run: dry run: missing {what}", file=sys.stderr)
    if emu.endswith("kvm") and not kvm_usable():
        print("tickvisor-run: dry run: note: nested KVM is not usable here: " +
              "; ".join(kvm_missing()), file=sys.stderr)
    return 1 if missing else 0


def run(img, emu, cpus=1, megs=1024, timeout=300, workdir=None, echo=False,
        model=DEFAULT_MODEL, quiet=False, msrs=None, machine="q35", screendump=None,
        debug_exit=True, uart="com1", screendump_after=None, acpi_tables=(), threads=1):
    """Boot img; returns (status, serial_text, workdir). emu "native" boots
    a GRUB ISO (make_native_iso) in Bochs without tickvisor. screendump
    (QEMU only): the screen is saved there as PPM once the final status
    line is seen; the machine must still run then (end=halt). With no
    serial log to watch (uart="none"), screendump_after seconds from the
    start instead, and the status is STATUS_NO_RESULT."""
    img = os.path.abspath(img)
    if not os.path.exists(img):
        sys.exit(f"tickvisor-run: image not found: {img} (run `make` first)")
    workdir = os.path.abspath(workdir or tempfile.mkdtemp(prefix="tickvisor-run-"))
    os.makedirs(workdir, exist_ok=True)
    for name in ("com1.log", "bochs.log", "emu.err", "emu.out"):
        if os.path.exists(os.path.join(workdir, name)):
            os.unlink(os.path.join(workdir, name))
    final_re = NATIVE_FINAL_RE if emu.startswith("native") else FINAL_RE
    cmd = emulator_command(img, emu, workdir, cpus, megs, model, msrs=msrs, machine=machine,
                           screen=bool(screendump), debug_exit=debug_exit, uart=uart,
                           acpi_tables=acpi_tables, threads=threads)
    def on_final():
        time.sleep(1)   # the screen is drawn after the serial line
        take_screendump(os.path.join(workdir, "monitor.sock"), screendump)
    serial_path = os.path.join(workdir, "com1.log")
    with open(os.path.join(workdir, "emu.out"), "w") as out, \
         open(os.path.join(workdir, "emu.err"), "w") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                cwd=workdir, start_new_session=True)
        status, serial, timed_out = watch(proc, serial_path, timeout, echo, final_re,
                                          on_final if screendump else None,
                                          screendump_after)
    if status is None:
        why = (f"timed out after {timeout} s" if timed_out
               else f"no '{final_re.pattern[1:]}' line (the emulator stopped early)")
        if not quiet:
            diagnose(workdir, serial, why)
        status = STATUS_TIMEOUT if timed_out else STATUS_NO_RESULT
    return status, serial, workdir


class SerialLog:
    """The serial log file as the emulator writes it, read incrementally:
    each poll() reads only the bytes added since the last one (a 10 MB
    log is not re-read ten times a second), decodes UTF-8 across chunk
    boundaries and drops CRs (serial lines end in CRLF). The file may not
    exist yet."""

    def __init__(self, path):
        self.path = path
        self.text = ""
        self.bytes_read = 0             # for the tests: never more than the file
        self._file = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def poll(self):
        """Read what was appended; returns the new text."""
        if self._file is None:
            try:
                self._file = open(self.path, "rb")
            except OSError:
                return ""
        chunk = self._file.read()
        self.bytes_read += len(chunk)
        new = self._decoder.decode(chunk).replace("\r", "")
        self.text += new
        return new

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None


class FinalLine:
    """Finds the last match of a whole-line regex in a growing text,
    scanning each complete line once."""

    def __init__(self, regex):
        self.regex = regex
        self.match = None
        self._scanned = 0               # start of the first line not yet complete

    def feed(self, text):
        end = text.rfind("\n") + 1
        if end > self._scanned:
            for m in self.regex.finditer(text, self._scanned, end):
                self.match = m
            self._scanned = end
        return self.match


def take_screendump(sock_path, out, wait_s=10):
    """QEMU monitor `screendump OUT` (PPM) over its socket; True once the
    file is complete (its header's size arrived)."""
    import socket
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(wait_s)
        sock.connect(sock_path)
        sock.sendall(f"screendump {out}\n".encode())
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                data = open(out, "rb").read()
                w, h = (int(x) for x in data.split(b"\n", 3)[1].split())
                if len(data) >= w * h * 3:
                    return True
            except (OSError, ValueError, IndexError):
                pass
            time.sleep(0.1)
    return False


def watch(proc, serial_path, timeout, echo, final_re=FINAL_RE, on_final=None, final_after=None):
    """Poll the serial log until the emulator exits, the final status line
    has been seen (plus a grace period), or the timeout expires. on_final
    runs once when the final line appears (or final_after seconds from the
    start, when there is no serial log to watch); the machine is then
    stopped."""
    start, seen_final, timed_out = time.monotonic(), None, False
    log, final = SerialLog(serial_path), FinalLine(final_re)
    try:
        while True:
            new = log.poll()
            if echo and new:
                sys.stdout.write(new)
                sys.stdout.flush()
            if final.feed(log.text) and seen_final is None:
                seen_final = time.monotonic()
                if on_final:
                    on_final()
                    kill(proc)
                    break
            if proc.poll() is not None:
                break
            now = time.monotonic()
            if final_after is not None and now - start > final_after and on_final:
                on_final()
                kill(proc)
                break
            if seen_final and now - seen_final > POWEROFF_GRACE_S:
                kill(proc)
                break
            if now - start > timeout:
                timed_out = True
                kill(proc)
                break
            time.sleep(0.1)
        new = log.poll()
    finally:
        log.close()
    if echo and new:
        sys.stdout.write(new)
    # A last line without its newline still counts once the emulator is gone.
    m = final.feed(log.text + "\n")
    return (int(m.group(1)) if m else None), log.text, timed_out


def kill(proc):
    try:
        os.killpg(proc.pid, 9)
    except ProcessLookupError:
        pass
    proc.wait()


def esp_with_config(image, out, cfg, text=None):
    """Copy the ESP image to out with the host file cfg as its
    EFI/tickvisor/tickvisor.cfg; with text, write that to cfg first."""
    if text is not None:
        with open(cfg, "w") as f:
            f.write(text)
    shutil.copyfile(image, out)
    subprocess.run(["mcopy", "-o", "-i", out, cfg, "::/EFI/tickvisor/tickvisor.cfg"], check=True)
    return out


def split_guests(serial):
    """{guest: (status, [output lines])} from tickvisor's guest markers: the
    lines between a guest's 'starting' and 'exited' lines."""
    guests = {}
    starts = {m.group(1): m.end() for m in GUEST_START_RE.finditer(serial)}
    for m in GUEST_END_RE.finditer(serial):
        name, status = m.group(1), int(m.group(2))
        body = serial[starts.get(name, m.start()):m.start()]
        guests[name] = (status, body.splitlines())
    return guests


def with_config(image, name):
    """A copy of the ESP image whose tickvisor.cfg is EFI/tickvisor/NAME.cfg
    (Bochs cannot pass UEFI load options such as config=...)."""
    out = os.path.join(os.path.dirname(os.path.abspath(image)), f"esp-{name}.img")
    tmp = out + ".cfg"
    r = subprocess.run(["mcopy", "-o", "-i", image, f"::/EFI/tickvisor/{name}.cfg", tmp],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"tickvisor-run: no EFI/tickvisor/{name}.cfg in {image}")
    esp_with_config(image, out, tmp)
    os.unlink(tmp)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="emulators: " + "; ".join(
                                     f"{k}: {v}" for k, v in EMULATORS.items()))
    ap.add_argument("image")
    ap.add_argument("--emu", default=None, choices=list(EMULATORS))
    ap.add_argument("--cpus", type=int, default=int(os.environ.get("CPUS", "1")))
    ap.add_argument("--megs", type=int, default=1024)
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("TIMEOUT", "600")))
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--model", default=DEFAULT_MODEL, help="Bochs CPU model")
    ap.add_argument("--config", default=None,
                    help="boot with EFI/tickvisor/NAME.cfg as tickvisor.cfg (on a copy)")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the emulator command (checking the emulator and firmware "
                         "are installed) instead of running it")
    a = ap.parse_args()
    emu = a.emu or default_emu()
    if a.config:
        a.image = with_config(a.image, a.config)
    workdir = a.workdir or os.path.join(ROOT, "build", "run", emu)
    if a.dry_run:
        sys.exit(dry_run(a.image, emu, workdir, a.cpus, a.megs, a.model))
    print(f"tickvisor-run: booting {a.image} in {emu} ({a.cpus} CPU{'s' if a.cpus > 1 else ''},"
          f" timeout {a.timeout} s)", file=sys.stderr)
    status, _, workdir = run(a.image, emu, a.cpus, a.megs, a.timeout, workdir, echo=True,
                             model=a.model)
    print(f"tickvisor-run: {emu}: tickvisor status {status} (logs in {workdir})",
          file=sys.stderr)
    sys.exit(status if 0 <= status < 256 else 1)


if __name__ == "__main__":
    main()
