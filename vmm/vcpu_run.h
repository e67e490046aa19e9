/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef VMM_VCPU_RUN_H
#define VMM_VCPU_RUN_H

#include "drivers/io.h"
#include "vmm/vcpu.h"

int vcpu_time_limit_hit(struct vcpu *v, const char *where);

/* Past the guest's time limit (timeout=): ends it, saying where the vCPU
 * was, and returns -1; else 0. Inline: the vCPU loop asks every time. */
static inline int vcpu_check_time_limit(struct vcpu *v, const char *where)
{
	uint64_t deadline = v->guest->deadline_tsc;

	if (likely(!deadline || rdtsc() <= deadline))
		return 0;
	return vcpu_time_limit_hit(v, where);
}

/* Delivers again the event whose delivery the last exit interrupted. */
void vcpu_reinject(struct vcpu *v);

#endif
