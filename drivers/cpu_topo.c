// SPDX-License-Identifier: BSD-2-Clause
/*
 * CPU topology from CPUID (drivers/cpu_topo.h). Sources read and agreeing
 * on the decode: the SDM (CPUID leaf 0BH/1FH, "Identifying Topology
 * Levels"), Linux's x86 topology scan (shifts are cumulative; leaf
 * 0BH knows only the SMT and core types, 1FH up to die group) and Bochs 3.0's
 * cpu/cpuid.cc (get_std_cpuid_extended_topology_leaf), whose shifts are
 * per level rather than cumulative and never 0: the mending below exists
 * for it, and costs real parts nothing.
 */
#include "drivers/cpu_topo.h"

/* The smallest s with 2^s >= n (0 for n <= 1). */
static uint32_t clog2(uint32_t n)
{
	uint32_t s = 0;

	while (s < 31 && (1u << s) < n)
		s++;
	return s;
}

static uint32_t max3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t m = a > b ? a : b;

	return m > c ? m : c;
}

/* Leaf 0BH defines the SMT and core types only; 1FH up to die group. */
static bool type_known(uint32_t leaf, uint32_t type)
{
	return type != TOPO_TYPE_INVALID && (leaf == 0x1f ? type <= 6u : type <= TOPO_TYPE_CORE);
}

static void decode_legacy(const struct topo_cpuid *c, struct cpu_topo *t)
{
	uint32_t logical = 1, cores = 1;

	t->source = "CPUID leaves 0x1 and 0x4";
	if (c->leaf1_edx & BIT(28))             /* HTT: EBX[23:16] is meaningful */
		logical = (c->leaf1_ebx >> 16) & 0xffu;
	if (c->leaf4_eax)
		cores = ((c->leaf4_eax >> 26) & 0x3fu) + 1;
	if (!logical)
		logical = 1;
	if (cores > logical)
		cores = logical;
	t->threads_per_core = logical / cores ? logical / cores : 1;
	t->threads_per_pkg = logical;
	t->smt_shift = clog2(t->threads_per_core);
	t->pkg_shift = clog2(logical);
	if (t->pkg_shift < t->smt_shift)
		t->pkg_shift = t->smt_shift;
}

void topo_decode(const struct topo_cpuid *c, struct cpu_topo *t)
{
	uint32_t prev = 0;
	bool any = false;

	*t = (struct cpu_topo){ .threads_per_core = 1, .threads_per_pkg = 1 };
	if (c->leaf != 0xb && c->leaf != 0x1f) {
		decode_legacy(c, t);
		return;
	}
	t->source = c->leaf == 0x1f ? "CPUID leaf 0x1f" : "CPUID leaf 0xb";
	for (uint32_t i = 0; i < c->nsub && i < TOPO_MAX_LEVELS; i++) {
		const struct topo_subleaf *s = &c->sub[i];
		uint32_t type = (s->ecx & TOPO_ECX_TYPE) >> 8, count = s->ebx & TOPO_EBX_COUNT;
		uint32_t raw = s->eax & TOPO_EAX_SHIFT, shift;

		if (type == TOPO_TYPE_INVALID)
			break;
		if (!type_known(c->leaf, type))
			continue;
		shift = max3(raw, clog2(count), prev);
		if (shift != raw && !t->repair)
			t->repair = "a level's shift is too narrow for its own count or "
				    "for the level below (per-level, not cumulative)";
		if (type == TOPO_TYPE_SMT) {
			t->smt_shift = shift;
			t->threads_per_core = count ? count : 1;
		}
		t->pkg_shift = shift;
		t->threads_per_pkg = count ? count : 1;
		prev = shift;
		any = true;
	}
	if (!any) {
		struct topo_cpuid legacy = *c;

		legacy.leaf = 0;
		decode_legacy(&legacy, t);
		t->repair = "the topology leaf lists no level";
	}
}

/* The most of n APIC IDs that agree above bit `shift`. */
static uint32_t most_sharing(const uint32_t *ids, uint32_t n, uint32_t shift)
{
	uint32_t most = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t same = 0;

		for (uint32_t j = 0; j < n; j++)
			same += (ids[j] >> shift) == (ids[i] >> shift);
		if (same > most)
			most = same;
	}
	return most;
}

void topo_check_ids(struct cpu_topo *t, const uint32_t *apic_ids, uint32_t n)
{
	if (most_sharing(apic_ids, n, t->smt_shift) > t->threads_per_core) {
		t->smt_shift = clog2(t->threads_per_core);
		t->repair = "more CPUs share a core than a core has threads: SMT shift "
			    "taken from the thread count";
	}
	if (t->pkg_shift < t->smt_shift)
		t->pkg_shift = t->smt_shift;
	if (most_sharing(apic_ids, n, t->pkg_shift) > t->threads_per_pkg) {
		uint32_t s = clog2(t->threads_per_pkg);

		t->pkg_shift = s > t->smt_shift ? s : t->smt_shift;
		t->repair = "more CPUs share a package than it has threads: package shift "
			    "taken from the thread count";
	}
}

static uint32_t count_distinct(const uint32_t *ids, uint32_t n, uint32_t shift)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		bool seen = false;

		for (uint32_t j = 0; j < i && !seen; j++)
			seen = (ids[j] >> shift) == (ids[i] >> shift);
		k += !seen;
	}
	return k;
}

uint32_t topo_count_cores(const struct cpu_topo *t, const uint32_t *apic_ids, uint32_t n)
{
	return count_distinct(apic_ids, n, t->smt_shift);
}

uint32_t topo_count_pkgs(const struct cpu_topo *t, const uint32_t *apic_ids, uint32_t n)
{
	return count_distinct(apic_ids, n, t->pkg_shift);
}
