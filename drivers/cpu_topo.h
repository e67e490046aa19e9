/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where each CPU sits: package, core, thread (issue 22.9). The x2APIC ID
 * holds them as bit fields whose widths CPUID leaf 1FH (else 0BH) gives
 * level by level: "the number of bits to shift right on x2APIC ID to get
 * a unique topology ID of the next level type" (SDM Vol. 2A, CPUID, and
 * Vol. 3A "Hierarchical Mapping of Shared Resources"). Without those
 * leaves the older widths of leaf 01H (EBX[23:16], logical processors
 * per package) and leaf 04H (EAX[31:26], cores per package) serve, as in
 * Linux's detect_ht_early().
 *
 * Pure arithmetic: the caller executes CPUID and passes the subleaves, so
 * every case (and every emulator's mistake) is unit-tested on the host
 * (tests/unit/test_cpu_topo.c).
 */
#ifndef DRIVERS_CPU_TOPO_H
#define DRIVERS_CPU_TOPO_H

#include "drivers/base.h"

/* CPUID leaf 0BH/1FH, subleaf n. */
#define TOPO_EAX_SHIFT          BITS(4, 0)
#define TOPO_EBX_COUNT          BITS(15, 0)
#define TOPO_ECX_TYPE           BITS(15, 8)
#define TOPO_TYPE_INVALID       0u
#define TOPO_TYPE_SMT           1u
#define TOPO_TYPE_CORE          2u      /* 1FH adds module 3, tile 4, die 5, die group 6 */
#define TOPO_MAX_LEVELS         8u

struct topo_subleaf {
	uint32_t eax, ebx, ecx;
};

/* What CPUID says, as the caller read it on one CPU. */
struct topo_cpuid {
	uint32_t leaf;                  /* 0x1f, 0xb, or 0: only leaves 1 and 4 */
	uint32_t nsub;                  /* subleaves read, up to and with the first invalid */
	struct topo_subleaf sub[TOPO_MAX_LEVELS];
	uint32_t leaf1_ebx, leaf1_edx;  /* leaf 0 == leaf: the legacy widths */
	uint32_t leaf4_eax;             /* 0 when leaf 4 is absent */
};

struct cpu_topo {
	uint32_t smt_shift;             /* x2APIC ID >> smt_shift: the core */
	uint32_t pkg_shift;             /* x2APIC ID >> pkg_shift: the package */
	uint32_t threads_per_core;      /* what CPUID says (not what is up) */
	uint32_t threads_per_pkg;       /* logical processors of the package level */
	const char *source;             /* "CPUID leaf 0x1f", ... */
	const char *repair;             /* NULL, or what was wrong and mended */
};

/* The widths CPUID gives, mended where they cannot hold the counts the
 * same subleaves report (2^shift >= logical processors of the level). */
void topo_decode(const struct topo_cpuid *c, struct cpu_topo *t);
/*
 * Mends widths wider than the CPUs up allow: more of them share one core
 * (or package) than CPUID says a core (package) holds. Bochs 3.0 gives
 * every level a shift of at least 1, so with one thread per core its
 * CPUs, numbered 0, 1, 2..., would pair up as siblings. Real parts with
 * SMT off in firmware keep shift 1 but use only even APIC IDs, which
 * this leaves alone.
 */
void topo_check_ids(struct cpu_topo *t, const uint32_t *apic_ids, uint32_t n);

static inline uint32_t topo_core_key(const struct cpu_topo *t, uint32_t apic_id)
{
	return apic_id >> t->smt_shift;
}

static inline uint32_t topo_pkg(const struct cpu_topo *t, uint32_t apic_id)
{
	return apic_id >> t->pkg_shift;
}

/* Distinct values of key(apic_ids[i]) among n. */
uint32_t topo_count_cores(const struct cpu_topo *t, const uint32_t *apic_ids, uint32_t n);
uint32_t topo_count_pkgs(const struct cpu_topo *t, const uint32_t *apic_ids, uint32_t n);

#endif
