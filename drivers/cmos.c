// SPDX-License-Identifier: BSD-2-Clause
/*
 * The host's CMOS clock, read once at boot to give guests the time of day
 * (drivers/cmos.h). Reads happen outside an update cycle: UIP clear means
 * no update starts for at least 244 us (MC146818A, "Update Cycle"), which
 * covers the handful of port reads here; a second read of the seconds
 * confirms it, as Linux's mc146818_get_time() does.
 */
#include "drivers/cmos.h"
#include "drivers/io.h"

#define CMOS_UIP_POLLS   200000u        /* > one 1984 us update at ~1 us a port read */
#define CMOS_TRIES       4u
#define CMOS_YEAR_WINDOW 70u            /* 2-digit years below it are 20xx */

static uint8_t cmos_read(uint8_t reg)
{
	outb(CMOS_INDEX_PORT, reg);
	return inb(CMOS_DATA_PORT);
}

static uint8_t cmos_bin(uint8_t v, bool binary)
{
	return binary ? v : (uint8_t)((v >> 4) * 10 + (v & 0xf));
}

static void cmos_wait_uip(void)
{
	for (unsigned i = 0; i < CMOS_UIP_POLLS && (cmos_read(CMOS_REG_A) & CMOS_A_UIP); i++)
		;
}

static void cmos_decode(const uint8_t raw[10], uint8_t b, uint8_t century, struct cal_time *t)
{
	bool bin = b & CMOS_B_DM_BINARY;
	uint8_t hour = cmos_bin(raw[CMOS_HOUR] & (uint8_t)~CMOS_HOUR_PM, bin);
	uint32_t yy = cmos_bin(raw[CMOS_YEAR], bin);
	uint32_t cc = cmos_bin(century, bin);

	if (!(b & CMOS_B_24H))
		hour = (uint8_t)(hour % 12 + (raw[CMOS_HOUR] & CMOS_HOUR_PM ? 12 : 0));
	t->sec = cmos_bin(raw[CMOS_SEC], bin);
	t->min = cmos_bin(raw[CMOS_MIN], bin);
	t->hour = hour;
	t->mday = cmos_bin(raw[CMOS_MDAY], bin);
	t->mon = cmos_bin(raw[CMOS_MON], bin);
	t->year = (cc >= 19 && cc <= 21) ? cc * 100 + yy : yy + (yy < CMOS_YEAR_WINDOW ? 2000 : 1900);
}

bool cmos_read_time(struct cal_time *t)
{
	uint8_t raw[10];

	for (unsigned tries = 0; tries < CMOS_TRIES; tries++) {
		cmos_wait_uip();
		for (uint8_t r = CMOS_SEC; r <= CMOS_YEAR; r++)
			raw[r] = cmos_read(r);
		if (cmos_read(CMOS_SEC) == raw[CMOS_SEC])
			break;
	}
	cmos_decode(raw, cmos_read(CMOS_REG_B), cmos_read(CMOS_CENTURY), t);
	return cal_valid(t);
}
