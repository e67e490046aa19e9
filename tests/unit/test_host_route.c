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
 *
 * And each input in the mode the platform wires it (issue 22.6): before,
 * every input was programmed edge-triggered, active high, also PCI lines
 * 16-23 that are level-triggered and active low on a real PCH. Sources
 * that agree on the rule: ACPI 6.4 "Interrupt Source Override Structure"
 * (MPS INTI flags; "conforms to the bus"), Intel's 6-series and 500-series
 * PCH datasheets ("If a timer is set for edge-triggered mode, the timers
 * should not be shared with any PCI interrupts"; timers 0-1 may only use
 * IRQ 20-23), FreeBSD's acpi_hpet (edge only on ISA IRQs 0-15, level with
 * Tn_INT_TYPE_CNF on the PCI range) and Fiasco's HPET timer (level, low).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/hpet.h"
#include "timer/host_route.h"

#define ROUTES(mask)    ((uint64_t)(mask) << 32)
/* An I/O APIC with n inputs, every one usable. */
#define PINS(n)         ((n) >= 32 ? ~0u : (uint32_t)BIT(n) - 1)
/* Bochs 3.0 after reset: periodic and 64-bit capable, any of 24 inputs. */
#define BOCHS_CAPS      (ROUTES(0xffffff) | BIT(4) | HPET_TN_SIZE_64)

static void test_bochs_distinct_inputs(void **state)
{
	const uint64_t caps[3] = { BOCHS_CAPS, BOCHS_CAPS, BOCHS_CAPS };

	/* The highest free one each, above the ISA inputs. */
	assert_int_equal(host_route_pin(caps, 0, PINS(24)), 23);
	assert_int_equal(host_route_pin(caps, 1, PINS(24)), 22);
	assert_int_equal(host_route_pin(caps, 2, PINS(24)), 21);
}

static void test_all_distinct_32(void **state)
{
	uint64_t caps[32];
	uint32_t seen = 0;

	for (unsigned i = 0; i < 32; i++)
		caps[i] = ROUTES(0xffffffff);
	for (unsigned n = 0; n < 32; n++) {
		int pin = host_route_pin(caps, n, PINS(32));

		assert_true(pin >= 0 && pin < 32);
		assert_false(seen & BIT(pin));
		seen |= (uint32_t)BIT(pin);
	}
	/* With fewer inputs than comparators, the rest get none. */
	assert_int_equal(host_route_pin(caps, 23, PINS(24)), 0);
	assert_int_equal(host_route_pin(caps, 24, PINS(24)), -1);
}

static void test_only_inputs_the_ioapic_has(void **state)
{
	const uint64_t caps[2] = { ROUTES(0x00f00000), ROUTES(0x00f00000) };

	/* A 16-input I/O APIC has none of 20-23. */
	assert_int_equal(host_route_pin(caps, 0, PINS(16)), -1);
	assert_int_equal(host_route_pin(caps, 1, PINS(16)), -1);
	assert_int_equal(host_route_pin(caps, 0, PINS(24)), 23);
	assert_int_equal(host_route_pin(caps, 1, PINS(24)), 22);
}

/* ICH-style: comparators 0 and 1 may only use input 23 here, 2 also 11.
 * The one that finds its inputs taken gets none (timer=hpet then falls
 * back on its CPU), without taking anything from the later ones. */
static void test_contended_inputs(void **state)
{
	const uint64_t caps[3] = { ROUTES(BIT(23)), ROUTES(BIT(23)),
				   ROUTES(BIT(23) | BIT(11)) };

	assert_int_equal(host_route_pin(caps, 0, PINS(24)), 23);
	assert_int_equal(host_route_pin(caps, 1, PINS(24)), -1);
	assert_int_equal(host_route_pin(caps, 2, PINS(24)), 11);
}

/* Comparators with FSB delivery send their own MSI: they take no input. */
static void test_fsb_takes_no_input(void **state)
{
	const uint64_t caps[3] = { BOCHS_CAPS | HPET_TN_FSB_CAP, BOCHS_CAPS,
				   ROUTES(0) | HPET_TN_FSB_CAP };

	assert_int_equal(host_route_pin(caps, 0, PINS(24)), -1);
	assert_int_equal(host_route_pin(caps, 1, PINS(24)), 23);
	assert_int_equal(host_route_pin(caps, 2, PINS(24)), -1);
}

static void test_no_route_cap(void **state)
{
	const uint64_t caps[2] = { ROUTES(0), BOCHS_CAPS };

	assert_int_equal(host_route_pin(caps, 0, PINS(24)), -1);
	assert_int_equal(host_route_pin(caps, 1, PINS(24)), 23);
	assert_int_equal(host_route_pin(caps, 1, PINS(0)), -1);
}

static struct host_route_mode mode_of(uint32_t gsi, const struct acpi_iso *isos, unsigned n)
{
	struct host_route_mode m = { true, true };

	assert_true(host_route_mode(gsi, isos, n, &m));
	return m;
}

/* Without overrides: ISA inputs edge/high, the PCI range level/low. */
static void test_mode_defaults(void **state)
{
	for (uint32_t gsi = 0; gsi < 16; gsi++) {
		struct host_route_mode m = mode_of(gsi, NULL, 0);

		assert_false(m.level);
		assert_false(m.active_low);
	}
	for (uint32_t gsi = 16; gsi < 24; gsi++) {
		struct host_route_mode m = mode_of(gsi, NULL, 0);

		assert_true(m.level);
		assert_true(m.active_low);
	}
}

/* OVMF's and QEMU's MADT: IRQ0 -> GSI2 conforming, IRQ9 (SCI) level and
 * active high, IRQ 5/10/11 level and active high. */
static void test_mode_overrides(void **state)
{
	const struct acpi_iso isos[] = {
		{ 0, 2, 0x0 }, { 9, 9, 0xd }, { 10, 10, 0xd }, { 3, 20, 0x0 }, { 4, 21, 0xf },
	};
	struct host_route_mode m;

	m = mode_of(2, isos, 5);                /* conforms: ISA, edge high */
	assert_false(m.level);
	assert_false(m.active_low);
	m = mode_of(9, isos, 5);
	assert_true(m.level);
	assert_false(m.active_low);
	m = mode_of(20, isos, 5);               /* an ISA source above 15: ISA rule */
	assert_false(m.level);
	assert_false(m.active_low);
	m = mode_of(21, isos, 5);
	assert_true(m.level);
	assert_true(m.active_low);
	m = mode_of(22, isos, 5);               /* no override: PCI */
	assert_true(m.level);
	assert_true(m.active_low);
}

/* Edge active-low and reserved encodings: no comparator drives them. */
static void test_mode_unusable(void **state)
{
	const struct acpi_iso isos[] = {
		{ 5, 5, 0x7 },          /* edge, active low */
		{ 6, 6, 0x2 },          /* polarity reserved */
		{ 7, 7, 0x8 },          /* trigger reserved */
	};
	struct host_route_mode m;
	const uint64_t caps[1] = { ROUTES(BIT(5) | BIT(6) | BIT(7) | BIT(3)) };

	assert_false(host_route_mode(5, isos, 3, &m));
	assert_false(host_route_mode(6, isos, 3, &m));
	assert_false(host_route_mode(7, isos, 3, &m));
	assert_int_equal(host_route_usable(8, 0, isos, 3), 0x1f);
	/* The comparator passes over them to the one it can drive. */
	assert_int_equal(host_route_pin(caps, 0, host_route_usable(8, 0, isos, 3)), 3);
	/* A second I/O APIC's inputs are GSIs from its base on. */
	assert_int_equal(host_route_usable(4, 4, isos, 3), BIT(0));
}

/* Bochs: inputs 23, 22, 21 as before, now level-triggered, active low
 * (Bochs's ioapic.cc ignores the polarity; its hpet.cc holds the line
 * while the status bit is set, so every interrupt must clear it). */
static void test_bochs_level(void **state)
{
	const uint64_t caps[3] = { BOCHS_CAPS, BOCHS_CAPS, BOCHS_CAPS };
	uint32_t usable = host_route_usable(24, 0, NULL, 0);

	assert_int_equal(usable, PINS(24));
	for (unsigned n = 0; n < 3; n++) {
		struct host_route_mode m = mode_of((uint32_t)host_route_pin(caps, n, usable), NULL, 0);

		assert_int_equal(host_route_pin(caps, n, usable), 23 - (int)n);
		assert_true(m.level && m.active_low);
	}
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
		cmocka_unit_test(test_mode_defaults),
		cmocka_unit_test(test_mode_overrides),
		cmocka_unit_test(test_mode_unusable),
		cmocka_unit_test(test_bochs_level),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
