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

void percpu_bind(unsigned apic_id)
{
	percpu(apic_id)->apic_id = apic_id;
}

static void set_online(struct percpu *p, bool online)
{
	bool was = __atomic_exchange_n(&p->online, online, __ATOMIC_ACQ_REL);

	if (was != online)
		__atomic_fetch_add(&nr_online, online ? 1u : -1u, __ATOMIC_RELEASE);
}

void percpu_set_online(bool online)
{
	set_online(this_cpu(), online);
}

void percpu_set_offline(unsigned cpu)
{
	set_online(percpu(cpu), false);
}

void percpu_init(unsigned apic_id)
{
	percpu_bind(apic_id);
	percpu_set_online(true);
}
