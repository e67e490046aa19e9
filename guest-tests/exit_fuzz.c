// SPDX-License-Identifier: BSD-2-Clause
/*
 * exit_fuzz: a seeded random stream of the instructions tickvisor exits
 * for and completes (issue 25.3), each under an exception fixup, so that
 * whatever the CPU would raise (#GP, #UD, #DB) the guest goes on:
 * CPUID with random leaves, RDMSR and WRMSR over the whole MSR space,
 * port I/O of every width to every port, MOV to and from CR0/CR3/CR4/CR8
 * and DR0-DR7, XSETBV, INVLPG, HLT woken by the APIC timer, xAPIC MMIO
 * reads and writes (narrow ones too), x2APIC MSRs while in xAPIC mode,
 * and VMCALL with any function. Arguments: seed=N (default 1), ops=N
 * (default 100000).
 *
 * What it keeps out, because on any machine it ends or wrecks the guest
 * itself rather than testing the hypervisor: writes to the ports that end
 * a guest by design (the debug-exit port, reset and power-off: 0xcf9, the
 * 8042, the ACPI sleep registers) and to COM1 (the log); random values for
 * the MSRs the guest's own state lives in (EFER, FS/GS bases, the APIC
 * base, the TSC, PAT and MTRRs, MISC_ENABLE, DEBUGCTL) - those are written
 * back with the value they read; CR0/CR4 flips are undone at once, and
 * CR4.SMEP/SMAP/PKE/CET are never set (the guest's pages are user pages);
 * ICR writes never send INIT or SIPI (a self-INIT parks the guest's only
 * vCPU for good). Everything it sends itself (self-IPIs with any vector,
 * NMIs, LVT-raised interrupts) is taken by catch-all handlers.
 *
 * Its checks: it runs to the end (tickvisor does not end or hang it,
 * whatever it did); the x2APIC MSRs raise #GP in xAPIC mode, every time
 * (SDM Vol. 3A, "x2APIC Register Availability": "...the x2APIC MSRs ...
 * in xAPIC mode ... #GP"; KVM's kvm_x2apic_msr_read/write and Bochs's
 * apic.cc agree); CPUID gives the same answer twice for the same leaf.
 * The suite then boots a canary guest in the same run (tests/suites.py,
 * "exit-fuzz"), which checks that tickvisor is intact after it.
 */
#include "lib/apic.h"
#include "lib/guest.h"

#define XAPIC                   ((volatile uint8_t *)0xfee00000ul)
#define TIMER_VEC               0xe0u
#define HLT_WAKE_TICKS          2000u
#define NR_OPS                  13

static uint64_t rng;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static volatile uint64_t irqs, nmis, dbs;
static unsigned long done[NR_OPS], faults[NR_OPS];
static unsigned long x2_tried, x2_gp;
static bool cpuid_stable = true;

static void any_irq(struct ex_regs *r)
{
	(void)r;
	irqs++;
	apic_eoi();
}

static void nmi_handler(struct ex_regs *r)
{
	(void)r;
	nmis++;
}

/* A breakpoint a random DR7 armed: disarm, and past an instruction one. */
static void db_handler(struct ex_regs *r)
{
	dbs++;
	write_dr7(DR7_INIT);
	write_dr6(DR6_INIT);
	r->rflags |= X86_EFLAGS_RF;
	r->rflags &= ~(uint64_t)X86_EFLAGS_TF;
}

/* --- the operations ------------------------------------------------------ */

static bool op_cpuid(void)
{
	static const uint32_t bases[] = { 0, 0x40000000u, 0x80000000u, 0xc0000000u };
	uint32_t leaf = rnd_below(4) ? bases[rnd_below(4)] + rnd_below(0x24) : (uint32_t)rnd();
	uint32_t sub = rnd_below(4) ? rnd_below(4) : (uint32_t)rnd();
	struct cpuid a = cpuid_indexed(leaf, sub), b = cpuid_indexed(leaf, sub);

	/* Leaf 1's EBX and leaf 0xb/0x1f's EDX carry this CPU's APIC ID,
	 * the same both times; nothing here varies between two reads. */
	if (a.a != b.a || a.b != b.b || a.c != b.c || a.d != b.d) {
		if (cpuid_stable)
			report_info("CPUID %#x.%#x changed between two reads", leaf, sub);
		cpuid_stable = false;
	}
	return false;
}

static uint32_t rnd_msr(void)
{
	/* The MSRs tickvisor handles itself, and their neighbours. */
	static const uint32_t known[] = {
		0x10, 0x1b, 0x3a, 0x3b, 0x48, 0x49, 0x8b, 0xfe, 0x174, 0x175, 0x176, 0x179,
		0x17a, 0x1a0, 0x1d9, 0x277, 0x2ff, 0x6e0, 0xda0, 0xc0000080u, 0xc0000081u,
		0xc0000082u, 0xc0000084u, 0xc0000100u, 0xc0000101u, 0xc0000102u, 0xc0000103u,
	};

	switch (rnd_below(8)) {
	case 6:
	case 7: return known[rnd_below(ARRAY_SIZE(known))];
	case 0: return (uint32_t)rnd();
	case 1: return rnd_below(0x1000);
	case 2: return 0xc0000000u + rnd_below(0x1000);
	case 3: return 0x800u + rnd_below(0x100);               /* x2APIC */
	case 4: return 0x40000000u + rnd_below(0x200);          /* hypervisor range */
	default: return 0x480u + rnd_below(0x20);               /* VMX capabilities */
	}
}

/* MSRs whose random values would wreck the guest's own state. */
static bool msr_guarded(uint32_t m)
{
	return m == 0x10 || m == 0x1b || m == 0x3b || m == 0x1a0 || m == 0x1d9 || m == 0x277 || m == 0xfe ||
	       (m >= 0x200 && m <= 0x2ff) || (m >= 0xc0000080u && m <= 0xc0000084u) ||
	       (m >= 0xc0000100u && m <= 0xc0000102u);
}

static bool x2apic_msr(uint32_t m)
{
	return m >= 0x800 && m <= 0x8ff;
}

static bool op_rdmsr(void)
{
	uint32_t m = rnd_msr();
	uint64_t v;
	int vec = rdmsr_safe(m, &v);

	if (x2apic_msr(m)) {
		x2_tried++;
		x2_gp += vec == GP_VECTOR;
	}
	return vec != 0;
}

static bool op_wrmsr(void)
{
	uint32_t m = rnd_msr();
	uint64_t v = 0;
	bool readable;
	int vec;

	if (x2apic_msr(m)) {
		x2_tried++;
		vec = wrmsr_safe(m, rnd());
		x2_gp += vec == GP_VECTOR;
		return vec != 0;
	}
	readable = !rdmsr_safe(m, &v);
	if (msr_guarded(m)) {
		if (!readable)
			return true;    /* guarded and unreadable: leave it */
	} else if (!readable || rnd_below(2)) {
		v = rnd_below(2) ? rnd() : v ^ (1ull << rnd_below(64));
	}
	return wrmsr_safe(m, v) != 0;
}

/* Ports that end the guest by design, or are the log. */
static bool port_guarded(uint16_t p, unsigned size)
{
	static const uint16_t lo[] = { 0x3f8, 0xf4, 0x60, 0x64, 0xcf9, 0x600 };
	static const uint16_t hi[] = { 0x3ff, 0xf7, 0x60, 0x64, 0xcf9, 0x601 };

	for (unsigned i = 0; i < ARRAY_SIZE(lo); i++)
		if (p <= hi[i] && p + size - 1 >= lo[i])
			return true;
	return false;
}

static bool op_io(void)
{
	unsigned size = 1u << rnd_below(3);
	uint16_t port = rnd_below(2) ? (uint16_t)rnd() : (uint16_t)rnd_below(0x1000);
	uint32_t v = (uint32_t)rnd();
	bool in = rnd_below(2) || port_guarded(port, size);

	if (in) {
		if (size == 1)
			(void)inb(port);
		else if (size == 2)
			(void)inw(port);
		else
			(void)inl(port);
	} else if (size == 1) {
		outb(port, (uint8_t)v);
	} else if (size == 2) {
		outw(port, (uint16_t)v);
	} else {
		outl(port, v);
	}
	return false;
}

/* Flip one bit of CR0 or CR4 and put the old value back at once, both
 * under fixup: a flip the CPU refuses raises #GP and changes nothing. */
static bool op_cr(void)
{
	static const uint8_t cr4_bits[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
					    16, 17, 18, 19, 24, 25, 31, 32, 40, 63 };
	unsigned which = rnd_below(5);
	uint64_t old, val;

	exception_clear();
	switch (which) {
	case 0:
		old = read_cr0();
		val = old ^ (1ull << rnd_below(64));
		asm volatile(ASM_TRY("2f") "mov %0, %%cr0\n\t" ASM_TRY("2f") "mov %1, %%cr0\n2:"
			     : : "r"(val), "r"(old) : "memory");
		break;
	case 1:
		old = read_cr4();
		val = old ^ (1ull << cr4_bits[rnd_below(ARRAY_SIZE(cr4_bits))]);
		asm volatile(ASM_TRY("2f") "mov %0, %%cr4\n\t" ASM_TRY("2f") "mov %1, %%cr4\n2:"
			     : : "r"(val), "r"(old) : "memory");
		break;
	case 2:
		old = read_cr3();
		asm volatile("mov %0, %%cr3" : : "r"(old) : "memory");
		break;
	case 3:
		val = rnd_below(16);
		asm volatile("mov %0, %%cr8\n\tmov %1, %%cr8" : : "r"(val), "r"(0ul) : "memory");
		break;
	default:
		(void)read_cr0();
		(void)read_cr4();
		asm volatile("mov %%cr8, %0" : "=r"(val));
		break;
	}
	return exception_vector() != 0;
}

static bool op_dr(void)
{
	uint64_t v = rnd_below(2) ? rnd() : (uint32_t)rnd();
	unsigned n = rnd_below(8);

	exception_clear();
	switch (n) {
	case 0: asm volatile(ASM_TRY("2f") "mov %0, %%dr0\n2:" : : "r"(v)); break;
	case 1: asm volatile(ASM_TRY("2f") "mov %0, %%dr1\n2:" : : "r"(v)); break;
	case 2: asm volatile(ASM_TRY("2f") "mov %0, %%dr2\n2:" : : "r"(v)); break;
	case 3: asm volatile(ASM_TRY("2f") "mov %0, %%dr3\n2:" : : "r"(v)); break;
	case 4: asm volatile(ASM_TRY("2f") "mov %%dr4, %0\n2:" : "+r"(v)); break;
	case 5: asm volatile(ASM_TRY("2f") "mov %0, %%dr6\n2:" : : "r"(v)); break;
	case 6: asm volatile(ASM_TRY("2f") "mov %%dr6, %0\n2:" : "+r"(v)); break;
	default:
		/* A random DR7 (GD among its bits: the next DR access is a
		 * #DB, which the handler takes and disarms). */
		asm volatile(ASM_TRY("2f") "mov %0, %%dr7\n2:" : : "r"(v));
		break;
	}
	write_dr7(DR7_INIT);
	return exception_vector() != 0;
}

static bool op_xsetbv(void)
{
	static const uint64_t vals[] = { 1, 3, 7, 5, 0xe7, 0x2ff, 0 };
	uint64_t old = 0, v = rnd_below(4) ? vals[rnd_below(ARRAY_SIZE(vals))] : rnd();
	uint32_t xcr = rnd_below(4) ? 0 : (uint32_t)rnd();
	bool osxsave = read_cr4() & X86_CR4_OSXSAVE;

	if (osxsave)
		old = xgetbv(0);
	exception_clear();
	asm volatile(ASM_TRY("2f") "xsetbv\n2:"
		     : : "c"(xcr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
	if (osxsave)
		xsetbv(0, old);
	return exception_vector() != 0;
}

static bool op_invlpg(void)
{
	uint64_t a = rnd();

	exception_clear();
	asm volatile(ASM_TRY("2f") "invlpg (%0)\n2:" : : "r"(a) : "memory");
	return exception_vector() != 0;
}

/* HLT with the APIC timer armed a little ahead; whatever the random
 * writes left of the APIC is set right first (SVR, TPR, LVT timer). */
static bool op_hlt(void)
{
	apic_write(LAPIC_SVR, LAPIC_SVR_ENABLE | LAPIC_SPURIOUS_VECTOR);
	apic_write(LAPIC_TPR, 0);
	apic_write(LAPIC_TDCR, LAPIC_TDCR_DIV1);
	apic_write(LAPIC_LVT_TIMER, TIMER_VEC);
	apic_write(LAPIC_TMICT, 100 + rnd_below(HLT_WAKE_TICKS));
	asm volatile("sti\n\thlt\n\tcli" : : : "memory");
	apic_write(LAPIC_TMICT, 0);
	return false;
}

static bool op_apic_mmio(void)
{
	static const uint16_t regs[] = { 0x80, 0xb0, 0xd0, 0xe0, 0xf0, 0x280, 0x2f0, 0x320, 0x330,
					 0x340, 0x350, 0x360, 0x370, 0x380, 0x3e0, 0x300 };
	unsigned off;

	if (rnd_below(2)) {
		unsigned width = 1u << rnd_below(3);

		off = rnd_below(0x1000) & ~(width - 1);
		if (width == 1)
			(void)*(volatile uint8_t *)(XAPIC + off);
		else if (width == 2)
			(void)*(volatile uint16_t *)(XAPIC + off);
		else
			(void)*(volatile uint32_t *)(XAPIC + off);
		return false;
	}
	off = regs[rnd_below(ARRAY_SIZE(regs))];
	if (off == 0x300) {
		/* ICR: fixed, lowest-priority or NMI, any shorthand and
		 * destination; never INIT, SIPI or SMI. */
		static const uint32_t modes[] = { 0, 1, 4 };
		uint32_t icr = (uint32_t)rnd() & ~(LAPIC_ICR_DELIVERY | 0xffu);

		icr |= modes[rnd_below(3)] << 8 | (32 + rnd_below(224));
		*(volatile uint32_t *)(XAPIC + 0x310) = (uint32_t)rnd();
		*(volatile uint32_t *)(XAPIC + 0x300) = icr;
		return false;
	}
	/* An LVT gets a vector of at least 32 and delivery fixed or NMI:
	 * INIT or ExtINT from an LVT is the same hazard as from the ICR. */
	{
		uint32_t v = (uint32_t)rnd();

		if (off >= 0x2f0 && off <= 0x370) {
			v = (v & ~(uint32_t)(0xffu | LAPIC_LVT_DELIVERY)) | (32 + rnd_below(224));
			if (off != 0x320 && !rnd_below(4))
				v |= LAPIC_DM_NMI << 8;
		}
		*(volatile uint32_t *)(XAPIC + off) = v;
	}
	return false;
}

static bool op_vmcall(void)
{
	uint64_t out[4];
	uint64_t fn = rnd_below(4) ? rnd_below(8) : rnd();

	(void)tv_hypercall(fn, rnd_below(2) ? 0 : rnd(), rnd(), rnd(), out);
	return false;
}

static bool op_rdtsc_pause(void)
{
	(void)rdtsc();
	asm volatile("pause");
	return false;
}

static bool (*const ops[NR_OPS])(void) = {
	op_cpuid, op_rdmsr, op_wrmsr, op_io, op_io, op_cr, op_dr, op_xsetbv, op_invlpg,
	op_hlt, op_apic_mmio, op_vmcall, op_rdtsc_pause,
};
static const char *const op_names[NR_OPS] = {
	"CPUID", "RDMSR", "WRMSR", "I/O", "I/O", "CR", "DR", "XSETBV", "INVLPG", "HLT",
	"APIC MMIO", "VMCALL", "RDTSC",
};

int main(int argc, char **argv)
{
	unsigned long seed = arg_get_ulong("seed", 1), nops = arg_get_ulong("ops", 100000);
	uint64_t cr0 = read_cr0(), cr4 = read_cr4();

	(void)argc;
	(void)argv;
	rng = seed * 0x9e3779b97f4a7c15ull + 1;
	cli();
	/* XSETBV reaches tickvisor only with CR4.OSXSAVE set (#UD first). */
	if (cpuid(1).c & CPUID_1_ECX_XSAVE)
		write_cr4(cr4 | X86_CR4_OSXSAVE);
	for (unsigned v = 32; v < NR_VECTORS; v++)
		handle_irq(v, any_irq);
	handle_irq(NMI_VECTOR, nmi_handler);
	handle_irq(DB_VECTOR, db_handler);
	apic_sw_enable();
	for (unsigned long i = 0; i < nops; i++) {
		unsigned k = rnd_below(NR_OPS);

		done[k]++;
		faults[k] += ops[k]();
	}
	/* Leave it as found: the guest's own exit path uses COM1 and the APIC. */
	write_dr7(DR7_INIT);
	write_cr0(cr0);
	write_cr4(cr4);
	apic_write(LAPIC_TMICT, 0);
	apic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
	for (unsigned k = 0; k < NR_OPS; k++)
		if (k != 4)
			report_info("%s: %lu ops, %lu faulted", op_names[k],
				    done[k] + (k == 3 ? done[4] : 0),
				    faults[k] + (k == 3 ? faults[4] : 0));
	report_info("%lu interrupts, %lu NMIs, %lu #DB taken", (unsigned long)irqs,
		    (unsigned long)nmis, (unsigned long)dbs);
	report_info("seed %lu: %lu operations ran to the end", seed, nops);
	report(x2_tried > 0 && x2_gp == x2_tried,
	       "x2APIC MSRs in xAPIC mode: #GP every time (%lu of %lu)", x2_gp, x2_tried);
	report(cpuid_stable, "CPUID: the same answer twice for every leaf asked");
	return report_summary();
}
