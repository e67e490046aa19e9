// SPDX-License-Identifier: BSD-2-Clause
/*
 * fault_rf: the RFLAGS image of a fault the hypervisor raises (issue 23.2).
 * Intel SDM Vol. 3B, "Instruction-Breakpoint Exception Condition": "For
 * any fault-class exception except a debug exception generated in
 * response to an instruction breakpoint, the value pushed for RF is 1";
 * trap-class exceptions (#BP) push RF as it was, 0. A hypervisor that
 * raises the fault for an instruction it intercepted (MOV to CR4, RDMSR,
 * WRMSR, XSETBV, RDPMC, VMXOFF under tickvisor) injects it at VM entry,
 * which pushes the guest's RFLAGS as it stands (Vol. 3C, "Event
 * Injection"), so it must set RF first, as KVM's inject_pending_event()
 * does for every fault-class vector but #DB; Bochs's exception() sets RF
 * for every fault-class exception but #DB. Each fault here must show
 * RF = 1 and error code 0 (#GP(0); #UD pushes none), tickvisor's as the
 * ones the CPU raises itself in the same test (a non-canonical load, a
 * CR4 bit above 31, which no CR4 guest/host mask covers, UD2): those are
 * the reference, and natively (GRUB in the same Bochs) all of them are:
 * there every check passes but those Bochs's platform answers otherwise
 * (its CPU has VMX, and it takes unknown MSRs), which are skipped.
 *
 * RF lasts one instruction ("The RF Flag is cleared at the start of the
 * instruction after the check for code breakpoint"): an IRET with RF = 1
 * onto an instruction tickvisor emulates (CPUID) must leave RF clear for
 * the next, so an instruction breakpoint there fires; onto a NOP (never
 * an exit) it does, and onto the breakpoint itself it is suppressed (the
 * controls); after a load from unassigned memory, which tickvisor
 * completes after an EPT-violation exit that saved RF = 1, it must be
 * clear too. KVM's emulator clears RF at writeback; Bochs at each fetch.
 */
#include "lib/guest.h"

#define CR4_RSVD_LOW            BIT(15)         /* reserved, never in CR4_FIXED1 */
#define CR4_RSVD_HIGH           BIT(63)
#define UNKNOWN_MSR             0x1234u
#define DR7_L0                  BIT(0)          /* R/W0 = LEN0 = 0: instruction */
#define DR6_B0                  BIT(0)

static bool tv;

static int write_cr4_safe(uint64_t val)
{
	exception_clear();
	asm volatile(ASM_TRY("1f") "mov %0, %%cr4\n1:" : : "r"(val) : "memory");
	return exception_vector();
}

static int xsetbv_safe(uint32_t xcr, uint64_t val)
{
	exception_clear();
	asm volatile(ASM_TRY("1f") "xsetbv\n1:"
		     : : "c"(xcr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32)) : "memory");
	return exception_vector();
}

static int rdpmc_safe(uint32_t counter)
{
	uint32_t lo, hi;

	exception_clear();
	asm volatile(ASM_TRY("1f") "rdpmc\n1:" : "=a"(lo), "=d"(hi) : "c"(counter) : "memory");
	return exception_vector();
}

static int vmxoff_safe(void)
{
	exception_clear();
	asm volatile(ASM_TRY("1f") "vmxoff\n1:" : : : "memory", "cc");
	return exception_vector();
}

static int load_noncanonical_safe(void)
{
	volatile uint64_t *p = (volatile uint64_t *)0x8000000000000000ull;
	uint64_t v;

	exception_clear();
	asm volatile(ASM_TRY("1f") "mov (%1), %0\n1:" : "=r"(v) : "r"(p) : "memory");
	return exception_vector();
}

static int ud2_safe(void)
{
	exception_clear();
	asm volatile(ASM_TRY("1f") "ud2\n1:" : : : "memory");
	return exception_vector();
}

/* What the last fixed-up exception left: taken at once, since
 * tv_exits()'s hypercall clears it. */
struct fault {
	int vec;
	uint64_t err, rflags;
};

static struct fault fault_taken(int vec)
{
	return (struct fault){ vec, exception_error_code(), exception_rflags() };
}

/* The fault taken: the vector wanted, error code 0 and RF = 1 in the
 * pushed RFLAGS; `exits` says whether tickvisor saw the instruction (its
 * exit count moved; -1: not counted). */
static void check_fault(const char *what, struct fault f, int want, int64_t exits)
{
	bool rf = f.rflags & X86_EFLAGS_RF;

	report(f.vec == want && f.err == 0 && rf,
	       "%s: #%s (vector %d), error code %#lx, pushed RFLAGS %#lx (RF=%d)%s", what,
	       exception_mnemonic((unsigned)f.vec), f.vec, f.err, f.rflags, rf,
	       exits < 0 ? "" : exits ? " (raised by the hypervisor)" : " (no exit)");
}

/* Runs fn; the exits of `reason` its instruction made (tv_exits' own
 * VMCALL does not count), -1 without tickvisor. */
static int64_t exits_of(uint64_t reason, int (*fn)(void), struct fault *f)
{
	uint64_t before = tv ? tv_exits(reason) : 0;

	*f = fault_taken(fn());
	return tv ? (int64_t)(tv_exits(reason) - before) : -1;
}

static uint64_t cr4_arg;
static int cr4_try(void) { return write_cr4_safe(cr4_arg); }
static int wrmsr_try(void) { return wrmsr_safe(UNKNOWN_MSR, 0); }
static int rdmsr_try(void)
{
	uint64_t v;

	return rdmsr_safe(UNKNOWN_MSR, &v);
}
static int xsetbv_xcr1_try(void) { return xsetbv_safe(1, 0); }
static int xsetbv_no_x87_try(void) { return xsetbv_safe(0, XCR0_SSE); }
static int rdpmc_try(void) { return rdpmc_safe(0); }

static void test_cr4(void)
{
	uint64_t cr4 = read_cr4();
	struct fault f;
	int64_t n;

	if (cpuid(1).c & CPUID_1_ECX_VMX) {
		report_skip("MOV CR4 with VMXE: this CPU has VMX (natively)");
	} else {
		cr4_arg = cr4 | X86_CR4_VMXE;
		n = exits_of(VMX_EXIT_CR_ACCESS, cr4_try, &f);
		check_fault("MOV CR4 with VMXE (no VMX in CPUID)", f, GP_VECTOR, n);
		if (tv)
			report(n > 0, "  that MOV CR4 exited (%ld)", (long)n);
	}
	cr4_arg = cr4 | CR4_RSVD_LOW;
	n = exits_of(VMX_EXIT_CR_ACCESS, cr4_try, &f);
	check_fault("MOV CR4 with reserved bit 15", f, GP_VECTOR, n);
	cr4_arg = cr4 | CR4_RSVD_HIGH;
	n = exits_of(VMX_EXIT_CR_ACCESS, cr4_try, &f);
	check_fault("MOV CR4 with reserved bit 63 (the CPU's own #GP)", f, GP_VECTOR, n);
	report(read_cr4() == cr4, "CR4 unchanged (%#lx)", read_cr4());
}

static void test_msr(void)
{
	struct fault f;
	int64_t n;

	/* Natively Bochs ignores unknown MSRs (its ignore_bad_msrs). */
	if (!tv) {
		report_skip("unknown MSRs: natively Bochs takes them");
		return;
	}
	n = exits_of(VMX_EXIT_WRMSR, wrmsr_try, &f);
	check_fault("WRMSR to unknown MSR 0x1234", f, GP_VECTOR, n);
	if (tv)
		report(n > 0, "  that WRMSR exited (%ld)", (long)n);
	n = exits_of(VMX_EXIT_RDMSR, rdmsr_try, &f);
	check_fault("RDMSR of unknown MSR 0x1234", f, GP_VECTOR, n);
	if (tv)
		report(n > 0, "  that RDMSR exited (%ld)", (long)n);
}

static void test_xsetbv(void)
{
	uint64_t cr4 = read_cr4();
	struct fault f;
	int64_t n;

	if (!(cpuid(1).c & CPUID_1_ECX_XSAVE)) {
		report_skip("XSETBV: no XSAVE");
		return;
	}
	write_cr4(cr4 | X86_CR4_OSXSAVE);
	n = exits_of(VMX_EXIT_XSETBV, xsetbv_xcr1_try, &f);
	check_fault("XSETBV of XCR1", f, GP_VECTOR, n);
	n = exits_of(VMX_EXIT_XSETBV, xsetbv_no_x87_try, &f);
	check_fault("XSETBV XCR0 without x87", f, GP_VECTOR, n);
	if (tv)
		report(n > 0, "  that XSETBV exited (%ld)", (long)n);
	write_cr4(cr4);
}

static void test_other(void)
{
	struct fault f;
	int64_t n;

	/* RDPMC at CPL 0 reads counter 0 natively; tickvisor shows no PMU
	 * (CPUID 0xA) and raises #GP. */
	if (tv) {
		n = exits_of(VMX_EXIT_RDPMC, rdpmc_try, &f);
		check_fault("RDPMC without a PMU", f, GP_VECTOR, n);
	}
	/* Outside VMX operation VMXOFF is #UD on the CPU; in a guest it
	 * exits and tickvisor raises the #UD. */
	n = exits_of(VMX_EXIT_VMXOFF, vmxoff_safe, &f);
	check_fault("VMXOFF", f, UD_VECTOR, n);
	check_fault("load from a non-canonical address (the CPU's own #GP)",
		    fault_taken(load_noncanonical_safe()), GP_VECTOR, -1);
	check_fault("UD2 (the CPU's own #UD)", fault_taken(ud2_safe()), UD_VECTOR, -1);
}

/* --- a trap for contrast: INT3 pushes RF as it was (0) ------------- */

static volatile uint64_t bp_rflags;
static volatile unsigned bp_hits;

static void bp_handler(struct ex_regs *r)
{
	bp_hits++;
	bp_rflags = r->rflags;
}

static void test_trap(void)
{
	irq_handler_fn old = handle_irq(BP_VECTOR, bp_handler);

	bp_hits = 0;
	asm volatile("int3" : : : "memory");
	handle_irq(BP_VECTOR, old);
	report(bp_hits == 1 && !(bp_rflags & X86_EFLAGS_RF),
	       "INT3 (a trap): pushed RF=%d", !!(bp_rflags & X86_EFLAGS_RF));
}

/* --- RF lasts one instruction, emulated or not ---------------------- */

/*
 * rf_iret_<name>: IRETQ with RF = 1 onto rf_<name>_at, then the
 * instruction at rf_<name>_bp. EAX = ECX = 0 for CPUID (leaf 0); RBX,
 * which CPUID writes, is saved.
 */
#define RF_IRET(name, first, second)					\
	asm(".text\n\t"							\
	    ".globl rf_iret_" #name "\n"				\
	    "rf_iret_" #name ":\n\t"					\
	    "push %rbx\n\t"						\
	    "mov %rsp, %rdx\n\t"					\
	    "mov %ss, %eax\n\t"						\
	    "push %rax\n\t"						\
	    "push %rdx\n\t"						\
	    "pushfq\n\t"						\
	    "orq $0x10000, (%rsp)\n\t"					\
	    "mov %cs, %eax\n\t"						\
	    "push %rax\n\t"						\
	    "lea rf_" #name "_at(%rip), %rax\n\t"			\
	    "push %rax\n\t"						\
	    "xor %eax, %eax\n\t"					\
	    "xor %ecx, %ecx\n\t"					\
	    "iretq\n"							\
	    ".globl rf_" #name "_at\n"					\
	    "rf_" #name "_at:\n\t"					\
	    first "\n"							\
	    ".globl rf_" #name "_bp\n"					\
	    "rf_" #name "_bp:\n\t"					\
	    second "\n\t"						\
	    "pop %rbx\n\t"						\
	    "ret\n")

RF_IRET(cpuid, "cpuid", "nop");
RF_IRET(nop, "nop", "nop");
void rf_iret_cpuid(void);
void rf_iret_nop(void);
extern const char rf_cpuid_at[], rf_cpuid_bp[], rf_nop_at[], rf_nop_bp[];

/* rf_hole_load: a load from unassigned memory (HOLE), which tickvisor
 * emulates after an EPT violation; the VM exit saves RF = 1 (SDM Vol.
 * 3C, "Saving RIP, RSP, RFLAGS, and SSP": for an EPT violation not during
 * event delivery "the value saved is 1"; Bochs's VMexitReadEFLAGS
 * agrees), then rf_hole_bp. */
asm(".text\n\t"
    ".globl rf_hole_load\n"
    "rf_hole_load:\n\t"
    "mov (%rdi), %eax\n"
    ".globl rf_hole_bp\n"
    "rf_hole_bp:\n\t"
    "nop\n\t"
    "ret\n");
void rf_hole_load(const volatile void *p);
extern const char rf_hole_bp[];
#define HOLE 0xd0000000ul               /* above RAM, below the APIC */

static void hole_load(void)
{
	rf_hole_load((const volatile void *)HOLE);
}

static volatile unsigned db_hits;
static volatile uint64_t db_rip, db_dr6;

static void db_handler(struct ex_regs *r)
{
	db_hits++;
	db_rip = r->rip;
	db_dr6 = read_dr6();
	write_dr7(DR7_INIT);            /* one shot: the return runs it */
}

/* Runs fn with an instruction breakpoint at bp; the #DB count. */
static unsigned run_with_bp(void (*fn)(void), const void *bp)
{
	db_hits = 0;
	db_rip = 0;
	write_dr6(DR6_INIT);
	write_dr0((uint64_t)bp);
	write_dr7(DR7_INIT | DR7_L0);
	fn();
	write_dr7(DR7_INIT);
	write_dr6(DR6_INIT);
	return db_hits;
}

static void test_rf_one_insn(void)
{
	irq_handler_fn old = handle_irq(DB_VECTOR, db_handler);
	unsigned n;

	n = run_with_bp(rf_iret_nop, rf_nop_at);
	report(n == 0, "IRET with RF=1 onto a breakpoint: suppressed (%u #DB)", n);
	n = run_with_bp(rf_iret_nop, rf_nop_bp);
	report(n == 1 && db_rip == (uint64_t)rf_nop_bp && (db_dr6 & DR6_B0),
	       "RF=1 over a NOP: the breakpoint after it fires (%u #DB at %#lx, DR6 %#lx)",
	       n, db_rip, db_dr6);
	n = run_with_bp(rf_iret_cpuid, rf_cpuid_bp);
	report(n == 1 && db_rip == (uint64_t)rf_cpuid_bp && (db_dr6 & DR6_B0),
	       "RF=1 over CPUID: the breakpoint after it fires (%u #DB at %#lx, DR6 %#lx)",
	       n, db_rip, db_dr6);
	n = run_with_bp(hole_load, rf_hole_bp);
	report(n == 1 && db_rip == (uint64_t)rf_hole_bp && (db_dr6 & DR6_B0),
	       "a load from unassigned memory (EPT violation: RF=1 saved), then "
	       "the breakpoint after it fires (%u #DB at %#lx, DR6 %#lx)", n, db_rip, db_dr6);
	handle_irq(DB_VECTOR, old);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tv = tickvisor_present();
	report_info("%s", tv ? "under tickvisor" : "natively: every fault is the CPU's");
	test_cr4();
	test_msr();
	test_xsetbv();
	test_other();
	test_trap();
	test_rf_one_insn();
	return report_summary();
}
