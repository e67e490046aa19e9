// SPDX-License-Identifier: BSD-2-Clause
/* Per-CPU descriptor tables: our own GDT with a TSS (VMX host state needs
 * a usable TR; OVMF leaves TR = 0) and the shared IDT. */
#include "drivers/io.h"
#include "drivers/string.h"
#include "vmm/host/mce.h"
#include "vmm/host/irq.h"
#include "vmm/host/mem.h"
#include "vmm/host/paging.h"
#include "vmm/host/percpu.h"

struct pcpu *cpus[TV_MAX_CPUS];
uint32_t ncpus_online;

static void gdt_build(struct pcpu *p)
{
	uint64_t base = (uint64_t)&p->tss, limit = sizeof(p->tss) - 1;

	p->gdt.entry[0] = 0;
	p->gdt.entry[SEL_CODE >> 3] = SEG_DESC_FLAT(SEG_AR_CODE64);
	p->gdt.entry[SEL_DATA >> 3] = SEG_DESC_FLAT(SEG_AR_DATA32);
	/* A 16-byte system descriptor: the usual 8 bytes, then base 63:32. */
	p->gdt.entry[SEL_TSS >> 3] = SEG_DESC(SEG_AR_TSS_AVAIL, base, limit);
	p->gdt.entry[4] = base >> 32;
	p->tss.iomap_base = sizeof(p->tss);     /* no I/O bitmap */
	p->tss.ist[IDT_IST_CRITICAL - 1] = p->ist_top;
}

static void gdt_load(struct pcpu *p)
{
	struct desc_ptr gdtr = { sizeof(p->gdt) - 1, (uint64_t)&p->gdt };

	__asm__ volatile("lgdt %0\n\t"
			 "mov %1, %%ds\n\tmov %1, %%es\n\tmov %1, %%ss\n\t"
			 "xor %%eax, %%eax\n\tmov %%eax, %%fs\n\tmov %%eax, %%gs\n\t"
			 "lea 1f(%%rip), %%rax\n\t"
			 "pushq %2\n\tpushq %%rax\n\tlretq\n"
			 "1:\n\t"
			 "ltr %w3"
			 : : "m"(gdtr), "r"((uint64_t)SEL_DATA), "i"(SEL_CODE), "r"(SEL_TSS)
			 : "rax", "memory");
}

struct pcpu *cpu_alloc(uint32_t index, uint32_t apic_id)
{
	struct pcpu *p = mem_alloc(sizeof(*p));

	p->self = p;
	p->index = index;
	p->apic_id = apic_id;
	p->stack_top = (uint64_t)mem_alloc(CPU_STACK_SIZE) + CPU_STACK_SIZE;
	p->ist_top = (uint64_t)mem_alloc(CPU_IST_SIZE) + CPU_IST_SIZE;
	cpus[index] = p;
	return p;
}

void cpu_init(struct pcpu *p)
{
	gdt_build(p);
	gdt_load(p);
	/* GS base after the segment reload: loading GS zeroes it. */
	wrmsr(MSR_GS_BASE, (uint64_t)p);
	idt_load();
	paging_pat_init();
	mce_cpu_init(false);
	__atomic_fetch_add(&ncpus_online, 1, __ATOMIC_RELEASE);
}
