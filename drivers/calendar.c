// SPDX-License-Identifier: BSD-2-Clause
/*
 * Calendar arithmetic by counting days from 1970 (drivers/calendar.h):
 * whole 400-year cycles (146097 days) first, so no loop runs more than a
 * few hundred times whatever the date.
 */
#include "drivers/calendar.h"

#define DAYS_PER_400Y 146097u
#define EPOCH_YEAR    1970u

static bool cal_leap(uint32_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned cal_year_days(uint32_t y)
{
	return cal_leap(y) ? 366 : 365;
}

unsigned cal_month_days(uint32_t year, unsigned mon)
{
	static const uint8_t days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (mon < 1 || mon > 12)
		return 0;
	return days[mon - 1] + (mon == 2 && cal_leap(year));
}

/* Days from 1970-01-01 to January 1st of year y (y >= 1970). */
static uint64_t cal_days_to_year(uint32_t y)
{
	uint64_t days = (uint64_t)((y - EPOCH_YEAR) / 400) * DAYS_PER_400Y;

	for (uint32_t i = EPOCH_YEAR + (y - EPOCH_YEAR) / 400 * 400; i < y; i++)
		days += cal_year_days(i);
	return days;
}

uint64_t cal_to_secs(const struct cal_time *t)
{
	uint64_t days = cal_days_to_year(t->year);

	for (unsigned m = 1; m < t->mon; m++)
		days += cal_month_days(t->year, m);
	days += t->mday - 1u;
	return days * CAL_SECS_PER_DAY + t->hour * 3600u + t->min * 60u + t->sec;
}

void cal_from_secs(uint64_t secs, struct cal_time *t)
{
	uint64_t days = secs / CAL_SECS_PER_DAY;
	uint32_t tod = (uint32_t)(secs % CAL_SECS_PER_DAY);
	uint32_t y = EPOCH_YEAR + (uint32_t)(days / DAYS_PER_400Y) * 400;
	unsigned m = 1;

	t->wday = (uint8_t)((days + 4) % 7 + 1);        /* 1970-01-01 was a Thursday (5) */
	days %= DAYS_PER_400Y;
	while (days >= cal_year_days(y))
		days -= cal_year_days(y++);
	while (days >= cal_month_days(y, m))
		days -= cal_month_days(y, m++);
	t->year = y;
	t->mon = (uint8_t)m;
	t->mday = (uint8_t)(days + 1);
	t->hour = (uint8_t)(tod / 3600);
	t->min = (uint8_t)(tod / 60 % 60);
	t->sec = (uint8_t)(tod % 60);
}

bool cal_valid(const struct cal_time *t)
{
	return t->year >= EPOCH_YEAR && t->mon >= 1 && t->mon <= 12 && t->mday >= 1 &&
	       t->mday <= cal_month_days(t->year, t->mon) && t->hour < 24 && t->min < 60 &&
	       t->sec < 60;
}
