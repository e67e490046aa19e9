// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/host/placement.c: vCPUs to distinct cores before siblings, the
 * housekeeper to a core without a vCPU (issue 22.9). Core keys are what
 * drivers/cpu_topo.c makes of the APIC IDs (x2APIC ID >> SMT shift).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "vmm/host/placement.h"

static void check_order(const uint32_t *keys, uint32_t n, const uint32_t *want)
{
	uint32_t order[16];

	place_order(keys, n, order);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(order[i], want[i]);
}

static void test_no_smt_keeps_index_order(void **state)
{
	const uint32_t keys[] = { 0, 1, 2, 3 }, want[] = { 0, 1, 2, 3 };

	check_order(keys, 4, want);
}

/* Siblings numbered next to each other (QEMU, Bochs count=1:2:2). */
static void test_siblings_adjacent(void **state)
{
	const uint32_t keys[] = { 0, 0, 1, 1, 2, 2 }, want[] = { 0, 2, 4, 1, 3, 5 };

	check_order(keys, 6, want);
}

/* Siblings numbered half the machine apart (many firmwares' MADT order). */
static void test_siblings_apart(void **state)
{
	const uint32_t keys[] = { 0, 1, 0, 1 }, want[] = { 0, 1, 2, 3 };

	check_order(keys, 4, want);
}

static void test_housekeeper_free_core(void **state)
{
	const uint32_t keys[] = { 0, 0, 1, 1 };
	bool shares;

	/* One vCPU on cpu0: cpu1 is its sibling, cpu2 has a core to itself. */
	assert_int_equal(place_housekeeper(keys, 4, 0xf, BIT(0), &shares), 2);
	assert_false(shares);
}

static void test_housekeeper_sibling_last(void **state)
{
	const uint32_t keys[] = { 0, 0, 1, 1 };
	bool shares;

	/* vCPUs on both cores: the lowest free sibling, said so. */
	assert_int_equal(place_housekeeper(keys, 4, 0xf, BIT(0) | BIT(2), &shares), 1);
	assert_true(shares);
}

static void test_housekeeper_none(void **state)
{
	const uint32_t keys[] = { 0, 1 };
	bool shares;

	assert_int_equal(place_housekeeper(keys, 2, 0x3, 0x3, &shares), -1);
	assert_false(shares);
	/* A CPU not up is not free. */
	assert_int_equal(place_housekeeper(keys, 2, 0x1, 0x1, &shares), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_smt_keeps_index_order),
		cmocka_unit_test(test_siblings_adjacent),
		cmocka_unit_test(test_siblings_apart),
		cmocka_unit_test(test_housekeeper_free_core),
		cmocka_unit_test(test_housekeeper_sibling_last),
		cmocka_unit_test(test_housekeeper_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
