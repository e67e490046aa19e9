// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/apic_dest.c: the destinations of one fixed IPI to several CPUs
 * in x2APIC mode. The LDR rule, (ID[19:4] << 16) | 1 << ID[3:0], is the
 * SDM's ("Deriving Logical x2APIC ID from the Local x2APIC ID"), and
 * Bochs (cpu/apic.cc, the LDR set on entering x2APIC mode) and KVM
 * (lapic.c, kvm_apic_calc_x2apic_ldr) compute it the same; the expected
 * values below are written out by hand from it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <cmocka.h>

#include "drivers/apic_dest.h"

static void test_ldr(void **state)
{
	assert_int_equal(apic_x2apic_ldr(0), 0x00000001);
	assert_int_equal(apic_x2apic_ldr(5), 0x00000020);
	assert_int_equal(apic_x2apic_ldr(15), 0x00008000);
	assert_int_equal(apic_x2apic_ldr(16), 0x00010001);
	assert_int_equal(apic_x2apic_ldr(0x23), 0x00020008);
	assert_int_equal(apic_x2apic_ldr(0xfffff), 0xffff8000);
}

/* Three CPUs of one cluster: one logical IPI reaches them all. */
static void test_one_cluster(void **state)
{
	const uint32_t ids[] = { 1, 2, 3 };
	struct apic_dest d[3];

	assert_int_equal(apic_x2apic_dests(ids, 3, d), 1);
	assert_true(d[0].logical);
	assert_int_equal(d[0].dest, 0x0000000e);
}

/* Clusters 0 and 1 interleaved: two IPIs, in the order of first IDs. */
static void test_two_clusters(void **state)
{
	const uint32_t ids[] = { 17, 0, 31, 15, 16 };
	struct apic_dest d[5];

	assert_int_equal(apic_x2apic_dests(ids, 5, d), 2);
	assert_true(d[0].logical);
	assert_int_equal(d[0].dest, 0x00018003);       /* 16, 17, 31 */
	assert_true(d[1].logical);
	assert_int_equal(d[1].dest, 0x00008001);       /* 0, 15 */
}

/* IDs from 2^20 up have no logical x2APIC ID that reaches them alone:
 * each goes by physical destination, once. */
static void test_physical_beyond_logical(void **state)
{
	const uint32_t ids[] = { 0x100000, 4, 0x100000, 0x100001 };
	struct apic_dest d[4];

	assert_int_equal(apic_x2apic_dests(ids, 4, d), 3);
	assert_false(d[0].logical);
	assert_int_equal(d[0].dest, 0x100000);
	assert_true(d[1].logical);
	assert_int_equal(d[1].dest, 0x00000010);
	assert_false(d[2].logical);
	assert_int_equal(d[2].dest, 0x100001);
}

/* A CPU named twice is sent one IPI; none named, none sent. */
static void test_repeats_and_empty(void **state)
{
	const uint32_t ids[] = { 7, 7 };
	struct apic_dest d[2];

	assert_int_equal(apic_x2apic_dests(ids, 2, d), 1);
	assert_int_equal(d[0].dest, 0x00000080);
	assert_int_equal(apic_x2apic_dests(ids, 0, d), 0);
}

/* The cluster field is compared whole: IDs 0x10 and 0x100010 differ in
 * bit 20, beyond the field, so the second is physical, not cluster 1. */
static void test_cluster_field(void **state)
{
	const uint32_t ids[] = { 0x10, 0x100010, 0xffff0 };
	struct apic_dest d[3];

	assert_int_equal(apic_x2apic_dests(ids, 3, d), 3);
	assert_int_equal(d[0].dest, 0x00010001);
	assert_false(d[1].logical);
	assert_true(d[2].logical);
	assert_int_equal(d[2].dest, 0xffff0001);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ldr),
		cmocka_unit_test(test_one_cluster),
		cmocka_unit_test(test_two_clusters),
		cmocka_unit_test(test_physical_beyond_logical),
		cmocka_unit_test(test_repeats_and_empty),
		cmocka_unit_test(test_cluster_field),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
