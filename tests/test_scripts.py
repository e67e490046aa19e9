#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Host tests of the runner scripts (scripts/emu.py, scripts/tickvisor-run,
tests/bench.py): no emulator is started. make test runs them with the unit
tests (tests/harness.py); `python3 tests/test_scripts.py` runs them alone."""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import re
import struct
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import bench  # noqa: E402
import emu  # noqa: E402


def load_script(name, path):
    """scripts/`path` as module `name` (the runners have no .py suffix or
    a dash in their name)."""
    loader = importlib.machinery.SourceFileLoader(name, os.path.join(ROOT, "scripts", path))
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


runner = load_script("tickvisor_run", "tickvisor-run")
MB_KERNEL = os.path.join(ROOT, "tests", "data", "multiboot", "kernel32.elf")


def mb_header(flags=0, checksum=None):
    magic = 0x1BADB002
    if checksum is None:
        checksum = (-(magic + flags)) & 0xffffffff
    return struct.pack("<III", magic, flags, checksum)


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="tickvisor-test-")
        self.addCleanup(self.dir.cleanup)

    def file(self, name, data=b""):
        path = os.path.join(self.dir.name, name)
        with open(path, "wb") as f:
            f.write(data)
        return path


class MultibootCheck(Tmp):
    """Multiboot Specification 0.6.96, "The layout of Multiboot header":
    magic 0x1BADB002, 32-bit aligned, within the first 8192 bytes, and
    magic + flags + checksum = 0 mod 2^32 (vmm/loader/multiboot.c agrees)."""

    def test_bundled_kernels_pass(self):
        self.assertIsNone(runner.multiboot_error(MB_KERNEL))
        self.assertIsNone(runner.multiboot_error(MB_KERNEL.replace("32", "64")))

    def test_header_at_last_aligned_place_passes(self):
        path = self.file("k", bytes(8192 - 12) + mb_header(flags=3))
        self.assertIsNone(runner.multiboot_error(path))

    def test_header_crossing_8192_is_refused(self):
        path = self.file("k", bytes(8192 - 8) + mb_header())
        self.assertIn("no Multiboot header", runner.multiboot_error(path))

    def test_header_beyond_8192_is_refused(self):
        path = self.file("k", bytes(8192) + mb_header())
        self.assertIn("no Multiboot header", runner.multiboot_error(path))

    def test_unaligned_header_is_refused(self):
        path = self.file("k", bytes(6) + mb_header() + bytes(64))
        self.assertIn("no Multiboot header", runner.multiboot_error(path))

    def test_bad_checksum_names_file_and_offset(self):
        path = self.file("k", bytes(16) + mb_header(checksum=1) + bytes(64))
        why = runner.multiboot_error(path)
        self.assertEqual(why, f"{path}: not a Multiboot kernel: the header at offset 0x10 "
                              "has a wrong checksum")

    def test_good_header_after_a_bad_one_passes(self):
        path = self.file("k", mb_header(checksum=1) + mb_header(flags=2))
        self.assertIsNone(runner.multiboot_error(path))

    def test_missing_empty_and_directory(self):
        self.assertEqual(runner.multiboot_error("/nonexistent/k.elf"),
                         "/nonexistent/k.elf: file not found")
        self.assertIn("no Multiboot header", runner.multiboot_error(self.file("empty")))
        self.assertIn("is a directory", runner.multiboot_error(self.dir.name))

    def test_efi_application_is_refused(self):
        path = self.file("app.efi", b"MZ" + bytes(10000))
        self.assertIn("not a Multiboot kernel", runner.multiboot_error(path))


class RunnerRequest(Tmp):
    def args(self, *argv):
        return runner.parse_args(["--kernel", MB_KERNEL, *argv])

    def test_qemu_spellings(self):
        a = runner.parse_args(["-kernel", MB_KERNEL, "-append", "x=1", "-initrd", "a,b",
                               "-smp", "2", "-m", "64M"])
        self.assertEqual((a.kernel, a.append, a.initrd, a.smp, a.mem),
                         (MB_KERNEL, "x=1", "a,b", 2, "64M"))

    def test_cmdline_is_kernel_path_then_append(self):
        _, cmdline = runner.check_request(self.args("--append", "a=1 b"))
        self.assertEqual(cmdline, f"{MB_KERNEL} a=1 b")

    def test_refusals(self):
        mod = self.file("mod.bin", b"x")
        cases = [
            (["--initrd", "/nonexistent/m"], "/nonexistent/m: file not found"),
            (["--initrd", f"{mod},{mod}"], "two files named mod.bin"),
            (["--initrd", ",".join([mod] * 9)], "at most 8"),
            (["--append", 'say "hi"'], "double quote"),
            (["--initrd", self.file('a"b', b"x")], "double quote"),
            (["--append", "x" * 300], "at most 255"),
            (["--smp", "0"], "between 1 and 64"),
            (["--smp", "65"], "between 1 and 64"),
            (["--opts", "timer"], "'timer' is not KEY=VALUE"),
        ]
        for argv, msg in cases:
            with self.subTest(argv=argv[:2]):
                with self.assertRaises(runner.RunError) as e:
                    runner.check_request(self.args(*argv))
                self.assertIn(msg, str(e.exception))

    def test_opts_with_digits(self):
        """Option names with digits (x2apic=off, if0_quirks=on) are
        KEY=VALUE too; a word without '=' or starting with one is not."""
        runner.check_request(self.args("--opts", "x2apic=off if0_quirks=on timer=preempt"))
        for bad in ("2x=1", "x2apic", "=off"):
            with self.subTest(opt=bad), self.assertRaises(runner.RunError):
                runner.check_request(self.args("--opts", bad))

    def test_memory_sizes(self):
        self.assertEqual(runner.parse_mem_mib("128M"), 128)
        self.assertEqual(runner.parse_mem_mib("256"), 256)
        self.assertEqual(runner.parse_mem_mib("1G"), 1024)
        for bad in ("1M", "4G", "lots", "12K"):
            with self.subTest(size=bad), self.assertRaises(runner.RunError):
                runner.parse_mem_mib(bad)
        self.assertEqual(runner.emulator_megs("bochs", 1792), 2048)
        with self.assertRaises(runner.RunError):
            runner.emulator_megs("bochs", 1800)
        self.assertEqual(runner.emulator_megs("kvm", 3072), 3072 + 256)

    def test_config_and_esp(self):
        mod = self.file("initrd.img", b"module bytes")
        efi = self.file("tickvisor.efi", b"MZ efi")
        a = self.args("--append", "a=1", "--initrd", mod, "--smp", "2", "--opts",
                      "timer=lapic apicv=off", "--timeout", "9")
        modules, cmdline = runner.check_request(a)
        text = runner.config_text(a, "kernel32", modules, cmdline, 64)
        self.assertEqual(text, 'timer=lapic\napicv=off\nguest kernel32 "guests/kernel32.elf" '
                               f'mem=64M vcpus=2 cmdline="{MB_KERNEL} a=1" timeout=9 '
                               'module="guests/initrd.img"\n')
        work = os.path.join(self.dir.name, "esp")
        os.makedirs(work)
        img = runner.build_esp(efi, [MB_KERNEL, mod], text, work)

        def mtype(path):
            return subprocess.run(["mtype", "-i", img, path], capture_output=True,
                                  check=True).stdout

        self.assertEqual(os.path.getsize(img) % runner.CYLINDER_BYTES, 0)
        self.assertEqual(mtype("::/EFI/BOOT/BOOTX64.EFI"), b"MZ efi")
        self.assertEqual(mtype("::/EFI/tickvisor/tickvisor.cfg").decode(), text)
        self.assertEqual(mtype("::/EFI/tickvisor/guests/initrd.img"), b"module bytes")
        with open(MB_KERNEL, "rb") as f:
            self.assertEqual(mtype("::/EFI/tickvisor/guests/kernel32.elf"), f.read())

    def test_errors_stop_before_any_emulator(self):
        err = io.StringIO()
        with mock.patch.object(runner.emu, "run") as run, contextlib.redirect_stderr(err):
            status = runner.main(["--kernel", self.file("plain.txt", b"hello"),
                                  "--emu", "bochs"])
        run.assert_not_called()
        self.assertEqual(status, 2)
        self.assertIn("tickvisor-run: error: ", err.getvalue())
        self.assertIn("plain.txt: neither a Multiboot kernel nor a bzImage", err.getvalue())

    def test_bzimage_gets_append_alone(self):
        """A Linux kernel (setup header magic "HdrS" at 0x202) is accepted;
        its command line is --append without the kernel path, as QEMU
        gives -append to a Linux -kernel."""
        head = bytearray(0x400)
        head[0x202:0x206] = b"HdrS"
        kernel = self.file("vmlinuz", bytes(head))
        mod = self.file("initrd.cpio", b"070701")
        a = self.args("--append", "console=ttyS0 quiet", "--initrd", mod, "--smp", "2")
        a.kernel = kernel
        modules, cmdline = runner.check_request(a)
        self.assertEqual(cmdline, "console=ttyS0 quiet")
        self.assertEqual(modules, [mod])
        text = runner.config_text(a, "vmlinuz", modules, cmdline, 256)
        self.assertIn('cmdline="console=ttyS0 quiet"', text)
        self.assertIn('module="guests/initrd.cpio"', text)

    def test_busy_workdir_is_refused(self):
        """Two runs in one folder (the default for the same kernel) would
        rebuild each other's ESP: the second is refused, naming --workdir,
        and the folder is free again once the first lock is gone."""
        held = runner.lock_workdir(self.dir.name)
        with self.assertRaisesRegex(runner.RunError, "in use by another tickvisor-run.*--workdir"):
            runner.lock_workdir(self.dir.name)
        held.close()
        runner.lock_workdir(self.dir.name).close()

    def test_status_is_the_guests(self):
        serial = ("tickvisor: guest k: starting (x)\nFAIL: one\n"
                  "tickvisor: guest k exited with status 7\ntickvisor: final status 1\n")
        self.assertEqual(runner.guest_status(serial, "k", 1), (7, True))
        self.assertEqual(runner.guest_status("tickvisor: final status 1\n", "k", 1), (1, False))


class SerialReading(Tmp):
    def test_poll_returns_only_new_text(self):
        path = self.file("com1.log")
        log = emu.SerialLog(path)
        with open(path, "ab", buffering=0) as f:
            f.write(b"one\r\ntw")
            self.assertEqual(log.poll(), "one\ntw")
            f.write(b"o\r")
            self.assertEqual(log.poll(), "o")
            f.write(b"\n\xc3")                  # half of a two-byte character
            self.assertEqual(log.poll(), "\n")
            f.write(b"\xa9!\n")
            self.assertEqual(log.poll(), "\u00e9!\n")
        self.assertEqual(log.text, "one\ntwo\n\u00e9!\n")
        log.close()

    def test_missing_file_is_empty(self):
        log = emu.SerialLog(os.path.join(self.dir.name, "not-yet"))
        self.assertEqual(log.poll(), "")

    def test_final_line_split_across_reads(self):
        final = emu.FinalLine(emu.FINAL_RE)
        self.assertIsNone(final.feed("tickvisor: final st"))
        self.assertIsNone(final.feed("tickvisor: final status 3"))
        self.assertEqual(final.feed("tickvisor: final status 3\n").group(1), "3")
        text = "tickvisor: final status 3\nx tickvisor: final status 9\ntickvisor: final status 4\n"
        self.assertEqual(final.feed(text).group(1), "4")

    def test_watch_reads_each_byte_once(self):
        """watch() used to re-read the whole log every 100 ms: a boot
        printing 2 MB read it some 20 times over."""
        path = self.file("com1.log")
        chunk = b"PASS: something long enough to make the log grow quickly\r\n" * 1000
        polls = 40
        real_open = open
        read = []

        class Counting:
            """The log file, counting the bytes read from it."""

            def __init__(self, f):
                self.f = f

            def read(self, *args):
                data = self.f.read(*args)
                read.append(len(data))
                return data

            def close(self):
                self.f.close()

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.f.close()

        def counting_open(p, mode="r", *args, **kw):
            f = real_open(p, mode, *args, **kw)
            return Counting(f) if p == path and "r" in mode else f

        class Emulator:
            n = 0

            def poll(self):
                self.n += 1
                with real_open(path, "ab") as f:
                    f.write(chunk)
                    if self.n == polls:
                        f.write(b"tickvisor: final status 0\r\n")
                return 0 if self.n == polls else None

        with mock.patch("builtins.open", counting_open), mock.patch.object(emu.time, "sleep"):
            status, serial, timed_out = emu.watch(Emulator(), path, 60, False)
        self.assertEqual((status, timed_out), (0, False))
        size = os.path.getsize(path)
        self.assertEqual(len(serial), size - serial.count("\n"))
        self.assertLessEqual(sum(read), size)


class MachineCpus(unittest.TestCase):
    """--cpus (issue 26.4): the emulated machine's CPUs apart from --smp;
    timer=posted gets one more by default, for its housekeeper."""

    def args(self, *argv):
        return runner.parse_args(["--kernel", MB_KERNEL, *argv])

    def test_defaults(self):
        self.assertEqual(runner.machine_cpus(self.args("--smp", "3")), 3)
        self.assertEqual(runner.machine_cpus(self.args("--smp", "3", "--opts", "timer=posted")),
                         4)
        self.assertEqual(runner.machine_cpus(self.args(
            "--smp", "2", "--opts", "timer=posted timer=lapic")), 2)
        self.assertEqual(runner.machine_cpus(self.args("--smp", "2", "--cpus", "5")), 5)

    def test_too_few_for_posted(self):
        a = self.args("--smp", "3", "--cpus", "3", "--opts", "timer=posted")
        with self.assertRaises(runner.RunError) as e:
            runner.check_request(a)
        self.assertIn("--cpus 3: timer=posted needs a CPU beside the 3 vCPUs for "
                      "housekeeping, so at least 4", str(e.exception))

    def test_fewer_than_smp(self):
        with self.assertRaises(runner.RunError) as e:
            runner.check_request(self.args("--smp", "2", "--cpus", "1"))
        self.assertIn("--cpus 1: at least --smp, 2", str(e.exception))

    def test_threads(self):
        """--threads (issue 22.9): cores of N threads, spelled for each
        emulator; CPUs that do not split into them are refused."""
        with self.assertRaises(runner.RunError) as e:
            runner.check_request(self.args("--smp", "3", "--threads", "2"))
        self.assertIn("--threads 2: the 3 CPUs must split into cores of that many threads",
                      str(e.exception))
        runner.check_request(self.args("--smp", "2", "--cpus", "4", "--threads", "2"))
        self.assertEqual(emu.smp_bochs(4, 2), "1:2:2")
        self.assertEqual(emu.smp_qemu(4, 2), "4,sockets=1,cores=2,threads=2")
        self.assertEqual(emu.smp_bochs(3, 1), "3")
        self.assertEqual(emu.smp_qemu(3, 1), "3")

    def test_bochs_quantum(self):
        """Bochs's SMP quantum is 4 unless TICKVISOR_BOCHS_QUANTUM names
        another from 1 to 16 (1: the trace build's exact profile)."""
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("TICKVISOR_BOCHS_QUANTUM", None)
            self.assertEqual(emu.bochs_quantum(), 4)
            os.environ["TICKVISOR_BOCHS_QUANTUM"] = "1"
            self.assertEqual(emu.bochs_quantum(), 1)
            for bad in ("0", "17", "x", ""):
                os.environ["TICKVISOR_BOCHS_QUANTUM"] = bad
                with self.assertRaises(SystemExit) as e:
                    emu.bochs_quantum()
                self.assertIn("not a number from 1 to 16", str(e.exception.code))

    def test_help_has_examples(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit):
            runner.parse_args(["--help"])
        for example in ("--smp 2\n", "-initrd initrd.img", "--opts timer=posted"):
            self.assertIn(example, out.getvalue())


class KvmMissing(Tmp):
    """kvm_missing() names each thing nested KVM lacks for tickvisor, from
    a fake /dev/kvm and kvm_intel parameter directory."""

    def setup(self, **params):
        dev = os.path.join(self.dir.name, "kvm")
        open(dev, "w").close()
        pdir = os.path.join(self.dir.name, "parameters")
        os.makedirs(pdir, exist_ok=True)
        for name, value in params.items():
            with open(os.path.join(pdir, name), "w") as f:
                f.write(value + "\n")
        return dev, pdir

    def test_all_there(self):
        dev, pdir = self.setup(nested="Y", ept="Y", unrestricted_guest="Y", enable_apicv="Y")
        self.assertEqual(emu.kvm_missing(dev, pdir), [])

    def test_nested_as_1(self):
        dev, pdir = self.setup(nested="1", ept="Y", unrestricted_guest="Y", enable_apicv="Y")
        self.assertEqual(emu.kvm_missing(dev, pdir), [])

    def test_each_missing_named(self):
        dev, pdir = self.setup(nested="N", ept="Y", unrestricted_guest="N")
        self.assertEqual(emu.kvm_missing(dev, pdir), [
            "kvm_intel nested=N: no nested VMX (modprobe kvm_intel nested=1)",
            "kvm_intel unrestricted_guest=N: no unrestricted guest "
            "(modprobe kvm_intel unrestricted_guest=1)",
            "kvm_intel enable_apicv=absent: no APICv (modprobe kvm_intel enable_apicv=1; "
            "the CPU must have it)"])

    def test_no_device(self):
        self.assertIn("does not exist (no KVM", emu.kvm_missing("/nonexistent/kvm")[0])

    def test_not_kvm_intel(self):
        dev, _ = self.setup()
        self.assertIn("this /dev/kvm is not kvm_intel",
                      emu.kvm_missing(dev, os.path.join(self.dir.name, "none"))[0])


class DryRun(Tmp):
    def run_dry(self, emu_name="kvm", **patches):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.ExitStack() as st:
            for name, value in patches.items():
                st.enter_context(mock.patch.object(emu, name, value))
            st.enter_context(contextlib.redirect_stdout(out))
            st.enter_context(contextlib.redirect_stderr(err))
            status = emu.dry_run("esp.img", emu_name, self.dir.name, cpus=2, megs=512)
        return status, out.getvalue(), err.getvalue()

    def fake_qemu(self):
        """A PATH holding only an executable named qemu-system-x86_64."""
        bindir = os.path.join(self.dir.name, "bin")
        os.makedirs(bindir, exist_ok=True)
        qemu = os.path.join(bindir, emu.QEMU)
        with open(qemu, "w") as f:
            f.write("#!/bin/sh\nexit 1\n")
        os.chmod(qemu, 0o755)
        return mock.patch.dict(os.environ, {"PATH": bindir})

    def test_kvm_command_line(self):
        with self.fake_qemu():
            status, out, err = self.run_dry(kvm_usable=lambda: False)
        img = os.path.abspath("esp.img")
        self.assertEqual(status, 0, err)
        self.assertEqual(out, f"qemu-system-x86_64 -machine q35 -m 512 -smp 2 -display none "
                              f"-monitor none -no-reboot -nodefaults -bios {emu.OVMF} "
                              f"-drive format=raw,file={img} -serial "
                              f"file:{self.dir.name}/com1.log -device "
                              "isa-debug-exit,iobase=0xf4,iosize=0x04 -enable-kvm "
                              "-cpu host,+vmx,+invtsc\n")
        self.assertIn("nested KVM is not usable here: ", err)

    def test_split_ovmf(self):
        """OVMF_CODE/OVMF_VARS: two pflash drives, the variables copied
        into the work directory (the firmware writes them)."""
        code, varstore = (os.path.join(self.dir.name, n) for n in ("CODE.fd", "VARS.fd"))
        for f in (code, varstore):
            with open(f, "wb") as fh:
                fh.write(b"\0" * 16)
        with self.fake_qemu():
            status, out, err = self.run_dry(kvm_usable=lambda: True, OVMF_CODE=code,
                                            OVMF_VARS=varstore)
        self.assertEqual(status, 0, err)
        copy = os.path.join(self.dir.name, "OVMF_VARS.fd")
        self.assertIn(f"-drive if=pflash,format=raw,readonly=on,file={code} "
                      f"-drive if=pflash,format=raw,file={copy} -drive format=raw,file=", out)
        self.assertNotIn("-bios", out)
        self.assertTrue(os.path.exists(copy))

    def test_split_ovmf_needs_both(self):
        code = os.path.join(self.dir.name, "CODE.fd")
        open(code, "wb").close()
        with self.fake_qemu(), self.assertRaises(SystemExit) as e:
            self.run_dry(kvm_usable=lambda: True, OVMF_CODE=code)
        self.assertIn("OVMF_CODE and OVMF_VARS go together", str(e.exception))

    def test_split_ovmf_missing(self):
        with self.fake_qemu():
            status, out, err = self.run_dry(kvm_usable=lambda: True, OVMF_CODE="/no/CODE.fd",
                                            OVMF_VARS="/no/VARS.fd")
        self.assertEqual(status, 1)
        self.assertIn("dry run: missing /no/CODE.fd (apt-get install ovmf)", err)
        self.assertIn("dry run: missing /no/VARS.fd", err)

    def test_missing_qemu(self):
        with mock.patch.dict(os.environ, {"PATH": self.dir.name}):
            status, out, err = self.run_dry()
        self.assertEqual(status, 1)
        self.assertIn("dry run: missing qemu-system-x86_64 (apt-get install qemu-system-x86)",
                      err)

    def test_missing_ovmf(self):
        with self.fake_qemu():
            status, out, err = self.run_dry(OVMF="/nonexistent/OVMF.fd")
        self.assertEqual(status, 1)
        self.assertIn("dry run: missing /nonexistent/OVMF.fd (apt-get install ovmf)", err)

    def test_every_emulator_is_listed(self):
        self.assertEqual(set(emu.EMULATORS), {"bochs", "tcg", "kvm", "native", "native-kvm"})
        for name in emu.EMULATORS:
            self.assertIn(f"\n  {name} ", emu.__doc__)
        with self.assertRaises(SystemExit) as e:
            emu.emulator_command("x.img", "vbox", self.dir.name)
        self.assertIn("bochs, tcg, kvm, native, native-kvm", str(e.exception))


class BenchTscRate(Tmp):
    def test_no_tsc_line_stops_the_bench(self):
        """It used to assume 50 MHz and go on to the native runs."""
        serial = "tickvisor: tickvisor 0.1.0\ntickvisor: error: VMX unavailable\n"
        natives = []
        err = io.StringIO()
        with mock.patch.object(emu, "run", return_value=(1, serial, self.dir.name)), \
             mock.patch.object(emu, "esp_with_config", return_value="esp.img"), \
             mock.patch.object(bench, "run_native", lambda *a: natives.append(a) or {}), \
             mock.patch.object(sys, "argv", ["bench.py", "--build", self.dir.name,
                                             "--emu", "bochs"]), \
             contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
            bench.main()
        self.assertEqual(natives, [])
        self.assertIn("bench: cannot learn the TSC rate", str(e.exception))

    def test_tsc_line_is_used(self):
        serial = "tickvisor: TSC: 2100000000 Hz from HPET, invariant\n"
        self.assertEqual(bench.tsc_rate(serial, "here"), 2100000000)


class BochsTrace(unittest.TestCase):
    """scripts/bochs-trace.py on a made-up trace in the format of
    scripts/bochs-debug/0001 (its header lists the lines)."""
    TRACE = """\
X 0 1000 32 0 ffffffff81073916 1388 6e0 0
E 0 1100 1 3000 0 0 0
X 0 4000 12 0 ffffffff81a17a0b 0 1 0
E 0 5030 1 10 0 ec 0
X 1 2000 32 0 ffffffff81073916 7d0 6e0 0
E 1 2100 1 3000 0 0 0
D 1 2200 7d0
X 1 9000 32 0 ffffffff81073916 3a98 6e0 0
X 1 9500 32 0 ffffffff81073916 4e20 6e0 0
X 0 9600 30 3f80000 0 41 0 0
X 0 9700 30 3f80000 0 a 0 0
bogus line
"""

    def setUp(self):
        self.bt = load_script("bochs_trace", "bochs-trace.py")
        self.events = list(self.bt.parse(self.TRACE.splitlines()))

    def test_expiries(self):
        got = list(self.bt.expiries(self.events, 0xec))
        self.assertEqual(got, [
            # cpu0's deadline 5000 (0x1388) reached the guest at 5030
            self.bt.Expiry(0, 5000, 1000, 5030, "delivered"),
            # cpu1's 2000 (0x7d0) never did: the next write, at 9000,
            # replaced it 7000 late; that one (15000) was then cancelled
            self.bt.Expiry(1, 2000, 2000, 9000, "replaced"),
            self.bt.Expiry(1, 15000, 9000, 9500, "cancelled")])

    def test_posted_delivery(self):
        # timer=posted: the notification vector reaching the vCPU's CPU
        # after the deadline is the delivery; without --posted it is not.
        events = list(self.bt.parse("""\
X 1 100 32 0 0 1f4 6e0 0
I 1 450 f0
I 1 520 f0
""".splitlines()))
        self.assertEqual(list(self.bt.expiries(events, 0xec, 0xf0)),
                         [self.bt.Expiry(1, 500, 100, 520, "delivered")])
        self.assertEqual(list(self.bt.expiries(events, 0xec)), [])

    def test_serial(self):
        self.assertEqual(list(self.bt.serial_lines(self.events)), [(9600, "A")])

    def test_late_named_and_exit_status(self):
        path = os.path.join(tempfile.mkdtemp(), "trace")
        with open(path, "w") as f:
            f.write(self.TRACE)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            # 7000 ticks at 50 MHz: 140 us
            self.assertEqual(self.bt.main([path, "--late", "100"]), 1)
        self.assertIn("cpu1: deadline 2000 written at 2000, replaced at 9000: 140 us late",
                      out.getvalue())
        self.assertIn("  D 1 2200 7d0", out.getvalue())
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(self.bt.main([path, "--late", "150"]), 0)


    def test_profile(self):
        # S lines (scripts/bochs-debug/0002): cpu to guest rip count; guest
        # addresses named by a System.map, tickvisor's by nm output shifted
        # by its load base; an address below every symbol stays unnamed.
        events = list(self.bt.parse("""\
S 0 900 1 ffffffff81000010 30
S 0 900 1 ffffffff81000020 10
S 0 900 1 ffffffff81000100 60
S 0 900 1 400000 5
S 0 900 0 3e001010 7
""".splitlines()))
        guest = self.bt.Symbols(["ffffffff81000000 T native_safe_halt",
                                 "ffffffff81000100 t psi_group_change",
                                 "ffffffff81000080 D some_data"])
        host = self.bt.Symbols(["0000000000001000 T vmx_exit_entry"], base=0x3e000000)
        prof = self.bt.profile(events, guest, host)
        self.assertEqual(prof[(0, True)], {"native_safe_halt": 40, "psi_group_change": 60,
                                           "(user)": 5})
        self.assertEqual(prof[(0, False)], {"vmx_exit_entry": 7})
        self.assertEqual(self.bt.profile(events)[(0, False)], {"root 0x3e001010": 7})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(self.bt.print_profile(prof, 2), 0)
        self.assertIn("cpu0 guest: 105 instructions", out.getvalue())
        self.assertIn("60  57.1%  psi_group_change", out.getvalue())
        self.assertNotIn("(user)", out.getvalue())      # third: beyond --top 2
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(self.bt.print_profile({}, 2), 1)

class CheckLayers(Tmp):
    """scripts/check-layers.py on a small tree: a clean one passes, and each
    rule fails on an include that breaks only it (plus the order rule where
    the arrow is also upwards), naming file:line."""
    CLEAN = {
        "boot/efi_main.c": '#include <efi.h>\n#include "vmm/host/log.h"\n',
        "boot/config.h": '#include "vmm/host/log.h"\n',
        "vmm/host/irq.h": '#include "drivers/base.h"\n',
        "vmm/host/log.h": '#include "drivers/base.h"\n#include "timer/t.h"\n',
        "vmm/exit/exit.c": '#include "vmm/host/log.h"\n#include "vmx/vmx.h"\n',
        "vmm/guest.h": '#include "vmm/exit/exit.h"\n',      # vmm/ and its rooms both ways
        "vmm/exit/exit.h": '#include "vmm/apic/vapic.h"\n#include "vmm/vcpu/vcpu_run.h"\n',
        "vmm/apic/vapic.h": '#include "vmm/guest.h"\n#include "vmm/host/log.h"\n'
                            '#include "vmm/emul/mmio.h"\n#include "vmm/vcpu/vcpu_run.h"\n',
        "vmm/emul/mmio.h": '#include "vmm/vcpu/vcpu_run.h"\n',     # exit -> apic -> emul -> vcpu
        "vmm/vcpu/vcpu_run.h": '#include "vmm/guest.h"\n#include "vmm/host/log.h"\n',
        "vmx/vmx.h": '#include "drivers/base.h"\n',
        "vmx/entry.asm": '%include "offsets.inc"\n',
        "lapic/vlapic.c": '#include "timer/t.h"\n',
        "timer/t.h": '#include "drivers/base.h"\n',
        "drivers/base.h": "#include <stdint.h>\n",
        "guest-tests/x.c": '#include "lib/report.h"\n',
        "guest-tests/lib/report.h": "#include <stdint.h>\n",
        "tests/unit/test_x.c": '#include "vmm/exit/exit.c"\n',  # tests/ may reach any room
    }

    def run_check(self, extra):
        for name, text in {**self.CLEAN, **extra}.items():
            os.makedirs(os.path.dirname(os.path.join(self.dir.name, name)), exist_ok=True)
            self.file(name, text.encode())
        script = os.path.join(ROOT, "scripts", "check-layers.py")
        return subprocess.run([sys.executable, script, "--root", self.dir.name],
                              capture_output=True, text=True)

    def failed_rules(self, out):
        return sorted(line.split(":")[1].strip().split("/")[1]
                      for line in out.splitlines() if line.startswith("FAIL:"))

    def test_clean_tree_passes(self):
        r = self.run_check({})
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual(self.failed_rules(r.stdout), [])
        self.assertEqual(r.stdout.count("PASS: layers/"), 8)

    def test_each_rule_fails(self):
        cases = [
            ("vmm/guest.c", '#include "boot/config.h"\n', ["order"]),
            ("timer/host.c", '#include "vmm/host/irq.h"\n', ["order"]),
            ("vmm/host/irq.c", '#include "vmm/exit/exit.c"\n', ["vmm-host"]),
            ("vmm/host/mem.c", '#include "vmm/guest.h"\n', ["vmm-host"]),
            ("vmm/vcpu/vcpu_run.c", '#include "vmm/exit/exit.h"\n', ["vmm-rooms"]),
            ("vmm/vcpu/vcpu_tsc.c", '#include "vmm/apic/vapic.h"\n', ["vmm-rooms"]),
            ("vmm/vcpu/vcpu_x.h", '#include "vmm/emul/mmio.h"\n', ["vmm-rooms"]),
            ("vmm/apic/vapic.c", '#include "vmm/exit/exit.h"\n', ["vmm-rooms"]),
            ("vmm/emul/mmio.c", '#include "vmm/apic/vapic.h"\n', ["vmm-rooms"]),
            ("lapic/l.c", '#include "vmx/vmx.h"\n', ["no-vmx-below", "order"]),
            ("vmm/efi.c", "#include <efilib.h>\n", ["efi-boot-only"]),
            ("drivers/d.c", '#include "timer/t.h"\n', ["drivers-bottom", "order"]),
            ("guest-tests/y.c", '#include "../drivers/base.h"\n', ["guest-tests-lib"]),
            ("vmm/z.c", '#include "vmm/nowhere.h"\n', ["resolved"]),
        ]
        for name, text, rules in cases:
            with self.subTest(name=name):
                self.setUp()
                r = self.run_check({name: text})
                self.assertEqual(r.returncode, 1, r.stdout)
                self.assertEqual(self.failed_rules(r.stdout), sorted(rules))
                self.assertIn(f"{name}:1: #include", r.stdout)


class ArchitectureDoc(unittest.TestCase):
    """docs/architecture.md describes the code as it is: every function and
    file it names exists, and each of its two paths (timer tick, IPI) names
    at most six source files (STYLE.md: "A tick's path fits in your head")."""
    DOC = os.path.join(ROOT, "docs", "architecture.md")
    FUNC_RE = re.compile(r"`(?:l->ops->)?([a-z_][a-z0-9_]*)\(\)`")
    FILE_RE = re.compile(r"`((?:[a-z-]+/)+[a-z_0-9-]+\.(?:c|h|asm|py|md))`")

    def setUp(self):
        with open(self.DOC, encoding="utf-8") as f:
            self.text = f.read()
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
        self.files = set(out)
        self.code = ""
        for path in out:
            if re.search(r"\.(c|h|asm)$", path):
                with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
                    self.code += f.read()

    def test_functions_exist(self):
        for name in set(self.FUNC_RE.findall(self.text)):
            with self.subTest(name=name):
                found = re.search(rf"\b{name}\s*\(|\.{name}\s*=|\b{name},", self.code)
                self.assertTrue(found, f"{name}() is not in the code")

    def test_files_exist(self):
        named = self.FILE_RE.findall(self.text)
        self.assertTrue(named)
        for path in set(named):
            with self.subTest(path=path):
                self.assertTrue(path in self.files, f"{path} is not a tracked file")

    def path_files(self, heading):
        part = self.text.split(heading, 1)[1].split("\n## ", 1)[0]
        return set(self.FILE_RE.findall(part))

    def test_paths_name_at_most_six_files(self):
        for heading in ("## One timer tick", "## One IPI"):
            with self.subTest(path=heading):
                files = self.path_files(heading)
                self.assertTrue(0 < len(files) <= 6, f"{heading}: {sorted(files)}")


if __name__ == "__main__":
    unittest.main()
