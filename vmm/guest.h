/* SPDX-License-Identifier: BSD-2-Clause */
/* Running the configured guests one after another. */
#ifndef VMM_GUEST_H
#define VMM_GUEST_H

#include "vmm/vcpu.h"

/* Runs every guest of the config in order, each with fresh RAM and
 * vCPUs; prints each guest's status and the summary. Returns the number
 * of guests that failed (nonzero status). */
uint32_t guests_run_all(const struct tv_config *cfg);

/* The vCPU loop: enters the guest until it ends. */
void vcpu_run(struct vcpu *v);

#endif
