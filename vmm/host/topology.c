// SPDX-License-Identifier: BSD-2-Clause
/* Host CPU topology and default vCPU placement (vmm/host/topology.h). */
#include "drivers/fmt.h"
#include "drivers/io.h"
#include "vmm/host/log.h"
#include "vmm/host/percpu.h"
#include "vmm/host/placement.h"
#include "vmm/host/topology.h"

struct host_topology host_topology;

/* Leaf 1FH where it lists levels, else 0BH, else leaves 1 and 4. */
static void topology_read_cpuid(struct topo_cpuid *c)
{
	uint32_t max = cpuid(0, 0).eax;

	*c = (struct topo_cpuid){ .leaf = 0 };
	if (max >= 0x1f && (cpuid(0x1f, 0).ebx & TOPO_EBX_COUNT))
		c->leaf = 0x1f;
	else if (max >= 0xb && (cpuid(0xb, 0).ebx & TOPO_EBX_COUNT))
		c->leaf = 0xb;
	for (uint32_t i = 0; c->leaf && i < TOPO_MAX_LEVELS; i++) {
		struct cpuid_regs r = cpuid(c->leaf, i);

		c->sub[c->nsub++] = (struct topo_subleaf){ r.eax, r.ebx, r.ecx };
		if (!(r.ecx & TOPO_ECX_TYPE))
			break;
	}
	c->leaf1_ebx = cpuid(1, 0).ebx;
	c->leaf1_edx = cpuid(1, 0).edx;
	c->leaf4_eax = max >= 4 ? cpuid(4, 0).eax : 0;
}

/* "cpu0, cpu2, cpu1, cpu3" or "cpu0-19": order[] with runs joined. */
static void order_text(char *buf, size_t n, const uint32_t *order, uint32_t k)
{
	size_t len = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < k && len + 1 < n; i++) {
		uint32_t first = i;

		while (i + 1 < k && order[i + 1] == order[i] + 1)
			i++;
		len += (size_t)fmt_snprintf(buf + len, n - len, i > first ? "%scpu%u-%u" : "%scpu%u",
					    len ? ", " : "", order[first], order[i]);
	}
}

void topology_init(uint32_t up)
{
	struct host_topology *h = &host_topology;
	uint32_t ids[TV_MAX_CPUS];
	struct topo_cpuid c;
	char text[320];

	h->ncpus = up;
	topology_read_cpuid(&c);
	topo_decode(&c, &h->topo);
	for (uint32_t i = 0; i < up; i++)
		ids[i] = cpus[i]->apic_id;
	topo_check_ids(&h->topo, ids, up);
	for (uint32_t i = 0; i < up; i++)
		h->core_key[i] = topo_core_key(&h->topo, ids[i]);
	h->ncores = topo_count_cores(&h->topo, ids, up);
	h->npkgs = topo_count_pkgs(&h->topo, ids, up);
	place_order(h->core_key, up, h->order);
	pr_info("topology: %u package%s, %u core%s, %u CPU%s up (%s: SMT shift %u, package "
		"shift %u, %u thread%s per core)", h->npkgs, h->npkgs == 1 ? "" : "s", h->ncores,
		h->ncores == 1 ? "" : "s", up, up == 1 ? "" : "s", h->topo.source,
		h->topo.smt_shift, h->topo.pkg_shift, h->topo.threads_per_core,
		h->topo.threads_per_core == 1 ? "" : "s");
	if (h->topo.repair)
		pr_info("topology: CPUID mended: %s", h->topo.repair);
	if (up < 2)
		return;
	order_text(text, sizeof(text), h->order, up);
	pr_info("placement: vCPUs fill %s in that order (%s); the housekeeper takes a core "
		"with no vCPU", text, topology_smt() ? "distinct cores first, then hyperthread "
		"siblings" : "one CPU per core");
}

uint32_t topology_vcpu_cpu(uint32_t i)
{
	return i < host_topology.ncpus ? host_topology.order[i] : i;
}

bool topology_smt(void)
{
	return host_topology.ncores < host_topology.ncpus;
}
