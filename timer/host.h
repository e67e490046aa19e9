/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host timer backends for guest APIC timers, in order of preference:
 * the VMX-preemption timer (timer/ only records the deadline; the VM-entry
 * path turns it into the VMCS field), the host local APIC timer
 * (TSC-deadline, else one-shot) and an HPET comparator. The last two bring
 * the expiry back as an external-interrupt exit, and are also what a CPU
 * sleeps on while its vCPU is halted.
 */
#ifndef TIMER_HOST_H
#define TIMER_HOST_H

#include "drivers/hpet.h"
#include "timer/timer_opts.h"

enum timer_kind {
	TIMER_NONE    = 0,
	TIMER_PREEMPT = 1,
	TIMER_LAPIC   = 2,
	TIMER_HPET    = 3,
	TIMER_POSTED  = 4,      /* a housekeeping CPU posts it (vmm/apic/housekeeper.c) */
};

/* What this machine offers, filled in once at boot. */
struct timer_caps {
	bool preempt;
	unsigned preempt_rate;          /* IA32_VMX_MISC[4:0] */
	bool lapic_tscdl;               /* host APIC has TSC-deadline mode */
	uint64_t lapic_hz;              /* host APIC timer at divide 1, for one-shot */
	const struct hpet *hpet;        /* NULL: none */
	uint64_t ioapic_base;           /* for HPETs without FSB delivery */
	uint32_t ioapic_gsi_base;       /* its first input's GSI */
	const struct acpi_iso *isos;    /* MADT interrupt source overrides */
	unsigned nisos;
	uint64_t tsc_hz;
	/* The host interrupt vectors the host kernel gave the backends (it
	 * allocates every host vector and takes their interrupts). */
	uint8_t vec_lapic;              /* host LAPIC timer */
	uint8_t vec_hpet;               /* HPET comparators, by MSI or I/O APIC */
};

/* Per physical CPU: which comparator it owns and what is armed. */
struct timer_cpu {
	uint32_t apic_id;
	int hpet_comparator;            /* -1: none */
	int hpet_ioapic_pin;            /* -1: by MSI (FSB) or none */
	uint32_t hpet_pin_mode;         /* IOAPIC_REDIR_LEVEL/_LOW of that input */
	uint32_t hpet_strays;           /* level interrupts in a row not the comparator's */
	int hpet_given_up;              /* the comparator the strays cost us, -1: none */
	unsigned hpet_bits;             /* cached hpet_comparator_bits() of it */
	uint64_t lapic_armed;           /* host TSC programmed, 0: none */
	uint64_t hpet_armed;
};

extern struct timer_caps timer_caps;

const char *timer_kind_name(enum timer_kind k);
/* The backend for an option on the CPU tc: the first usable one from the
 * wanted one down the list. *why says what was skipped, NULL if nothing. */
enum timer_kind timer_select(enum timer_backend_sel sel, const struct timer_cpu *tc,
			     const char **why);
/* Sets up this CPU's host timers (HPET comparator n = cpu index). */
void timer_cpu_init(struct timer_cpu *tc, unsigned cpu, uint32_t apic_id);
/* The HPET vector arrived on this CPU: whether it is its comparator's
 * (an edge or MSI one always is; a level one when the comparator's status
 * bit says so, which it then clears). An input that stays asserted
 * without it is masked at the HPET_STRAYS_MAX-th in a row, which the
 * caller reports (tc->hpet_ioapic_pin names it). */
enum hpet_irq { HPET_IRQ_OURS, HPET_IRQ_STRAY, HPET_IRQ_MASKED };
enum hpet_irq timer_hpet_irq(struct timer_cpu *tc);
#define HPET_STRAYS_MAX 1000u

/* ... and after HPET_IRQ_MASKED the comparator is no longer this CPU's
 * (tc->hpet_comparator -1, tc->hpet_given_up names it; the masked input
 * stays in tc->hpet_ioapic_pin). */

/* Takes the interrupt of a host deadline that has passed (briefly with
 * interrupts on), so it does not exit the guest right after entry. The
 * one place the entry path enables interrupts: call it before the last
 * check for pending work, never after. */
void timer_host_drain_armed(struct timer_cpu *tc);

/* With neither host timer of this CPU armed nothing can have fired, and
 * the drain has nothing to wait for (nor a reason to open the window):
 * the usual entry (preemption-timer backend, vCPU not halted) then costs
 * two loads instead of a call, an RDTSC and two compares. */
static inline void timer_host_drain(struct timer_cpu *tc)
{
	if (READ_ONCE(tc->lapic_armed) | READ_ONCE(tc->hpet_armed))
		timer_host_drain_armed(tc);
}
/* Arms (or with 0 disarms) a host backend at a host TSC value, with
 * interrupts off throughout. An HPET deadline already past is reported
 * by returning false: the caller treats the target as due now, since a
 * comparator only fires on a match. */
bool timer_host_arm(struct timer_cpu *tc, enum timer_kind k, uint64_t host_tsc);
/* A sleeping CPU wants a wake-up at host_tsc from whatever host timer it
 * has (its own, the LAPIC's or the HPET's). */
bool timer_host_sleep_arm(struct timer_cpu *tc, uint64_t host_tsc);
void timer_host_disarm_all(struct timer_cpu *tc);

#endif
