// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/cpu_topo.c: package/core/thread from the x2APIC ID (issue 22.9).
 * The rule: leaf 0BH/1FH subleaf n gives in EAX[4:0] the shift that
 * leaves the ID of the next level up, cumulative from bit 0, and in
 * EBX[15:0] the logical processors of the level (SDM Vol. 2A, CPUID;
 * Vol. 3A "Identifying Topology Levels"). Linux's x86 topology scan reads
 * the same way and knows only types 1-2 in leaf 0BH. Bochs 3.0's
 * cpu/cpuid.cc gives per-level shifts, never 0, and a type 3 in 0BH; the
 * Bochs cases are the values it returns for `cpu: count=P:C:T` with the
 * APIC IDs it assigns (the CPU index). Real-part cases follow the SDM's
 * own example layout (SMT shift 1, core level 4 on an 8-core part) and
 * QEMU's encoding of -smp 4,cores=2,threads=2.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/cpu_topo.h"

#define SUB(shift, count, type, n) { (shift), (count), ((type) << 8) | (n) }

static struct cpu_topo decode(uint32_t leaf, const struct topo_subleaf *s, uint32_t n,
			      const uint32_t *ids, uint32_t nids)
{
	struct topo_cpuid c = { .leaf = leaf, .nsub = n };
	struct cpu_topo t;

	for (uint32_t i = 0; i < n; i++)
		c.sub[i] = s[i];
	topo_decode(&c, &t);
	topo_check_ids(&t, ids, nids);
	return t;
}

static const uint32_t seq4[] = { 0, 1, 2, 3 };

/* count=4: four packages of one core and one thread each. */
static void test_bochs_four_packages(void **state)
{
	const struct topo_subleaf s[] = { SUB(1, 1, 1, 0), SUB(1, 1, 2, 1), SUB(2, 4, 3, 2),
					  SUB(0, 0, 0, 3) };
	struct cpu_topo t = decode(0xb, s, 4, seq4, 4);

	assert_int_equal(t.smt_shift, 0);
	assert_int_equal(t.pkg_shift, 0);
	assert_int_equal(topo_count_cores(&t, seq4, 4), 4);
	assert_int_equal(topo_count_pkgs(&t, seq4, 4), 4);
	assert_non_null(t.repair);
}

/* count=1:2:2: one package, two cores of two threads. */
static void test_bochs_two_by_two(void **state)
{
	const struct topo_subleaf s[] = { SUB(1, 2, 1, 0), SUB(1, 4, 2, 1), SUB(0, 0, 0, 2) };
	struct cpu_topo t = decode(0xb, s, 3, seq4, 4);

	assert_int_equal(t.smt_shift, 1);
	assert_int_equal(t.pkg_shift, 2);
	assert_int_equal(t.threads_per_core, 2);
	assert_int_equal(topo_core_key(&t, 2), topo_core_key(&t, 3));
	assert_int_not_equal(topo_core_key(&t, 1), topo_core_key(&t, 2));
	assert_int_equal(topo_count_cores(&t, seq4, 4), 2);
	assert_int_equal(topo_count_pkgs(&t, seq4, 4), 1);
	assert_non_null(t.repair);
}

/* count=1:2:1: two cores, no siblings, though subleaf 0 says shift 1. */
static void test_bochs_two_cores(void **state)
{
	const struct topo_subleaf s[] = { SUB(1, 1, 1, 0), SUB(1, 2, 2, 1), SUB(0, 0, 0, 2) };
	struct cpu_topo t = decode(0xb, s, 3, seq4, 2);

	assert_int_equal(t.smt_shift, 0);
	assert_int_equal(topo_count_cores(&t, seq4, 2), 2);
	assert_int_equal(topo_count_pkgs(&t, seq4, 2), 1);
}

/* QEMU -smp 4,cores=2,threads=2 and a real SMT part: nothing to mend. */
static void test_qemu_smt2(void **state)
{
	const struct topo_subleaf s[] = { SUB(1, 2, 1, 0), SUB(2, 4, 2, 1), SUB(0, 0, 0, 2) };
	struct cpu_topo t = decode(0xb, s, 3, seq4, 4);

	assert_null(t.repair);
	assert_int_equal(t.smt_shift, 1);
	assert_int_equal(t.pkg_shift, 2);
	assert_int_equal(topo_count_cores(&t, seq4, 4), 2);
}

/* 8 cores with SMT off in firmware: shift 1 stays, the IDs are even. */
static void test_real_smt_off(void **state)
{
	const struct topo_subleaf s[] = { SUB(1, 1, 1, 0), SUB(4, 8, 2, 1), SUB(0, 0, 0, 2) };
	const uint32_t ids[] = { 0, 2, 4, 6, 8, 10, 12, 14 };
	struct cpu_topo t = decode(0xb, s, 3, ids, 8);

	assert_null(t.repair);
	assert_int_equal(t.smt_shift, 1);
	assert_int_equal(topo_count_cores(&t, ids, 8), 8);
	assert_int_equal(topo_count_pkgs(&t, ids, 8), 1);
}

/* Two packages of 8 cores x 2 threads: package IDs from bit 4. */
static void test_real_two_packages(void **state)
{
	const struct topo_subleaf s[] = { SUB(1, 2, 1, 0), SUB(4, 16, 2, 1), SUB(0, 0, 0, 2) };
	const uint32_t ids[] = { 0, 1, 2, 3, 16, 17, 18, 19 };
	struct cpu_topo t = decode(0xb, s, 3, ids, 8);

	assert_null(t.repair);
	assert_int_equal(topo_count_cores(&t, ids, 8), 4);
	assert_int_equal(topo_count_pkgs(&t, ids, 8), 2);
	assert_int_equal(topo_pkg(&t, 17), 1);
}

/* Leaf 1FH: a die level counts; in 0BH the same type 5 is not known. */
static void test_leaf_1f_die(void **state)
{
	const struct topo_subleaf s[] = { SUB(1, 2, 1, 0), SUB(3, 8, 2, 1), SUB(5, 32, 5, 2),
					  SUB(0, 0, 0, 3) };
	const uint32_t ids[] = { 0, 1, 8, 9 };
	struct cpu_topo t1f = decode(0x1f, s, 4, ids, 4), tb = decode(0xb, s, 4, ids, 4);

	assert_int_equal(t1f.pkg_shift, 5);
	assert_int_equal(topo_count_pkgs(&t1f, ids, 4), 1);
	assert_int_equal(tb.pkg_shift, 3);
	assert_int_equal(topo_count_pkgs(&tb, ids, 4), 2);
}

/* Leaves 1 and 4 only: 4 logical processors in 2 cores per package. */
static void test_legacy(void **state)
{
	struct topo_cpuid c = { .leaf = 0, .leaf1_ebx = 4u << 16, .leaf1_edx = 1u << 28,
				.leaf4_eax = 1u << 26 };
	struct cpu_topo t;

	topo_decode(&c, &t);
	assert_int_equal(t.smt_shift, 1);
	assert_int_equal(t.pkg_shift, 2);
	c.leaf1_edx = 0;        /* no HTT: one thread, one core */
	topo_decode(&c, &t);
	assert_int_equal(t.smt_shift, 0);
	assert_int_equal(t.pkg_shift, 0);
}

/* A topology leaf whose first subleaf is invalid falls back, said so. */
static void test_empty_leaf(void **state)
{
	const struct topo_subleaf s[] = { SUB(0, 0, 0, 0) };
	struct cpu_topo t = decode(0xb, s, 1, seq4, 1);

	assert_int_equal(t.smt_shift, 0);
	assert_non_null(t.repair);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bochs_four_packages),
		cmocka_unit_test(test_bochs_two_by_two),
		cmocka_unit_test(test_bochs_two_cores),
		cmocka_unit_test(test_qemu_smt2),
		cmocka_unit_test(test_real_smt_off),
		cmocka_unit_test(test_real_two_packages),
		cmocka_unit_test(test_leaf_1f_die),
		cmocka_unit_test(test_legacy),
		cmocka_unit_test(test_empty_leaf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
