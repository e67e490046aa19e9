/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The host's CPU topology and the default placement of vCPUs on it
 * (issue 22.9): drivers/cpu_topo.c decodes, vmm/host/placement.c orders,
 * this file reads CPUID, keeps the result and prints it.
 */
#ifndef VMM_HOST_TOPOLOGY_H
#define VMM_HOST_TOPOLOGY_H

#include "drivers/cpu_topo.h"
#include "vmm/host/options.h"

struct host_topology {
	struct cpu_topo topo;
	uint32_t ncpus;                         /* CPUs up when it was taken */
	uint32_t ncores, npkgs;                 /* distinct among them */
	uint32_t core_key[TV_MAX_CPUS];         /* of cpu n: x2APIC ID >> SMT shift */
	uint32_t order[TV_MAX_CPUS];            /* vCPU i's default CPU */
};

extern struct host_topology host_topology;

/* After the APs are up: topology and placement of the `up` CPUs, printed
 * as the "topology:" and "placement:" lines. */
void topology_init(uint32_t up);
/* vCPU i's CPU when cpus= does not name one: distinct cores first. */
uint32_t topology_vcpu_cpu(uint32_t i);
/* True when a CPU up shares its core with another (SMT in use). */
bool topology_smt(void);

#endif
