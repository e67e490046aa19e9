// SPDX-License-Identifier: BSD-2-Clause
/*
 * debug_movss: a data breakpoint on the load of a MOV SS, with the next
 * instruction one tickvisor completes (issue 23.5). Intel SDM Vol. 3A,
 * "Exception and Interrupt Handling", MOV SS/POP SS: "... debug exceptions
 * are inhibited ... until the instruction boundary following the next
 * instruction"; the data breakpoint's #DB (a trap, DR6.B0) is therefore
 * taken after the instruction that follows the MOV SS, once. When that
 * instruction exits (CPUID, RDMSR, WRMSR, OUT), the breakpoint waits in
 * the VMCS pending-debug-exceptions field with MOV-SS blocking (Vol. 3C,
 * "Guest Non-Register State"); the hypervisor completes the instruction,
 * ends the blocking and owes the #DB after it (Vol. 3C, "Delivery of
 * Pending Debug Exceptions after VM Entry"). The SDM and Bochs agree:
 * natively (GRUB in the same Bochs, its debug_trap held by the MOV SS
 * inhibit) every check passes as under tickvisor. tickvisor folds the
 * field into a #DB it injects after the completed instruction
 * (vcpu_debug_trap() in vmm/vcpu/vcpu_run.c), so that an interrupt injected at
 * the same entry cannot drop it; with the field cleared on skip, the
 * checks after CPUID, RDMSR, WRMSR and OUT fail. NOP, which never exits,
 * is the control. With TF set as well, the held single step and the
 * breakpoint come as one #DB (DR6.BS | DR6.B0) after the instruction.
 * The last two cases (an interrupt pending, then a HLT) failed under
 * tickvisor before vcpu_debug_trap() and the HLT exit's wake-up (with
 * APICv off the #DB was lost; the HLT ended the guest); booted natively,
 * the HLT case needs scripts/bochs-patches/0005.
 */
#include "lib/apic.h"
#include "lib/apic_util.h"
#include "lib/guest.h"

#define COM1_SCRATCH            0x3ffu
#define DR7_L0                  BIT(0)
#define DR7_RW0_RW              (3ul << 16)     /* data reads or writes */
#define DR7_LEN0_2              (1ul << 18)     /* 2 bytes */
#define DR6_B0                  BIT(0)
#define IPI_VEC                 0x43

static volatile uint16_t ss_sel __aligned(8);
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

static void ipi_handler(struct ex_regs *r)
{
	(void)r;
	record('I');
	apic_eoi();
}

static void db_handler(struct ex_regs *r)
{
	record('D');
	if (!db_hits++) {
		db_rip = r->rip;
		db_dr6 = read_dr6();
	}
	r->rflags &= ~(uint64_t)X86_EFLAGS_TF;  /* one step only */
	write_dr6(DR6_INIT);
}

/* Sets TF with POPF: the trap comes after the instruction after it. */
#define TF_ON   "pushfq\n\torq $0x100, (%%rsp)\n\tpopfq\n\t"

static void arm(void)
{
	uint16_t ss;

	asm volatile("mov %%ss, %0" : "=r"(ss));
	ss_sel = ss;
	db_hits = 0;
	db_rip = 0;
	db_dr6 = 0;
	nevents = 0;
	write_dr6(DR6_INIT);
	write_dr0((uint64_t)&ss_sel);
	write_dr7(DR7_INIT | DR7_L0 | DR7_RW0_RW | DR7_LEN0_2);
}

static void check_dr6(const char *name, uint64_t after, uint64_t dr6_want)
{
	write_dr7(DR7_INIT);
	report(db_hits == 1 && db_rip == after && (db_dr6 & dr6_want) == dr6_want,
	       "MOV SS (data breakpoint), %s: one #DB (%u) after it (RIP 0x%lx, want 0x%lx), "
	       "DR6 0x%lx (want bits 0x%lx)", name, db_hits, db_rip, after, db_dr6, dr6_want);
}

static void check(const char *name, uint64_t after)
{
	check_dr6(name, after, DR6_B0);
}

static void movss_nop(void)
{
	uint64_t after;

	arm();
	asm volatile("lea 2f(%%rip), %0\n\tmov %1, %%ss\n\tnop\n2:"
		     : "=&r"(after) : "m"(ss_sel) : "memory");
	check("then NOP (no exit)", after);
}

static void movss_cpuid(void)
{
	uint64_t after;
	uint32_t a = 0, b, c = 0, d;

	arm();
	asm volatile("lea 2f(%%rip), %0\n\tmov %5, %%ss\n\tcpuid\n2:"
		     : "=&r"(after), "+a"(a), "=&b"(b), "+c"(c), "=&d"(d) : "m"(ss_sel)
		     : "memory");
	check("then CPUID", after);
}

/* TF too: the single step over MOV SS is held like the breakpoint, and
 * both come as one #DB after the CPUID, DR6.BS and DR6.B0 (SDM Vol. 3B,
 * "Single-Step Exception Condition"; vmm/vcpu/vcpu_run.c joins the pending
 * B0 to the BS trap it injects). */
static void movss_tf_cpuid(void)
{
	uint64_t after;
	uint32_t a = 0, b, c = 0, d;

	arm();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "mov %5, %%ss\n\tcpuid\n2:"
		     : "=&r"(after), "+a"(a), "=&b"(b), "+c"(c), "=&d"(d) : "m"(ss_sel)
		     : "memory", "cc");
	check_dr6("TF set, then CPUID", after, DR6_B0 | DR6_BS);
	report(!(read_rflags() & X86_EFLAGS_TF), "TF clear afterwards");
}

static void movss_tf_nop(void)
{
	uint64_t after;

	arm();
	asm volatile("lea 2f(%%rip), %0\n\t" TF_ON "mov %1, %%ss\n\tnop\n2:"
		     : "=&r"(after) : "m"(ss_sel) : "memory", "cc");
	check_dr6("TF set, then NOP (no exit)", after, DR6_B0 | DR6_BS);
}

static void movss_rdmsr(void)
{
	uint64_t after;
	uint32_t a, d;

	arm();
	asm volatile("lea 2f(%%rip), %0\n\tmov %3, %%ss\n\trdmsr\n2:"
		     : "=&r"(after), "=&a"(a), "=&d"(d) : "m"(ss_sel), "c"(MSR_MISC_ENABLE)
		     : "memory");
	check("then RDMSR", after);
}

static void movss_wrmsr(void)
{
	uint64_t after, v = rdmsr(MSR_MISC_ENABLE);

	arm();
	asm volatile("lea 2f(%%rip), %0\n\tmov %1, %%ss\n\twrmsr\n2:"
		     : "=&r"(after)
		     : "m"(ss_sel), "c"(MSR_MISC_ENABLE), "a"((uint32_t)v),
		       "d"((uint32_t)(v >> 32))
		     : "memory");
	check("then WRMSR", after);
}

static void movss_out(void)
{
	uint64_t after;

	arm();
	asm volatile("lea 2f(%%rip), %0\n\tmov %1, %%ss\n\toutb %%al, %%dx\n2:"
		     : "=&r"(after) : "m"(ss_sel), "a"(0x5a), "d"(COM1_SCRATCH) : "memory");
	check("then OUT", after);
}

/* HLT after the MOV SS, IF clear: the held breakpoint's #DB is a debug
 * exception, which ends the halt ("An enabled interrupt ..., a debug
 * exception, ... will resume execution", SDM Vol. 2A, HLT), taken after
 * the HLT. tickvisor completes the HLT exit and owes that #DB: it must
 * not put the vCPU to sleep (it ended this guest as "HLT with interrupts
 * disabled"). */
static void movss_hlt(void)
{
	uint64_t after;

	arm();
	asm volatile("cli\n\tlea 2f(%%rip), %0\n\tmov %1, %%ss\n\thlt\n2:"
		     : "=&r"(after) : "m"(ss_sel) : "memory");
	check("then HLT, IF clear", after);
}

/* An interrupt pending when the CPUID after the MOV SS completes (a
 * self-IPI sent with IF clear; STI's shadow covers the MOV SS, whose own
 * covers the CPUID): the held breakpoint is a trap on the previous
 * instruction, which outranks a maskable interrupt (SDM Vol. 3A,
 * "Priority Among Concurrent Events"), so the #DB comes first and the
 * interrupt after the #DB handler's IRET. Where tickvisor injects
 * interrupts itself (APICv off), an injection at the entry that ends the
 * CPUID exit would drop the pending-debug-exceptions field (SDM Vol. 3C,
 * "Delivery of Pending Debug Exceptions after VM Entry": none after a
 * vectoring entry of an external interrupt), and the #DB with it. */
static void movss_cpuid_irq(void)
{
	uint64_t after;
	uint32_t a = 0, b, c = 0, d;

	cli();
	apic_sw_enable();
	handle_irq(IPI_VEC, ipi_handler);
	arm();
	apic_self_ipi(IPI_VEC);
	asm volatile("lea 2f(%%rip), %0\n\tsti\n\tmov %5, %%ss\n\tcpuid\n2:\n\tnop\n\tcli"
		     : "=&r"(after), "+a"(a), "=&b"(b), "+c"(c), "=&d"(d) : "m"(ss_sel)
		     : "memory");
	check("then CPUID, an interrupt pending", after);
	report(nevents == 2 && events[0] == 'D' && events[1] == 'I',
	       "MOV SS (data breakpoint), CPUID, interrupt pending: #DB before the interrupt "
	       "(%u events: %c %c)", nevents, nevents > 0 ? events[0] : '-',
	       nevents > 1 ? events[1] : '-');
	handle_irq(IPI_VEC, NULL);
}

int main(int argc, char **argv)
{
	irq_handler_fn old;

	(void)argc;
	(void)argv;
	old = handle_irq(DB_VECTOR, db_handler);
	movss_nop();
	movss_cpuid();
	movss_tf_nop();
	movss_tf_cpuid();
	movss_rdmsr();
	movss_wrmsr();
	movss_out();
	movss_cpuid_irq();
	movss_hlt();
	handle_irq(DB_VECTOR, old);
	return report_summary();
}
