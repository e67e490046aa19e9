// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/mce.c: the verdict on a machine check from IA32_MCG_STATUS and
 * the banks' IA32_MCi_STATUS (Intel SDM Vol. 3B, "Machine-Check Software
 * Handler Guidelines for Error Recovery"; Linux's mce_severity() ranks the
 * same conditions alike, a guest where it has a user task). The bank
 * values below are the SDM's own classes: corrected (UC=0), UCNA (UC=1,
 * S=0), SRAO (UC, S, AR=0), SRAR (UC, S, AR), PCC.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/mce.h"

#define CAP_SER         (MCG_CAP_SER_P | 10)    /* 10 banks, recovery */
#define CAP_NOSER       10u
#define RIPV_EIPV       (MCG_STATUS_RIPV | MCG_STATUS_EIPV | MCG_STATUS_MCIP)
#define EIPV_ONLY       (MCG_STATUS_EIPV | MCG_STATUS_MCIP)
#define VAL_EN          (MCI_STATUS_VAL | MCI_STATUS_EN)
#define CORRECTED       (VAL_EN | 0x0150)       /* memory read error, corrected */
#define UCNA            (VAL_EN | MCI_STATUS_UC | MCI_STATUS_ADDRV)
#define SRAO            (VAL_EN | MCI_STATUS_UC | MCI_STATUS_S | MCI_STATUS_ADDRV)
#define SRAR            (SRAO | MCI_STATUS_AR)
#define FATAL_PCC       (VAL_EN | MCI_STATUS_UC | MCI_STATUS_PCC)

static enum mce_verdict judge1(uint64_t cap, uint64_t mcg, uint64_t status, bool in_guest)
{
	struct mce_record r = { .mcg_cap = cap, .mcg_status = mcg, .nbanks = 1 };
	const char *why = NULL;
	enum mce_verdict v;

	r.bank[0] = (struct mce_bank){ .bank = 3, .status = status };
	v = mce_judge(&r, in_guest, &why);
	assert_non_null(why);
	return v;
}

static void test_corrected_resumes(void **state)
{
	assert_int_equal(judge1(CAP_SER, RIPV_EIPV, CORRECTED, true), MCE_RESUME);
	assert_int_equal(judge1(CAP_NOSER, RIPV_EIPV, CORRECTED, false), MCE_RESUME);
}

static void test_pcc_is_fatal_anywhere(void **state)
{
	assert_int_equal(judge1(CAP_SER, RIPV_EIPV, FATAL_PCC, true), MCE_FATAL);
	assert_int_equal(judge1(CAP_SER, RIPV_EIPV, FATAL_PCC, false), MCE_FATAL);
}

static void test_uncorrected_without_recovery_is_fatal(void **state)
{
	assert_int_equal(judge1(CAP_NOSER, RIPV_EIPV, UCNA, true), MCE_FATAL);
	/* With recovery, UCNA and SRAO only need logging. */
	assert_int_equal(judge1(CAP_SER, RIPV_EIPV, UCNA, true), MCE_RESUME);
	assert_int_equal(judge1(CAP_SER, RIPV_EIPV, SRAO, false), MCE_RESUME);
}

static void test_overflowed_uncorrected_is_fatal(void **state)
{
	assert_int_equal(judge1(CAP_SER, RIPV_EIPV, SRAO | MCI_STATUS_OVER, true), MCE_FATAL);
	/* A corrected error that overflowed lost only corrected ones. */
	assert_int_equal(judge1(CAP_SER, RIPV_EIPV, CORRECTED | MCI_STATUS_OVER, true),
			 MCE_RESUME);
}

/* SRAR: the interrupted context consumed poison. A guest ends; the host
 * is its own context: fatal. */
static void test_action_required(void **state)
{
	assert_int_equal(judge1(CAP_SER, EIPV_ONLY, SRAR, true), MCE_END_GUEST);
	assert_int_equal(judge1(CAP_SER, RIPV_EIPV, SRAR, true), MCE_END_GUEST);
	assert_int_equal(judge1(CAP_SER, EIPV_ONLY, SRAR, false), MCE_FATAL);
}

/* RIPV clear: the interrupted context cannot restart, whatever the
 * banks say (no bank at all included). */
static void test_ripv_clear(void **state)
{
	struct mce_record r = { .mcg_cap = CAP_SER, .mcg_status = EIPV_ONLY };
	const char *why;

	assert_int_equal(judge1(CAP_SER, EIPV_ONLY, CORRECTED, true), MCE_END_GUEST);
	assert_int_equal(judge1(CAP_SER, EIPV_ONLY, CORRECTED, false), MCE_FATAL);
	assert_int_equal(mce_judge(&r, true, &why), MCE_END_GUEST);
	r.mcg_status = RIPV_EIPV;
	assert_int_equal(mce_judge(&r, true, &why), MCE_RESUME);
}

/* The worst bank decides, wherever it is; a bank without VAL counts not. */
static void test_worst_bank_decides(void **state)
{
	struct mce_record r = { .mcg_cap = CAP_SER, .mcg_status = RIPV_EIPV, .nbanks = 3 };
	const char *why;

	r.bank[0].status = CORRECTED;
	r.bank[1].status = SRAO;
	r.bank[2].status = FATAL_PCC & ~MCI_STATUS_VAL;
	assert_int_equal(mce_judge(&r, true, &why), MCE_RESUME);
	r.bank[2].status = FATAL_PCC;
	assert_int_equal(mce_judge(&r, true, &why), MCE_FATAL);
	/* nbanks out of range is clamped, not read past the array. */
	r.nbanks = 1000;
	assert_int_equal(mce_judge(&r, true, &why), MCE_FATAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corrected_resumes),
		cmocka_unit_test(test_pcc_is_fatal_anywhere),
		cmocka_unit_test(test_uncorrected_without_recovery_is_fatal),
		cmocka_unit_test(test_overflowed_uncorrected_is_fatal),
		cmocka_unit_test(test_action_required),
		cmocka_unit_test(test_ripv_clear),
		cmocka_unit_test(test_worst_bank_decides),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
