#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""make test: host unit tests, then integration boots in emulators.

Every check counts as one test: each cmocka case, each case of the runner
scripts' tests (tests/test_scripts.py), each boot-level check of a suite
in tests/suites.py (or of a command, suites.RunnerCheck), each guest's
exit status and each PASS/FAIL line a guest prints, and each layer rule of
scripts/check-layers.py. The last line is
`N passed, N failed`.
"""
import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import emu  # noqa: E402
import suites  # noqa: E402

REPORT_RE = re.compile(r"^(PASS|FAIL|SKIP|XFAIL|XPASS): (.*)$")


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.failures = []

    def check(self, ok, name, detail=""):
        if ok:
            self.passed += 1
            print(f"PASS: {name}")
        else:
            self.failed += 1
            self.failures.append(name)
            print(f"FAIL: {name}" + (f" ({detail})" if detail else ""))
        sys.stdout.flush()
        return ok


def run_unit(res, build):
    r = subprocess.run(["make", "--no-print-directory", "unit-build", f"BUILD={build}"],
                       cwd=ROOT)
    if not res.check(r.returncode == 0, "unit/build"):
        return
    for binary in sorted(glob.glob(os.path.join(build, "unit", "test_*"))):
        if not os.access(binary, os.X_OK):
            continue
        name = os.path.basename(binary)[5:]
        env = dict(os.environ, CMOCKA_MESSAGE_OUTPUT="TAP")
        p = subprocess.run([binary], capture_output=True, text=True, env=env, timeout=600)
        cases = 0
        for line in p.stdout.splitlines():
            m = re.match(r"^(not ok|ok) \d+ - (.*)$", line)
            if m:
                cases += 1
                res.check(m.group(1) == "ok", f"unit/{name}/{m.group(2).strip()}")
        if p.returncode != 0 or cases == 0:
            # A sanitizer abort or crash: show it, count it.
            print(p.stdout[-3000:] + p.stderr[-3000:])
            res.check(False, f"unit/{name}", f"exit status {p.returncode}")


def run_pyunit(res):
    """tests/test_*.py (the runner scripts' and the Linux guest tooling's
    host tests): one check per test case."""
    class Result(unittest.TestResult):
        def addSuccess(self, test):
            res.check(True, f"py/{test.id()}")

        def addFailure(self, test, err):
            print(self._exc_info_to_string(err, test))
            res.check(False, f"py/{test.id()}")

        addError = addFailure

        def addSubTest(self, test, subtest, err):
            if err is not None:
                self.addFailure(subtest, err)

    tests = unittest.defaultTestLoader.discover(os.path.join(ROOT, "tests"),
                                                pattern="test_*.py")
    if not res.check(tests.countTestCases() > 0, "py/loaded"):
        return
    tests.run(Result())


def run_layers(res):
    """scripts/check-layers.py (make check-layers): one check per layer rule
    it reports, plus one for the whole run; offending includes and notices
    of the allow-list are shown as it prints them."""
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "check-layers.py")],
                       capture_output=True, text=True, cwd=ROOT)
    rules = 0
    for line in p.stdout.splitlines():
        m = REPORT_RE.match(line)
        if m and m.group(1) in ("PASS", "FAIL"):
            rules += 1
            res.check(m.group(1) == "PASS", m.group(2))
        else:
            print(line)
    res.check(p.returncode == 0 and rules > 0, "layers",
              f"exit status {p.returncode}, {rules} rules" + (f": {p.stderr[-500:]}" if p.stderr else ""))


def run_command(build, suite):
    """A suites.RunnerCheck: its command, output and exit status."""
    work = os.path.join(build, "test", suite.name)
    os.makedirs(work, exist_ok=True)
    argv = [a.format(build=build, work=work) for a in suite.argv]
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=suite.timeout)
        status, out = p.returncode, p.stdout.decode("utf-8", "replace").replace("\r", "")
    except subprocess.TimeoutExpired as e:
        status, out = emu.STATUS_TIMEOUT, (e.stdout or b"").decode("utf-8", "replace")
    with open(os.path.join(work, "output.log"), "w") as f:
        f.write(out)
    return suite, status, out, work, time.monotonic() - t0


def make_image(build, suite):
    """esp.img with the suite's tickvisor.cfg."""
    work = os.path.join(build, "test", suite.name)
    os.makedirs(work, exist_ok=True)
    img = emu.esp_with_config(os.path.join(build, "esp.img"), os.path.join(work, "esp.img"),
                              os.path.join(work, "tickvisor.cfg"), suite.config)
    # Guest files of the suite's own (the Linux kernel and initrd).
    for src, name in getattr(suite, "esp_files", lambda: [])():
        subprocess.run(["mcopy", "-o", "-i", img, src, f"::/EFI/tickvisor/guests/{name}"],
                       check=True)
    return img, work


def check_guest(res, suite, name, expect_status, got):
    prefix = f"{suite.name}/{name}"
    if got is None:
        res.check(False, f"{prefix}/ran", "no 'guest exited' line")
        return
    status, lines = got
    for line in lines:
        m = REPORT_RE.match(line.strip())
        if m and m.group(1) in ("PASS", "FAIL", "XPASS"):
            res.check(m.group(1) == "PASS", f"{prefix}: {m.group(2)}")
    res.check(status == expect_status, f"{prefix}/status",
              f"exited with {status}, expected {expect_status}")


def run_suite(build, suite):
    if isinstance(suite, suites.RunnerCheck):
        return run_command(build, suite)
    try:
        img, work = make_image(build, suite)
    except (subprocess.CalledProcessError, OSError) as e:
        # A suite whose ESP cannot be made (a full image, a missing guest
        # file) fails by itself; the other suites still run and count.
        work = os.path.join(build, "test", suite.name)
        return suite, None, f"harness: cannot make the suite's ESP: {e}\n", work, 0.0
    t0 = time.monotonic()
    suite.workdir = work
    shot = os.path.join(work, "screen.ppm") if getattr(suite, "screen", False) else None
    if shot and os.path.exists(shot):
        os.unlink(shot)
    status, serial, _ = emu.run(img, suite.emu, cpus=suite.cpus, megs=suite.megs,
                                timeout=suite.timeout, workdir=work, quiet=True,
                                model=suite.model, machine=getattr(suite, "machine", "q35"),
                                screendump=shot)
    return suite, status, serial, work, time.monotonic() - t0


def report_suite(res, suite, status, serial, work, secs):
    if isinstance(suite, suites.RunnerCheck):
        how = f"command, {suite.emu}"
    else:
        how = suite.emu + (f" {suite.model}" if suite.emu == "bochs" else "")
    print(f"--- {suite.name} ({how}, {suite.cpus} CPU, {secs:.1f} s, logs in {work})")
    failed_before = res.failed
    res.check(status == suite.status, f"{suite.name}/final-status",
              f"got {status}, expected {suite.status}")
    for pattern in suite.expect:
        res.check(re.search(pattern, serial, re.M) is not None,
                  f"{suite.name}/serial: {pattern}", "not in the serial log")
    for pattern in getattr(suite, "reject", ()):
        res.check(re.search(pattern, serial, re.M) is None,
                  f"{suite.name}/serial lacks: {pattern}", "found in the output")
    guests = emu.split_guests(serial)
    for name, expect_status in suite.guests:
        check_guest(res, suite, name, expect_status, guests.get(name))
    for ok, what, detail in (suite.checks(serial) if hasattr(suite, "checks") else ()):
        res.check(ok, f"{suite.name}/{what}", detail)
    if hasattr(suite, "summary"):
        print(suite.summary(serial))
    if res.failed > failed_before:
        emu.diagnose(work, serial, f"suite {suite.name} failed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", default=None, help="regex of suite names to run")
    ap.add_argument("--no-unit", action="store_true")
    ap.add_argument("-j", type=int, default=2, help="emulators run in parallel")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    res = Results()
    t0 = time.monotonic()
    if not a.no_unit:
        run_unit(res, build)
        run_pyunit(res)
        run_layers(res)
    chosen = [s for s in suites.SUITES if not a.only or re.search(a.only, s.name)]
    chosen += [s for s in suites.OPT_IN if a.only and re.search(a.only, s.name)]
    # The longest boots first, so that they do not run alone at the end;
    # results are still reported in the suites' order.
    order = sorted(range(len(chosen)), key=lambda i: not getattr(chosen[i], "slow", False))
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        futs = {i: pool.submit(run_suite, build, chosen[i]) for i in order}
        for i in range(len(chosen)):
            report_suite(res, *futs[i].result())
    print(f"--- {len(chosen)} emulator boots, {time.monotonic() - t0:.0f} s in all")
    if res.failures:
        print("failed: " + ", ".join(res.failures[:50]))
    print(f"{res.passed} passed, {res.failed} failed")
    sys.exit(1 if res.failed else 0)


if __name__ == "__main__":
    main()
