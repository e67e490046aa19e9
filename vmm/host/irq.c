// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/apic.h"
#include "drivers/io.h"
#include "drivers/ioapic.h"
#include "vmm/host/irq.h"
#include "vmm/host/log.h"
#include "vmm/host/mce.h"
#include "vmm/host/mem.h"
#include "vmm/host/panic.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"

#define IDT_STUB_SIZE     16u
#define IDT_TYPE_INTGATE  0x8eu  /* P, DPL0, 64-bit interrupt gate */
#define EXC_NMI 2u
#define EXC_DF  8u
#define EXC_MC  18u

extern const char irq_stubs[];

static struct idt_entry *idt;
static irq_fn handlers[IDT_VECTORS];
static uint64_t nmi_counts[TV_MAX_CPUS];        /* host NMIs handled, per CPU index */

static const char *const exc_names[32] = {
	"#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "CSO", "#TS",
	"#NP", "#SS", "#GP", "#PF", "RSV15", "#MF", "#AC", "#MC", "#XM", "#VE", "#CP",
};

/* A kick carries no message: taking it is what makes a CPU leave
 * non-root mode (an external-interrupt exit) or HLT, and the code that
 * runs next finds the work (a vCPU's pending-work checks, smp_run_on()). */
static void irq_kick(uint8_t vector)
{
	apic_eoi();
}

/* Bring-up's host timer check (irq_timer_check), per CPU index. */
static uint32_t check_irqs[TV_MAX_CPUS];

static void irq_timer_checked(uint8_t vector)
{
	__atomic_add_fetch(&check_irqs[this_cpu()->index], 1, __ATOMIC_RELAXED);
	apic_eoi();
}

bool irq_timer_check(uint64_t tsc_hz)
{
	uint32_t me = this_cpu()->index, before = READ_ONCE(check_irqs[me]);
	uint64_t t0 = rdtsc(), limit = tsc_hz / 1000 * IRQ_TIMER_CHECK_MS;

	if (apic_caps.tsc_deadline)
		apic_timer_deadline(VEC_TIMER_CHECK, t0 + tsc_hz / 10000);
	else
		apic_timer_oneshot(VEC_TIMER_CHECK, 10000);
	/* No HLT: if the interrupt never comes, nothing else would wake us.
	 * The whole wait runs with IF = 1: an STI;PAUSE;CLI window lies in
	 * STI's shadow, and QEMU's TCG delivers nothing inside it. */
	irq_enable();
	while (READ_ONCE(check_irqs[me]) == before && rdtsc() - t0 < limit)
		cpu_relax();
	irq_disable();
	apic_timer_stop();
	return READ_ONCE(check_irqs[me]) != before;
}

void idt_init(void)
{
	idt = mem_alloc(IDT_VECTORS * sizeof(*idt));
	for (unsigned v = 0; v < IDT_VECTORS; v++) {
		uint64_t a = (uint64_t)irq_stubs + v * IDT_STUB_SIZE;
		bool critical = v == EXC_NMI || v == EXC_DF || v == EXC_MC;

		idt[v] = (struct idt_entry){
			.off_lo = (uint16_t)a, .sel = SEL_CODE,
			.ist = critical ? IDT_IST_CRITICAL : 0, .type = IDT_TYPE_INTGATE,
			.off_mid = (uint16_t)(a >> 16), .off_hi = (uint32_t)(a >> 32),
		};
	}
	irq_register(VEC_KICK, irq_kick);
	irq_register(VEC_TIMER_CHECK, irq_timer_checked);
}

void idt_load(void)
{
	struct desc_ptr idtr = { IDT_VECTORS * sizeof(*idt) - 1, (uint64_t)idt };

	__asm__ volatile("lidt %0" : : "m"(idtr));
}

uint64_t idt_base(void)
{
	return (uint64_t)idt;
}

void irq_register(uint8_t vector, irq_fn fn)
{
	handlers[vector] = fn;
}

/*
 * RDMSR of an MSR the CPU may lack although CPUID promises it (Bochs
 * claims MCA and has no IA32_MCG_CAP): a #GP on that one instruction
 * resumes past it with *fault set, instead of a panic.
 * uint64_t host_rdmsr_try(uint32_t msr, int *fault)
 */
extern const char host_rdmsr_insn[], host_rdmsr_resume[];
__asm__(".pushsection .text\n"
	".globl host_rdmsr_try\n"
	".hidden host_rdmsr_try, host_rdmsr_insn, host_rdmsr_resume\n"
	".globl host_rdmsr_insn, host_rdmsr_resume\n"
	"host_rdmsr_try:\n"
	"\tmovl %edi, %ecx\n"
	"\tmovl $0, (%rsi)\n"
	"host_rdmsr_insn:\n"
	"\trdmsr\n"
	"host_rdmsr_resume:\n"
	"\tshlq $32, %rdx\n"
	"\tmovl %eax, %eax\n"
	"\torq %rdx, %rax\n"
	"\tret\n"
	".popsection\n");
uint64_t host_rdmsr_try(uint32_t msr, int *fault);

bool host_rdmsr_safe(uint32_t msr, uint64_t *val)
{
	int fault;
	uint64_t v = host_rdmsr_try(msr, &fault);

	*val = fault ? 0 : v;
	return !fault;
}

static bool rdmsr_fixup(struct irq_frame *f)
{
	if (f->vector != 13 || f->rip != (uint64_t)host_rdmsr_insn)
		return false;
	*(int *)f->rsi = 1;
	f->rax = f->rdx = 0;
	f->rip = (uint64_t)host_rdmsr_resume;
	return true;
}

static void exception(struct irq_frame *f)
{
	if (rdmsr_fixup(f))
		return;
	/* A machine check in root mode: tickvisor's own code was
	 * interrupted. What the banks say decides (vmm/host/mce.c). */
	if (f->vector == EXC_MC && mce_handle(false, "tickvisor") != MCE_FATAL)
		return;
	panic_frame(f, "exception %lu (%s) error %#lx at rip %#lx",
		    f->vector, exc_names[f->vector] ? exc_names[f->vector] : "reserved",
		    f->error, f->rip);
}

/*
 * A host NMI: vector 2 in root mode, or an NMI that arrived in non-root
 * mode, which is a VM exit (exception-or-NMI exit, NMI type) that
 * exit_exception_nmi() hands here with INT 2. NMIs stay blocked after
 * such an exit until the next IRET (SDM Vol. 3C, "Architectural State
 * before a VM Exit": "An NMI causes subsequent NMIs to be blocked, but
 * only after the VM exit completes"); this handler's IRET ends that, as
 * KVM's vmx_do_nmi_irqoff() does by the same route.
 *
 * Who sends host NMIs: a panicking CPU, to stop the others (they stay
 * here for good, NMIs blocked, so the panic's output stands); and
 * apic_send_nmi() users that want a CPU out of guest mode, which its VM
 * exit already achieved. So: count it and resume the interrupted code.
 * It runs on its own IST stack and may have interrupted anything, the
 * log included: no locks, no output, no IPIs (drivers/apic.c).
 */
static void irq_nmi(void)
{
	if (panic_active())
		for (;;)
			halt();
	__atomic_fetch_add(&nmi_counts[this_cpu()->index], 1, __ATOMIC_RELAXED);
}

uint64_t irq_nmi_count(uint32_t cpu)
{
	return cpu < TV_MAX_CPUS ? __atomic_load_n(&nmi_counts[cpu], __ATOMIC_RELAXED) : 0;
}

void irq_dispatch(struct irq_frame *f)
{
	if (f->vector == EXC_NMI) {
		irq_nmi();
		return;
	}
	if (f->vector < 32) {
		exception(f);
		return;
	}
	irq_handle((uint8_t)f->vector);
}

void irq_handle(uint8_t vector)
{
	if (handlers[vector]) {
		handlers[vector](vector);
		return;
	}
	/* Not ours (a stray firmware timer, say): acknowledge so lower
	 * priorities are not blocked, and say so once per vector. */
	static uint64_t warned[IDT_VECTORS / 64];

	if (vector != VEC_SPURIOUS)
		apic_eoi();
	if (__atomic_fetch_or(&warned[vector / 64], BIT(vector % 64), __ATOMIC_RELAXED) &
	    BIT(vector % 64))
		return;
	/* At its source, where that is an I/O APIC input (all are masked
	 * at start; one routed since would be tickvisor's own): it does
	 * not come back. */
	pr_warn("cpu%u: unexpected interrupt vector %u ignored%s", this_cpu()->index, vector,
		platform_ioapic_mask_vector(vector) ?
		", its I/O APIC input masked" : "");
}
