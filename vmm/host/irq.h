/* SPDX-License-Identifier: BSD-2-Clause */
/* Host interrupts and exceptions in VMX root mode. */
#ifndef VMM_HOST_IRQ_H
#define VMM_HOST_IRQ_H

#include "drivers/base.h"

/* Saved by vmm/host/irq_entry.asm; field order is the push order reversed. */
struct irq_frame {
	uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;  /* pushed by the CPU */
};

/* Host vectors owned by tickvisor (above the exception range). The
 * host-timer backends are given theirs in timer_caps (timer/host.h). */
enum host_vector {
	VEC_TIMER_CHECK  = 0xe8,    /* host LAPIC timer, once per CPU at bring-up */
	VEC_HOST_TIMER   = 0xec,    /* host LAPIC timer (guest timer fallback) */
	VEC_HPET         = 0xed,    /* HPET comparator (guest timer fallback) */
	VEC_KICK         = 0xee,    /* IPI: make a CPU leave non-root mode */
	VEC_POSTED       = 0xf0,    /* posted-interrupt notification */
	VEC_SPURIOUS     = 0xff,
};

/* A host interrupt handler; it sends the EOI itself when it needs one. */
typedef void (*irq_fn)(uint8_t vector);

/* Builds the shared IDT once; loads it on the calling CPU. */
void idt_init(void);
void idt_load(void);
uint64_t idt_base(void);
void irq_register(uint8_t vector, irq_fn fn);
/* Runs the handler of a host interrupt vector: called from entry.asm
 * through irq_dispatch, and from the VM-exit path for interrupts
 * acknowledged on exit. */
void irq_handle(uint8_t vector);
/* How long irq_timer_check() waits. The interrupt is due 10 µs after it
 * is armed; the rest is room for a host that does not run this CPU for a
 * while: QEMU's TCG with 20 vCPU threads on two loaded cores has gone
 * past 50 ms. It returns as soon as the interrupt is taken. */
#define IRQ_TIMER_CHECK_MS 1000
/* Takes one host LAPIC timer interrupt on this CPU (TSC-deadline, else
 * one-shot), waiting at most IRQ_TIMER_CHECK_MS with interrupts on; false
 * if none came. The LAPIC timer is left masked. */
bool irq_timer_check(uint64_t tsc_hz);
/* RDMSR that returns false (and 0) where the MSR raises #GP. */
bool host_rdmsr_safe(uint32_t msr, uint64_t *val);
/* Called from entry.asm. */
void irq_dispatch(struct irq_frame *f);
/* Host NMIs (vector 2: in root mode, or re-raised after an NMI VM exit)
 * handled so far by the CPU with this index: counted, then the
 * interrupted code resumes; a panic elsewhere stops the CPU instead. */
uint64_t irq_nmi_count(uint32_t cpu);

#endif
