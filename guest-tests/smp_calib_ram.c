// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_calib_ram: tickvisor never writes into a running guest's RAM on its
 * own account (issue 10.8). Its entry/exit-cost calibration once ran
 * "RDTSC; VMCALL" from guest-physical 0x500 + 16 * vCPU, putting the
 * guest's bytes back afterwards - but every vCPU calibrates when its CPU
 * starts, and the APs' CPUs start while vCPU 0 already runs the guest.
 *
 * From its first instruction in main() the BSP watches 0x500..0x5ff
 * (real-mode low memory no loader data lies in) against the snapshot it
 * took, until every AP vCPU has been calibrated (a while after start-up)
 * - then brings the APs up and watches once more. Any change is a FAIL.
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define WATCH_LO        0x500u
#define WATCH_HI        0x600u
#define WATCH_US        20000u

static uint8_t snap[WATCH_HI - WATCH_LO];

/* The watched bytes; the address goes through an asm so the compiler
 * does not take a constant near 0 for a null-pointer offset. */
static const volatile uint8_t *watched(void)
{
	uintptr_t a = WATCH_LO;

	__asm__("" : "+r"(a));
	return (const volatile uint8_t *)a;
}

/* Reads the range again and again for `us`; returns the first offset
 * that differs from the snapshot, or -1. */
static int watch(uint64_t us)
{
	const volatile uint8_t *p = watched();
	uint64_t deadline = tsc_deadline_us(us);

	do {
		for (unsigned i = 0; i < sizeof(snap); i++)
			if (p[i] != snap[i])
				return (int)i;
	} while (!tsc_passed(deadline));
	return -1;
}

int main(int argc, char **argv)
{
	const volatile uint8_t *p = watched();
	int at;

	(void)argc;
	(void)argv;
	for (unsigned i = 0; i < sizeof(snap); i++)
		snap[i] = p[i];
	at = watch(WATCH_US);
	report_prefix_push("smp_calib_ram");
	report(at < 0, "0x%x..0x%x unchanged while the vCPUs start (first change at 0x%x)",
	       WATCH_LO, WATCH_HI - 1, at < 0 ? 0 : WATCH_LO + at);
	if (smp_init_report()) {
		at = watch(WATCH_US / 4);
		report(at < 0, "0x%x..0x%x unchanged with every CPU online (first change at 0x%x)",
		       WATCH_LO, WATCH_HI - 1, at < 0 ? 0 : WATCH_LO + at);
	}
	report_prefix_pop();
	return report_summary();
}
