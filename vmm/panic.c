// SPDX-License-Identifier: BSD-2-Clause
#include <stdarg.h>
#include "drivers/fmt.h"
#include "drivers/io.h"
#include "drivers/serial.h"
#include "vmm/irq.h"
#include "vmm/log.h"
#include "vmm/panic.h"
#include "vmm/percpu.h"
#include "vmm/power.h"

static int panicking;

static uint32_t cpu_index(void)
{
	/* GS base is not set up before cpu_init(): don't trust gs:0 then. */
	return rdmsr(MSR_GS_BASE) ? this_cpu()->index : 0;
}

void panic_dump_frame(const struct irq_frame *f)
{
	pr_err("  rip=%016lx cs=%04lx rflags=%08lx rsp=%016lx ss=%04lx",
	       f->rip, f->cs, f->rflags, f->rsp, f->ss);
	pr_err("  rax=%016lx rbx=%016lx rcx=%016lx rdx=%016lx", f->rax, f->rbx, f->rcx, f->rdx);
	pr_err("  rsi=%016lx rdi=%016lx rbp=%016lx r8 =%016lx", f->rsi, f->rdi, f->rbp, f->r8);
	pr_err("  r9 =%016lx r10=%016lx r11=%016lx r12=%016lx", f->r9, f->r10, f->r11, f->r12);
	pr_err("  r13=%016lx r14=%016lx r15=%016lx", f->r13, f->r14, f->r15);
	pr_err("  cr0=%016lx cr2=%016lx cr3=%016lx cr4=%016lx",
	       read_cr0(), read_cr2(), read_cr3(), read_cr4());
}

static __noreturn void panic_stop(void)
{
	/* Recursion (a fault while panicking) ends here without printing. */
	power_off(PANIC_STATUS);
}

static void panic_vprint(const char *fmt, va_list ap)
{
	char msg[256];

	fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
	pr_err("cpu%u: PANIC: %s", cpu_index(), msg);
}

__noreturn void panic(const char *fmt, ...)
{
	va_list ap;

	irq_disable();
	if (__atomic_fetch_add(&panicking, 1, __ATOMIC_SEQ_CST))
		for (;;)
			halt();
	va_start(ap, fmt);
	panic_vprint(fmt, ap);
	va_end(ap);
	pr_err("  called from %p", __builtin_return_address(0));
	panic_stop();
}

__noreturn void panic_frame(const struct irq_frame *f, const char *fmt, ...)
{
	va_list ap;

	irq_disable();
	if (__atomic_fetch_add(&panicking, 1, __ATOMIC_SEQ_CST))
		for (;;)
			halt();
	va_start(ap, fmt);
	panic_vprint(fmt, ap);
	va_end(ap);
	panic_dump_frame(f);
	panic_stop();
}
