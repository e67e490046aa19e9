// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/reset.c: which ways end=reset tries, in which order (issue
 * 22.7). The order and the FADT register's rules follow the ACPI spec
 * ("Reset Register": RESET_REG_SUP, 8 bits at offset 0, I/O, memory or
 * PCI configuration space of bus 0) and Linux's arch/x86/kernel/reboot.c
 * (BOOT_ACPI first where the FADT has it, then 0xCF9, then the 8042,
 * acpi_reboot() refusing other widths and spaces); the GAS's PCI address
 * layout (device 47:32, function 31:16, offset 15:0) is ACPICA's
 * (acpi_hw_write_port / ACPI_PCI_DEVICE, ACPI_PCI_FUNCTION) as Linux's
 * acpi_reboot() decodes it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/reset.h"

static struct acpi_info q35(void)
{
	/* QEMU q35's FADT: RESET_REG I/O 0xCF9, value 0xF (as tickvisor reads it there), RESET_REG_SUP. */
	return (struct acpi_info){
		.has_fadt = true, .reset_supported = true, .reset_value = 0xf,
		.reset_reg = { .space_id = ACPI_GAS_IO, .bit_width = 8, .address = 0xcf9 },
	};
}

static void check_plan(const struct acpi_info *a, enum reset_method first,
		       const enum reset_method *want, unsigned n)
{
	enum reset_method got[RESET_METHODS];

	assert_int_equal(reset_plan(a, first, got), n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

static void test_order(void **state)
{
	struct acpi_info a = q35();
	static const enum reset_method all[] = { RESET_FADT, RESET_CF9, RESET_KBC, RESET_EFI };

	assert_null(reset_fadt_unusable(&a));
	check_plan(&a, RESET_FADT, all, 4);
	/* inject=reset-from: starts later and skips what comes before. */
	check_plan(&a, RESET_CF9, all + 1, 3);
	check_plan(&a, RESET_KBC, all + 2, 2);
	check_plan(&a, RESET_EFI, all + 3, 1);
}

static void test_fadt_skipped(void **state)
{
	static const enum reset_method rest[] = { RESET_CF9, RESET_KBC, RESET_EFI };
	struct acpi_info a;

	/* QEMU's pc: a RESET_REG, but RESET_REG_SUP clear. */
	a = q35();
	a.reset_supported = false;
	assert_string_equal(reset_fadt_unusable(&a), "the FADT does not set RESET_REG_SUP");
	check_plan(&a, RESET_FADT, rest, 3);
	a = (struct acpi_info){ 0 };
	assert_string_equal(reset_fadt_unusable(&a), "no FADT");
	check_plan(&a, RESET_FADT, rest, 3);
	a = q35();
	a.reset_reg.address = 0;
	assert_non_null(reset_fadt_unusable(&a));
	a = q35();
	a.reset_reg.bit_width = 16;
	assert_non_null(reset_fadt_unusable(&a));
	a = q35();
	a.reset_reg.bit_offset = 1;
	assert_non_null(reset_fadt_unusable(&a));
	a = q35();
	a.reset_reg.address = 0x10000;
	assert_non_null(reset_fadt_unusable(&a));
	a = q35();
	a.reset_reg.space_id = 0x7f;                /* functional fixed hardware */
	assert_non_null(reset_fadt_unusable(&a));
	check_plan(&a, RESET_FADT, rest, 3);
}

static void test_fadt_spaces(void **state)
{
	struct acpi_info a = q35();

	a.reset_reg.space_id = ACPI_GAS_MEMORY;
	a.reset_reg.address = 0xfed00000ull;
	assert_null(reset_fadt_unusable(&a));
	/* PCI: device 31, function 0, register 0x44 (an ICH-style layout). */
	a.reset_reg.space_id = ACPI_GAS_PCI_CFG;
	a.reset_reg.address = 31ull << 32 | 0ull << 16 | 0x44;
	assert_null(reset_fadt_unusable(&a));
	assert_int_equal(reset_pci_cf8(a.reset_reg.address), 0x8000f844u);
	a.reset_reg.address = 2ull << 32 | 3ull << 16 | 0x4b;
	assert_int_equal(reset_pci_cf8(a.reset_reg.address), 0x80001348u);
	a.reset_reg.address = 32ull << 32;                  /* no device 32 */
	assert_non_null(reset_fadt_unusable(&a));
	a.reset_reg.address = 8ull << 16;                   /* no function 8 */
	assert_non_null(reset_fadt_unusable(&a));
	a.reset_reg.address = 0x100;                        /* beyond 256 bytes */
	assert_non_null(reset_fadt_unusable(&a));
}

static void test_names(void **state)
{
	for (unsigned m = 0; m < RESET_METHODS; m++)
		assert_string_not_equal(reset_method_name((enum reset_method)m), "?");
	assert_string_equal(reset_method_name(RESET_METHODS), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_fadt_skipped),
		cmocka_unit_test(test_fadt_spaces),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
