#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Writes the seed inputs of tests/fuzz/corpus/ (docs/fuzzing.md).

    tests/fuzz/seeds.py [--build BUILD] [--kernel VMLINUZ]

Each target's seeds are files named seed-*; the crash inputs make fuzz
adds (crash-*) are never touched. Real inputs are made small: a bundled
guest's ELF (BUILD/guests/NAME.elf, ~100 KiB of page padding) keeps its
headers and the first KiB of each segment; a Debian bzImage, its setup
header and the first sectors of its kernel, with syssize to match. The
loader targets take a short parameter header before the image (see each
fuzz_*.c).
"""
import argparse
import glob
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"seed-{name}"), "wb") as f:
        f.write(data)


# --- multiboot: compacted guest ELFs ------------------------------------------

def compact_elf(data, keep=1024):
    """The ELF with each PT_LOAD's file bytes cut to `keep` and laid out
    one after the other behind the program headers (p_memsz unchanged)."""
    cls = data[4]
    if cls == 2:
        ehdr, phfmt, phoff_at = "<16sHHIQQQIHHHHHH", "<IIQQQQQQ", 32
    else:
        ehdr, phfmt, phoff_at = "<16sHHIIIIIHHHHHH", "<IIIIIIII", 28
    e = list(struct.unpack_from(ehdr, data))
    phoff, phentsize, phnum = e[5], e[9], e[10]
    out_off = phoff + phnum * phentsize
    out_off = (out_off + 15) & ~15
    phdrs, chunks = [], []
    for i in range(phnum):
        p = list(struct.unpack_from(phfmt, data, phoff + i * phentsize))
        if cls == 2:
            ptype, off, filesz = p[0], p[2], p[5]
        else:
            ptype, off, filesz = p[0], p[1], p[4]
        if ptype == 1:
            n = min(filesz, keep)
            chunks.append((out_off, data[off:off + n]))
            if cls == 2:
                p[2], p[5] = out_off, n
            else:
                p[1], p[4] = out_off, n
            out_off += (n + 15) & ~15
        phdrs.append(p)
    e[6 if cls == 2 else 6] = 0          # no section headers
    e[13] = e[12] = 0
    out = bytearray(out_off)
    struct.pack_into(ehdr, out, 0, *e)
    for i, p in enumerate(phdrs):
        struct.pack_into(phfmt, out, phoff + i * phentsize, *p)
    for off, c in chunks:
        out[off:off + len(c)] = c
    return bytes(out)


def mb_header(ram_pages, sel, mods=(0, 0, 0)):
    return struct.pack("<HB3H", ram_pages, sel, *mods)


def aout_kludge():
    """A Multiboot a.out kludge image: header at 0, loaded at 1 MiB, bss."""
    magic, flags = 0x1BADB002, (1 << 16) | 3
    hdr = struct.pack("<IIIIIIII", magic, flags, (-(magic + flags)) & 0xffffffff,
                      0x100000, 0x100000, 0x100000 + 256, 0x100000 + 8192, 0x100020)
    return hdr + b"\xf4" * (256 - len(hdr))


def multiboot(build):
    names = ["basic", "apic_basic", "timer_oneshot"]
    for n in names:
        for ext in ("elf", "elf32"):
            p = os.path.join(build, "guests", f"{n}.{ext}")
            if os.path.exists(p):
                with open(p, "rb") as f:
                    img = compact_elf(f.read())
                write("multiboot", f"{n}.{ext}", mb_header(2048, 0x01, (300, 0, 0)) + img)
    write("multiboot", "aout", mb_header(1024, 0x02, (100, 5000, 0)) + aout_kludge())


# --- linux: bzImage headers -------------------------------------------------

def bzimage_small(data, kernel_bytes=2048):
    """Setup sectors and the first bytes of the protected-mode kernel, with
    syssize saying so."""
    sects = data[0x1f1] or 4
    pm = (sects + 1) * 512
    out = bytearray(data[:pm + kernel_bytes])
    struct.pack_into("<I", out, 0x1f4, kernel_bytes // 16)
    return bytes(out)


def lx_header(ram_pages, sel, initrd=(0, 0), rsdp=0xe0000):
    return struct.pack("<HB2HI", ram_pages, sel, *initrd, rsdp)


def linux(build, kernel):
    for p in sorted(glob.glob(os.path.join(build, "guests", "linux_*.bzimage"))):
        with open(p, "rb") as f:
            img = f.read()
        name = os.path.splitext(os.path.basename(p))[0]
        write("linux", name, lx_header(0xffff, 0x01, (1000, 0)) + img)
    if kernel and os.path.exists(kernel):
        with open(kernel, "rb") as f:
            img = f.read(64 * 1024)
        write("linux", "debian-header", lx_header(0xffff, 0x00) + img[:2048])
        write("linux", "debian-small", lx_header(0xffff, 0x02, (4096, 10)) + bzimage_small(img))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--kernel", help="a Debian vmlinuz (bzImage)")
    a = ap.parse_args()
    multiboot(a.build)
    linux(a.build, a.kernel)


if __name__ == "__main__":
    main()
