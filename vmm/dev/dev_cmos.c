// SPDX-License-Identifier: BSD-2-Clause
/*
 * Ports 0x70 (index) and 0x71 (data) of the guest's CMOS clock and RAM
 * (vmm/dev/dev_rtc.c has the chip). Bit 7 of the index byte is the
 * chipset's NMI mask on a PC, not part of the index: it is dropped (no
 * NMI source sits behind it here), so 0x80 | n selects register n. The
 * index port is write-only on most chipsets and reads all ones, as in
 * QEMU and Bochs. Wider accesses are split per port (outw(0x70, n |
 * v << 8) selects n and writes v). The upper 128 bytes some chipsets put
 * behind 0x72/0x73 are not modelled: those ports read all ones.
 *
 * The guest's clock starts from the host's CMOS clock, read once when
 * the first guest starts, and runs on the host TSC from there: every
 * guest sees the same wall clock.
 */
#include "drivers/io.h"
#include "vmm/dev/dev_io.h"
#include "vmm/host/log.h"
#include "vmm/host/platform.h"

static struct {
	bool read;
	uint64_t secs;                  /* seconds since 1970 ... */
	uint64_t tsc;                   /* ... at this host TSC */
} cmos_host_clock;

#define CMOS_FALLBACK_SECS 946684800ull /* 2000-01-01 00:00:00 */

/* On the BSP before the first guest runs, so no lock. */
static void cmos_host_clock_read(void)
{
	struct cal_time t;

	if (cmos_host_clock.read)
		return;
	cmos_host_clock.read = true;
	cmos_host_clock.tsc = rdtsc();
	if (cmos_read_time(&t)) {
		cmos_host_clock.secs = cal_to_secs(&t);
		pr_info("RTC: host CMOS clock %04u-%02u-%02u %02u:%02u:%02u: guests' clocks start "
			"from it", t.year, t.mon, t.mday, t.hour, t.min, t.sec);
	} else {
		cmos_host_clock.secs = CMOS_FALLBACK_SECS;
		pr_warn("RTC: no valid host CMOS clock: guests' clocks start at 2000-01-01 00:00:00");
	}
}

void dev_cmos_guest_init(struct dev_rtc *r)
{
	cmos_host_clock_read();
	rtc_init(r, cmos_host_clock.secs, cmos_host_clock.tsc, platform.tb.tsc_hz, rdtsc());
}

int io_cmos(struct vcpu *v, struct io_req *r)
{
	struct guest_devices *d = &v->guest->dev;

	if (r->size != 1)
		return dev_io_bytewise(v, r);
	spin_lock(&d->lock);
	if (r->port == CMOS_INDEX_PORT && r->in)
		r->val = 0xff;
	else if (r->port == CMOS_INDEX_PORT)
		d->rtc.index = (uint8_t)(r->val & CMOS_INDEX_MASK);
	else if (r->in)
		r->val = rtc_read(&d->rtc, d->rtc.index, rdtsc());
	else
		rtc_write(&d->rtc, d->rtc.index, (uint8_t)r->val, rdtsc());
	spin_unlock(&d->lock);
	return 0;
}
