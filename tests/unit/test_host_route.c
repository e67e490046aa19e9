// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer/host_route.c: every HPET comparator without FSB delivery gets an
 * I/O APIC input of its own (issue 15.6). timer/host.c used to give each
 * comparator the highest input its Tn_INT_ROUTE_CAP allows; all of
 * Bochs's comparators allow inputs 0-23 (hpet.cc: HPET_ROUTING_CAP
 * 0xffffff, no Tn_FSB_INT_DEL_CAP), so all three took input 23 and the
 * last CPU to write its redirection entry received every comparator's
 * interrupt. Capability layout: IA-PC HPET specification 1.0a, "Timer N
 * Configuration and Capability Register".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/hpet.h"
#include "timer/host_route.h"

#define ROUTES(mask)    ((uint64_t)(mask) << 32)
/* Bochs 3.0 after reset: periodic and 64-bit capable, any of 24 inputs. */
#define BOCHS_CAPS      (ROUTES(0xffffff) | BIT(4) | HPET_TN_SIZE_64)

static void test_bochs_distinct_inputs(void **state)
{
	const uint64_t caps[3] = { BOCHS_CAPS, BOCHS_CAPS, BOCHS_CAPS };

	/* The highest free one each, above the ISA inputs. */
	assert_int_equal(host_route_pin(caps, 0, 24), 23);
	assert_int_equal(host_route_pin(caps, 1, 24), 22);
	assert_int_equal(host_route_pin(caps, 2, 24), 21);
}

static void test_all_distinct_32(void **state)
{
	uint64_t caps[32];
	uint32_t seen = 0;

	for (unsigned i = 0; i < 32; i++)
		caps[i] = ROUTES(0xffffffff);
	for (unsigned n = 0; n < 32; n++) {
		int pin = host_route_pin(caps, n, 32);

		assert_true(pin >= 0 && pin < 32);
		assert_false(seen & BIT(pin));
		seen |= (uint32_t)BIT(pin);
	}
	/* With fewer inputs than comparators, the rest get none. */
	assert_int_equal(host_route_pin(caps, 23, 24), 0);
	assert_int_equal(host_route_pin(caps, 24, 24), -1);
}

static void test_only_inputs_the_ioapic_has(void **state)
{
	const uint64_t caps[2] = { ROUTES(0x00f00000), ROUTES(0x00f00000) };

	/* A 16-input I/O APIC has none of 20-23. */
	assert_int_equal(host_route_pin(caps, 0, 16), -1);
	assert_int_equal(host_route_pin(caps, 1, 16), -1);
	assert_int_equal(host_route_pin(caps, 0, 24), 23);
	assert_int_equal(host_route_pin(caps, 1, 24), 22);
}

/* ICH-style: comparators 0 and 1 may only use input 23 here, 2 also 11.
 * The one that finds its inputs taken gets none (timer=hpet then falls
 * back on its CPU), without taking anything from the later ones. */
static void test_contended_inputs(void **state)
{
	const uint64_t caps[3] = { ROUTES(BIT(23)), ROUTES(BIT(23)),
				   ROUTES(BIT(23) | BIT(11)) };

	assert_int_equal(host_route_pin(caps, 0, 24), 23);
	assert_int_equal(host_route_pin(caps, 1, 24), -1);
	assert_int_equal(host_route_pin(caps, 2, 24), 11);
}

/* Comparators with FSB delivery send their own MSI: they take no input. */
static void test_fsb_takes_no_input(void **state)
{
	const uint64_t caps[3] = { BOCHS_CAPS | HPET_TN_FSB_CAP, BOCHS_CAPS,
				   ROUTES(0) | HPET_TN_FSB_CAP };

	assert_int_equal(host_route_pin(caps, 0, 24), -1);
	assert_int_equal(host_route_pin(caps, 1, 24), 23);
	assert_int_equal(host_route_pin(caps, 2, 24), -1);
}

static void test_no_route_cap(void **state)
{
	const uint64_t caps[2] = { ROUTES(0), BOCHS_CAPS };

	assert_int_equal(host_route_pin(caps, 0, 24), -1);
	assert_int_equal(host_route_pin(caps, 1, 24), 23);
	assert_int_equal(host_route_pin(caps, 1, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bochs_distinct_inputs),
		cmocka_unit_test(test_all_distinct_32),
		cmocka_unit_test(test_only_inputs_the_ioapic_has),
		cmocka_unit_test(test_contended_inputs),
		cmocka_unit_test(test_fsb_takes_no_input),
		cmocka_unit_test(test_no_route_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
