/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef VMM_VCPU_RUN_H
#define VMM_VCPU_RUN_H

#include "vmm/vcpu.h"

/* Past the guest's time limit (timeout=): ends it, saying where the vCPU
 * was, and returns -1; else 0. */
int vcpu_check_time_limit(struct vcpu *v, const char *where);

/* Delivers again the event whose delivery the last exit interrupted. */
void vcpu_reinject(struct vcpu *v);

#endif
