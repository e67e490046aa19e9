// SPDX-License-Identifier: BSD-2-Clause
/* APIC timer test helpers; see timer_util.h. */
#include "lib/timer_util.h"
#include "lib/desc.h"
#include "lib/printf.h"
#include "lib/processor.h"
#include "lib/report.h"
#include "lib/setup.h"
#include "lib/string.h"
#include "lib/tickvisor.h"

#define NS_PER_S                1000000000ull
#define US_PER_S                1000000ull
#define CPUID_TSC_LEAF          0x15u   /* TSC/crystal ratio, crystal Hz */

struct tmr_clock tmr_clock;
uint64_t tmr_slack_tsc;
uint64_t tmr_exit_cost;

const char *const tmr_wait_name[TMR_NR_WAITS] = {
	[TMR_SPIN] = "spin",
	[TMR_HLT] = "hlt",
};

/* Written by the handler only; read with tmr_count()/tmr_stamp(). */
struct tmr_log {
	uint32_t count;
	uint64_t tsc[TMR_MAX_STAMPS];
};
static struct tmr_log logs[2];          /* TMR_VEC, TMR_VEC_SENTINEL */

static struct tmr_log *log_of(unsigned vec)
{
	return &logs[vec == TMR_VEC_SENTINEL];
}

static void tmr_irq(struct ex_regs *regs)
{
	uint64_t now = rdtsc();
	struct tmr_log *l = log_of((unsigned)regs->vector);
	uint32_t n = l->count;

	if (n < TMR_MAX_STAMPS)
		l->tsc[n] = now;
	__atomic_store_n(&l->count, n + 1, __ATOMIC_RELEASE);
	apic_eoi();
}

/* Callers run with IF=1 (tmr_init() sets it). */
void tmr_log_clear(void)
{
	cli();
	memset(logs, 0, sizeof(logs));
	sti();
}

uint32_t tmr_count(unsigned vec)
{
	return __atomic_load_n(&log_of(vec)->count, __ATOMIC_ACQUIRE);
}

uint64_t tmr_stamp(unsigned vec, uint32_t i)
{
	return i < TMR_MAX_STAMPS ? READ_ONCE(log_of(vec)->tsc[i]) : 0;
}

/* a * b / c, exact as long as (a % c) * b fits in 64 bits: true for the
 * clock rates here (b, c < 2^34 and one of them < 2^30). */
static uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c, bool round_up)
{
	uint64_t r = (a % c) * b;

	return a / c * b + r / c + (round_up && r % c);
}

uint64_t tmr_us_to_tsc(uint64_t us)
{
	return mul_div(us, tmr_clock.tsc_hz, US_PER_S, false);
}

uint64_t tmr_tsc_to_ns(uint64_t tsc)
{
	return mul_div(tsc, NS_PER_S, tmr_clock.tsc_hz, false);
}

uint64_t tmr_ticks_to_tsc(uint64_t ticks, unsigned div)
{
	return mul_div(ticks * div, tmr_clock.tsc_hz, tmr_clock.apic_hz, false);
}

uint32_t tmr_tsc_to_ticks(uint64_t tsc, unsigned div)
{
	uint64_t ticks = mul_div(tsc, tmr_clock.apic_hz, tmr_clock.tsc_hz, true);

	ticks = (ticks + div - 1) / div;
	return ticks > 0xffffffffu ? 0xffffffffu : (uint32_t)ticks;
}

uint32_t tmr_lvtt(unsigned mode, unsigned vec, bool masked)
{
	return (uint32_t)(FIELD_PREP(LAPIC_LVT_TIMER_MODE, mode) | (vec & LAPIC_LVT_VECTOR) |
			  (masked ? LAPIC_LVT_MASKED : 0));
}

uint32_t tmr_tdcr(unsigned div)
{
	unsigned v = div <= 1 ? 7 : (unsigned)__builtin_ctz(div) - 1;  /* 2 -> 0 ... 128 -> 6 */

	return (v & 3) | (v & 4) << 1;
}

/* The divide value of a TDCR encoding: tmr_tdcr() backwards. */
static unsigned tmr_tdcr_divide(uint32_t tdcr)
{
	unsigned v = (tdcr & 3) | (tdcr >> 1 & 4);

	return v == 7 ? 1 : 2u << v;
}

bool tmr_has_tsc_deadline(void)
{
	return cpuid(1).c & CPUID_1_ECX_TSC_DEADLINE;
}

static unsigned lvtt_mode(uint32_t lvtt)
{
	return (unsigned)FIELD_GET(LAPIC_LVT_TIMER_MODE, lvtt);
}

void tmr_stop(void)
{
	if (lvtt_mode(apic_read(LAPIC_LVT_TIMER)) == LAPIC_TIMER_TSC_DEADLINE)
		wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(LAPIC_TIMER_ONESHOT, TMR_VEC, true));
	apic_write(LAPIC_TMICT, 0);
	apic_write(LAPIC_TDCR, tmr_tdcr(1));
	tmr_log_clear();
}

/* TV_HC_INFO under tickvisor, else CPUID 0x15 (crystal = APIC timer). */
static bool clock_init(void)
{
	struct tv_info info;
	struct cpuid c;

	if (tickvisor_present() && tv_get_info(&info) && info.tsc_hz && info.apic_timer_hz) {
		tmr_clock = (struct tmr_clock){ info.tsc_hz, info.apic_timer_hz, "TV_HC_INFO" };
		return true;
	}
	if (cpuid(0).a < CPUID_TSC_LEAF)
		return false;
	c = cpuid(CPUID_TSC_LEAF);
	if (!c.a || !c.b || !c.c)
		return false;
	tmr_clock = (struct tmr_clock){ (uint64_t)c.c * c.b / c.a, c.c, "CPUID 0x15" };
	return true;
}

bool tmr_init(void)
{
	if (!(cpuid(1).d & CPUID_1_EDX_APIC)) {
		report_skip("no local APIC (CPUID.1:EDX[9])");
		return false;
	}
	if (!clock_init()) {
		report_skip("APIC timer clock unknown (no tickvisor, no CPUID 0x15 crystal)");
		return false;
	}
	tmr_slack_tsc = tmr_us_to_tsc(arg_get_ulong("slack_us", TMR_SLACK_US));
	tmr_exit_cost = 0;
	if (tickvisor_present()) {
		uint64_t cost = tv_hypercall(TV_HC_EXIT_COST, 0, 0, 0, NULL);

		if (cost != TV_HC_ERROR)
			tmr_exit_cost = cost;
	}
	if (tmr_exit_cost * TMR_SLACK_EXITS > tmr_slack_tsc)
		tmr_slack_tsc = tmr_exit_cost * TMR_SLACK_EXITS;
	handle_irq(TMR_VEC, tmr_irq);
	handle_irq(TMR_VEC_SENTINEL, tmr_irq);
	apic_sw_enable();
	tmr_stop();
	sti();
	return true;
}

void tmr_spin_until(uint64_t until)
{
	while (rdtsc() <= until)
		pause();
}

/* Could anything still wake a halted CPU? Only the timer can. */
static bool timer_can_wake(void)
{
	uint32_t lvtt = apic_read(LAPIC_LVT_TIMER);

	if (lvtt & LAPIC_LVT_MASKED)
		return false;
	if (lvtt_mode(lvtt) == LAPIC_TIMER_TSC_DEADLINE)
		return rdmsr(MSR_IA32_TSC_DEADLINE) != 0;
	return apic_read(LAPIC_TMCCT) != 0;
}

static bool wait_hlt(unsigned vec, uint32_t want, uint64_t until)
{
	/* IF=0 between the checks and STI;HLT, so an interrupt cannot slip
	 * in after the check and leave HLT waiting for nothing. */
	for (;;) {
		cli();
		if (tmr_count(vec) >= want || rdtsc() > until || !timer_can_wake())
			break;
		safe_halt();
	}
	/* Let in what became pending while IF was 0 (after STI's shadow). */
	sti();
	pause();
	pause();
	return tmr_count(vec) >= want;
}

bool tmr_wait(enum tmr_wait how, unsigned vec, uint32_t want, uint64_t until)
{
	if (how == TMR_HLT)
		return wait_hlt(vec, want, until);
	while (tmr_count(vec) < want && rdtsc() <= until)
		pause();
	return tmr_count(vec) >= want;
}

static bool quiet_hlt(unsigned vec, uint64_t window)
{
	uint32_t lvtt = apic_read(LAPIC_LVT_TIMER), before = tmr_count(vec);
	uint32_t s = tmr_count(TMR_VEC_SENTINEL);
	unsigned div = tmr_tdcr_divide(apic_read(LAPIC_TDCR));
	bool deadline = lvtt_mode(lvtt) == LAPIC_TIMER_TSC_DEADLINE, woke;
	uint64_t start, at;

	/* Same mode, other vector: not a mode change, nothing is disarmed. */
	apic_write(LAPIC_LVT_TIMER, (lvtt & ~(uint32_t)(LAPIC_LVT_VECTOR | LAPIC_LVT_MASKED)) |
		   TMR_VEC_SENTINEL);
	start = rdtsc();
	if (deadline)
		wrmsr(MSR_IA32_TSC_DEADLINE, start + window);
	else
		apic_write(LAPIC_TMICT, tmr_tsc_to_ticks(window, div));
	woke = wait_hlt(TMR_VEC_SENTINEL, s + 1, start + 2 * window + tmr_slack_tsc);
	at = tmr_stamp(TMR_VEC_SENTINEL, s) - start;
	if (deadline)
		wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	else
		apic_write(LAPIC_TMICT, 0);
	apic_write(LAPIC_LVT_TIMER, lvtt);
	if (woke && at >= window && tmr_count(vec) == before)
		return true;
	report_info("halted quiet check: %u interrupts on 0x%x, sentinel %s after %lu of "
		    "%lu cycles", tmr_count(vec) - before, vec, woke ? "woke" : "missing",
		    woke ? at : 0, window);
	return false;
}

bool tmr_quiet(enum tmr_wait how, unsigned vec, uint64_t window)
{
	uint32_t before = tmr_count(vec);
	uint64_t start;

	if (how == TMR_HLT)
		return quiet_hlt(vec, window);
	start = rdtsc();
	tmr_spin_until(start + window);
	if (tmr_count(vec) == before)
		return true;
	report_info("%u interrupts on 0x%x, the first %lu cycles into the window",
		    tmr_count(vec) - before, vec, tmr_stamp(vec, before) - start);
	return false;
}

void tmr_watch_tmcct(struct tmr_tmcct_watch *w, uint64_t until)
{
	uint32_t prev = 0, v;

	*w = (struct tmr_tmcct_watch){ .min = 0xffffffffu };
	while (rdtsc() <= until) {
		v = apic_read(LAPIC_TMCCT);
		if (w->samples && v < prev)
			w->drops++;
		else if (w->samples && v > prev)
			w->rises++;
		if (w->samples && !v && !prev)
			w->zero_pairs++;
		w->min = v < w->min ? v : w->min;
		w->max = v > w->max ? v : w->max;
		prev = v;
		w->samples++;
	}
}
