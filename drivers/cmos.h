/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The PC's CMOS real-time clock, a Motorola MC146818A behind index port
 * 0x70 and data port 0x71 (MC146818A data sheet, "Address Map" and
 * "Registers"): register numbers and bits, shared by the host's reader
 * (drivers/cmos.c) and the guest's clock (vmm/dev/dev_rtc.c).
 */
#ifndef DRIVERS_CMOS_H
#define DRIVERS_CMOS_H

#include "drivers/calendar.h"

#define CMOS_INDEX_PORT 0x70u
#define CMOS_DATA_PORT  0x71u
#define CMOS_INDEX_NMI_OFF BIT(7)       /* in the index byte: NMI masked (chipset, not the RTC) */
#define CMOS_INDEX_MASK    BITS(6, 0)
#define CMOS_SIZE       128u

enum cmos_reg {
	CMOS_SEC = 0x00, CMOS_SEC_ALARM = 0x01, CMOS_MIN = 0x02, CMOS_MIN_ALARM = 0x03,
	CMOS_HOUR = 0x04, CMOS_HOUR_ALARM = 0x05, CMOS_WDAY = 0x06, CMOS_MDAY = 0x07,
	CMOS_MON = 0x08, CMOS_YEAR = 0x09,
	CMOS_REG_A = 0x0a, CMOS_REG_B = 0x0b, CMOS_REG_C = 0x0c, CMOS_REG_D = 0x0d,
	CMOS_RAM_FIRST = 0x0e,          /* 0x0e-0x7f: battery-backed RAM */
	CMOS_CENTURY = 0x32,            /* IBM's century byte (a RAM location by convention) */
};
#define CMOS_A_UIP          BIT(7)      /* update in progress (read-only) */
#define CMOS_A_DV           BITS(6, 4)  /* divider: */
#define   CMOS_A_DV_32K     2u          /* 32.768 kHz time base, running */
#define   CMOS_A_DV_RESET   6u          /* 11x: divider chain held in reset */
#define CMOS_A_RS           BITS(3, 0)  /* periodic rate select */
#define CMOS_A_POWER_ON     0x26u       /* DV 32.768 kHz, RS 1024 Hz (PC firmware default) */
#define CMOS_B_SET          BIT(7)      /* updates inhibited, time registers writable */
#define CMOS_B_PIE          BIT(6)
#define CMOS_B_AIE          BIT(5)
#define CMOS_B_UIE          BIT(4)
#define CMOS_B_SQWE         BIT(3)
#define CMOS_B_DM_BINARY    BIT(2)      /* 0: BCD */
#define CMOS_B_24H          BIT(1)      /* 0: 12-hour, hour bit 7 = PM */
#define CMOS_B_DSE          BIT(0)
#define CMOS_B_POWER_ON     0x02u       /* 24-hour, BCD */
#define CMOS_C_IRQF         BIT(7)
#define CMOS_C_PF           BIT(6)
#define CMOS_C_AF           BIT(5)
#define CMOS_C_UF           BIT(4)
#define CMOS_D_VRT          BIT(7)      /* valid RAM and time */
#define CMOS_HOUR_PM        BIT(7)      /* 12-hour mode */
#define CMOS_ALARM_DONT_CARE BITS(7, 6) /* alarm byte 0xc0-0xff matches any value */

/* The host clock's date and time, waiting out an update in progress and
 * reading twice until both reads agree (bounded); false if the values
 * are not a valid date (no CMOS clock: all ones). */
bool cmos_read_time(struct cal_time *t);

#endif
