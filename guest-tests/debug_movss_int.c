// SPDX-License-Identifier: BSD-2-Clause
/*
 * debug_movss_int: debug exceptions held by a MOV SS, then an instruction
 * that delivers an event of its own (issue 23.4).
 *
 * Intel SDM Vol. 3A, "Exception and Interrupt Handling" (MOV SS/POP SS):
 * debug exceptions recognized on the MOV SS wait for the boundary after
 * the next instruction; Vol. 3B, "Debug Exception Conditions", and Vol.
 * 3C, "Delivery of Pending Debug Exceptions after VM Entry" (for INT3 or
 * INTO after a MOV SS "that encountered a debug trap" the trap is taken
 * as it would be natively: after the event's delivery). The cases and
 * their expectations are those of kvm-unit-tests x86/debug.c
 * (singlestep_with_movss_blocking_and_dr7_gd, test_watchpoints_precise),
 * which pass on Intel hardware and under KVM; Linux's selftest
 * mov_ss_trap.c describes the same rules ("INT $N, INT3 ...: enter the
 * kernel and then deliver #DB"; "ICEBP: ... do not deliver the
 * watchpoint trap"; "Any fault: drop the pending #DB trap").
 *
 * - TF set, MOV SS, then MOV to DR6 with DR7.GD = 1: the general-detect
 *   #DB (a fault, not held by MOV SS) comes first, DR6.BD and not BS, at
 *   the MOV DR; the CPU clears GD when it delivers it; the MOV DR then
 *   runs and each following instruction steps (DR6.BS).
 * - A data breakpoint on the MOV SS load, then ICEBP (INT1, F1): one
 *   #DB, after the ICEBP; the breakpoint's trap is not delivered.
 * - The same, then INT $1: the INT delivers vector 1, and the held
 *   breakpoint #DB (DR6.B0) comes before the handler's first
 *   instruction: two #DB handler runs, the inner at the gate's address.
 * - The same, then INT3: #BP (after the INT3), and the held #DB at the
 *   #BP gate's first instruction.
 * - The same, then UD2: #UD, the held #DB dropped.
 *
 * tickvisor intercepts none of these (no #DB, #BP or MOV DR exits), so
 * its part is to leave the CPU's behaviour alone; the suite runs this
 * guest natively too (GRUB in the same Bochs machine), which is how a
 * deviation of the emulated CPU is told from one of tickvisor's.
 */
#include "lib/guest.h"

#define DR7_GD                  BIT(13)
#define DR7_L0                  BIT(0)
#define DR7_RW0_RW              (3ul << 16)     /* data reads or writes */
#define DR7_LEN0_2              (1ul << 18)     /* 2 bytes */
#define DR6_B0                  BIT(0)
#define DR6_BD                  BIT(13)
#define DR6_TRAPS               (BITS(3, 0) | BIT(13) | BIT(14) | BIT(15))
#define MAX_HITS                8

extern const uint64_t isr_stubs[NR_VECTORS];    /* lib/isr.asm: the gates */

static volatile uint16_t ss_sel __aligned(8);
static volatile unsigned nhits, nbp, nud;
static volatile uint64_t hit_rip[MAX_HITS], hit_dr6[MAX_HITS], hit_dr7[MAX_HITS];
static volatile uint64_t bp_rip, ud_rip;
static volatile char order[MAX_HITS];           /* 'D' #DB, 'B' #BP, 'U' #UD */
static volatile unsigned norder;

static void note(char c)
{
	if (norder < MAX_HITS)
		order[norder] = c;
	norder++;
}

static void db_handler(struct ex_regs *r)
{
	unsigned i = nhits++;

	note('D');
	if (i < MAX_HITS) {
		hit_rip[i] = r->rip;
		hit_dr6[i] = read_dr6();
		hit_dr7[i] = read_dr7();
	}
	if (nhits >= MAX_HITS)
		r->rflags &= ~(uint64_t)X86_EFLAGS_TF;  /* a runaway ends here */
	write_dr6(DR6_INIT);
}

static void bp_handler(struct ex_regs *r)
{
	note('B');
	nbp++;
	bp_rip = r->rip;
}

static void ud_handler(struct ex_regs *r)
{
	note('U');
	nud++;
	ud_rip = r->rip;
	r->rip += 2;                    /* past the UD2 */
}

static void reset(void)
{
	nhits = nbp = nud = norder = 0;
	bp_rip = ud_rip = 0;
	for (unsigned i = 0; i < MAX_HITS; i++) {
		hit_rip[i] = hit_dr6[i] = hit_dr7[i] = 0;
		order[i] = 0;
	}
	write_dr6(DR6_INIT);
}

static void arm_watch(void)
{
	uint16_t ss;

	asm volatile("mov %%ss, %0" : "=r"(ss));
	ss_sel = ss;
	reset();
	write_dr0((uint64_t)&ss_sel);
	write_dr7(DR7_INIT | DR7_L0 | DR7_RW0_RW | DR7_LEN0_2);
}

static void disarm(void)
{
	write_dr7(DR7_INIT);
	write_dr6(DR6_INIT);
}

/*
 * TF on (POPF), MOV SS, then MOV to DR6 with DR7.GD set. The labels are
 * the MOV DR and the four instructions after it: AND (which clears TF in
 * the saved image), PUSH, POPF (steps itself: TF was set when it began),
 * then the NOP, which no longer steps.
 */
static void gd_step(void)
{
	uint64_t at[4], scratch = DR6_INIT, flags;
	uint16_t ss;

	reset();
	asm volatile("mov %%ss, %0" : "=r"(ss));
	write_dr7(DR7_INIT | DR7_GD);
	asm volatile(
		"pushfq\n\t"
		"pop %[f]\n\t"
		"or $0x100, %[f]\n\t"
		"push %[f]\n\t"
		"popfq\n\t"                     /* TF from here: the next one steps */
		"mov %[ss], %%ss\n\t"           /* ... held by the MOV SS */
		"1: mov %[s], %%dr6\n\t"        /* GD: #DB fault here first */
		"2: and $~0x100, %[f]\n\t"
		"3: push %[f]\n\t"
		"4: popfq\n\t"
		"5: nop\n\t"
		"lea 1b(%%rip), %[s]\n\t"
		"mov %[s], 0(%[at])\n\t"
		"lea 2b(%%rip), %[s]\n\t"
		"mov %[s], 8(%[at])\n\t"
		"lea 3b(%%rip), %[s]\n\t"
		"mov %[s], 16(%[at])\n\t"
		"lea 4b(%%rip), %[s]\n\t"
		"mov %[s], 24(%[at])\n\t"
		: [s] "+r"(scratch), [f] "=&r"(flags)
		: [ss] "r"(ss), [at] "r"(at)
		: "memory", "cc");
	{
		uint64_t after_popf = at[3] + 1;
		bool gd_first = nhits >= 1 && hit_rip[0] == at[0] &&
				(hit_dr6[0] & DR6_TRAPS) == DR6_BD;

		report(gd_first,
		       "TF, MOV SS, MOV DR6 with DR7.GD: first #DB at the MOV DR (RIP 0x%lx, want "
		       "0x%lx), DR6.BD alone (DR6 0x%lx)", hit_rip[0], at[0], hit_dr6[0]);
		report(nhits >= 1 && !(hit_dr7[0] & DR7_GD),
		       "the CPU cleared DR7.GD delivering it (DR7 0x%lx in the handler)", hit_dr7[0]);
		report(nhits == 5 &&
		       hit_rip[1] == at[1] && (hit_dr6[1] & DR6_TRAPS) == DR6_BS &&
		       hit_rip[2] == at[2] && (hit_dr6[2] & DR6_TRAPS) == DR6_BS &&
		       hit_rip[3] == at[3] && (hit_dr6[3] & DR6_TRAPS) == DR6_BS &&
		       hit_rip[4] == after_popf && (hit_dr6[4] & DR6_TRAPS) == DR6_BS,
		       "then one single step after each instruction, DR6.BS alone: %u #DBs "
		       "(want 5), RIPs 0x%lx 0x%lx 0x%lx 0x%lx (want 0x%lx 0x%lx 0x%lx 0x%lx)",
		       nhits, hit_rip[1], hit_rip[2], hit_rip[3], hit_rip[4],
		       at[1], at[2], at[3], after_popf);
	}
	disarm();
	report(!(read_rflags() & X86_EFLAGS_TF), "TF clear afterwards");
}

static void watch_icebp(void)
{
	uint64_t after;

	arm_watch();
	asm volatile("lea 2f(%%rip), %0\n\tmov %1, %%ss\n\t.byte 0x2e, 0x2e, 0xf1\n2:"
		     : "=&r"(after) : "m"(ss_sel) : "memory");
	disarm();
	report(nhits == 1 && hit_rip[0] == after,
	       "MOV SS (data breakpoint), ICEBP: one #DB (%u), after the ICEBP (RIP 0x%lx, "
	       "want 0x%lx)", nhits, hit_rip[0], after);
}

static void watch_int1(void)
{
	uint64_t after;

	arm_watch();
	asm volatile("lea 2f(%%rip), %0\n\tmov %1, %%ss\n\tint $1\n2:"
		     : "=&r"(after) : "m"(ss_sel) : "memory");
	disarm();
	/* The INT's own delivery is the outer handler run; the held #DB
	 * interrupts it before its first instruction, so it is noted first. */
	report(nhits == 2 && hit_rip[0] == isr_stubs[DB_VECTOR] && (hit_dr6[0] & DR6_B0) &&
	       hit_rip[1] == after,
	       "MOV SS (data breakpoint), INT $1: two #DB runs (%u): the held one at the gate "
	       "(RIP 0x%lx, want 0x%lx) with DR6.B0 (DR6 0x%lx), then the INT's (RIP 0x%lx, "
	       "want 0x%lx)", nhits, hit_rip[0], isr_stubs[DB_VECTOR], hit_dr6[0],
	       hit_rip[1], after);
}

static void watch_int3(void)
{
	uint64_t after;

	arm_watch();
	asm volatile("lea 2f(%%rip), %0\n\tmov %1, %%ss\n\t"
		     ".byte 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0xcc\n2:"
		     : "=&r"(after) : "m"(ss_sel) : "memory");
	disarm();
	report(nbp == 1 && bp_rip == after,
	       "MOV SS (data breakpoint), INT3: one #BP (%u), after the INT3 (RIP 0x%lx, "
	       "want 0x%lx)", nbp, bp_rip, after);
	report(nhits == 1 && hit_rip[0] == isr_stubs[BP_VECTOR] && (hit_dr6[0] & DR6_B0) &&
	       norder == 2 && order[0] == 'D' && order[1] == 'B',
	       "and one #DB (%u) at the #BP gate (RIP 0x%lx, want 0x%lx) with DR6.B0 (DR6 "
	       "0x%lx), taken before the #BP handler ran (order %c%c)", nhits, hit_rip[0],
	       isr_stubs[BP_VECTOR], hit_dr6[0], norder > 0 ? order[0] : '-',
	       norder > 1 ? order[1] : '-');
}

static void watch_fault(void)
{
	uint64_t at;

	arm_watch();
	asm volatile("lea 2f(%%rip), %0\n\tmov %1, %%ss\n2:\tud2\n"
		     : "=&r"(at) : "m"(ss_sel) : "memory");
	disarm();
	report(nud == 1 && ud_rip == at && nhits == 0,
	       "MOV SS (data breakpoint), UD2: #UD (%u) at the UD2 (RIP 0x%lx, want 0x%lx), "
	       "the held #DB dropped (%u #DBs)", nud, ud_rip, at, nhits);
}

int main(int argc, char **argv)
{
	irq_handler_fn old_db, old_bp, old_ud;

	(void)argc;
	(void)argv;
	old_db = handle_irq(DB_VECTOR, db_handler);
	old_bp = handle_irq(BP_VECTOR, bp_handler);
	old_ud = handle_irq(UD_VECTOR, ud_handler);
	gd_step();
	watch_icebp();
	watch_int1();
	watch_int3();
	watch_fault();
	handle_irq(DB_VECTOR, old_db);
	handle_irq(BP_VECTOR, old_bp);
	handle_irq(UD_VECTOR, old_ud);
	return report_summary();
}
