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

/* Ends the guest (first caller wins) with a status and a reason; the
 * vCPU run loops stop at their next exit. Returns -1 for convenience. */
int guest_end(struct guest *g, int status, const char *fmt, ...) __printf(3, 4);

/* Host pointer for a guest-physical range inside RAM, or NULL. */
void *guest_ram_ptr(const struct guest *g, uint64_t gpa, uint64_t len);

#endif
