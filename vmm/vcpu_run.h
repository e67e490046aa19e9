/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef VMM_VCPU_RUN_H
#define VMM_VCPU_RUN_H

#include "vmm/vcpu.h"

/* Delivers again the event whose delivery the last exit interrupted. */
void vcpu_reinject(struct vcpu *v);

#endif
