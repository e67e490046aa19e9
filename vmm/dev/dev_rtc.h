/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The guest's CMOS clock and RAM, an MC146818A (vmm/dev/dev_rtc.c): the
 * register model, plain C with the time passed in (host-testable); the
 * ports 0x70/0x71 in front of it are vmm/dev/dev_cmos.c.
 */
#ifndef VMM_DEV_RTC_H
#define VMM_DEV_RTC_H

#include "drivers/cmos.h"

struct dev_rtc {
	/* The chip's 128 bytes as stored: A (without UIP), B, C (flags
	 * latched since C was last read), the alarm bytes, RAM 0x0e-0x7f,
	 * and the time registers 0-9 while the clock is stopped (SET, or the
	 * divider in reset). While it runs they are made from the count. */
	uint8_t regs[CMOS_SIZE];
	uint8_t index;                  /* register selected through port 0x70 */
	uint64_t base_secs;             /* seconds since 1970 at base_tsc; the count */
	uint64_t base_tsc;              /* goes up by one every hz TSC cycles after it */
	uint64_t hz;                    /* TSC cycles per second */
	uint64_t flags_tsc;             /* C's flags are accounted up to this TSC */
};

/* Power-on state (A 0x26, B 0x02: running, 24-hour BCD; RAM 0) with the
 * time `secs` (seconds since 1970) at `secs_tsc`; `now` is the TSC. */
void rtc_init(struct dev_rtc *r, uint64_t secs, uint64_t secs_tsc, uint64_t hz, uint64_t now);
/* Register reg (0-0x7f) at TSC now; reading C clears it. */
uint8_t rtc_read(struct dev_rtc *r, uint8_t reg, uint64_t now);
void rtc_write(struct dev_rtc *r, uint8_t reg, uint8_t val, uint64_t now);

#endif
