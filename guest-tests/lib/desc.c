// SPDX-License-Identifier: BSD-2-Clause
/* IDT, dispatch and exception fixups. */
#include "lib/desc.h"
#include "lib/percpu.h"

/* A 64-bit interrupt gate (Intel SDM Vol. 3A, "64-Bit Mode IDT"). */
struct idt_gate {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t ist;                    /* 0: stay on the current stack */
	uint8_t type_attr;
	uint16_t offset_mid;
	uint32_t offset_hi;
	uint32_t reserved;
} __packed;
#define IDT_INTR_GATE_P         0x8e    /* present, DPL 0, 64-bit interrupt gate */

_Static_assert(sizeof(struct idt_gate) == 16, "64-bit IDT gate");
/* isr.asm pushes in exactly this order. */
_Static_assert(offsetof(struct ex_regs, rax) == 14 * 8, "isr.asm push order");
_Static_assert(offsetof(struct ex_regs, vector) == 15 * 8, "isr.asm frame");
_Static_assert(offsetof(struct ex_regs, rip) == 17 * 8, "CPU frame follows");
_Static_assert(sizeof(struct ex_regs) == 22 * 8, "16-byte aligned at the call");

extern const uint64_t isr_stubs[NR_VECTORS];                    /* isr.asm */
extern const struct extable_entry __extable_start[], __extable_end[];   /* guest.ld */

static struct idt_gate idt[NR_VECTORS] __aligned(16);
static irq_handler_fn handlers[NR_VECTORS];

static const char *const mnemonics[NR_EXCEPTIONS] = {
	"DE", "DB", "NMI", "BP", "OF", "BR", "UD", "NM", "DF", "CSO", "TS", "NP",
	"SS", "GP", "PF", "??", "MF", "AC", "MC", "XM", "VE", "CP", "??", "??",
	"??", "??", "??", "??", "HV", "VC", "SX", "??",
};

const char *exception_mnemonic(unsigned vector)
{
	return vector < NR_EXCEPTIONS ? mnemonics[vector] : "";
}

void idt_init(void)
{
	uint16_t cs;

	asm("mov %%cs, %0" : "=r"(cs));
	for (unsigned v = 0; v < NR_VECTORS; v++) {
		uint64_t a = isr_stubs[v];

		idt[v] = (struct idt_gate){
			.offset_lo = (uint16_t)a, .selector = cs,
			.type_attr = IDT_INTR_GATE_P, .offset_mid = (uint16_t)(a >> 16),
			.offset_hi = (uint32_t)(a >> 32),
		};
	}
	idt_load();
}

void idt_load(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __packed d = { sizeof(idt) - 1, (uint64_t)idt };

	asm volatile("lidt %0" : : "m"(d) : "memory");
}

irq_handler_fn handle_irq(unsigned vector, irq_handler_fn fn)
{
	if (vector >= NR_VECTORS)
		return NULL;
	return __atomic_exchange_n(&handlers[vector], fn, __ATOMIC_ACQ_REL);
}

static bool extable_fixup(struct ex_regs *r)
{
	for (const struct extable_entry *e = __extable_start; e < __extable_end; e++) {
		if (e->insn != r->rip)
			continue;
		this_cpu()->ex_vector = (uint32_t)r->vector;
		this_cpu()->ex_error_code = r->error_code;
		this_cpu()->ex_rflags = r->rflags;
		r->rip = e->fixup;
		return true;
	}
	return false;
}

/* Called by isr.asm for every vector. */
void idt_dispatch(struct ex_regs *r);
void idt_dispatch(struct ex_regs *r)
{
	irq_handler_fn fn;

	if (r->vector < NR_EXCEPTIONS && extable_fixup(r))
		return;
	fn = __atomic_load_n(&handlers[r->vector], __ATOMIC_ACQUIRE);
	if (!fn)
		exception_fatal(r);
	fn(r);
}

int exception_vector(void)
{
	return (int)this_cpu()->ex_vector;
}

uint64_t exception_error_code(void)
{
	return this_cpu()->ex_error_code;
}

uint64_t exception_rflags(void)
{
	return this_cpu()->ex_rflags;
}

void exception_clear(void)
{
	this_cpu()->ex_vector = 0;
	this_cpu()->ex_error_code = 0;
	this_cpu()->ex_rflags = 0;
}

int rdmsr_safe(uint32_t msr, uint64_t *val)
{
	uint32_t lo = 0, hi = 0;

	exception_clear();
	asm volatile(ASM_TRY("1f") "rdmsr\n1:"
		     : "+a"(lo), "+d"(hi) : "c"(msr) : "memory");
	*val = lo | (uint64_t)hi << 32;
	return exception_vector();
}

int wrmsr_safe(uint32_t msr, uint64_t val)
{
	exception_clear();
	asm volatile(ASM_TRY("1f") "wrmsr\n1:"
		     : : "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32))
		     : "memory");
	return exception_vector();
}
