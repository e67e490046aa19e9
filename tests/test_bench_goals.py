#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""make bench's goals on synthetic results (issue 27.6): a missing figure
is not met, zero exits means zero, a known miss is declared with its
reason and does not fail the bench, anything else not met does."""
import contextlib
import io
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
import bench  # noqa: E402
import bench_goals  # noqa: E402


def fig(p50, n=1000, p99=None):
    return {"p50": p50, "p99": p50 if p99 is None else p99, "max": p50, "n": n}


def results():
    """Figures meeting every goal of bench.goals() (no Linux part)."""
    tv = {"tscdeadline_spin_lat": fig(30), "oneshot_spin_lat_before": fig(36),
          "periodic_drift_final": fig(4), "exits_periodic_tick": fig(1000, 1000),
          "program_tscdeadline": fig(240), "program_tmict": fig(500), "cpuid_roundtrip": fig(140)}
    configs = {c: dict(tv) for c, _ in bench.CONFIGS}
    configs["native"] = {"tscdeadline_spin_lat": fig(30), "oneshot_spin_lat_before": fig(36),
                         "ipi_roundtrip": fig(150), "ipi_roundtrip_x2apic": fig(150)}
    configs["native-2cpu"] = {"tscdeadline_spin_lat": fig(59)}
    configs["smp/apicv-on"] = {"ipi_roundtrip": fig(440)}
    configs["smp-x2apic/apicv-on"] = {"ipi_roundtrip_x2apic": fig(450)}
    for c, _ in bench.POSTED_CONFIGS:
        configs[c] = {"periodic_drift_final": fig(-3), "exits_periodic_tick": fig(0, 10000),
                      "exits_tscdeadline_spin": fig(1000, 1000), "tscdeadline_spin_lat": fig(33)}
    configs["smp-timers/posted"] = {"exits_smp_periodic_tick": fig(0, 217)}
    configs["native"]["coincident_deadline_last"] = fig(29, 200, 30)
    for c, _ in bench.SMP_TIMER_CONFIGS:
        configs.setdefault(c, {})["coincident_deadline_last"] = fig(40, 200, 60)
    for k in bench.COLD_KINDS:
        configs["native"][f"cold_{k}_lat"] = fig(31)
        for c, _ in bench.COLD_CONFIGS + bench.COLD_POSTED:
            configs.setdefault(c, {})[f"cold_{k}_lat"] = fig(33)
    configs["native"]["periodic_period_error"] = {"p50": 0, "p99": 5, "min": -1, "max": 5, "n": 9999}
    for c, _ in bench.CONFIGS:
        configs[c]["periodic_period_error"] = {"p50": 0, "p99": 3, "min": -10, "max": 8, "n": 9999}
        configs[c]["oneshot_spin_lat_before"] = {"p50": 36, "p99": 48, "max": 56, "n": 1000}
    return {"configs": configs, "period_tsc": 10000}


def unmet(res):
    return [name for name, ok, _ in bench.goals(res) if not ok]


class Goals(unittest.TestCase):
    def test_all_met(self):
        self.assertEqual(unmet(results()), [])
        self.assertEqual(len(bench.goals(results())), 19 + 12 + 6 + 4 + 2)   # + coincident

    def test_coincident_deadlines_last_cpu_p99_against_native(self):
        # The latest CPU's p99 of each round counts, not the p50: posted
        # serially by one housekeeper, a third vCPU's came 582 cycles late.
        res = results()
        res["configs"]["smp-timers/posted"]["coincident_deadline_last"] = fig(40, 200, 61)
        self.assertEqual(unmet(res), ["smp-timers/posted: coincident TSC deadlines, the last "
                                      "CPU's latency p99 at most 2x native's"])
        del res["configs"]["native"]["coincident_deadline_last"]
        self.assertEqual(len(unmet(res)), 2)

    def test_cold_start_max_against_native_max(self):
        # Issue 24.2: the max counts, not the p50: one late first expiry
        # (614 cycles before the tuner started from above) fails it.
        res = results()
        res["configs"]["cold/lapic"]["cold_oneshot_lat"] = {"p50": 33, "p99": 33, "max": 614, "n": 20}
        self.assertEqual(unmet(res), ["cold/lapic: cold_oneshot_lat max at most 2x native max"])
        res = results()
        res["configs"]["cold/posted"]["cold_periodic_lat"]["max"] = 62
        self.assertEqual(unmet(res), [])
        res["configs"]["cold/posted"]["cold_periodic_lat"]["max"] = 63
        self.assertEqual(unmet(res), ["cold/posted: cold_periodic_lat max at most 2x native max"])
        del res["configs"]["native"]["cold_tscdeadline_lat"]
        self.assertIn("cold/hpet: cold_tscdeadline_lat max at most 2x native max", unmet(res))

    def test_tails_against_native(self):
        # Issue 24.3: p99 of one-shot, the period error's worst of either sign.
        res = results()
        res["configs"]["lapic/auto/apicv-on"]["oneshot_spin_lat_before"]["p99"] = 209
        res["configs"]["hpet/auto/apicv-on"]["periodic_period_error"]["min"] = -11
        self.assertEqual(unmet(res), [
            "lapic/auto/apicv-on: one-shot latency p99 at most 2x native p99",
            "hpet/auto/apicv-on: periodic period error at most 2x native's worst"])

    def test_fast_path_goals_of_issue_24_6(self):
        # Issue 13's bounds (CPUID 200, IPI 4x) hold, 24.6's do not: CPUID
        # 151, WRMSR 251, IPI 451 against native 150 (3.01x, one each way).
        res = results()
        tv = res["configs"]["preempt/off/apicv-on"]
        tv["cpuid_roundtrip"], tv["program_tscdeadline"] = fig(151), fig(251)
        res["configs"]["smp/apicv-on"]["ipi_roundtrip"] = fig(451)
        self.assertEqual(unmet(res), ["CPUID round trip at most 150 cycles (issue 24.6)",
                                      "TSC-deadline WRMSR at most 250 cycles (issue 24.6)",
                                      "ipi_roundtrip: IPI round trip at most 3× native "
                                      "(issue 24.6)"])

    def test_a_missing_figure_is_not_met(self):
        res = results()
        del res["configs"]["smp/apicv-on"]["ipi_roundtrip"]
        res["configs"]["hpet/auto/apicv-off"] = {}          # a crashed configuration
        self.assertEqual(unmet(res), ["periodic: zero cumulative drift (bounded, not growing)",
                                      "ipi_roundtrip: IPI round trip at most 4× native",
                                      "ipi_roundtrip: IPI round trip at most 3× native "
                                      "(issue 24.6)"])
        detail = dict((n, d) for n, _, d in bench.goals(res))
        self.assertIn("figure missing: hpet/auto/apicv-off periodic_drift_final",
                      detail["periodic: zero cumulative drift (bounded, not growing)"])

    def test_every_goal_reports_its_missing_figures(self):
        res = results()
        res["configs"] = {c: {} for c in res["configs"]}
        goals = bench.goals(res)
        self.assertEqual(len(goals), 19 + 12 + 6 + 4 + 2)   # + coincident
        self.assertTrue(all(not ok and d.startswith("figure missing") for _, ok, d in goals))

    def test_zero_means_zero(self):
        res = results()
        res["configs"]["posted/off/apicv-on"]["exits_periodic_tick"] = fig(50, 10000)
        res["configs"]["posted/off/apicv-on"]["exits_tscdeadline_spin"] = fig(1001, 1000)
        self.assertEqual(unmet(res), [
            "posted/off/apicv-on: 0.00 VM exits per operation (exits_periodic_tick)",
            "posted/off/apicv-on: 1.00 VM exits per operation (exits_tscdeadline_spin)"])

    def test_one_exit_per_tick_is_exact(self):
        res = results()
        res["configs"]["preempt/off/apicv-on"]["exits_periodic_tick"] = fig(1001, 1000)
        self.assertEqual(unmet(res),
                         ["periodic: at most 1 VM exit per tick with EOI virtualization"])

    def test_drift_is_the_worst_of_every_configuration(self):
        res = results()
        res["configs"]["posted/auto/apicv-on"]["periodic_drift_final"] = fig(-100)
        self.assertEqual(unmet(res), ["periodic: zero cumulative drift (bounded, not growing)"])

    def test_latency_goals(self):
        res = results()
        res["configs"]["preempt/off/apicv-on"]["tscdeadline_spin_lat"] = fig(34)
        res["configs"]["preempt/auto/apicv-on"]["oneshot_spin_lat_before"] = fig(37)
        self.assertEqual(unmet(res), [
            "tscdeadline_spin_lat: advance=off within 10% of native",
            "oneshot_spin_lat_before: advance=auto not later than native"])
        res["configs"]["preempt/off/apicv-on"]["tscdeadline_spin_lat"] = fig(33)
        self.assertEqual(len(unmet(res)), 1)


class Verdicts(unittest.TestCase):
    KNOWN = {"b": "why b", "c": "why c", "gone": "why gone"}

    def test_verdicts_and_exit_status(self):
        vs = bench_goals.verdicts([("a", True, "1"), ("b", False, "2"), ("c", True, "3")],
                                  self.KNOWN)
        self.assertEqual([v[1] for v in vs], ["met", "known miss", "met, known miss"])
        self.assertEqual(bench_goals.failed(vs), [])
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(bench.verdict(vs), 0)
        self.assertIn("known miss met: c", err.getvalue())
        vs = bench_goals.verdicts([("a", False, "1"), ("b", False, "2")], self.KNOWN)
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(bench.verdict(vs), 1)
        self.assertIn("goal not met: a (1)", err.getvalue())

    def test_report_prints_the_known_misses(self):
        vs = bench_goals.verdicts([("a", False, "1"), ("b", False, "2")], self.KNOWN)
        lines = bench_goals.report_lines(vs, self.KNOWN)
        self.assertIn("- **not met**: a — 1", lines)
        self.assertIn("- not met (known miss): b — 2", lines)
        self.assertIn("- b: why b", lines)
        self.assertIn("- gone: why gone (not evaluated in this run)", lines)

    def test_known_misses_name_real_goals(self):
        """Each declared miss is a goal bench.goals() or bench_linux.goals()
        evaluates: a renamed goal must not leave a dead declaration."""
        import bench_linux
        linux = {"configs": {n: {} for n, _, _ in bench_linux.CONFIGS}}
        res = dict(results(), linux=linux)
        names = {n for n, _, _ in bench.goals(res)}
        self.assertEqual([k for k in bench_goals.KNOWN_MISSES if k not in names], [])
        self.assertTrue(all(bench_goals.KNOWN_MISSES.values()))


if __name__ == "__main__":
    unittest.main()
