/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * VMX-preemption timer arithmetic (SDM Vol. 3C, "VMX-Preemption Timer"):
 * the timer counts down each time TSC bit `rate` changes, once every
 * 2^rate TSC cycles (rate from IA32_VMX_MISC[4:0]), and the VMCS field is
 * 32 bits. Pure, host-tested.
 */
#ifndef TIMER_PREEMPT_H
#define TIMER_PREEMPT_H

#include "drivers/base.h"

#define PREEMPT_VALUE_MAX 0xffffffffull

/*
 * The value that makes the timer expire no earlier than host TSC
 * `deadline`, 0 when it is already due, saturated at 32 bits: a saturated
 * timer expires early and is simply re-armed from the absolute deadline at
 * the next entry.
 *
 * SDM "VMX-Preemption Timer": the timer "counts down by 1 every time bit X
 * in the TSC changes", X = rate. It counts transitions, not cycles since
 * the entry: the first comes after 1 to 2^rate cycles, so a value of
 * ceil((deadline - now) / 2^rate) can expire up to a tick before the
 * deadline, and the exit only comes back with nothing to do. The value is
 * therefore the number of bit-X transitions from now up to the first at or
 * after the deadline: ceil(deadline / 2^rate) - floor(now / 2^rate). Bochs
 * (cpu/apic.cc, set_vmx_preemption_timer: fire = ((now >> rate) + value)
 * << rate) models it so; KVM's nested emulation (rate 5) fires value << 5
 * cycles after the entry and is then at most two ticks late, never early.
 */
static inline uint64_t preempt_value(uint64_t deadline, uint64_t now, unsigned rate)
{
	uint64_t ticks;

	if (deadline <= now)
		return 0;
	/* ceil(deadline / 2^rate) without overflow: deadline > now >= 0. */
	ticks = ((deadline - 1) >> rate) + 1 - (now >> rate);
	return ticks > PREEMPT_VALUE_MAX ? PREEMPT_VALUE_MAX : ticks;
}

#endif
