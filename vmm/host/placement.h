/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which CPU runs what (issue 22.9): vCPUs go to distinct cores before
 * they share one with a hyperthread sibling, and the housekeeper of
 * timer=posted goes to a core that runs no vCPU, so neither competes for
 * a core's execution units with a vCPU (KVM's advice for dedicated
 * instances, seed 002, pins the same way). Pure: CPUs are indices with a
 * core key each (drivers/cpu_topo.h), so it is unit-tested on the host.
 */
#ifndef VMM_HOST_PLACEMENT_H
#define VMM_HOST_PLACEMENT_H

#include "drivers/base.h"

/* order[0..n): CPU 0 first (the BSP runs vCPU 0, as it always has), then
 * each CPU whose core no earlier CPU of the order has, then the rest, all
 * in index order. vCPU i runs on order[i] unless cpus= says otherwise. */
void place_order(const uint32_t *core_key, uint32_t n, uint32_t *order);

/* The housekeeper's CPU: the lowest CPU in `free` whose core runs none of
 * `busy`, else the lowest in `free` (*shares_core set), else -1. */
int place_housekeeper(const uint32_t *core_key, uint32_t n, uint64_t free, uint64_t busy,
		      bool *shares_core);

#endif
