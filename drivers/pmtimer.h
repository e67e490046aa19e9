/* SPDX-License-Identifier: BSD-2-Clause */
/* ACPI power-management timer: 3.579545 MHz, 24 or 32 bits, I/O port. */
#ifndef DRIVERS_PMTIMER_H
#define DRIVERS_PMTIMER_H

#include "drivers/base.h"

#define PMTIMER_HZ 3579545ull

struct pmtimer {
	uint16_t port;
	bool is_32bit;
};

/* Without ACPI tables (Bochs under OVMF): the PIIX4 PM function's I/O
 * base (PCI 00:01.3, register 0x40) + 8, if that device is present. */
bool pmtimer_probe_piix4(struct pmtimer *t);
/* Checks that the port counts; false if it reads constant. */
bool pmtimer_check(const struct pmtimer *t);
uint32_t pmtimer_read(const struct pmtimer *t);
/* Ticks from a to b, handling wrap-around. */
uint32_t pmtimer_delta(const struct pmtimer *t, uint32_t a, uint32_t b);

#endif
