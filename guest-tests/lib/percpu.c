// SPDX-License-Identifier: BSD-2-Clause
/* Per-CPU areas; see percpu.h for why data and stack share one block. */
#include "lib/percpu.h"

struct cpu_area cpu_areas[MAX_CPUS];

/*
 * boot.asm picks each CPU's stack with these absolute symbols, so the
 * sizes are written down once, here in C, never typed in assembly.
 */
asm(".globl guest_cpu_area_size\n\t.set guest_cpu_area_size, " STR(CPU_AREA_SIZE) "\n\t"
    ".globl guest_max_cpus\n\t.set guest_max_cpus, " STR(MAX_CPUS));

static uint32_t nr_online;

unsigned cpus_online(void)
{
	return __atomic_load_n(&nr_online, __ATOMIC_ACQUIRE);
}

void percpu_init(unsigned apic_id)
{
	struct percpu *p = percpu(apic_id);

	p->apic_id = apic_id;
	p->online = true;
	__atomic_fetch_add(&nr_online, 1, __ATOMIC_RELEASE);
}
