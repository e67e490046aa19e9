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
import shutil
import struct
import subprocess

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
    for n in ("kernel32", "kernel64"):             # tests/data/multiboot/kernel.S
        with open(os.path.join(ROOT, "tests", "data", "multiboot", f"{n}.elf"), "rb") as f:
            write("multiboot", n, mb_header(2048, 0x13, (0, 64, 65535)) + f.read())


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


# --- acpi: real tables, laid out afresh ---------------------------------------

def checksum(b, field):
    b[field] = 0
    b[field] = (-sum(b)) & 0xff


def acpi_image(tables, xsdt=True, base=0, oem=b"TVFUZZ"):
    """RSDP at offset 0, the root table at 64, then the tables 16-byte
    aligned, every pointer base + offset, every checksum right."""
    offs, at = [], 64 + 36 + 8 * len(tables)
    at = (at + 15) & ~15
    for t in tables:
        offs.append(at)
        at = (at + len(t) + 15) & ~15
    img = bytearray(at)
    esize = 8 if xsdt else 4
    root = bytearray(36 + esize * len(tables))
    root[0:4] = b"XSDT" if xsdt else b"RSDT"
    struct.pack_into("<IB", root, 4, len(root), 1)
    root[10:16] = oem
    for i, o in enumerate(offs):
        struct.pack_into("<Q" if xsdt else "<I", root, 36 + esize * i, base + o)
    checksum(root, 9)
    img[64:64 + len(root)] = root
    for t, o in zip(tables, offs):
        t = bytearray(t)
        checksum(t, 9)
        img[o:o + len(t)] = t
    rsdp = bytearray(36)
    rsdp[0:8] = b"RSD PTR "
    rsdp[9:15] = oem
    rsdp[15] = 2 if xsdt else 0
    struct.pack_into("<I", rsdp, 16, 0 if xsdt else base + 64)
    struct.pack_into("<IQ", rsdp, 20, 36, base + 64 if xsdt else 0)
    if not xsdt:
        rsdp[20:] = bytes(16)
    v1 = rsdp[:20]
    checksum(v1, 8)
    rsdp[:20] = v1
    if xsdt:
        checksum(rsdp, 32)
    img[0:36] = rsdp
    return bytes(img)


def acpi_header(base_sel, fix=True):
    return struct.pack("<BHH", base_sel | (0x1c if fix else 0), 0xffff if fix else 0, 0)


def qemu_tables(machine, smp=4):
    """The tables SeaBIOS builds in QEMU (-M machine -smp smp), but the
    DSDT and FACS: read from a memory dump through the RSDT."""
    import tempfile
    import time
    with tempfile.TemporaryDirectory() as d:
        low, top = os.path.join(d, "low"), os.path.join(d, "top")
        p = subprocess.Popen(["qemu-system-x86_64", "-M", machine, "-m", "128", "-smp", str(smp),
                              "-display", "none", "-monitor", "stdio", "-serial", "none",
                              "-net", "none", "-accel", "tcg"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        time.sleep(4)               # SeaBIOS has built the tables
        p.communicate(f'pmemsave 0xe0000 0x20000 "{low}"\n'
                      f'pmemsave 0x7fc0000 0x40000 "{top}"\nquit\n', timeout=30)
        mem = {0xe0000: open(low, "rb").read(), 0x7fc0000: open(top, "rb").read()}

    def read(addr, n):
        for b, d in mem.items():
            if b <= addr and addr + n <= b + len(d):
                return d[addr - b:addr - b + n]
        raise ValueError(f"{addr:#x} not dumped")
    low = mem[0xe0000]
    rsdp = low.find(b"RSD PTR ")
    rsdt = struct.unpack_from("<I", low, rsdp + 16)[0]
    n = (struct.unpack("<I", read(rsdt + 4, 4))[0] - 36) // 4
    out = []
    for i in range(n):
        a = struct.unpack("<I", read(rsdt + 36 + 4 * i, 4))[0]
        sig, ln = read(a, 4), struct.unpack("<I", read(a + 4, 4))[0]
        if sig not in (b"DSDT", b"FACS"):
            out.append(read(a, ln))
    return out


def iasl_tables(sigs=("APIC", "FACP", "HPET", "SPCR")):
    """ACPICA's template tables (iasl -T SIG, acpica-tools)."""
    import tempfile
    out = []
    with tempfile.TemporaryDirectory() as d:
        for sig in sigs:
            subprocess.run(["iasl", "-T", sig], cwd=d, capture_output=True, check=True)
            subprocess.run(["iasl", f"{sig.lower()}.asl"], cwd=d, capture_output=True, check=True)
            with open(os.path.join(d, f"{sig.lower()}.aml"), "rb") as f:
                out.append(f.read())
    return out


def acpi(qemu):
    data = os.path.join(ROOT, "tests", "data", "acpi")
    fc = [open(os.path.join(data, f"host-{s}.bin"), "rb").read() for s in ("APIC", "FACP", "MCFG")]
    write("acpi", "firecracker-xsdt", acpi_header(0) + acpi_image(fc))
    write("acpi", "firecracker-rsdt", acpi_header(1) + acpi_image(fc, xsdt=False, base=0xe0000))
    if shutil.which("iasl"):
        t = iasl_tables()
        write("acpi", "iasl-templates", acpi_header(0) + acpi_image(t))
        write("acpi", "iasl-templates-raw", acpi_header(0, fix=False) + acpi_image(t))
    if qemu and shutil.which("qemu-system-x86_64"):
        for m in ("pc", "q35"):
            t = qemu_tables(m)
            write("acpi", f"qemu-{m}-rsdt", acpi_header(1) + acpi_image(t, xsdt=False, base=0xe0000))
            write("acpi", f"qemu-{m}-xsdt", acpi_header(3) +
                  acpi_image(t, base=(1 << 64) - 64 * 1024))


# --- vlapic, icr: operation sequences (tests/fuzz/fuzz_vlapic.h) -------------

HOT = ["ID", "TPR", "EOI", "LDR", "DFR", "SVR", "ESR", "CMCI", "ICR_LO", "ICR_HI",
       "LVTT", "THERMAL", "PERF", "LINT0", "LINT1", "LVTERR", "TMICT", "TMCCT", "TDCR",
       "SELF_IPI", "PPR", "IRR", "ISR", "TMR"]


def mmio_w(cpu, reg, val):
    return bytes([0, cpu, HOT.index(reg)]) + struct.pack("<I", val)


def wrmsr(cpu, reg, val):
    return bytes([4, cpu, HOT.index(reg), 1]) + struct.pack("<Q", val)


def op(code, cpu, *args):
    return bytes([code, cpu]) + bytes(args)


TAKE, EOI, TIME, TO_X2APIC = 10, 12, 13, (7, 1)


def enable_ops(cpu, ldr=None, cluster=False):
    ops = [mmio_w(cpu, "SVR", 0x1ff), mmio_w(cpu, "LVTERR", 0x3f)]
    if ldr is not None:
        ops += [mmio_w(cpu, "LDR", ldr << 24),
                mmio_w(cpu, "DFR", 0x0fffffff if cluster else 0xffffffff)]
    return ops


def enable(cpu, ldr=None, cluster=False):
    return b"".join(enable_ops(cpu, ldr, cluster))


def icr(cpu, lo, dest32):
    """fuzz_icr.c: an ICR write (kind < 0x60) of lo with dest32 as bits 63:32."""
    return bytes([0, cpu, 0x80, 0]) + struct.pack("<II", dest32, lo)


def step(ops):
    """fuzz_icr.c: fv_step() operations (each after a kind >= 0x60)."""
    if isinstance(ops, bytes):
        ops = [ops]
    return b"".join(bytes([0x60]) + o for o in ops)


def vlapic():
    timer = bytes([0, 0]) + enable(0) + mmio_w(0, "TDCR", 0xb) + mmio_w(0, "LVTT", 0x20030) + \
        mmio_w(0, "TMICT", 1000) + op(TIME, 0, 0xc0, 0xff, 0x0f) + op(TAKE, 0) + \
        mmio_w(0, "EOI", 0) + mmio_w(0, "LVTT", 0x40031) + \
        op(14, 0, 1, 0x10, 0x27) + op(TIME, 0, 0xc0, 0x20, 0x4e) + op(TAKE, 0)
    write("vlapic", "timer", timer)
    prio = bytes([1, 0]) + enable(0) + enable(1) + mmio_w(0, "TPR", 0x40) + \
        op(8, 0, 0, 0x35, 0) + op(8, 0, 0, 0x55, 1) + op(8, 0, 0, 0x99, 0) + op(TAKE, 0) + \
        op(TAKE, 0) + op(17, 0, 0x0a) + op(TAKE, 0) + op(EOI, 0) + op(EOI, 0) + \
        mmio_w(1, "ICR_HI", 0) + mmio_w(1, "ICR_LO", 0x4065) + op(TAKE, 0)
    write("vlapic", "priority", prio)
    esr = bytes([0, 0]) + enable(0) + bytes([3, 0, 0xc0, 0x04]) + mmio_w(0, "ESR", 0) + \
        mmio_w(0, "ICR_LO", 0x4005) + op(8, 0, 0, 3, 0) + mmio_w(0, "ESR", 0)
    write("vlapic", "esr", esr)
    x2 = bytes([3, 0]) + b"".join(enable(c) for c in range(4)) + \
        b"".join(op(*TO_X2APIC) [:1] + bytes([c, 1]) for c in range(4)) + \
        wrmsr(0, "ICR_LO", (2 << 32) | 0x41) + wrmsr(1, "SELF_IPI", 0x42) + \
        wrmsr(2, "ICR_LO", 0xffffffff00080843) + op(TAKE, 2) + wrmsr(2, "EOI", 0)
    write("vlapic", "x2apic", x2)

    groups = [(0x12, True), (0x14, True), (0x21, True), (0x22, True)]
    cl = bytes([3, 0]) + b"".join(step(enable_ops(c, ldr, cls)) for c, (ldr, cls) in enumerate(groups))
    cl += icr(0, 0x0830, 0x14000000) + icr(1, 0x0931, 0x23000000) + icr(2, 0x4c0832, 0)
    write("icr", "xapic-cluster", cl)
    flat = bytes([3, 0]) + b"".join(step(enable_ops(c, 1 << c)) for c in range(4))
    flat += icr(0, 0x0833, 0x0c000000) + icr(3, 0x0934, 0x0f000000) + icr(1, 0x0435, 0) + \
        icr(2, 0x0500, 0x01000000) + icr(2, 0x0600 | 0x10, 0x00000000)
    write("icr", "xapic-flat", flat)
    x2 = bytes([3, 0]) + b"".join(step(enable_ops(c)) for c in range(4)) + \
        b"".join(step(bytes([7, c, 1])) for c in range(4))
    x2 += icr(0, 0x0836, 0x00010003) + icr(1, 0x0037, 2) + icr(3, 0x80038, 0) + \
        icr(2, 0x0139, 0xffffffff) + icr(0, 0x0400, 1)
    write("icr", "x2apic", x2)


def gwalk():
    """Page tables in the fuzzer's RAM image (fuzz_gwalk.c): 4-level with a
    2 MiB page, PAE, and 32-bit with a 4 MiB page."""
    def hdr(flags, cr3, gla, other=0x123, length=16, pdptes=None):
        b = bytes([flags]) + struct.pack("<QQHB", cr3, gla, other, length)
        return b + (struct.pack("<4Q", *pdptes) if pdptes else b"")
    ram = bytearray(8 * 4096)
    struct.pack_into("<Q", ram, 0x1000, 0x2003)                 # PML4[0] -> PDPT
    struct.pack_into("<Q", ram, 0x2000, 0x3003)                 # PDPT[0] -> PD
    struct.pack_into("<Q", ram, 0x3000, 0x4003)                 # PD[0] -> PT
    struct.pack_into("<Q", ram, 0x3008, 0x000083)               # PD[1]: 2 MiB page at 0
    for i in range(8):
        struct.pack_into("<Q", ram, 0x4000 + 8 * i, (i << 12) | 3)
    write("gwalk", "long4", hdr(1 | 2 | 16 | 32, 0x1000, 0x5ff0, length=32) + bytes(ram))
    write("gwalk", "long4-2m", hdr(1 | 2 | 16, 0x1000, 0x200ffc) + bytes(ram))
    pae = bytearray(8 * 4096)
    struct.pack_into("<Q", pae, 0x20, 0x3001)                   # PDPTE[0] at CR3 0x20
    struct.pack_into("<Q", pae, 0x3000, 0x4003)
    for i in range(8):
        struct.pack_into("<Q", pae, 0x4000 + 8 * i, (i << 12) | 3)
    write("gwalk", "pae", hdr(1 | 2, 0x20, 0x1ffa) + bytes(pae))
    write("gwalk", "pae-pdptes", hdr(1 | 2 | 64, 0x20, 0x2ffa, pdptes=(0x3001, 0, 0, 0)) + bytes(pae))
    p32 = bytearray(8 * 4096)
    struct.pack_into("<I", p32, 0x1000, 0x2003)
    struct.pack_into("<I", p32, 0x1004, 0x000083)               # 4 MiB page
    for i in range(8):
        struct.pack_into("<I", p32, 0x2000 + 4 * i, (i << 12) | 3)
    write("gwalk", "32bit", hdr(1 | 4, 0x1000, 0x3ffc) + bytes(p32))
    write("gwalk", "nopaging", hdr(0, 0, 0xffffffff12345678) + bytes(16))


def insn():
    """Raw forms (mode byte, length byte, code) the guests use on the APIC
    page (fuzz_insn.c)."""
    forms = {
        "mov-store-abs": (2, bytes.fromhex("890425b000e0fe")),
        "mov-load-rip": (2, bytes.fromhex("8b0500100000")),
        "movzx": (1, bytes.fromhex("0fb74320")),
        "mov-imm": (1, bytes.fromhex("c7808000000001000000")),
        "rex-byte": (2, bytes.fromhex("4488a0300000")),
        "rep-stos": (2, bytes.fromhex("f3ab")),
        "moffs64": (2, bytes.fromhex("48a1200300e0fe000000")),
        "real-mode": (0, bytes.fromhex("6667890d20300000")),
    }
    for name, (mode, code) in forms.items():
        write("insn", name, bytes([mode, len(code)]) + code)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--kernel", help="a Debian vmlinuz (bzImage)")
    ap.add_argument("--qemu", action="store_true",
                    help="also dump the ACPI tables SeaBIOS builds in QEMU (pc, q35; 8 s of TCG)")
    a = ap.parse_args()
    multiboot(a.build)
    linux(a.build, a.kernel)
    acpi(a.qemu)
    vlapic()
    gwalk()
    insn()


if __name__ == "__main__":
    main()
