/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The timer options a guest line or the load options may set: which host
 * backend to prefer and how to advance. They belong to timer/, which
 * obeys them; vmm/host/options.h (the option block boot/ fills) and boot/
 * (which parses their names) take them from here.
 */
#ifndef TIMER_TIMER_OPTS_H
#define TIMER_TIMER_OPTS_H

#include "drivers/base.h"

enum timer_backend_sel {
	TIMER_SEL_AUTO,         /* posted where possible, else preemption timer,
				 * else host LAPIC, else HPET */
	TIMER_SEL_PREEMPT,      /* VMX-preemption timer */
	TIMER_SEL_LAPIC,        /* host local APIC timer (TSC-deadline or one-shot) */
	TIMER_SEL_HPET,         /* host HPET comparator */
	TIMER_SEL_POSTED,       /* a housekeeping CPU posts the expiry (DESIGN.md,
				 * "Exitless timer") */
	TIMER_SEL_NR,
};

enum advance_mode {
	ADVANCE_OFF,
	ADVANCE_FIXED,          /* advance_ns as given */
	ADVANCE_AUTO,           /* tuned from observed lateness */
};

/* "auto", "preempt", "lapic", "hpet", "posted": the spelling of timer= in
 * tickvisor.cfg, indexed by enum timer_backend_sel. */
extern const char *const timer_sel_names[TIMER_SEL_NR];
/* The name of a selection, "?" for a value out of range. */
const char *timer_sel_name(enum timer_backend_sel t);

#endif
