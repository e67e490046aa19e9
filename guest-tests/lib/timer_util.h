/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the APIC timer tests (guest-tests/timer_*.c): the time
 * base, an interrupt handler that stamps every timer interrupt with the
 * TSC, LVTT/TDCR encodings, and bounded waits by spinning or by HLT.
 *
 * Intel SDM Vol. 3A, "Advanced Programmable Interrupt Controller (APIC)",
 * "APIC Timer": TMICT/TMCCT count down at the bus (crystal) clock divided
 * by TDCR; LVTT bits 18:17 select one-shot, periodic or TSC-deadline mode.
 *
 * A 1-vCPU guest has no wake source but its APIC timer (PIC masked, no
 * PIT or HPET), so a halted wait for "no interrupt" needs the same timer
 * as a sentinel: tmr_quiet() arms it on TMR_VEC_SENTINEL after the state
 * under test was set up, and halts until that one arrives. It catches
 * interrupts that are stale or pending; a timer that keeps running is
 * caught by the spinning variant, which re-arms nothing.
 */
#ifndef GUEST_TIMER_UTIL_H
#define GUEST_TIMER_UTIL_H

#include "lib/apic.h"

#define TMR_VEC                 0x40u   /* the timer under test */
#define TMR_VEC_SENTINEL        0x41u   /* the wake-up of halted quiet checks */
#define TMR_MAX_STAMPS          128u    /* TSC stamps kept per vector */

/* Fields lib/apic.h does not name (yet); guarded in case it grows them. */
#ifndef LAPIC_TIMER_RESERVED
#define   LAPIC_TIMER_RESERVED      3u  /* LVTT mode 11b */
#endif
#ifndef LAPIC_TDCR_DIVIDE
#define LAPIC_TDCR_DIVIDE       (BIT(3) | BITS(1, 0))   /* bit 2 is reserved */
#endif

/* The time base: TSC and APIC timer input clock (divide by 1). */
struct tmr_clock {
	uint64_t tsc_hz;
	uint64_t apic_hz;
	const char *source;             /* where the numbers came from */
};
extern struct tmr_clock tmr_clock;
/* How late an interrupt may be: arg slack_us (default TMR_SLACK_US), or
 * TMR_SLACK_EXITS exit round trips where that is more. An interrupt served
 * by tickvisor is late by a few exits at worst (the exit that finds it,
 * an entry, an EOI or interrupt-window exit); in Bochs an exit costs well
 * under 1/16 of 50 µs, nested under KVM a few microseconds, so the same
 * tests hold on both (issue 22.10, DESIGN.md "Nested KVM"). */
#define TMR_SLACK_US            50u
#define TMR_SLACK_EXITS         16u
extern uint64_t tmr_slack_tsc;
/* TV_HC_EXIT_COST at tmr_init(): entry + exit TSC cycles (0 natively). */
extern uint64_t tmr_exit_cost;

/* Time base, slack, handlers, software-enabled APIC with the timer
 * stopped, IF=1. false (with a SKIP printed) when there is no APIC or
 * the time base is unknown. */
bool tmr_init(void);

uint64_t tmr_us_to_tsc(uint64_t us);
uint64_t tmr_tsc_to_ns(uint64_t tsc);
/* APIC timer ticks at TDCR divide `div` -> TSC cycles, and back
 * (rounded up: the count that lasts at least `tsc`). */
uint64_t tmr_ticks_to_tsc(uint64_t ticks, unsigned div);
uint32_t tmr_tsc_to_ticks(uint64_t tsc, unsigned div);

/* LVTT value: mode (LAPIC_TIMER_*), vector, masked. */
uint32_t tmr_lvtt(unsigned mode, unsigned vec, bool masked);
/* TDCR encoding of a divide value 1..128 (SDM: bits 3,1,0; 111b is 1). */
uint32_t tmr_tdcr(unsigned div);
/* One-shot, masked, TMICT 0, IA32_TSC_DEADLINE 0 if in that mode, divide
 * 1, and the interrupt log cleared. */
void tmr_stop(void);
bool tmr_has_tsc_deadline(void);

/* tmr_stop(), then LVTT = mode, TMR_VEC, masked, then TMICT = ticks:
 * started. Returns the TSC read just before the TMICT write. Inline, so
 * that read sits as close to the write as in the code it replaced. */
static inline uint64_t tmr_arm(unsigned mode, bool masked, uint32_t ticks)
{
	uint64_t t0;

	tmr_stop();
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(mode, TMR_VEC, masked));
	t0 = rdtsc();
	apic_write(LAPIC_TMICT, ticks);
	return t0;
}

/* The interrupt log of vector TMR_VEC or TMR_VEC_SENTINEL. */
void tmr_log_clear(void);
uint32_t tmr_count(unsigned vec);
/* TSC at handler entry of interrupt i (0-based, < TMR_MAX_STAMPS). */
uint64_t tmr_stamp(unsigned vec, uint32_t i);

enum tmr_wait {
	TMR_SPIN,               /* IF=1, PAUSE loop */
	TMR_HLT,                /* STI; HLT loop */
	TMR_NR_WAITS,
};
extern const char *const tmr_wait_name[TMR_NR_WAITS];

/* Waits until `vec` was taken `want` times in all or the TSC passes
 * `until`; true if it got there. HLT never halts when nothing could wake
 * the CPU (timer masked, TMCCT 0, deadline 0): it fails instead. */
bool tmr_wait(enum tmr_wait how, unsigned vec, uint32_t want, uint64_t until);
/* Spins with IF=1 until the TSC passes `until`. */
void tmr_spin_until(uint64_t until);
/* No interrupt on `vec` for `window` TSC cycles from now: by spinning,
 * or halted until a sentinel on the same timer, in its current mode (see
 * the top); the sentinel is stopped and LVTT restored afterwards. A
 * failure is explained with an INFO line. */
bool tmr_quiet(enum tmr_wait how, unsigned vec, uint64_t window);

/* TMCCT read back to back (IF=1) until the TSC passes `until`. */
struct tmr_tmcct_watch {
	uint32_t samples;
	uint32_t min, max;
	uint32_t drops;                 /* a sample below the one before */
	uint32_t rises;                 /* above the one before: a reload */
	uint32_t zero_pairs;            /* two samples in a row read 0 */
};
void tmr_watch_tmcct(struct tmr_tmcct_watch *w, uint64_t until);

#endif
