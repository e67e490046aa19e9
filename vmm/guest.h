/* SPDX-License-Identifier: BSD-2-Clause */
/* Running the configured guests one after another. */
#ifndef VMM_GUEST_H
#define VMM_GUEST_H

#include "vmm/vcpu.h"

/* Runs every guest of the config in order, each with fresh RAM and
 * vCPUs; prints each guest's status and the summary. Returns the number
 * of guests that failed (nonzero status). */
uint32_t guests_run_all(const struct tv_config *cfg);

/* VM exits of all its vCPUs so far: of one basic reason, or all of them
 * for GUEST_EXITS_ALL. */
#define GUEST_EXITS_ALL (~0ull)
uint64_t guest_exits(const struct guest *g, uint64_t reason);

/* The vCPU loop: enters the guest until it ends. */
void vcpu_run(struct vcpu *v);

#endif
