// SPDX-License-Identifier: BSD-2-Clause
/*
 * debug_singlestep: RFLAGS.TF over instructions tickvisor emulates (issue
 * 15.4). Intel SDM Vol. 3B, "Single-Step Exception Condition": with TF
 * set, the processor raises a #DB trap after each instruction, DR6.BS
 * set, the saved RIP that of the next instruction. An instruction that
 * exits to the hypervisor (CPUID, RDMSR, WRMSR, IN, OUT, XSETBV) is
 * completed by the hypervisor, which then owes the trap (KVM:
 * kvm_skip_emulated_instruction -> kvm_vcpu_do_singlestep; Bochs event.cc
 * arms the same DR6.BS trap for every completed instruction). A MOV SS
 * delays the trap past the following instruction ("MOV SS ... suppresses
 * debug exceptions ... until after the next instruction"): MOV SS then
 * CPUID takes exactly one #DB, after the CPUID. A self-IPI the stepped
 * WRMSR sends comes after the #DB. NOP, which never exits, is the
 * control.
 */
#include "lib/apic_util.h"
#include "lib/guest.h"

#define COM1_SCRATCH            0x3ffu

#define IPI_VEC                 0x42

static volatile unsigned db_hits;
static volatile uint64_t db_rip, db_dr6;
static volatile char events[4];         /* 'D' #DB, 'I' interrupt, in order */
static volatile unsigned nevents;

static void record(char what)
{
	if (nevents < sizeof(events))
		events[nevents] = what;
	nevents++;
}

static void db_handler(struct ex_regs *regs)
{
	record('D');
	if (!db_hits++) {
		db_rip = regs->rip;
		db_dr6 = read_dr6();
	}
	regs->rflags &= ~(uint64_t)X86_EFLAGS_TF;       /* one step only */
	write_dr6(DR6_INIT);
}

static void ipi_handler(struct ex_regs *regs)
{
	(void)regs;
	record('I');
	apic_eoi();
}

/* Sets TF with POPF: the instruction after it runs, then the trap. */
#define TF_ON   "pushfq\n\torq $0x100, (%%rsp)\n\tpopfq\n\t"

static void check(const char *name, uint64_t after)
{
	report(db_hits == 1 && db_rip == after && (db_dr6 & DR6_BS),
	       "%s: one #DB (%u) at the next RIP (0x%lx, want 0x%lx), DR6.BS (DR6 0x%lx)",
	       name, db_hits, db_rip, after, db_dr6);
	report(!(read_rflags() & X86_EFLAGS_TF), "%s: TF clear afterwards", name);
}

static void reset(void)
{
	db_hits = 0;
	db_rip = 0;
	db_dr6 = 0;
	nevents = 0;
	write_dr6(DR6_INIT);
}

static void step_nop(void)
{
	uint64_t after;

	reset();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "nop\n2:" : "=&r"(after) : : "memory");
	check("NOP (no exit)", after);
}

static void step_cpuid(void)
{
	uint64_t after;
	uint32_t a = 0, b, c = 0, d;

	reset();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "cpuid\n2:"
		     : "=&r"(after), "+a"(a), "=&b"(b), "+c"(c), "=&d"(d) : : "memory");
	check("CPUID", after);
}

static void step_rdmsr(void)
{
	uint64_t after;
	uint32_t a, d;

	reset();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "rdmsr\n2:"
		     : "=&r"(after), "=&a"(a), "=&d"(d) : "c"(MSR_MISC_ENABLE) : "memory");
	check("RDMSR", after);
}

static void step_wrmsr(void)
{
	uint64_t after, v = rdmsr(MSR_MISC_ENABLE);

	reset();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "wrmsr\n2:"
		     : "=&r"(after)
		     : "c"(MSR_MISC_ENABLE), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
		     : "memory");
	check("WRMSR", after);
}

static void step_out_in(void)
{
	uint64_t after;
	uint8_t v = 0x5a;

	reset();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "outb %%al, %%dx\n2:"
		     : "=&r"(after) : "a"(v), "d"(COM1_SCRATCH) : "memory");
	check("OUT", after);
	reset();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "inb %%dx, %%al\n2:"
		     : "=&r"(after), "=&a"(v) : "d"(COM1_SCRATCH) : "memory");
	check("IN", after);
	report(v == 0x5a, "IN read back the scratch register (0x%x)", v);
}

static void step_xsetbv(void)
{
	uint64_t after;

	if (!(cpuid(1).c & CPUID_1_ECX_XSAVE)) {
		report_skip("XSETBV: no XSAVE");
		return;
	}
	write_cr4(read_cr4() | X86_CR4_OSXSAVE);
	reset();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "xsetbv\n2:"
		     : "=&r"(after) : "a"(1), "d"(0), "c"(0) : "memory");
	check("XSETBV", after);
}

/* MOV SS, then CPUID: the trap of the MOV waits for the CPUID and the
 * two make one #DB after it. */
static void step_mov_ss_cpuid(void)
{
	uint64_t after, ss;
	uint32_t a = 0, b, c = 0, d;

	reset();
	asm volatile("mov %%ss, %1\n\t"
		     "lea 2f(%%rip), %0\n\t" TF_ON "mov %1, %%ss\n\tcpuid\n2:"
		     : "=&r"(after), "=&r"(ss), "+a"(a), "=&b"(b), "+c"(c), "=&d"(d) : : "memory");
	check("MOV SS; CPUID", after);
}

/* TF over HLT with IF clear: the single-step trap of the HLT is a debug
 * exception, which ends the halt as an interrupt would ("An enabled
 * interrupt (including NMI and SMI), a debug exception, ... will resume
 * execution", SDM Vol. 2A, HLT): one #DB after the HLT, and the guest
 * runs on with nothing else to wake it. KVM agrees (a queued #DB is an
 * event kvm_vcpu_has_events() wakes a halted vCPU for; kvm-unit-tests
 * x86/debug.c "Single-step #DB w/ STI;HLT" finds its #DB after the HLT).
 * tickvisor completes the HLT exit: it must not halt a vCPU it owes a
 * #DB (it ended this guest as "HLT with interrupts disabled"). */
static void step_hlt_if0(void)
{
	uint64_t after;

	reset();
	asm volatile("cli\n\tlea 2f(%%rip), %0\n\t" TF_ON "hlt\n2:" : "=&r"(after) : : "memory");
	check("HLT with IF clear", after);
}

/* A self-IPI sent by the stepped WRMSR is pending when it completes, with
 * IF set: the single-step trap of the WRMSR comes first (SDM Vol. 3A,
 * "Priority Among Concurrent Events": traps on the previous instruction
 * outrank maskable interrupts), the interrupt after the #DB handler's
 * IRET. tickvisor must not let the interrupt it injects at that entry
 * displace or drop the trap. */
static void step_self_ipi(void)
{
	uint64_t after;

	if (!apic_x2apic_offered())     /* SKIP, or FAIL where offered */
		return;
	enable_x2apic();
	apic_sw_enable();
	handle_irq(IPI_VEC, ipi_handler);
	reset();
	asm volatile("lea 2f(%%rip), %0\n\t"
		     "pushfq\n\torq $0x300, (%%rsp)\n\tpopfq\n\t"     /* TF and IF */
		     "wrmsr\n2:\n\tcli"
		     : "=&r"(after) : "c"(MSR_X2APIC_SELF_IPI), "a"(IPI_VEC), "d"(0) : "memory");
	check("WRMSR x2APIC SELF_IPI", after);
	report(nevents == 2 && events[0] == 'D' && events[1] == 'I',
	       "WRMSR x2APIC SELF_IPI: #DB before the interrupt (%u events: %c %c)", nevents,
	       nevents > 0 ? events[0] : '-', nevents > 1 ? events[1] : '-');
	reset_apic();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	handle_irq(DB_VECTOR, db_handler);
	step_nop();
	step_cpuid();
	step_rdmsr();
	step_wrmsr();
	step_out_in();
	step_xsetbv();
	step_mov_ss_cpuid();
	step_hlt_if0();
	step_self_ipi();
	return report_summary();
}
