#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The harness's own counting (issue 27): declared and undeclared skips,
known bugs (XFAIL, XPASS), min_pass, the exact done: and SUMMARY: lines,
the checks: line, and the real kernel it hands the unit tests."""
import contextlib
import io
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
import guestcfg  # noqa: E402
import harness  # noqa: E402
import linux_guest  # noqa: E402
import suites  # noqa: E402


def load_cfg(text):
    """guestcfg.load() of a unittests.cfg holding `text`."""
    with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as f:
        f.write(text)
    try:
        return {t.name: t for t in guestcfg.load(f.name)}
    finally:
        os.unlink(f.name)


CFG = """
[nmi]
min_pass = 2
min_pass@smp-4cpu = 3
skip = ^nmi: no x2APIC => x2apic=off hides it
skip@smp-4cpu = ^nmi: four CPUs only => the 4-CPU half
xfail = ^nmi: halted with IF=0 => an NMI does not wake HLT with IF=0
"""


def outcomes(events):
    """(kind, ok or None, name) of each event, for short assertions."""
    return [(e[0], e[1] if e[0] == "check" else None) for e in events]


def failures(events):
    return [e for e in events if e[0] == "check" and not e[1]]


class Declarations(unittest.TestCase):
    def setUp(self):
        self.test = load_cfg(CFG)["nmi"]

    def judge(self, lines, suite="smp-2cpu", status=0, expect=0):
        return harness.judge_guest(suite, "nmi", expect, (status, lines), self.test)

    def test_declared_skip_and_xfail_count_as_such(self):
        ev = self.judge(["PASS: nmi: a", "SKIP: nmi: no x2APIC (x2apic=off)", "PASS: nmi: b",
                         "SKIP: nmi: halted with IF=0, woken: tickvisor ends the guest"])
        self.assertEqual(failures(ev), [])
        kinds = [e[0] for e in ev]
        self.assertEqual(kinds.count("skip"), 1)
        self.assertEqual(kinds.count("xfail"), 1)
        skip = next(e for e in ev if e[0] == "skip")
        self.assertEqual(skip[2], "x2apic=off hides it")

    def test_undeclared_skip_fails(self):
        ev = self.judge(["PASS: nmi: a", "PASS: nmi: b", "SKIP: nmi: no x2APIC",
                         "SKIP: nmi: halted with IF=0", "SKIP: nmi: something new"])
        bad = failures(ev)
        self.assertEqual(len(bad), 1)
        self.assertIn("something new", bad[0][2])
        self.assertIn("undeclared SKIP", bad[0][3])

    def test_undeclared_guest_xfail_fails(self):
        ev = self.judge(["PASS: nmi: a", "PASS: nmi: b", "SKIP: nmi: no x2APIC",
                         "SKIP: nmi: halted with IF=0", "XFAIL: nmi: other bug"])
        self.assertEqual([e[3][:16] for e in failures(ev)], ["undeclared XFAIL"])

    def test_stale_declaration_fails(self):
        ev = self.judge(["PASS: nmi: a", "PASS: nmi: b", "SKIP: nmi: halted with IF=0"])
        bad = failures(ev)
        self.assertEqual(len(bad), 1)
        self.assertIn("no x2APIC", bad[0][2])
        self.assertIn("stale", bad[0][3])

    def test_maybe_skip(self):
        """maybe_skip@kvm-*: a skip the runner's CPU decides: counted when
        it happens, not stale when it does not, and only where declared."""
        t = load_cfg(CFG.replace("[nmi]\n", "[nmi]\nmaybe_skip@kvm-* = ^nmi: no AVX-512 => "
                                 "the runner's CPU may have none\n"))["nmi"]
        base = ["PASS: nmi: a", "PASS: nmi: b", "SKIP: nmi: no x2APIC",
                "SKIP: nmi: halted with IF=0"]
        for lines, suite, bad in ((base + ["SKIP: nmi: no AVX-512"], "kvm-guests", 0),
                                  (base, "kvm-guests", 0),
                                  (base + ["SKIP: nmi: no AVX-512"], "smp-2cpu", 1)):
            ev = harness.judge_guest(suite, "nmi", 0, (0, lines), t)
            self.assertEqual(len(failures(ev)), bad, (suite, lines, failures(ev)))
        ev = harness.judge_guest("kvm-guests", "nmi", 0, (0, base + ["SKIP: nmi: no AVX-512"]), t)
        self.assertEqual([e[0] for e in ev].count("skip"), 2)

    def test_maybe_skip_needs_a_suite(self):
        with self.assertRaises(guestcfg.ConfigError) as e:
            load_cfg("[t]\nmin_pass = 1\nmaybe_skip = ^x => y\n")
        self.assertIn("maybe_skip needs @SUITE", str(e.exception))

    def test_fixed_bug_is_xpass(self):
        ev = self.judge(["PASS: nmi: a", "SKIP: nmi: no x2APIC",
                         "PASS: nmi: halted with IF=0, woken by NMI"])
        bad = failures(ev)
        self.assertEqual(len(bad), 1)
        self.assertIn("fixed: remove the xfail declaration", bad[0][3])

    def test_guest_xpass_line_fails(self):
        ev = self.judge(["PASS: nmi: a", "PASS: nmi: b", "SKIP: nmi: no x2APIC",
                         "XPASS: nmi: halted with IF=0"])
        self.assertEqual(len(failures(ev)), 1)

    def test_qualified_declarations_add_to_plain_ones(self):
        lines = ["PASS: nmi: a", "PASS: nmi: b", "PASS: nmi: c", "SKIP: nmi: no x2APIC",
                 "SKIP: nmi: halted with IF=0"]
        # On 4 CPUs the four-CPU skip is declared too: missing, it is stale.
        self.assertEqual(len(failures(self.judge(lines, "smp-4cpu"))), 1)
        ev = self.judge(lines + ["SKIP: nmi: four CPUs only"], "smp-4cpu")
        self.assertEqual(failures(ev), [])
        # ... and on 2 CPUs it is not declared.
        self.assertEqual(len(failures(self.judge(lines + ["SKIP: nmi: four CPUs only"]))), 1)

    def test_a_guest_of_no_test_may_not_skip(self):
        ev = harness.judge_guest("s", "stray", 0, (0, ["PASS: x", "SKIP: y"]))
        self.assertEqual(outcomes(ev), [("check", True), ("check", False), ("check", True)])


class MinPass(unittest.TestCase):
    def setUp(self):
        self.test = load_cfg(CFG)["nmi"]
        self.base = ["SKIP: nmi: no x2APIC", "SKIP: nmi: halted with IF=0"]

    def min_pass_event(self, suite, passes):
        lines = self.base + [f"PASS: nmi: {i}" for i in range(passes)]
        if suite == "smp-4cpu":
            lines.append("SKIP: nmi: four CPUs only")
        ev = harness.judge_guest(suite, "nmi", 0, (0, lines), self.test)
        return next(e for e in ev if e[2].endswith("/min-pass"))

    def test_fewer_pass_lines_than_declared_fail(self):
        self.assertTrue(self.min_pass_event("smp-2cpu", 2)[1])
        ev = self.min_pass_event("smp-2cpu", 1)
        self.assertFalse(ev[1])
        self.assertIn("ran 1 of at least 2 checks", ev[3])

    def test_per_suite_minimum(self):
        self.assertFalse(self.min_pass_event("smp-4cpu", 2)[1])
        self.assertTrue(self.min_pass_event("smp-4cpu", 3)[1])

    def test_a_missing_guest_fails(self):
        ev = harness.judge_guest("s", "nmi", 0, None, self.test)
        self.assertEqual(outcomes(ev), [("check", False)])


class Repeat(unittest.TestCase):
    """suites.repeat_checks: a suite booted twice (linux-2cpu) passes only
    when the second boot printed the first one's serial log exactly."""

    LOG = "".join(f"line {i}\n" for i in range(20))

    def verdict(self, again):
        suite = suites.Suite("x", "")
        if again is not None:
            suite.again = again
        return list(suites.repeat_checks(suite, self.LOG))

    def test_identical_passes(self):
        [(ok, _, detail)] = self.verdict(self.LOG)
        self.assertTrue(ok, detail)

    def test_a_changed_line_fails_and_is_named(self):
        [(ok, _, detail)] = self.verdict(self.LOG.replace("line 7\n", "line 7 \n"))
        self.assertFalse(ok)
        self.assertIn("line 8 differs", detail)

    def test_a_shorter_second_boot_fails(self):
        [(ok, _, detail)] = self.verdict(self.LOG[:-len("line 19\n")])
        self.assertFalse(ok)
        self.assertIn("line 20 differs", detail)

    def test_no_second_boot_fails(self):
        [(ok, _, detail)] = self.verdict(None)
        self.assertFalse(ok)
        self.assertEqual(detail, "no second boot")

    def test_a_failed_repeat_prints_both_tails(self):
        """A second boot that hung or parted ways is shown too: the
        serial tail of each boot, not only the first's."""
        suite = suites.Suite("x", "", expect=[], guests=[])
        suite.repeat = True
        suite.checks = lambda serial: suites.repeat_checks(suite, serial)
        with tempfile.TemporaryDirectory() as work:
            suite.again_work = os.path.join(work, "again")
            os.makedirs(suite.again_work)
            suite.again = self.LOG.replace("line 19\n", "second boot's last line\n")
            res, err = harness.Results(), io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                harness.report_suite(res, suite, 0, self.LOG, work, 1.0)
        self.assertEqual(res.failed, 1)
        self.assertIn("its second boot", err.getvalue())
        self.assertIn("second boot's last line", err.getvalue())
        self.assertIn("  | line 19", err.getvalue())

    def test_linux_2cpu_repeats(self):
        [s] = [s for s in suites.SUITES if s.name == "linux-2cpu"]
        self.assertTrue(s.repeat)


class Loader(unittest.TestCase):
    def test_missing_min_pass_is_an_error(self):
        with self.assertRaisesRegex(guestcfg.ConfigError, r"\[t\]: no min_pass"):
            load_cfg("[t]\nvcpus = 2\n")

    def test_bad_declarations_are_errors(self):
        for bad in ("skip = no reason here", "xfail = ( => bad regex",
                    "min_pass@guests = many", "vcpus@smp-4cpu = 4", "min_pass = 2"):
            with self.subTest(bad=bad), self.assertRaises(guestcfg.ConfigError):
                load_cfg(f"[t]\nmin_pass = 1\n{bad}\n")

    def test_first_qualified_min_pass_wins(self):
        t = load_cfg("[t]\nmin_pass = 5\nmin_pass@cpu-* = 4\nmin_pass@cpu-x = 3\n")["t"]
        self.assertEqual([t.min_pass_for(s) for s in ("guests", "cpu-x", "cpu-y")], [5, 4, 4])

    def test_every_bundled_test_declares_min_pass(self):
        tests = guestcfg.load()
        self.assertGreater(len(tests), 50)
        for t in tests:
            self.assertIn("*", [g for g, _ in t.min_pass], t.name)


class HostSkips(unittest.TestCase):
    DECL = [("skip", r"^unit/linux/test_real_kernel$", "no kernel"),
            ("xfail", r"^py/x\.known$", "a known bug")]

    def test_tap_skip_lines_are_seen(self):
        tap = "ok 1 - test_a\nnot ok 2 - test_b\nnot ok 3 # SKIP test_c\n"
        self.assertEqual(harness.parse_tap("linux", tap),
                         [("unit/linux/test_a", "pass"), ("unit/linux/test_b", "fail"),
                          ("unit/linux/test_c", "skip")])

    def test_declared_undeclared_stale(self):
        ev = harness.judge_host({"unit/linux/test_real_kernel": "skip", "py/x.known": "xfail",
                                 "py/x.other": "skip"}, self.DECL)
        self.assertEqual([e[0] for e in ev if e[0] != "check"], ["skip", "xfail"])
        self.assertEqual([e[2] for e in failures(ev)], ["py/x.other"])
        ev = harness.judge_host({"unit/linux/test_real_kernel": "pass"}, self.DECL)
        self.assertEqual([e[0] for e in ev], ["notice", "check"])
        self.assertIn("stale", failures(ev)[0][3])

    def test_python_skips_and_xfails_reach_the_harness(self):
        class Case(unittest.TestCase):
            def test_skip(self):
                self.skipTest("why")

            @unittest.expectedFailure
            def test_xfail(self):
                self.fail()

            @unittest.expectedFailure
            def test_xpass(self):
                pass

        res = harness.Results()
        loader = unittest.defaultTestLoader
        with mock.patch.object(loader, "discover", lambda *a, **k: loader.loadTestsFromTestCase(
                Case)), contextlib.redirect_stdout(io.StringIO()):
            harness.run_pyunit(res)
        got = {n.rsplit(".", 1)[1]: o for n, o in res.host.items()}
        self.assertEqual(got, {"test_skip": "skip", "test_xfail": "xfail", "test_xpass": "fail"})
        self.assertEqual(res.failed, 1)


class ChecksLine(unittest.TestCase):
    def test_counts(self):
        self.assertEqual(harness.checks_line(["a", "b", "a"], 2, 1),
                         "checks: 2 distinct sites, 3 configuration runs, 2 skipped (declared), "
                         "1 xfail")

    def test_runs_of_one_image_are_one_site(self):
        """The same guest PASS text in two suites and two runs of the same
        image (basic, basic.apicv-off) is one site; the suite's own checks
        drop the suite's name."""
        tests = load_cfg("[basic]\nmin_pass = 1\n[basic_nox2]\nfile = basic.elf\n"
                         "min_pass = 1\n")
        res = harness.Results()
        with contextlib.redirect_stdout(io.StringIO()):
            for suite, guest in (("guests", "basic"), ("guests-apicv-off", "basic.apicv-off"),
                                 ("guests", "basic_nox2")):
                res.apply(harness.judge_guest(suite, guest, 0, (0, ["PASS: basic: cpuid"]),
                                              tests[guest.split(".")[0]]))
        # 3 lines, 3 min-pass and 3 status checks; sites: one line, two tests'
        # min-pass and status.
        self.assertEqual(harness.checks_line(res.sites, 0, 0),
                         "checks: 5 distinct sites, 9 configuration runs, 0 skipped "
                         "(declared), 0 xfail")


class DoneLines(unittest.TestCase):
    def test_done_line(self):
        self.assertEqual(suites.done_line([("a", 0), ("b", 251), ("c", 0)]),
                         r"^tickvisor: done: 3 guests, 1 failed$")

    def test_every_suite_names_its_exact_counts(self):
        for s in suites.SUITES:
            if isinstance(s, suites.RunnerCheck) or s.emu == "tcg" or s.status == 1 and \
                    not s.guests:
                continue
            with self.subTest(suite=s.name):
                self.assertIn(suites.done_line(s.guests), s.expect)
                self.assertFalse([p for p in s.expect if "done: \\d" in p])

    def test_linux_summary_names_the_init_checks(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write('check() {\n  # check OK|FAIL\n}\n[ -n "$x" ] && check $ok "x"\n'
                    'check $r "y"\n# check $r "commented out"\n')
        try:
            self.assertEqual(linux_guest.init_checks(f.name), 2)
        finally:
            os.unlink(f.name)
        n = linux_guest.init_checks()
        self.assertGreater(n, 0)
        for s in suites.SUITES:
            if isinstance(s, suites.LinuxSuite):
                self.assertIn(rf"linux-guest: SUMMARY: {n} checks, 0 failed$", s.expect)

    def test_bochs_runners_reject_nothing_impossible(self):
        for s in suites.SUITES:
            if isinstance(s, suites.RunnerCheck) and s.emu == "bochs":
                with self.subTest(suite=s.name):
                    self.assertFalse([p for p in s.reject if "qemu" in p])


class TestOf(unittest.TestCase):
    """Which unittests.cfg test's declarations hold for a suite's guest."""

    def test_runs_and_renamed_guests(self):
        by = {s.name: s for s in suites.SUITES}
        self.assertIs(suites.test_of(by["guests-apicv-off"], "basic.apicv-off"),
                      suites.BY_NAME["basic"])
        self.assertIs(suites.test_of(by["containment-posted"], "bsp_housekeeper"),
                      suites.BY_NAME["basic"])
        self.assertIsNone(suites.test_of(by["containment-posted"], "cpu_missing"))

    def test_every_guest_suite_guest_has_its_test(self):
        for s in suites.SUITES:
            if s.name.startswith(("guests", "smp-")):
                for name, _ in s.guests:
                    self.assertIsNotNone(suites.test_of(s, name), f"{s.name}/{name}")


class RealKernel(unittest.TestCase):
    """test_real_kernel gets the image's kernel, fails on a bad one, and
    skips only when the harness has none to give."""

    def kernel(self, env, want_linux=False, image=None):
        with mock.patch.dict(os.environ, env, clear=True):
            return harness.unit_kernel(want_linux, image)

    def test_the_variable_wins(self):
        self.assertEqual(self.kernel({harness.KERNEL_VAR: "/k"}, image=self.fail),
                         ("/k", None))

    def test_cached_image_or_linux_suite(self):
        with tempfile.TemporaryDirectory() as cache:
            env = {"TICKVISOR_LINUX_CACHE": cache}
            self.assertEqual(self.kernel(env, image=self.fail), (None, None))
            self.assertEqual(self.kernel(env, True, lambda: ("/v", "/i")), ("/v", None))
            open(os.path.join(cache, "initramfs.stamp"), "w").close()
            self.assertEqual(self.kernel(env, image=lambda: ("/v", "/i")), ("/v", None))

            def broken():
                raise linux_guest.ImageMissing("no kernel")
            self.assertEqual(self.kernel(env, image=broken), (None, "no kernel"))

    def test_cache_follows_tickvisor_cache(self):
        with mock.patch.dict(os.environ, {"TICKVISOR_CACHE": "/c"}, clear=True):
            self.assertEqual(harness.linux_cache(), "/c/linux")


if __name__ == "__main__":
    unittest.main()


class KvmSuites(unittest.TestCase):
    """make test EMU=kvm (issue 22.10): what it chooses, and that it
    refuses with the reason where nested KVM is not usable."""

    def test_choose(self):
        names = [s.name for s in harness.choose("kvm", None)]
        self.assertEqual(names[:3], ["kvm-guests", "kvm-guests-apicv-off", "kvm-smp-4cpu"])
        self.assertFalse([n for n in names if not n.startswith("kvm-") and
                          next(s for s in suites.SUITES if s.name == n).emu != "tcg"])
        self.assertNotIn("kvm-guests", [s.name for s in harness.choose("bochs", None)])

    def test_no_bochs_facts(self):
        """The KVM suites expect nothing only Bochs's platform prints."""
        for s in suites.KVM_SUITES:
            self.assertEqual(s.emu, "kvm")
            self.assertEqual(s.aliases[0], s.name[len("kvm-"):])
            for p in s.expect:
                for fact in ("50000000", "BOCHS", "probe at 0xfed00000", "BXHD"):
                    self.assertNotIn(fact, p, (s.name, p))
            self.assertTrue(set(suites.KVM_PLATFORM) <= set(s.expect))

    def test_aliases_carry_declarations(self):
        xs = suites.BY_NAME["xstate_exits"]
        self.assertEqual(xs.min_pass_for("kvm-guests", "guests"), 1)
        self.assertEqual(xs.min_pass_for("guests"), 4)
        self.assertTrue(any(d.kind == "maybe_skip" for d in xs.declarations_for("kvm-guests")))

    def test_refuses_without_kvm(self):
        argv = ["harness.py", "--emu", "kvm", "--no-unit", "--only", "^kvm-guests$"]
        with mock.patch.object(sys, "argv", argv), \
                mock.patch.object(harness.emu, "kvm_missing", lambda: ["kvm_intel nested=N"]), \
                mock.patch.object(harness, "run_suite") as run, \
                self.assertRaises(SystemExit) as e:
            harness.main()
        self.assertIn("EMU=kvm cannot run here: kvm_intel nested=N", str(e.exception))
        run.assert_not_called()
