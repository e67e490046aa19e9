/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * VMX-preemption timer arithmetic (SDM Vol. 3C, "VMX-Preemption Timer"):
 * the timer counts down once every 2^rate TSC cycles (rate from
 * IA32_VMX_MISC[4:0]) and the VMCS field is 32 bits. Pure, host-tested.
 */
#ifndef TIMER_PREEMPT_H
#define TIMER_PREEMPT_H

#include "drivers/base.h"

#define PREEMPT_VALUE_MAX 0xffffffffull

/* The value that makes the timer expire no earlier than host TSC
 * `deadline` (rounded up to a whole tick, since an early exit would only
 * come back with nothing to do), 0 when it is already due, saturated at
 * 32 bits: a saturated timer expires early and is simply re-armed from
 * the absolute deadline at the next entry. */
static inline uint64_t preempt_value(uint64_t deadline, uint64_t now, unsigned rate)
{
	uint64_t left, ticks;

	if (deadline <= now)
		return 0;
	left = deadline - now;
	ticks = (left >> rate) + ((left & ((1ull << rate) - 1)) ? 1 : 0);
	return ticks > PREEMPT_VALUE_MAX ? PREEMPT_VALUE_MAX : ticks;
}

#endif
