#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The Linux guest image: Debian's cloud kernel and an initramfs that runs
cyclictest (issue 14.3).

    scripts/linux-guest.py [--cache DIR] [--rebuild]

Downloads with `apt-get download` (download only, nothing is installed)
into $TICKVISOR_CACHE/linux (default ~/.cache/tickvisor/linux, outside
the tracked tree; TICKVISOR_LINUX_CACHE names the folder itself):
  - linux-image-cloud-amd64's versioned kernel package,
  - busybox-static,
  - rt-tests and the library packages it depends on (apt-cache depends),
extracts them with dpkg-deb, and writes initramfs.cpio.gz (cpio newc,
gzip; written here, no cpio tool needed) holding busybox, cyclictest with
exactly the shared libraries its ELF NEEDED entries reach (read with
readelf, no ldd: nothing of the guest runs on the host), tickvisor-exit
(guest-tests/linux/debug_exit.c, built with gcc) and
guest-tests/linux/init as /init.

Prints `kernel PATH` and `initrd PATH` on stdout (progress on stderr).
Idempotent: a second run with the same package versions and sources only
checks and prints (well under a second). Runs at the same time (make
test's two Linux suites, two checkouts on one machine) take turns on the
cache's lock file: the second finds the first one's image. When apt has no package lists
it runs `apt-get update` as root, otherwise it says what to run.
"""
import argparse
import fcntl
import glob
import gzip
import hashlib
import io
import os
import re
import shutil
import stat
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "guest-tests", "linux")
DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "tickvisor", "linux")


def default_cache():
    """TICKVISOR_LINUX_CACHE, else TICKVISOR_CACHE/linux (the cache every
    tickvisor script shares, scripts/build-bochs.sh too), else
    ~/.cache/tickvisor/linux."""
    if os.environ.get("TICKVISOR_LINUX_CACHE"):
        return os.environ["TICKVISOR_LINUX_CACHE"]
    if os.environ.get("TICKVISOR_CACHE"):
        return os.path.join(os.environ["TICKVISOR_CACHE"], "linux")
    return DEFAULT_CACHE

KERNEL_META = "linux-image-cloud-amd64"
BUSYBOX = "busybox-static"
RT_TESTS = "rt-tests"
CYCLICTEST = "usr/bin/cyclictest"
# Where glibc's loader looks without an ld.so.cache (Debian multiarch).
LIB_DIRS = ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64", "lib", "usr/lib")
# Device nodes the kernel wants before /init mounts devtmpfs: the console
# it opens as /init's stdin/out/err, and /dev/kmsg for /init's lines.
DEV_NODES = [("dev/console", 5, 1, 0o600), ("dev/null", 1, 3, 0o666),
             ("dev/kmsg", 1, 11, 0o644)]
DIRS = ["bin", "dev", "proc", "sys", "tmp", "usr", "usr/bin", "lib", "lib64",
        "lib/x86_64-linux-gnu", "usr/lib", "usr/lib/x86_64-linux-gnu"]
HELPER_CFLAGS = ["-O2", "-Wall", "-Wextra", "-Werror", "-ffreestanding", "-fno-pie", "-no-pie",
                 "-static", "-nostdlib", "-fno-stack-protector",
                 "-fno-asynchronous-unwind-tables", "-Wl,--build-id=none"]


class ImageError(Exception):
    pass


def log(msg):
    print(f"linux-guest: {msg}", file=sys.stderr)


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


# --- apt ------------------------------------------------------------------
# Each apt-cache call costs most of a second here, so the packages are
# resolved in two calls and the answer is kept (packages.txt); later runs
# use it without asking apt (--update asks again, e.g. for a newer kernel).

DEPENDS_OPTS = ["--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks",
                "--no-replaces", "--no-enhances"]


def apt_graph(pkgs):
    """{package: [packages it depends on]} for pkgs and everything they
    reach (Depends/Pre-Depends; the first of each alternative group;
    virtual packages left out)."""
    r = run(["apt-cache", "depends", "--recurse", *DEPENDS_OPTS, *pkgs])
    graph, current, alternative = {}, None, False
    for line in r.stdout.splitlines():
        if not line.startswith(" "):
            current = line.strip()
            graph.setdefault(current, [])
            alternative = False
            continue
        m = re.match(r"^\s+(\|?)(Pre)?Depends: (\S+)$", line)
        if not m or current is None:
            continue
        if not alternative and not m.group(3).startswith("<"):
            graph[current].append(m.group(3))
        alternative = m.group(1) == "|"
    missing = [p for p in pkgs if p not in graph]
    if r.returncode or missing:
        raise ImageError(f"apt-cache depends {' '.join(missing or pkgs)}: "
                         f"{r.stderr.strip() or 'unknown package'}")
    return graph


def apt_deb_names(pkgs):
    """{package: the file name `apt-get download` gives its candidate}:
    NAME_VERSION_ARCH.deb with the epoch's colon written %3a."""
    r = run(["apt-cache", "show", "--no-all-versions", *pkgs])
    names = {}
    for block in r.stdout.split("\n\n"):
        f = dict(re.findall(r"^(Package|Version|Architecture): (\S+)$", block, re.M))
        if len(f) == 3:
            names[f["Package"]] = (f"{f['Package']}_{f['Version'].replace(':', '%3a')}_"
                                   f"{f['Architecture']}.deb")
    missing = [p for p in pkgs if p not in names]
    if missing:
        raise ImageError(f"apt knows no candidate of {' '.join(missing)}")
    return names


def apt_known(pkg):
    """apt has a candidate version of pkg."""
    m = re.search(r"^\s+Candidate: (\S+)$", run(["apt-cache", "policy", pkg]).stdout, re.M)
    return bool(m) and m.group(1) != "(none)"


def apt_ensure_lists():
    """apt-cache knows nothing before the first `apt-get update`."""
    if apt_known(KERNEL_META):
        return
    if os.geteuid() != 0:
        raise ImageError(f"apt does not know {KERNEL_META}: run `apt-get update` as root first")
    log("apt has no package lists: apt-get update")
    r = run(["apt-get", "update", "-qq"])
    if r.returncode or not apt_known(KERNEL_META):
        raise ImageError(f"apt-get update did not make {KERNEL_META} known:\n{r.stderr.strip()}")


def lib_closure(graph, pkg):
    """The lib* packages pkg needs at run time, following only lib*
    packages: candidates for the shared libraries its binaries name (only
    those NEEDED reaches go into the image)."""
    seen, todo = [], [pkg]
    while todo:
        for dep in graph.get(todo.pop(), []):
            if dep.startswith("lib") and dep not in seen:
                seen.append(dep)
                todo.append(dep)
    return seen


def resolve():
    """[(role, package, deb file name)]: the versioned kernel behind
    linux-image-cloud-amd64, busybox-static, rt-tests and its libraries."""
    apt_ensure_lists()
    graph = apt_graph([KERNEL_META, RT_TESTS])
    kernel = [d for d in graph[KERNEL_META] if d.startswith("linux-image-")]
    if not kernel:
        raise ImageError(f"{KERNEL_META} depends on no linux-image-* package")
    pkgs = [("kernel", kernel[0]), ("busybox", BUSYBOX), ("rt-tests", RT_TESTS)] + \
        [("lib", p) for p in lib_closure(graph, RT_TESTS)]
    names = apt_deb_names([p for _, p in pkgs])
    return [(role, p, names[p]) for role, p in pkgs]


def packages(cache, update):
    """resolve(), kept in cache/packages.txt ("ROLE PACKAGE DEB" lines)."""
    path = os.path.join(cache, "packages.txt")
    if not update and os.path.exists(path):
        with open(path) as f:
            return [tuple(line.split()) for line in f if line.strip()]
    pkgs = resolve()
    with open(path + ".tmp", "w") as f:
        f.writelines(" ".join(p) + "\n" for p in pkgs)
    os.replace(path + ".tmp", path)
    return pkgs


def apt_download(pkg, name, debs):
    """debs/NAME, downloaded unless already there."""
    path = os.path.join(debs, name)
    if os.path.exists(path):
        return path
    log(f"apt-get download {pkg}")
    argv = ["apt-get", "download", "-q"]
    if os.geteuid() == 0:
        # apt drops to its _apt user to download, which cannot write into
        # root's home (the "Download is performed unsandboxed as root"
        # warning): download as root into our own folder instead.
        argv += ["-o", "APT::Sandbox::User=root"]
    r = run(argv + [pkg], cwd=debs)
    if r.returncode or not os.path.exists(path):
        raise ImageError(f"apt-get download {pkg} did not give {name}:\n"
                         f"{(r.stdout + r.stderr).strip()}")
    return path


def extract(deb, roots):
    """The .deb unpacked (dpkg-deb -x) into roots/<deb name>, once."""
    out = os.path.join(roots, os.path.basename(deb)[:-len(".deb")])
    if not os.path.exists(os.path.join(out, ".extracted")):
        shutil.rmtree(out, ignore_errors=True)
        r = run(["dpkg-deb", "-x", deb, out])
        if r.returncode:
            raise ImageError(f"dpkg-deb -x {deb}: {r.stderr.strip()}")
        open(os.path.join(out, ".extracted"), "w").close()
    return out


# --- ELF dependencies (readelf, never ldd) --------------------------------

def elf_needs(path):
    """(interpreter or None, [NEEDED sonames]) of an ELF file."""
    r = run(["readelf", "-W", "-l", "-d", path], env=dict(os.environ, LC_ALL="C"))
    if r.returncode:
        raise ImageError(f"readelf {path}: {r.stderr.strip()}")
    interp = re.search(r"\[Requesting program interpreter: (\S+)\]", r.stdout)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]", r.stdout)
    return (interp.group(1) if interp else None), needed


def find_lib(soname, roots):
    """(path inside the image, file on the host) of a shared library."""
    for root in roots:
        for d in LIB_DIRS:
            host = os.path.join(root, d, soname)
            if os.path.exists(host):
                return f"{d}/{soname}", os.path.realpath(host)
    return None


def runtime_closure(binary, roots):
    """{image path: host file} of every library (and the loader) that
    binary needs, following NEEDED through the libraries themselves."""
    files, todo, loaders = {}, [binary], set()
    while todo:
        interp, needed = elf_needs(todo.pop())
        if interp and interp.lstrip("/") not in files:
            found = find_lib(os.path.basename(interp), roots)
            if not found:
                raise ImageError(f"program interpreter {interp} is in none of the packages")
            files[interp.lstrip("/")] = found[1]
            loaders.add(os.path.basename(interp))
        # libc names the loader too; the one at the interpreter path is it.
        for soname in (n for n in needed if n not in loaders):
            found = find_lib(soname, roots)
            if not found:
                raise ImageError(f"{soname} (NEEDED by {os.path.basename(binary)}) is in none "
                                 "of the downloaded packages")
            if found[0] not in files:
                files[found[0]] = found[1]
                todo.append(found[1])
    return files


# --- cpio newc ----------------------------------------------------------------

class Cpio:
    """A cpio archive in the "newc" format the kernel unpacks
    (Documentation/driver-api/early-userspace/buffer-format.rst): a
    110-byte ASCII header, the NUL-terminated name and the data, each
    padded to 4 bytes. Fixed owner and time: the same inputs give the
    same bytes."""

    def __init__(self):
        self.out = io.BytesIO()
        self.ino = 0

    def _entry(self, name, mode, data=b"", rdev=(0, 0)):
        self.ino += 1
        fields = [self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1],
                  len(name) + 1, 0]
        self.out.write(b"070701" + b"".join(b"%08X" % f for f in fields))
        self.out.write(name.encode() + b"\0")
        self._pad()
        self.out.write(data)
        self._pad()

    def _pad(self):
        self.out.write(b"\0" * (-self.out.tell() % 4))

    def directory(self, name):
        self._entry(name, stat.S_IFDIR | 0o755)

    def file(self, name, data, mode=0o755):
        self._entry(name, stat.S_IFREG | mode, data)

    def symlink(self, name, target):
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, name, major, minor, mode):
        self._entry(name, stat.S_IFCHR | mode, rdev=(major, minor))

    def finish(self):
        self._entry("TRAILER!!!", 0)
        return self.out.getvalue()


def build_helper(work):
    """tickvisor-exit, freestanding and static."""
    out = os.path.join(work, "tickvisor-exit")
    r = run(["gcc", *HELPER_CFLAGS, "-o", out, os.path.join(SRC, "debug_exit.c")])
    if r.returncode:
        raise ImageError(f"building tickvisor-exit:\n{r.stderr.strip()}")
    return out


def read(path):
    with open(path, "rb") as f:
        return f.read()


def initramfs(busybox, cyclictest, libs, helper):
    """The gzip'd newc archive of the guest's root file system."""
    c = Cpio()
    for d in DIRS:
        c.directory(d)
    for name, major, minor, mode in DEV_NODES:
        c.chardev(name, major, minor, mode)
    c.file("init", read(os.path.join(SRC, "init")))
    c.file("bin/busybox", read(busybox))
    c.symlink("bin/sh", "busybox")
    c.file("bin/tickvisor-exit", read(helper))
    c.file(CYCLICTEST, read(cyclictest))
    for name in sorted(libs):
        c.file(name, read(libs[name]))
    return gzip.compress(c.finish(), mtime=0)


# --- the whole image ----------------------------------------------------------

def inputs_digest(debs):
    """What the initramfs is made of: the packages (their file names carry
    the versions) and our own sources."""
    h = hashlib.sha256()
    for deb in sorted(debs):
        h.update(os.path.basename(deb).encode() + b"\0")
    for path in (os.path.join(SRC, "init"), os.path.join(SRC, "debug_exit.c"),
                 os.path.abspath(__file__)):
        h.update(read(path))
    return h.hexdigest()


def build(cache, rebuild=False, update=False):
    """(kernel, initrd) paths, downloading and building what is missing.
    The whole of it holds the cache's lock: every step below writes shared
    files (packages.txt, the extracted trees, the helper, the initramfs)
    that a second builder would remove or replace under the first."""
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return build_locked(cache, rebuild, update)


def build_locked(cache, rebuild, update):
    debs_dir, roots_dir = os.path.join(cache, "debs"), os.path.join(cache, "root")
    os.makedirs(debs_dir, exist_ok=True)
    os.makedirs(roots_dir, exist_ok=True)
    pkgs = packages(cache, update)
    debs = [apt_download(p, name, debs_dir) for _, p, name in pkgs]
    roots = [extract(d, roots_dir) for d in debs]
    role = {r: root for (r, _, _), root in zip(pkgs, roots) if r != "lib"}
    libs = [root for (r, _, _), root in zip(pkgs, roots) if r == "lib"]

    kernels = glob.glob(os.path.join(role["kernel"], "boot", "vmlinuz-*"))
    if len(kernels) != 1:
        raise ImageError(f"{pkgs[0][1]}: expected one boot/vmlinuz-*, found {kernels}")
    initrd = os.path.join(cache, "initramfs.cpio.gz")
    stamp = os.path.join(cache, "initramfs.stamp")
    digest = inputs_digest(debs)
    if not rebuild and os.path.exists(initrd) and os.path.exists(stamp) and \
            read(stamp).decode() == digest:
        return kernels[0], initrd

    busybox = os.path.join(role["busybox"], "bin", "busybox")
    cyclictest = os.path.join(role["rt-tests"], CYCLICTEST)
    closure = runtime_closure(cyclictest, libs)
    log("cyclictest needs " + ", ".join(sorted(closure)))
    data = initramfs(busybox, cyclictest, closure, build_helper(cache))
    with open(initrd + ".tmp", "wb") as f:
        f.write(data)
    os.replace(initrd + ".tmp", initrd)
    with open(stamp, "w") as f:
        f.write(digest)
    log(f"wrote {initrd} ({len(data)} bytes)")
    return kernels[0], initrd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=default_cache(),
                    help="download and build folder (default $TICKVISOR_LINUX_CACHE, else "
                    "$TICKVISOR_CACHE/linux, else ~/.cache/tickvisor/linux)")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the initramfs")
    ap.add_argument("--update", action="store_true",
                    help="ask apt again which package versions to use")
    a = ap.parse_args()
    try:
        kernel, initrd = build(os.path.abspath(a.cache), a.rebuild, a.update)
    except ImageError as e:
        sys.exit(f"linux-guest: error: {e}")
    print(f"kernel {kernel}")
    print(f"initrd {initrd}")


if __name__ == "__main__":
    main()
