#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""make fuzz and make fuzz-replay (tests/fuzz/fuzz.mk, docs/fuzzing.md).

fuzz: each target of tests/fuzz/ runs --seconds under libFuzzer's -fork
with --jobs processes, from its seeds in tests/fuzz/corpus/TARGET/ (read
only) and a work corpus in BUILD/fuzz/work/TARGET/ (kept between runs);
then one line per target: executions, coverage (libFuzzer's cov: edges
and ft: features of its last stats line), corpus size and crashes. A
crash's input (BUILD/fuzz/crash/TARGET/) is copied to
tests/fuzz/corpus/TARGET/, where make test replays it from then on.

replay: every file of tests/fuzz/corpus/TARGET/ through its target once,
no mutation; a crash, a sanitizer report or a violated invariant fails.

coverage: the seeds and the work corpus through BUILD/fuzz-cov/fuzz_TARGET
(source-based coverage, no sanitizers), then llvm-cov's line and branch
coverage of the parser each target is for (PARSERS). make fuzz ends with
it.
"""
import json
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
# Fork mode's status lines: "#1234: cov: 56 ft: 78 corp: 9 exec/s 1011
# oom/timeout/crash: 0/0/0 time: 12s job: 3 dft_time: 0".
FORK_RE = re.compile(r"^#(\d+): cov: (\d+) ft: (\d+) corp: (\d+) exec/s (\d+) "
                     r"oom/timeout/crash: (\d+)/(\d+)/(\d+) time: (\d+)s")


# The sources each target is there to test (the rest it links are
# helpers: drivers/fmt.c, drivers/string.c, ...).
PARSERS = {
    "insn": ["vmm/emul/insn.c"],
    "gwalk": ["vmm/emul/gwalk.c"],
    "config": ["boot/config.c"],
    "multiboot": ["vmm/loader/multiboot.c"],
    "linux": ["vmm/loader/linux.c"],
    "acpi": ["drivers/acpi.c"],
    "vlapic": ["lapic/vlapic.c", "lapic/vlapic_regs.c", "lapic/vlapic_irq.c",
               "lapic/vlapic_timer.c", "timer/vtimer.c"],
    "icr": ["lapic/vlapic_icr.c"],
}
LLVM_BIN = "/usr/lib/llvm-14/bin"


def targets(build, only=None):
    names = sorted(os.path.basename(p)[5:-2] for p in
                   glob.glob(os.path.join(ROOT, "tests", "fuzz", "fuzz_*.c")))
    if only:
        want = set(only.split(","))
        unknown = want - set(names)
        if unknown:
            sys.exit(f"fuzz: no such target: {', '.join(sorted(unknown))} "
                     f"(targets: {', '.join(names)})")
        names = [n for n in names if n in want]
    return [(n, os.path.join(build, "fuzz", f"fuzz_{n}")) for n in names]


def corpus_files(name):
    d = os.path.join(CORPUS, name)
    return sorted(p for p in glob.glob(os.path.join(d, "**"), recursive=True)
                  if os.path.isfile(p) and os.path.basename(p) != "README")


def replay_one(name, binary):
    """(ok, number of inputs, output tail): every corpus file once."""
    files = corpus_files(name)
    if not files:
        return False, 0, f"no inputs in tests/fuzz/corpus/{name}/"
    out = []
    for i in range(0, len(files), 200):     # libFuzzer runs each file it is given
        p = subprocess.run([binary, "-runs=1"] + files[i:i + 200], capture_output=True,
                           text=True, timeout=300)
        if p.returncode != 0:
            return False, len(files), (p.stdout + p.stderr)[-4000:]
        out.append(p.stderr)
    return True, len(files), ""


def replay(build, only):
    failed = 0
    for name, binary in targets(build, only):
        t0 = time.monotonic()
        ok, n, tail = replay_one(name, binary)
        print(f"fuzz-replay {name}: {n} inputs, {'ok' if ok else 'FAILED'} "
              f"({time.monotonic() - t0:.1f} s)")
        if not ok:
            failed += 1
            print(tail)
    return 1 if failed else 0


def fuzz_one(name, binary, build, seconds, jobs):
    work = os.path.join(build, "fuzz", "work", name)
    crash = os.path.join(build, "fuzz", "crash", name)
    os.makedirs(work, exist_ok=True)
    os.makedirs(crash, exist_ok=True)
    before = set(os.listdir(crash))
    log = os.path.join(build, "fuzz", f"{name}.log")
    cmd = [binary, f"-fork={jobs}", f"-max_total_time={seconds}", "-ignore_crashes=1",
           "-timeout=10", "-rss_limit_mb=2048", f"-artifact_prefix={crash}/",
           work, os.path.join(CORPUS, name)]
    with open(log, "w") as f:
        subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=os.path.join(build, "fuzz"))
    stats = None
    with open(log, errors="replace") as f:
        for line in f:
            m = FORK_RE.match(line)
            if m:
                stats = [int(x) for x in m.groups()]
    new = sorted(set(os.listdir(crash)) - before)
    for c in new:
        shutil.copy(os.path.join(crash, c), os.path.join(CORPUS, name, c))
    return stats, new, log


def fuzz(build, only, seconds, jobs):
    rows = []
    for name, binary in targets(build, only):
        stats, new, log = fuzz_one(name, binary, build, seconds, jobs)
        rows.append((name, stats, new, log))
        if stats:
            execs, cov, ft, corp, eps, oom, tmo, crashes, secs = stats
            print(f"fuzz {name}: {execs} executions ({execs // max(secs, 1)}/s), cov {cov}, ft {ft}, "
                  f"corpus {corp}, crashes {crashes}, timeouts {tmo}, ooms {oom} ({secs} s)")
        else:
            print(f"fuzz {name}: no statistics (see {os.path.relpath(log, ROOT)})")
        for c in new[:5]:
            print(f"  crash input -> tests/fuzz/corpus/{name}/{c}")
        if len(new) > 5:
            print(f"  ... and {len(new) - 5} more crash inputs in tests/fuzz/corpus/{name}/")
        sys.stdout.flush()
    print()
    print(f"| target | executions | exec/s | cov | ft | crashes |  ({seconds} s x {jobs} jobs)")
    print("|---|---:|---:|---:|---:|---:|")
    bad = 0
    for name, stats, new, _ in rows:
        if not stats:
            bad += 1
            print(f"| {name} | ? | ? | ? | ? | ? |")
            continue
        execs, cov, ft, _, _, oom, tmo, crashes, secs = stats
        bad += 1 if crashes or tmo or oom or new else 0
        print(f"| {name} | {execs} | {execs // max(secs, 1)} | {cov} | {ft} | {crashes + tmo + oom} |")
    return 1 if bad else 0


def coverage_one(name, build):
    """{source: (lines covered, lines, branches covered, branches)} of
    PARSERS[name] over the seeds and the work corpus, or None."""
    binary = os.path.join(build, "fuzz-cov", f"fuzz_{name}")
    work = os.path.join(build, "fuzz-cov", "prof", name)
    if not os.path.exists(binary) or not os.path.exists(os.path.join(LLVM_BIN, "llvm-cov")):
        return None
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    dirs = [d for d in (os.path.join(build, "fuzz", "work", name), os.path.join(CORPUS, name))
            if os.path.isdir(d)]
    env = dict(os.environ, LLVM_PROFILE_FILE=os.path.join(work, "%p.profraw"))
    p = subprocess.run([binary, "-runs=0"] + dirs, env=env, capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:           # a corpus input fails: the rest did not run
        print(f"fuzz-coverage {name}: stopped at a failing input:\n{p.stderr[-2000:]}")
        return None
    raws = glob.glob(os.path.join(work, "*.profraw"))
    if not raws:
        return None
    prof = os.path.join(work, "merged.profdata")
    subprocess.run([os.path.join(LLVM_BIN, "llvm-profdata"), "merge", "-sparse", "-o", prof] + raws,
                   check=True)
    out = subprocess.run([os.path.join(LLVM_BIN, "llvm-cov"), "export", "-summary-only",
                          f"-instr-profile={prof}", binary], capture_output=True, text=True,
                         check=True).stdout
    files = {os.path.relpath(f["filename"], ROOT): f["summary"] for f in json.loads(out)["data"][0]["files"]}
    res = {}
    for src in PARSERS.get(name, []):
        f = files.get(src)
        if f:
            res[src] = (f["lines"]["covered"], f["lines"]["count"],
                        f["branches"]["covered"], f["branches"]["count"])
    return res


def coverage(build, only):
    print("| target | source | lines | branches |")
    print("|---|---|---:|---:|")
    for name, _ in targets(build, only):
        res = coverage_one(name, build)
        if res is None:
            print(f"| {name} | (no coverage: build/fuzz-cov/fuzz_{name} or llvm-cov missing) | | |")
            continue
        for src, (lc, ln, bc, bn) in res.items():
            print(f"| {name} | {src} | {100 * lc / max(ln, 1):.1f}% ({lc}/{ln}) "
                  f"| {100 * bc / max(bn, 1):.1f}% ({bc}/{bn}) |")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", help="comma-separated targets")
    ap.add_argument("--replay", action="store_true")
    ap.add_argument("--coverage", action="store_true")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if a.replay:
        sys.exit(replay(build, a.only))
    if a.coverage:
        sys.exit(coverage(build, a.only))
    st = fuzz(build, a.only, a.seconds, a.jobs)
    print()
    coverage(build, a.only)
    sys.exit(st)


if __name__ == "__main__":
    main()
