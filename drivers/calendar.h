/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Proleptic Gregorian calendar arithmetic for the real-time clocks (the
 * host's CMOS clock, drivers/cmos.c, and the guest's, vmm/dev/dev_rtc.c):
 * a date and time of day <-> seconds since 1970-01-01 00:00:00. Plain C.
 */
#ifndef DRIVERS_CALENDAR_H
#define DRIVERS_CALENDAR_H

#include "drivers/base.h"

#define CAL_SECS_PER_DAY 86400u

struct cal_time {
	uint32_t year;          /* 1970.. */
	uint8_t mon;            /* 1-12 */
	uint8_t mday;           /* 1-31 */
	uint8_t hour, min, sec; /* 0-23, 0-59, 0-59 */
	uint8_t wday;           /* 1-7, Sunday = 1 (the MC146818's numbering) */
};

/* Days in month mon (1-12) of year. */
unsigned cal_month_days(uint32_t year, unsigned mon);
/* Seconds since 1970-01-01 00:00:00 of t (year >= 1970, fields in range;
 * wday is not read). */
uint64_t cal_to_secs(const struct cal_time *t);
/* The date and time of day `secs` seconds after 1970-01-01 00:00:00. */
void cal_from_secs(uint64_t secs, struct cal_time *t);
/* True when every field of t is in its range (mday within its month). */
bool cal_valid(const struct cal_time *t);

#endif
