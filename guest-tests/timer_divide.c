// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer_divide: the divide configuration register (Intel SDM Vol. 3A,
 * "APIC Timer", "Divide Configuration Register"): bits 0, 1 and 3 select
 * divide by 2, 4, ... 128 (000b..110b) or 1 (111b); bit 2 is reserved, so
 * only the divide bits are checked on read-back. For every divide value
 * a one-shot count lasts count x divide APIC clocks, and TMCCT runs no
 * faster than the divided clock. Each timing check runs twice: spinning
 * with IF=1, then halted (STI; HLT).
 *
 * Arguments: slack_us=N (how late an interrupt may be, default 50).
 */
#include "lib/guest.h"
#include "lib/timer_util.h"

#define COUNT                   4000u   /* 80 us at divide 1, 10 ms at 128 (50 MHz) */

static const unsigned divides[] = { 1, 2, 4, 8, 16, 32, 64, 128 };

static void test_readback(void)
{
	for (unsigned i = 0; i < ARRAY_SIZE(divides); i++) {
		uint32_t v = tmr_tdcr(divides[i]), r, r2;

		apic_write(LAPIC_TDCR, v);
		r = apic_read(LAPIC_TDCR);
		apic_write(LAPIC_TDCR, v | BIT(2));
		r2 = apic_read(LAPIC_TDCR);
		report((r & LAPIC_TDCR_DIVIDE) == v && (r2 & LAPIC_TDCR_DIVIDE) == v,
		       "TDCR 0x%x (divide %u) reads back 0x%x, with bit 2 set 0x%x",
		       v, divides[i], r, r2);
	}
	apic_write(LAPIC_TDCR, tmr_tdcr(1));
}

static void test_divide(enum tmr_wait how, unsigned div)
{
	uint64_t len = tmr_ticks_to_tsc(COUNT, div), per_tick = tmr_ticks_to_tsc(1, div);
	uint64_t t0, t1, at;
	uint32_t tmcct, ran;
	bool fired;

	tmr_stop();
	apic_write(LAPIC_TDCR, tmr_tdcr(div));
	apic_write(LAPIC_LVT_TIMER, tmr_lvtt(LAPIC_TIMER_ONESHOT, TMR_VEC, false));
	t0 = rdtsc();
	apic_write(LAPIC_TMICT, COUNT);
	tmcct = apic_read(LAPIC_TMCCT);
	t1 = rdtsc();
	fired = tmr_wait(how, TMR_VEC, 1, t0 + 2 * len + tmr_slack_tsc);
	at = tmr_stamp(TMR_VEC, 0) - t0;
	/* Ticks gone by the read: at most the whole ones in t1 - t0, plus
	 * one for a tick boundary right after the write. */
	ran = COUNT - tmcct;
	report(tmcct && tmcct <= COUNT && ran <= (t1 - t0) / per_tick + 1,
	       "divide %u: TMCCT %u a read after TMICT %u (%lu cycles, %lu per tick)",
	       div, tmcct, COUNT, t1 - t0, per_tick);
	report(fired && at >= len && at < len + tmr_slack_tsc,
	       "divide %u: fires after %lu cycles, count x divide is %lu",
	       div, fired ? at : 0, len);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("timer_divide");
	if (tmr_init()) {
		test_readback();
		for (enum tmr_wait how = 0; how < TMR_NR_WAITS; how++) {
			report_prefix_push(tmr_wait_name[how]);
			for (unsigned i = 0; i < ARRAY_SIZE(divides); i++)
				test_divide(how, divides[i]);
			report_prefix_pop();
		}
		tmr_stop();
	}
	report_prefix_pop();
	return report_summary();
}
