// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/dev/dev_rtc.c and drivers/calendar.c: the guest's MC146818A clock
 * with the TSC under the test's control - what a guest test cannot reach
 * in a few seconds of guest time: year and leap-day rollovers, the
 * century rule, alarm matches a day apart, the 12-hour encoding of every
 * hour, the exact UIP window and the half-second start after a divider
 * reset (MC146818A data sheet; QEMU's mc146818rtc.c and Bochs's cmos.cc
 * agree on the behaviour, see the comment atop dev_rtc.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/calendar.h"
#include "vmm/dev/dev_rtc.h"

#define HZ 1000000ull                   /* a 1 MHz "TSC": 1 tick = 1 us */

static uint64_t secs_of(uint32_t y, unsigned mo, unsigned d, unsigned h, unsigned mi, unsigned s)
{
	struct cal_time t = { y, (uint8_t)mo, (uint8_t)d, (uint8_t)h, (uint8_t)mi, (uint8_t)s, 0 };

	return cal_to_secs(&t);
}

static void test_calendar_known_dates(void **state)
{
	struct cal_time t;

	assert_int_equal(secs_of(1970, 1, 1, 0, 0, 0), 0);
	assert_int_equal(secs_of(2000, 1, 1, 0, 0, 0), 946684800ull);
	assert_int_equal(secs_of(2024, 2, 29, 0, 0, 0), 1709164800ull);
	assert_int_equal(secs_of(2100, 3, 1, 0, 0, 0), 4107542400ull);  /* 2100: no Feb 29 */
	cal_from_secs(0, &t);
	assert_int_equal(t.wday, 5);                                    /* Thursday */
	cal_from_secs(946684800ull, &t);
	assert_int_equal(t.wday, 7);                                    /* Saturday */
	assert_int_equal(cal_month_days(2000, 2), 29);
	assert_int_equal(cal_month_days(1900, 2), 28);
	assert_int_equal(cal_month_days(2023, 2), 28);
	assert_int_equal(cal_month_days(2023, 13), 0);
}

static void test_calendar_round_trip(void **state)
{
	/* Every day from 1970 to 2200, at a time of day that moves. */
	for (uint64_t day = 0; day < 84000; day++) {
		uint64_t s = day * CAL_SECS_PER_DAY + (day * 7919) % CAL_SECS_PER_DAY;
		struct cal_time t;

		cal_from_secs(s, &t);
		assert_true(cal_valid(&t));
		assert_int_equal(cal_to_secs(&t), s);
		assert_int_equal(t.wday, (day + 4) % 7 + 1);
	}
}

static struct dev_rtc rtc_at(uint64_t secs)
{
	struct dev_rtc r;

	rtc_init(&r, secs, 0, HZ, 0);
	return r;
}

static void test_rtc_year_rollover(void **state)
{
	struct dev_rtc r = rtc_at(secs_of(2024, 12, 31, 23, 59, 59));

	assert_int_equal(rtc_read(&r, CMOS_SEC, 0), 0x59);
	assert_int_equal(rtc_read(&r, CMOS_HOUR, 0), 0x23);
	assert_int_equal(rtc_read(&r, CMOS_YEAR, HZ - 1), 0x24);
	assert_int_equal(rtc_read(&r, CMOS_YEAR, HZ), 0x25);
	assert_int_equal(rtc_read(&r, CMOS_MON, HZ), 0x01);
	assert_int_equal(rtc_read(&r, CMOS_MDAY, HZ), 0x01);
	assert_int_equal(rtc_read(&r, CMOS_SEC, HZ), 0x00);
	assert_int_equal(rtc_read(&r, CMOS_WDAY, HZ), 4);              /* 2025-01-01: Wednesday */
}

/* UIP: exactly the 244 us before each second, never while SET. */
static void test_rtc_uip_window(void **state)
{
	struct dev_rtc r = rtc_at(0);

	assert_false(rtc_read(&r, CMOS_REG_A, HZ - 245) & CMOS_A_UIP);
	assert_true(rtc_read(&r, CMOS_REG_A, HZ - 244) & CMOS_A_UIP);
	assert_true(rtc_read(&r, CMOS_REG_A, HZ - 1) & CMOS_A_UIP);
	assert_int_equal(rtc_read(&r, CMOS_SEC, HZ - 1), 0x00);         /* old second under UIP */
	assert_false(rtc_read(&r, CMOS_REG_A, HZ) & CMOS_A_UIP);
	assert_int_equal(rtc_read(&r, CMOS_SEC, HZ), 0x01);
	assert_int_equal(rtc_read(&r, CMOS_REG_A, 5 * HZ - 100), CMOS_A_POWER_ON | CMOS_A_UIP);
	rtc_write(&r, CMOS_REG_B, CMOS_B_SET | CMOS_B_24H, 5 * HZ - 300);
	assert_false(rtc_read(&r, CMOS_REG_A, 5 * HZ - 100) & CMOS_A_UIP);
}

/* Every hour in 12-hour BCD and binary: 12 AM, 1-11 AM, 12 PM, 1-11 PM. */
static void test_rtc_12_hour(void **state)
{
	for (unsigned h = 0; h < 24; h++) {
		struct dev_rtc r = rtc_at(secs_of(2020, 6, 1, h, 30, 0));
		unsigned h12 = h % 12 ? h % 12 : 12;

		rtc_write(&r, CMOS_REG_B, 0, 0);
		assert_int_equal(rtc_read(&r, CMOS_HOUR, 0),
				 (h12 / 10) << 4 | h12 % 10 | (h >= 12 ? CMOS_HOUR_PM : 0));
		rtc_write(&r, CMOS_REG_B, CMOS_B_DM_BINARY, 0);
		assert_int_equal(rtc_read(&r, CMOS_HOUR, 0), h12 | (h >= 12 ? CMOS_HOUR_PM : 0));
		rtc_write(&r, CMOS_REG_B, CMOS_B_DM_BINARY | CMOS_B_24H, 0);
		assert_int_equal(rtc_read(&r, CMOS_HOUR, 0), h);
	}
}

/* Linux's mc146818_set_time(): SET, the fields one by one (so Jan 31 ->
 * Feb passes through "Feb 31"), SET cleared; the time is taken then, a
 * day that does not exist clamped, and the divider's phase kept. */
static void test_rtc_set_time(void **state)
{
	struct dev_rtc r = rtc_at(secs_of(2024, 1, 31, 10, 0, 0));
	uint64_t t = 3 * HZ + HZ / 4;           /* a quarter into a second */

	rtc_write(&r, CMOS_REG_B, CMOS_B_SET | CMOS_B_24H, t);
	rtc_write(&r, CMOS_MON, 0x02, t);
	assert_int_equal(rtc_read(&r, CMOS_MDAY, t), 0x31);             /* held as written */
	assert_int_equal(rtc_read(&r, CMOS_SEC, t + 5 * HZ), 0x03);     /* stopped */
	rtc_write(&r, CMOS_HOUR, 0x23, t);
	rtc_write(&r, CMOS_MIN, 0x59, t);
	rtc_write(&r, CMOS_SEC, 0x59, t);
	rtc_write(&r, CMOS_REG_B, CMOS_B_24H, t + 10 * HZ);
	assert_int_equal(rtc_read(&r, CMOS_MDAY, t + 10 * HZ), 0x29);   /* Feb 31 -> Feb 29 */
	assert_int_equal(rtc_read(&r, CMOS_SEC, 14 * HZ - 1), 0x59);
	assert_int_equal(rtc_read(&r, CMOS_SEC, 14 * HZ), 0x00);        /* phase kept */
	assert_int_equal(rtc_read(&r, CMOS_MON, 14 * HZ), 0x03);
	assert_int_equal(rtc_read(&r, CMOS_MDAY, 14 * HZ), 0x01);
	rtc_write(&r, CMOS_REG_B, CMOS_B_SET | CMOS_B_24H | CMOS_B_UIE, 20 * HZ);
	assert_int_equal(rtc_read(&r, CMOS_REG_B, 20 * HZ), CMOS_B_SET | CMOS_B_24H);
	rtc_write(&r, CMOS_MON, 0x13, 20 * HZ);                         /* out of range */
	rtc_write(&r, CMOS_REG_B, CMOS_B_24H, 20 * HZ);
	assert_int_equal(rtc_read(&r, CMOS_MON, 20 * HZ), 0x12);
}

/* A write to a field of the running clock keeps the others and the phase. */
static void test_rtc_write_running(void **state)
{
	struct dev_rtc r = rtc_at(secs_of(2030, 5, 5, 5, 5, 5));

	rtc_write(&r, CMOS_MIN, 0x42, HZ / 2);
	assert_int_equal(rtc_read(&r, CMOS_MIN, HZ / 2), 0x42);
	assert_int_equal(rtc_read(&r, CMOS_HOUR, HZ / 2), 0x05);
	assert_int_equal(rtc_read(&r, CMOS_SEC, HZ - 1), 0x05);
	assert_int_equal(rtc_read(&r, CMOS_SEC, HZ), 0x06);
	assert_int_equal(rtc_read(&r, CMOS_YEAR, HZ), 0x30);
}

static void test_rtc_divider_reset(void **state)
{
	struct dev_rtc r = rtc_at(100);
	uint64_t rel = 7 * HZ + 123456;

	rtc_write(&r, CMOS_REG_A, 0x60 | 0x06, 2 * HZ + 10);
	assert_int_equal(rtc_read(&r, CMOS_SEC, 6 * HZ), rtc_read(&r, CMOS_SEC, 2 * HZ + 10));
	rtc_write(&r, CMOS_REG_A, CMOS_A_POWER_ON, rel);
	assert_int_equal(rtc_read(&r, CMOS_SEC, rel + HZ / 2 - 1), 0x42);   /* 100 s + 2: 01:42 */
	assert_int_equal(rtc_read(&r, CMOS_SEC, rel + HZ / 2), 0x43);
	assert_true(rtc_read(&r, CMOS_REG_A, rel + HZ / 2 - 244) & CMOS_A_UIP);
}

/* C: UF per update, AF on a match up to a day later, PF at the rate,
 * IRQF only with the enable bit; reading clears. */
static void test_rtc_flags(void **state)
{
	struct dev_rtc r = rtc_at(secs_of(2022, 3, 3, 11, 0, 0));
	uint64_t hour = 3600 * HZ;

	assert_int_equal(rtc_read(&r, CMOS_REG_C, HZ / 2), CMOS_C_PF);  /* RS 6: 1024 Hz */
	rtc_write(&r, CMOS_REG_A, 0x20, HZ / 2);                        /* RS 0: no PF */
	assert_int_equal(rtc_read(&r, CMOS_REG_C, HZ - 1), 0);
	assert_int_equal(rtc_read(&r, CMOS_REG_C, HZ), CMOS_C_UF);
	assert_int_equal(rtc_read(&r, CMOS_REG_C, HZ), 0);
	rtc_write(&r, CMOS_HOUR_ALARM, 0x12, HZ);
	rtc_write(&r, CMOS_MIN_ALARM, 0x00, HZ);
	rtc_write(&r, CMOS_SEC_ALARM, 0x00, HZ);
	assert_int_equal(rtc_read(&r, CMOS_REG_C, hour - 1), CMOS_C_UF);        /* 11:59:59 */
	assert_int_equal(rtc_read(&r, CMOS_REG_C, hour), CMOS_C_UF | CMOS_C_AF);  /* 12:00:00 */
	rtc_write(&r, CMOS_REG_B, CMOS_B_24H | CMOS_B_AIE, hour);
	assert_int_equal(rtc_read(&r, CMOS_REG_C, 2 * hour), CMOS_C_UF);
	assert_int_equal(rtc_read(&r, CMOS_REG_C, 30 * hour),
			 CMOS_C_IRQF | CMOS_C_UF | CMOS_C_AF);                  /* noon again */
	rtc_write(&r, CMOS_HOUR_ALARM, 0x25, 30 * hour);                /* never */
	assert_int_equal(rtc_read(&r, CMOS_REG_C, 80 * hour), CMOS_C_UF);
	rtc_write(&r, CMOS_REG_A, 0x2f, 80 * hour);                     /* RS 15: 500 ms */
	rtc_write(&r, CMOS_REG_B, CMOS_B_24H | CMOS_B_PIE, 80 * hour);
	assert_int_equal(rtc_read(&r, CMOS_REG_C, 80 * hour + HZ / 2 - 1), 0);
	assert_int_equal(rtc_read(&r, CMOS_REG_C, 80 * hour + HZ / 2), CMOS_C_IRQF | CMOS_C_PF);
}

static void test_rtc_ram_and_fixed(void **state)
{
	struct dev_rtc r = rtc_at(0);

	for (unsigned i = CMOS_RAM_FIRST; i < CMOS_SIZE; i++)
		assert_int_equal(rtc_read(&r, (uint8_t)i, 0), 0);
	rtc_write(&r, 0x7f, 0xab, 0);
	assert_int_equal(rtc_read(&r, 0xff, 0), 0xab);                  /* bit 7 dropped */
	rtc_write(&r, CMOS_REG_D, 0, 0);
	rtc_write(&r, CMOS_REG_C, 0xff, 0);
	assert_int_equal(rtc_read(&r, CMOS_REG_D, 0), CMOS_D_VRT);
	assert_int_equal(rtc_read(&r, CMOS_REG_C, 0), 0);
	rtc_write(&r, CMOS_REG_A, 0xff, 0);                             /* UIP is read-only */
	assert_int_equal(rtc_read(&r, CMOS_REG_A, 0) & 0x7f, 0x7f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calendar_known_dates),
		cmocka_unit_test(test_calendar_round_trip),
		cmocka_unit_test(test_rtc_year_rollover),
		cmocka_unit_test(test_rtc_uip_window),
		cmocka_unit_test(test_rtc_12_hour),
		cmocka_unit_test(test_rtc_set_time),
		cmocka_unit_test(test_rtc_write_running),
		cmocka_unit_test(test_rtc_divider_reset),
		cmocka_unit_test(test_rtc_flags),
		cmocka_unit_test(test_rtc_ram_and_fixed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
