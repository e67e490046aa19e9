// SPDX-License-Identifier: BSD-2-Clause
#include <stdarg.h>
#include "drivers/apic.h"
#include "drivers/fmt.h"
#include "drivers/io.h"
#include "drivers/serial.h"
#include "vmm/host/irq.h"
#include "vmm/host/log.h"
#include "vmm/host/panic.h"
#include "vmm/host/percpu.h"

static int panicking;
static uint64_t image_base;

void panic_set_image_base(uint64_t base)
{
	image_base = base;
}

static uint32_t cpu_index(void)
{
	/* GS base is not set up before cpu_init(): don't trust gs:0 then. */
	return rdmsr(MSR_GS_BASE) ? this_cpu()->index : 0;
}

void panic_dump_frame(const struct irq_frame *f)
{
	pr_err("  rip=%016lx (image offset %#lx) cs=%04lx rflags=%08lx rsp=%016lx ss=%04lx",
	       f->rip, (unsigned long)(f->rip - image_base), f->cs, f->rflags, f->rsp, f->ss);
	pr_err("  rax=%016lx rbx=%016lx rcx=%016lx rdx=%016lx", f->rax, f->rbx, f->rcx, f->rdx);
	pr_err("  rsi=%016lx rdi=%016lx rbp=%016lx r8 =%016lx", f->rsi, f->rdi, f->rbp, f->r8);
	pr_err("  r9 =%016lx r10=%016lx r11=%016lx r12=%016lx", f->r9, f->r10, f->r11, f->r12);
	pr_err("  r13=%016lx r14=%016lx r15=%016lx", f->r13, f->r14, f->r15);
	pr_err("  cr0=%016lx cr2=%016lx cr3=%016lx cr4=%016lx",
	       read_cr0(), read_cr2(), read_cr3(), read_cr4());
}

/*
 * After the report, tickvisor's other CPUs stop: an NMI to each by its
 * APIC ID ends in irq_nmi()'s halt loop, since `panicking` is set. Only
 * CPUs in cpus[] run tickvisor code; any other - parked in INIT, left out
 * at start, beyond TV_MAX_CPUS - is not tickvisor's to wake, and an
 * all-but-self NMI would reach it too. The report comes first so that it
 * is out even if sending these NMIs goes wrong (each xAPIC send may wait
 * for the previous one's delivery).
 */
static void panic_stop_others(void)
{
	uint32_t self = cpu_index();

	if (!apic_caps.x2apic && !apic_caps.mmio_base)
		return;                 /* before the APIC is set up: no AP runs yet */
	for (uint32_t i = 0; i < TV_MAX_CPUS; i++) {
		const struct pcpu *p = READ_ONCE(cpus[i]);

		if (p && i != self)
			apic_send_nmi(p->apic_id);
	}
}

/* The last line states the status (Bochs's exit code carries nothing),
 * then the CPU halts for good, leaving the screen and the serial log as
 * they are. */
static __noreturn void panic_stop(void)
{
	panic_stop_others();
	pr_err("halted: reset the machine to go on");
	pr_info("final status %d", PANIC_STATUS);
	log_flush();
	for (;;)
		halt();
}

bool panic_active(void)
{
	return __atomic_load_n(&panicking, __ATOMIC_RELAXED) != 0;
}

/* The log lock is no longer honoured: its holder may be the CPU that
 * faulted, or one that panic_stop_others() will stop. */
static void panic_begin(void)
{
	log_panic();
}

static void panic_vprint(const char *fmt, va_list ap)
{
	char msg[256];

	fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
	pr_err("cpu%u: PANIC: %s", cpu_index(), msg);
}

/* Only the first CPU to panic reports; any later one (or a nested panic)
 * halts where it is. */
static void panic_enter(void)
{
	irq_disable();
	if (__atomic_fetch_add(&panicking, 1, __ATOMIC_SEQ_CST))
		for (;;)
			halt();
	panic_begin();
}

__noreturn void panic(const char *fmt, ...)
{
	va_list ap;

	panic_enter();
	va_start(ap, fmt);
	panic_vprint(fmt, ap);
	va_end(ap);
	pr_err("  called from %p (image offset %#lx: addr2line -e build/tickvisor.so)",
	       __builtin_return_address(0),
	       (unsigned long)((uint64_t)__builtin_return_address(0) - image_base));
	panic_stop();
}

__noreturn void panic_frame(const struct irq_frame *f, const char *fmt, ...)
{
	va_list ap;

	panic_enter();
	va_start(ap, fmt);
	panic_vprint(fmt, ap);
	va_end(ap);
	panic_dump_frame(f);
	panic_stop();
}
