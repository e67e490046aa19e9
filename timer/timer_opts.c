// SPDX-License-Identifier: BSD-2-Clause
#include "timer/timer_opts.h"

const char *const timer_sel_names[TIMER_SEL_NR] = {
	[TIMER_SEL_AUTO] = "auto", [TIMER_SEL_PREEMPT] = "preempt",
	[TIMER_SEL_LAPIC] = "lapic", [TIMER_SEL_HPET] = "hpet", [TIMER_SEL_POSTED] = "posted",
};

const char *timer_sel_name(enum timer_backend_sel t)
{
	return (unsigned)t < TIMER_SEL_NR ? timer_sel_names[t] : "?";
}
