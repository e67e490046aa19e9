#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""make test: host unit tests, then integration boots in emulators.

Every check counts as one test: each cmocka case, each case of the
scripts' tests (tests/test_*.py), each boot-level check of a suite in
tests/suites.py (or of a command, suites.RunnerCheck), each guest's exit
status, its minimum of PASS lines (min_pass in guest-tests/unittests.cfg)
and each PASS/FAIL line it prints, and each layer rule of
scripts/check-layers.py.

Nothing is skipped silently. A guest's SKIP and XFAIL lines must be
declared in unittests.cfg (skip/xfail, scripts/guestcfg.py says how), a
cmocka `# SKIP`, a Python skip or expected failure and a check-layers SKIP
in HOST_DECLARATIONS below; each is then counted as skipped or xfail with
its reason. An undeclared one fails, and so does a declaration nothing
matches any more (stale), or a known bug's check that passes (XPASS:
fixed, remove the declaration).

The last lines are `N passed, N failed` (CI reads it) and
`checks: D distinct sites, C configuration runs, S skipped (declared), X xfail`
(see checks_line()).
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "fuzz"))
import emu  # noqa: E402
import fuzzing  # noqa: E402
import linux_guest  # noqa: E402
import suites  # noqa: E402

REPORT_RE = re.compile(r"^(PASS|FAIL|SKIP|XFAIL|XPASS): (.*)$")
TAP_RE = re.compile(r"^(not ok|ok) \d+ - (.*)$")
TAP_SKIP_RE = re.compile(r"^(?:not ok|ok) \d+ # SKIP\s*(.*)$")

# The real Debian kernel tests/unit/test_linux.c loads (test_real_kernel):
# the harness names it here when scripts/linux-guest.py has made it.
KERNEL_VAR = "TICKVISOR_LINUX_KERNEL"

# Skips and expected failures of the host checks (unit, py, layers): (kind,
# regex of the check's name, reason). Each may happen or not, as the host
# allows: one that did not happen is a notice, one whose check no longer
# exists at all is stale and fails.
HOST_DECLARATIONS = [
    ("skip", r"^unit/linux/test_real_kernel$",
     f"no Debian kernel: {KERNEL_VAR} unset (a run outside the harness, or no "
     "scripts/linux-guest.py image in the cache and no linux-* suite chosen)"),
    ("skip", r"^py/test_linux_guest\.ElfNeeds\.test_closure_finds_libraries_in_package_trees$",
     "a host without a multiarch libc (/lib/x86_64-linux-gnu) has no tree to copy"),
]


def checks_line(sites, skipped, xfailed):
    """The line after `N passed, N failed`: how many distinct check sites
    ran (a guest's PASS text under guests, guests-apicv-off and smp-2cpu is
    one site; see guest_site()), how many checks ran in all
    configurations, and the declared skips and known bugs."""
    return (f"checks: {len(set(sites))} distinct sites, {len(sites)} configuration runs, "
            f"{skipped} skipped (declared), {xfailed} xfail")


def guest_site(image):
    """A guest's result lines are sites of its image (guest-tests/IMAGE.c),
    not of its run: basic and basic.apicv-off are one, smp_ipi_fast and
    smp_ipi_fast_noapicv (the same smp_ipi_fast.elf) too. A suite's own
    checks drop the suite's name (report_suite)."""
    return os.path.splitext(image)[0]


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.xfailed = 0
        self.failures = []
        self.sites = []         # one per check run, see checks_line()
        self.host = {}          # host check name -> "pass", "fail", "skip" or "xfail"

    def check(self, ok, name, detail="", site=None):
        if ok:
            self.passed += 1
            print(f"PASS: {name}")
        else:
            self.failed += 1
            self.failures.append(name)
            print(f"FAIL: {name}" + (f" ({detail})" if detail else ""))
        self.sites.append(site or name)
        sys.stdout.flush()
        return ok

    def skip(self, name, reason):
        self.skipped += 1
        print(f"SKIP: {name} (declared: {reason})")

    def xfail(self, name, reason):
        self.xfailed += 1
        print(f"XFAIL: {name} (known bug: {reason})")

    def apply(self, events):
        """Outcomes from judge_guest() or judge_host()."""
        for ev in events:
            if ev[0] == "check":
                self.check(*ev[1:])
            elif ev[0] == "skip":
                self.skip(*ev[1:])
            elif ev[0] == "xfail":
                self.xfail(*ev[1:])
            else:
                print(f"NOTICE: {ev[1]}")

    def host_result(self, name, outcome, detail=""):
        """One host check (unit, py, layers): a pass or failure counts at
        once; a skip or xfail waits for judge_host()."""
        self.host[name] = outcome
        if outcome in ("pass", "fail"):
            self.check(outcome == "pass", name, detail)


def judge_host(outcomes, declarations):
    """Events for the host checks' skips and xfails: each must match a
    declaration (kind, name regex, reason) of its kind; a declaration whose
    check did not run at all is stale."""
    events = []
    for name, outcome in outcomes.items():
        if outcome not in ("skip", "xfail"):
            continue
        d = next((d for d in declarations if d[0] == outcome and re.search(d[1], name)), None)
        if d:
            events.append((outcome, name, d[2]))
        else:
            events.append(("check", False, name, f"undeclared {outcome}: declare it with its "
                           "reason in HOST_DECLARATIONS (tests/harness.py)"))
    for kind, regex, reason in declarations:
        hits = [n for n in outcomes if re.search(regex, n)]
        if not hits:
            events.append(("check", False, f"declared {kind}: {regex}",
                           "stale declaration: no such check any more, remove it"))
        elif not any(outcomes[n] == kind for n in hits):
            events.append(("notice", f"declared {kind} {regex} did not happen on this host "
                           f"({', '.join(hits)} ran)"))
    return events


def linux_cache():
    """Where scripts/linux-guest.py keeps the Linux guest image:
    $TICKVISOR_LINUX_CACHE, else $TICKVISOR_CACHE/linux, else
    ~/.cache/tickvisor/linux."""
    if os.environ.get("TICKVISOR_LINUX_CACHE"):
        return os.environ["TICKVISOR_LINUX_CACHE"]
    if os.environ.get("TICKVISOR_CACHE"):
        return os.path.join(os.environ["TICKVISOR_CACHE"], "linux")
    return os.path.join(os.path.expanduser("~"), ".cache", "tickvisor", "linux")


def unit_kernel(want_linux, image=None):
    """(path or None, error or None): the kernel test_real_kernel loads.
    $TICKVISOR_LINUX_KERNEL if set; else linux_guest.image()'s kernel when
    the image is in the cache (then it only checks it) or a Linux suite is
    chosen (which makes it anyway); else none, and the test skips."""
    if os.environ.get(KERNEL_VAR):
        return os.environ[KERNEL_VAR], None
    cache = linux_cache()
    made = os.path.exists(os.path.join(cache, "initramfs.stamp"))
    if not (made or want_linux):
        return None, None
    try:
        return (image or linux_guest.image)()[0], None
    except (linux_guest.ImageMissing, OSError) as e:
        return None, str(e)


def parse_tap(name, out):
    """(check name, outcome) for each case of a cmocka binary's TAP."""
    cases = []
    for line in out.splitlines():
        m = TAP_RE.match(line)
        if m:
            cases.append((f"unit/{name}/{m.group(2).strip()}",
                          "pass" if m.group(1) == "ok" else "fail"))
            continue
        m = TAP_SKIP_RE.match(line)
        if m:
            cases.append((f"unit/{name}/{m.group(1).strip()}", "skip"))
    return cases


def run_unit(res, build, want_linux=False):
    r = subprocess.run(["make", "--no-print-directory", "unit-build", f"BUILD={build}"],
                       cwd=ROOT)
    if not res.check(r.returncode == 0, "unit/build"):
        return
    env = dict(os.environ, CMOCKA_MESSAGE_OUTPUT="TAP")
    kernel, err = unit_kernel(want_linux)
    if err:
        res.check(False, "unit/linux-kernel", f"the Linux guest image is unusable: {err}")
    elif kernel:
        env[KERNEL_VAR] = kernel
        print(f"harness: {KERNEL_VAR}={kernel}")
    for binary in sorted(glob.glob(os.path.join(build, "unit", "test_*"))):
        if not os.access(binary, os.X_OK):
            continue
        name = os.path.basename(binary)[5:]
        p = subprocess.run([binary], capture_output=True, text=True, env=env, timeout=600)
        cases = parse_tap(name, p.stdout)
        for case, outcome in cases:
            res.host_result(case, outcome)
        if p.returncode != 0 or not cases:
            # A sanitizer abort or crash: show it, count it.
            print(p.stdout[-3000:] + p.stderr[-3000:])
            res.check(False, f"unit/{name}", f"exit status {p.returncode}")


def run_fuzz_replay(res, build):
    """tests/fuzz/: every seed and regression input of tests/fuzz/corpus/
    through its libFuzzer target once (make fuzz-replay, docs/fuzzing.md),
    one check per target; a crash, a sanitizer report or a violated
    invariant fails it."""
    r = subprocess.run(["make", "--no-print-directory", "fuzz-build", f"BUILD={build}"],
                       cwd=ROOT)
    if not res.check(r.returncode == 0, "fuzz/build"):
        return
    for name, binary in fuzzing.targets(build):
        ok, n, tail = fuzzing.replay_one(name, binary)
        if not ok:
            print(tail)
        res.host_result(f"fuzz/{name}/replay", "pass" if ok else "fail", f"{n} inputs")


def run_pyunit(res):
    """tests/test_*.py (the scripts' and the harness's own host tests):
    one check per test case; skips and expected failures wait for
    judge_host()."""
    class Result(unittest.TestResult):
        def addSuccess(self, test):
            res.host_result(f"py/{test.id()}", "pass")

        def addFailure(self, test, err):
            print(self._exc_info_to_string(err, test))
            res.host_result(f"py/{test.id()}", "fail")

        addError = addFailure

        def addSubTest(self, test, subtest, err):
            if err is not None:
                self.addFailure(subtest, err)

        def addSkip(self, test, reason):
            print(f"py/{test.id()}: skipped: {reason}")
            res.host_result(f"py/{test.id()}", "skip")

        def addExpectedFailure(self, test, err):
            res.host_result(f"py/{test.id()}", "xfail")

        def addUnexpectedSuccess(self, test):
            res.host_result(f"py/{test.id()}", "fail")
            print(f"py/{test.id()}: expected to fail, passed: fixed? remove "
                  "@expectedFailure and its declaration")

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
        if m and m.group(1) in ("PASS", "FAIL", "XPASS"):
            rules += 1
            res.host_result(m.group(2), "pass" if m.group(1) == "PASS" else "fail")
        elif m:
            res.host_result(m.group(2), m.group(1).lower())
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


def judge_lines(prefix, lines, declarations, site=None):
    """Events for a guest's result lines, and how many PASS lines it
    printed. declarations: the guestcfg.Declaration list that applies to
    this run. A SKIP or XFAIL line is a declared skip, a known bug
    (xfail) or a failure; a PASS line matching an xfail is XPASS (fixed);
    a declaration no line matched is stale. A PASS or FAIL line's site is
    `site: TEXT` (default: its name)."""
    events, passes, seen = [], 0, set()

    def match(kind, text):
        d = next((d for d in declarations if d.kind == kind and d.matches(text)), None)
        if d:
            seen.add(id(d))
        return d

    for line in lines:
        m = REPORT_RE.match(line.strip())
        if not m:
            continue
        kind, text = m.groups()
        name, where = f"{prefix}: {text}", f"{site or prefix}: {text}"
        if kind == "PASS":
            passes += 1
            fixed = match("xfail", text)
            events.append(("check", not fixed, name, f"XPASS: fixed: remove the xfail "
                           f"declaration '{fixed!r}' from guest-tests/unittests.cfg"
                           if fixed else "", where))
        elif kind == "XPASS":
            match("xfail", text)
            events.append(("check", False, name, "the guest's known failure passed (XPASS): "
                           "fixed? remove its xfail", where))
        elif kind == "FAIL":
            events.append(("check", False, name, "", where))
        else:
            d = (match("skip", text) or match("maybe_skip", text) if kind == "SKIP"
                 else None) or match("xfail", text)
            if d:
                events.append(("skip" if d.kind == "maybe_skip" else d.kind, name, d.reason))
            else:
                events.append(("check", False, f"{prefix}: {kind}: {text}",
                               f"undeclared {kind}: declare it in guest-tests/unittests.cfg "
                               "with its reason (skip/xfail = REGEX => REASON)"))
    for d in declarations:
        if id(d) not in seen and d.kind != "maybe_skip":
            events.append(("check", False, f"{prefix}/declared {d!r}",
                           "stale declaration: no line matches it any more, remove it"))
    return events, passes


def judge_guest(suite, name, expect_status, got, test=None, aliases=()):
    """Events for one guest of a suite: its lines (judge_lines, with the
    declarations of its test in guest-tests/unittests.cfg), its minimum of
    PASS lines and its exit status. Its lines' sites are named by its
    image (guest_site()), its status by its test. aliases: other suite
    names whose declarations apply too (suites.KvmSuite)."""
    prefix = f"{suite}/{name}"
    base = test.name if test else name.split(".")[0]
    if got is None:
        return [("check", False, f"{prefix}/ran", "no 'guest exited' line", f"{base}/ran")]
    status, lines = got
    events, passes = judge_lines(prefix, lines, test.declarations_for(suite, *aliases) if test else [],
                                 guest_site(test.file if test else base))
    if test:
        least = test.min_pass_for(suite, *aliases)
        events.append(("check", passes >= least, f"{prefix}/min-pass",
                       f"ran {passes} of at least {least} checks (min_pass in "
                       "guest-tests/unittests.cfg)", f"{base}/min-pass"))
    events.append(("check", status == expect_status, f"{prefix}/status",
                   f"exited with {status}, expected {expect_status}", f"{base}/status"))
    return events


def check_guest(res, suite, name, expect_status, got):
    res.apply(judge_guest(suite.name, name, expect_status, got, suites.test_of(suite, name),
                          getattr(suite, "aliases", ())))


def compile_acpi(name, work):
    """tests/data/acpi/NAME.asl compiled by iasl (acpica-tools) into the
    suite's work folder; the .aml path."""
    src = os.path.join(ROOT, "tests", "data", "acpi", name + ".asl")
    out = os.path.join(work, name)
    subprocess.run(["iasl", "-p", out, src], check=True, stdout=subprocess.DEVNULL)
    return out + ".aml"


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
    try:
        tables = [compile_acpi(t, work) for t in getattr(suite, "acpi_tables", ())]
    except (subprocess.CalledProcessError, OSError) as e:
        return suite, None, f"harness: cannot compile the suite's ACPI table: {e}\n", work, 0.0
    if getattr(suite, "repeat", False):
        # suites.repeat_checks (linux-2cpu): the same image booted a second
        # time in Bochs, whose runs repeat to the instruction, copied before
        # the first boot (OVMF may write to the ESP).
        again = os.path.join(work, "again")
        os.makedirs(again, exist_ok=True)
        shutil.copy(img, os.path.join(again, "esp.img"))
    status, serial, _ = emu.run(img, suite.emu, cpus=suite.cpus, megs=suite.megs,
                                timeout=suite.timeout, workdir=work, quiet=True,
                                model=suite.model, machine=getattr(suite, "machine", "q35"),
                                screendump=shot, debug_exit=getattr(suite, "debug_exit", True),
                                uart=getattr(suite, "uart", "com1"),
                                screendump_after=getattr(suite, "screendump_after", None),
                                acpi_tables=tables, msrs=suite_msrs(suite),
                                threads=suite.threads)
    if getattr(suite, "repeat", False):
        suite.again_work = again
        suite.again = emu.run(os.path.join(again, "esp.img"), suite.emu, cpus=suite.cpus,
                              megs=suite.megs, timeout=suite.timeout, workdir=again,
                              quiet=True, model=suite.model, msrs=suite_msrs(suite),
                              threads=suite.threads)[1]
    return suite, status, serial, work, time.monotonic() - t0


def suite_msrs(suite):
    """The Bochs MSR file a suite names (tests/data/msrs/NAME.def), or None."""
    name = getattr(suite, "msrs", None)
    return os.path.join(ROOT, "tests", "data", "msrs", f"{name}.def") if name else None


def report_suite(res, suite, status, serial, work, secs):
    if isinstance(suite, suites.RunnerCheck):
        how = f"command, {suite.emu}"
    else:
        how = suite.emu + (f" {suite.model}" if suite.emu == "bochs" else "")
    print(f"--- {suite.name} ({how}, {suite.cpus} CPU, {secs:.1f} s, logs in {work})")
    failed_before = res.failed

    def check(ok, name, detail):
        res.check(ok, f"{suite.name}/{name}", detail, name)

    check(status == suite.status, "final-status", f"got {status}, expected {suite.status}")
    for pattern in suite.expect:
        check(re.search(pattern, serial, re.M) is not None, f"serial: {pattern}",
              "not in the serial log")
    for pattern in getattr(suite, "reject", ()):
        check(re.search(pattern, serial, re.M) is None, f"serial lacks: {pattern}",
              "found in the output")
    guests = emu.split_guests(serial)
    for name, expect_status in suite.guests:
        check_guest(res, suite, name, expect_status, guests.get(name))
    for ok, what, detail in (suite.checks(serial) if hasattr(suite, "checks") else ()):
        check(ok, what, detail)
    if hasattr(suite, "summary"):
        print(suite.summary(serial))
    if res.failed > failed_before:
        emu.diagnose(work, serial, f"suite {suite.name} failed")
        if getattr(suite, "again", None) is not None:
            emu.diagnose(suite.again_work, suite.again,
                         f"suite {suite.name} failed; its second boot")


def choose(emu_name, only):
    """The suites a run boots: make test's (Bochs, with the QEMU TCG
    platform matrix), or with EMU=kvm the nested-KVM ones (suites.KVM_SUITES,
    plus the TCG ones, which need no KVM); --only filters by name, and
    opt-in suites run only when --only names them."""
    pool = suites.SUITES if emu_name == "bochs" else \
        suites.KVM_SUITES + [s for s in suites.SUITES if s.emu == "tcg"]
    chosen = [s for s in pool if not only or re.search(only, s.name)]
    return chosen + [s for s in suites.OPT_IN if only and re.search(only, s.name)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", default=None, help="regex of suite names to run")
    ap.add_argument("--no-unit", action="store_true")
    ap.add_argument("-j", type=int, default=2, help="emulators run in parallel")
    ap.add_argument("--emu", choices=("bochs", "kvm"), default="bochs",
                    help="bochs: the suites of make test; kvm: the nested-KVM suites "
                    "(make test EMU=kvm, docs/ci-nested-kvm.md)")
    ap.add_argument("--list", action="store_true", help="print the chosen suites and stop")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    res = Results()
    t0 = time.monotonic()
    chosen = choose(a.emu, a.only)
    if a.list:
        for s in chosen:
            print(f"{s.name} ({s.emu}, {s.cpus} CPU{'s' if s.cpus > 1 else ''})")
        return
    if a.emu == "kvm" and not emu.kvm_usable():
        # Before anything runs: a KVM run that cannot boot is no result.
        sys.exit("harness: EMU=kvm cannot run here: " + "; ".join(emu.kvm_missing()) +
                 " (make test without EMU= runs the Bochs suites; docs/ci-nested-kvm.md)")
    if not a.no_unit:
        run_unit(res, build, any(isinstance(s, suites.LinuxSuite) for s in chosen))
        run_fuzz_replay(res, build)
        run_pyunit(res)
        run_layers(res)
        res.apply(judge_host(res.host, HOST_DECLARATIONS))
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
    print(checks_line(res.sites, res.skipped, res.xfailed))
    sys.exit(1 if res.failed else 0)


if __name__ == "__main__":
    main()
