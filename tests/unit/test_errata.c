// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/errata.c: the host timer errata lists (issue 22.4). The rows
 * below are typed again from the sources, not taken from errata.c, so a
 * changed number in either place fails: Linux's deadline_match[]
 * (arch/x86/kernel/apic/apic.c, cross-checked against Xen's
 * xen/arch/x86/apic.c) and KVM's vmx_preemption_cpu_tfms[]
 * (arch/x86/kvm/vmx/vmx.c, cross-checked against VirtualBox's
 * HMIsSubjectToVmxPreemptTimerErratum()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "drivers/errata.h"

#define ANY 0xffu

static const struct {
	uint32_t model, stepping, rev;
} deadline[] = {
	{ 0x3c, ANY, 0x22 }, { 0x3f, 2, 0x3a }, { 0x3f, 4, 0x0f },
	{ 0x45, ANY, 0x20 }, { 0x46, ANY, 0x17 },
	{ 0x3d, ANY, 0x25 }, { 0x47, ANY, 0x17 }, { 0x4f, ANY, 0x0b000020 },
	{ 0x56, 2, 0x00000011 }, { 0x56, 3, 0x0700000e },
	{ 0x56, 4, 0x0f00000c }, { 0x56, 5, 0x0e000003 },
	{ 0x4e, ANY, 0xb2 }, { 0x5e, ANY, 0xb2 },
	{ 0x55, 3, 0x01000136 }, { 0x55, 4, 0x02000014 },
	{ 0x8e, ANY, 0x52 }, { 0x9e, ANY, 0x52 },
};

static const uint32_t preempt[] = {
	0x000206e6, 0x00020652, 0x00020655, 0x000106e5, 0x000106a0,
	0x000106a1, 0x000106a4, 0x000106a5, 0x000306a8,
};

static void check_sig(uint32_t eax, uint32_t family, uint32_t model, uint32_t stepping)
{
	struct cpu_sig s = errata_decode_sig(eax);

	assert_int_equal(s.family, family);
	assert_int_equal(s.model, model);
	assert_int_equal(s.stepping, stepping);
}

static void test_decode_sig(void **state)
{
	check_sig(0x000306c3, 6, 0x3c, 3);      /* Haswell i5-4690 */
	check_sig(0x00050654, 6, 0x55, 4);      /* Skylake-SP H0 */
	check_sig(0x000906ea, 6, 0x9e, 0xa);    /* Coffee Lake */
	check_sig(0x000106a5, 6, 0x1a, 5);      /* Nehalem-EP D0 */
	check_sig(0x00000f29, 0xf, 0x2, 9);     /* Pentium 4 Northwood */
	check_sig(0x00020f12, 0xf, 0x21, 2);    /* Athlon 64 X2: ext model with base 0xf */
	check_sig(0x00a20f10, 0x19, 0x21, 0);   /* Zen 3: ext family only with base 0xf */
	check_sig(0x00000633, 6, 0x3, 3);       /* Pentium II */
	/* Extended fields not counted with a base family other than 6/0xf. */
	check_sig(0x00f10543, 5, 0x4, 3);
	check_sig(0x00010743, 7, 0x4, 3);
	check_sig(0x00f306c3, 6, 0x3c, 3);
}

/* The field report: sig 0x306c3 at revision 0x16 (and 0x19) got Linux's
 * "please update microcode to version: 0x22". */
static void test_haswell_below_and_at(void **state)
{
	struct cpu_sig s = errata_decode_sig(0x000306c3);
	const char *why;

	why = errata_tsc_deadline(s.family, s.model, s.stepping, 0x16);
	assert_non_null(why);
	assert_non_null(strstr(why, "0x22"));
	assert_non_null(strstr(why, "Haswell"));
	assert_non_null(strstr(why, "model 0x3c"));
	assert_non_null(errata_tsc_deadline(6, 0x3c, 3, 0x19));
	assert_non_null(errata_tsc_deadline(6, 0x3c, 3, 0x21));
	assert_null(errata_tsc_deadline(6, 0x3c, 3, 0x22));
	assert_null(errata_tsc_deadline(6, 0x3c, 3, 0x28));
}

/* The revision a reason names after "microcode ". */
static unsigned long named_rev(const char *why)
{
	const char *p = strstr(why, "microcode 0x");

	return p ? strtoul(p + strlen("microcode "), NULL, 16) : ~0ul;
}

/* Every row: one below its revision is broken and the reason names the
 * revision; the revision itself and above are fine. */
static void test_every_deadline_row(void **state)
{
	for (size_t i = 0; i < sizeof(deadline) / sizeof(deadline[0]); i++) {
		uint32_t m = deadline[i].model, r = deadline[i].rev;
		uint32_t st = deadline[i].stepping == ANY ? 7 : deadline[i].stepping;
		const char *why = errata_tsc_deadline(6, m, st, r - 1);

		assert_non_null(why);
		if (named_rev(why) != r)
			fail_msg("row %zu: \"%s\" does not name 0x%x", i, why, r);
		assert_non_null(errata_tsc_deadline(6, m, st, 0));
		assert_null(errata_tsc_deadline(6, m, st, r));
		assert_null(errata_tsc_deadline(6, m, st, 0xffffffffu));
	}
}

static void test_haswell_x_by_stepping(void **state)
{
	assert_non_null(errata_tsc_deadline(6, 0x3f, 2, 0x39));
	assert_null(errata_tsc_deadline(6, 0x3f, 2, 0x3a));
	assert_non_null(errata_tsc_deadline(6, 0x3f, 4, 0x0e));
	assert_null(errata_tsc_deadline(6, 0x3f, 4, 0x0f));
	/* EX's 0x0f is not enough on EP. */
	assert_non_null(errata_tsc_deadline(6, 0x3f, 2, 0x0f));
	assert_non_null(strstr(errata_tsc_deadline(6, 0x3f, 2, 0), "stepping 2"));
	/* No row for other steppings: fine, as in Linux since v5.8. */
	assert_null(errata_tsc_deadline(6, 0x3f, 1, 0));
	assert_null(errata_tsc_deadline(6, 0x3f, 3, 0));
}

static void test_broadwell_d_by_stepping(void **state)
{
	static const uint32_t rev[] = { [2] = 0x11, 0x0700000e, 0x0f00000c, 0x0e000003 };

	for (uint32_t st = 2; st <= 5; st++) {
		assert_non_null(errata_tsc_deadline(6, 0x56, st, rev[st] - 1));
		assert_null(errata_tsc_deadline(6, 0x56, st, rev[st]));
	}
	/* Stepping 5's 0x0e000003 is below stepping 4's 0x0f00000c. */
	assert_non_null(errata_tsc_deadline(6, 0x56, 4, 0x0e000003));
	assert_null(errata_tsc_deadline(6, 0x56, 1, 0));
	assert_null(errata_tsc_deadline(6, 0x56, 6, 0));
}

static void test_skylake_x_by_stepping(void **state)
{
	assert_non_null(errata_tsc_deadline(6, 0x55, 3, 0x01000135));
	assert_null(errata_tsc_deadline(6, 0x55, 3, 0x01000136));
	assert_non_null(errata_tsc_deadline(6, 0x55, 4, 0x02000013));
	assert_null(errata_tsc_deadline(6, 0x55, 4, 0x02000014));
	assert_null(errata_tsc_deadline(6, 0x55, 4, 0x0200005e));
	assert_non_null(errata_tsc_deadline(6, 0x55, 4, 0x01000136));
	/* Cascade Lake (5..7) and Cooper Lake (11) share the model: fine. */
	assert_null(errata_tsc_deadline(6, 0x55, 5, 0));
	assert_null(errata_tsc_deadline(6, 0x55, 7, 0x05003604));
	assert_null(errata_tsc_deadline(6, 0x55, 11, 0));
	/* Pre-production steppings 0..2: no row in Linux since v5.8. */
	assert_null(errata_tsc_deadline(6, 0x55, 2, 0));
}

static void test_unlisted_is_fine(void **state)
{
	assert_null(errata_tsc_deadline(6, 0x2a, 7, 0));        /* Sandy Bridge */
	assert_null(errata_tsc_deadline(6, 0x3a, 9, 0));        /* Ivy Bridge */
	assert_null(errata_tsc_deadline(6, 0xa5, 5, 0));        /* Comet Lake */
	assert_null(errata_tsc_deadline(6, 0x8f, 8, 0));        /* Sapphire Rapids */
	/* Listed model numbers in another family. */
	assert_null(errata_tsc_deadline(0xf, 0x3c, 3, 0));
	assert_null(errata_tsc_deadline(0x19, 0x55, 4, 0));
}

static void test_every_preempt_signature(void **state)
{
	char sig[16];

	for (size_t i = 0; i < sizeof(preempt) / sizeof(preempt[0]); i++) {
		const char *why = errata_preempt_timer(preempt[i]);

		assert_non_null(why);
		assert_non_null(strstr(why, "VMX-preemption timer"));
		snprintf(sig, sizeof(sig), "0x%08x", preempt[i]);
		if (!strstr(why, sig))
			fail_msg("\"%s\" lacks %s", why, sig);
		/* Reserved bits 15:14 and 31:28 are ignored... */
		assert_non_null(errata_preempt_timer(preempt[i] | 0xf000c000u));
		/* ...the processor type and extended family are not. */
		assert_null(errata_preempt_timer(preempt[i] | 0x1000u));
		assert_null(errata_preempt_timer(preempt[i] | 0x00100000u));
	}
	assert_non_null(strstr(errata_preempt_timer(0x000106a5), "AAJ124"));
	assert_non_null(strstr(errata_preempt_timer(0x000206e6), "BA86"));
}

static void test_preempt_neighbours(void **state)
{
	static const uint32_t fine[] = {
		0x000106a2, 0x000106a3, 0x000106a6,     /* steppings around Nehalem-EP */
		0x000106e4, 0x000106e6,                 /* around Lynnfield B1 */
		0x00020651, 0x00020653, 0x00020654,     /* around Clarkdale C2/K0 */
		0x000206e5, 0x000206e7,                 /* around Nehalem-EX D0 */
		0x000306a9,                             /* Ivy Bridge E1: the shipping stepping */
		0x000306c3, 0x00050654, 0,
	};

	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
		if (errata_preempt_timer(fine[i]))
			fail_msg("0x%08x listed", fine[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_sig),
		cmocka_unit_test(test_haswell_below_and_at),
		cmocka_unit_test(test_every_deadline_row),
		cmocka_unit_test(test_haswell_x_by_stepping),
		cmocka_unit_test(test_broadwell_d_by_stepping),
		cmocka_unit_test(test_skylake_x_by_stepping),
		cmocka_unit_test(test_unlisted_is_fine),
		cmocka_unit_test(test_every_preempt_signature),
		cmocka_unit_test(test_preempt_neighbours),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
