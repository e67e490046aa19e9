// SPDX-License-Identifier: BSD-2-Clause
/*
 * The guest's MC146818A real-time clock (Motorola MC146818A data sheet;
 * register map in drivers/cmos.h). The time is a count of seconds since
 * 1970 that advances once per second of host TSC from base_tsc; the time
 * registers 0-9 are made from it on every read, in BCD or binary (B.DM),
 * 24- or 12-hour (B.24/12, hour bit 7 = PM), the year as two digits
 * (00-69 are 20xx, as Linux's mc146818_get_time() reads them).
 *
 * Update-in-progress: A.UIP reads 1 during the 244 us before each
 * update, and the new second shows when it falls, so a reader that waits
 * for UIP to clear (Linux: mc146818_get_time(), polling every 100 us)
 * always gets a settled time and never waits longer than that. QEMU's
 * mc146818rtc.c places UIP the same way (UIP_HOLD_LENGTH before the
 * second); Bochs's cmos.cc raises it at the second and updates 244 us
 * later: the same 244 us window, the update at its end. No UIP while the
 * clock is stopped (B.SET, or A.DV = 11x holding the divider in reset).
 *
 * Stopping and starting: B.SET stops updates (and clears UIE) while the
 * divider keeps its phase, so clearing SET resumes with the next second
 * where it would have been; releasing the divider from reset starts
 * with the first update half a second later (data sheet, "Divider
 * Control"). While stopped, writes to the time registers are kept as
 * written and taken as the new time when the clock starts (a value out
 * of its field's range is clamped into it); while running, a write sets
 * that field of the running time. The day of week (register 6) always
 * follows the date.
 *
 * Register C: PF, AF and UF are set by the periodic rate (A.RS), an
 * update that matches the alarm (bytes 0xc0-0xff: any value), and every
 * update, whatever the enable bits in B; IRQF when one of them is set
 * with its enable bit. No interrupt line is wired (the PIC is masked).
 * Reading C returns and clears them; C and D are read-only, D reads VRT.
 */
#include "timer/timebase.h"
#include "vmm/dev/dev_rtc.h"

#define RTC_UIP_US        244u
#define RTC_CLOCK_HZ      32768u        /* the time base DV = 010 selects */
#define RTC_YEAR_WINDOW   70u
#define RTC_TIME_REGS     10u           /* registers 0-9 */
#define RTC_AF_SCAN_MAX   CAL_SECS_PER_DAY

static bool rtc_dv_reset(uint8_t a)
{
	return (FIELD_GET(CMOS_A_DV, a) & CMOS_A_DV_RESET) == CMOS_A_DV_RESET;
}

static bool rtc_running(const struct dev_rtc *r)
{
	return !(r->regs[CMOS_REG_B] & CMOS_B_SET) && !rtc_dv_reset(r->regs[CMOS_REG_A]);
}

static bool rtc_is_alarm(uint8_t reg)
{
	return reg == CMOS_SEC_ALARM || reg == CMOS_MIN_ALARM || reg == CMOS_HOUR_ALARM;
}

/* Whole seconds counted at TSC t (running clock). */
static uint64_t rtc_secs_at(const struct dev_rtc *r, uint64_t t)
{
	return t > r->base_tsc ? r->base_secs + (t - r->base_tsc) / r->hz : r->base_secs;
}

static uint8_t rtc_enc(const struct dev_rtc *r, unsigned v)
{
	return (r->regs[CMOS_REG_B] & CMOS_B_DM_BINARY) ? (uint8_t)v : (uint8_t)((v / 10) << 4 | v % 10);
}

static unsigned rtc_dec(const struct dev_rtc *r, uint8_t v)
{
	return (r->regs[CMOS_REG_B] & CMOS_B_DM_BINARY) ? v : (v >> 4) * 10u + (v & 0xfu);
}

static uint8_t rtc_enc_hour(const struct dev_rtc *r, unsigned h)
{
	if (r->regs[CMOS_REG_B] & CMOS_B_24H)
		return rtc_enc(r, h);
	return (uint8_t)(rtc_enc(r, h % 12 ? h % 12 : 12) | (h >= 12 ? CMOS_HOUR_PM : 0));
}

static unsigned rtc_dec_hour(const struct dev_rtc *r, uint8_t v)
{
	if (r->regs[CMOS_REG_B] & CMOS_B_24H)
		return rtc_dec(r, v);
	return rtc_dec(r, v & (uint8_t)~CMOS_HOUR_PM) % 12 + (v & CMOS_HOUR_PM ? 12 : 0);
}

/* The time registers 0-9 for `secs`, in the current data mode; the
 * alarm bytes (1, 3, 5) are left as they are. */
static void rtc_render(const struct dev_rtc *r, uint64_t secs, uint8_t out[RTC_TIME_REGS])
{
	struct cal_time t;

	cal_from_secs(secs, &t);
	out[CMOS_SEC] = rtc_enc(r, t.sec);
	out[CMOS_MIN] = rtc_enc(r, t.min);
	out[CMOS_HOUR] = rtc_enc_hour(r, t.hour);
	out[CMOS_WDAY] = rtc_enc(r, t.wday);
	out[CMOS_MDAY] = rtc_enc(r, t.mday);
	out[CMOS_MON] = rtc_enc(r, t.mon);
	out[CMOS_YEAR] = rtc_enc(r, t.year % 100);
}

static unsigned rtc_clamp(unsigned v, unsigned lo, unsigned hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Seconds since 1970 of the time registers in `in`, fields clamped. */
static uint64_t rtc_parse(const struct dev_rtc *r, const uint8_t in[RTC_TIME_REGS])
{
	unsigned yy = rtc_clamp(rtc_dec(r, in[CMOS_YEAR]), 0, 99);
	struct cal_time t = {
		.year = yy + (yy < RTC_YEAR_WINDOW ? 2000u : 1900u),
		.mon = (uint8_t)rtc_clamp(rtc_dec(r, in[CMOS_MON]), 1, 12),
		.hour = (uint8_t)rtc_clamp(rtc_dec_hour(r, in[CMOS_HOUR]), 0, 23),
		.min = (uint8_t)rtc_clamp(rtc_dec(r, in[CMOS_MIN]), 0, 59),
		.sec = (uint8_t)rtc_clamp(rtc_dec(r, in[CMOS_SEC]), 0, 59),
	};

	t.mday = (uint8_t)rtc_clamp(rtc_dec(r, in[CMOS_MDAY]), 1, cal_month_days(t.year, t.mon));
	return cal_to_secs(&t);
}

/* Alarm byte reg as a value of its field, or -1 for "any". */
static int rtc_alarm_field(const struct dev_rtc *r, uint8_t reg)
{
	uint8_t v = r->regs[reg];

	if ((v & CMOS_ALARM_DONT_CARE) == CMOS_ALARM_DONT_CARE)
		return -1;
	return (int)(reg == CMOS_HOUR_ALARM ? rtc_dec_hour(r, v) : rtc_dec(r, v));
}

/* Whether an update to one of the seconds first..last matched the alarm;
 * a day's worth of seconds covers every time of day. */
static bool rtc_alarm_hit(const struct dev_rtc *r, uint64_t first, uint64_t last)
{
	int as = rtc_alarm_field(r, CMOS_SEC_ALARM), am = rtc_alarm_field(r, CMOS_MIN_ALARM);
	int ah = rtc_alarm_field(r, CMOS_HOUR_ALARM);

	if (last - first >= RTC_AF_SCAN_MAX)
		first = last - (RTC_AF_SCAN_MAX - 1);
	for (uint64_t s = first; s <= last; s++) {
		uint32_t tod = (uint32_t)(s % CAL_SECS_PER_DAY);

		if ((as < 0 || (uint32_t)as == tod % 60) && (am < 0 || (uint32_t)am == tod / 60 % 60) &&
		    (ah < 0 || (uint32_t)ah == tod / 3600))
			return true;
	}
	return false;
}

/* Periodic-interrupt periods (A.RS) that began in (t0, t1]; the periods
 * run off the divider, in phase with base_tsc. RS 1 and 2 repeat 8 and 9
 * on a 32.768 kHz time base (data sheet, "Periodic Interrupt Rate"). */
static bool rtc_periodic_hit(const struct dev_rtc *r, uint64_t t0, uint64_t t1)
{
	unsigned rs = FIELD_GET(CMOS_A_RS, r->regs[CMOS_REG_A]);
	uint64_t per;                   /* TSC cycles per period, times RTC_CLOCK_HZ */

	if (!rs || rtc_dv_reset(r->regs[CMOS_REG_A]) || t0 < r->base_tsc)
		return false;
	per = r->hz * (rs <= 2 ? 1u << (rs + 6) : 1u << (rs - 1));
	return timebase_mul_div(t1 - r->base_tsc, RTC_CLOCK_HZ, per) >
	       timebase_mul_div(t0 - r->base_tsc, RTC_CLOCK_HZ, per);
}

/* Latches into C what happened from flags_tsc to now, under the
 * configuration that was in force: called before every change to it. */
static void rtc_account(struct dev_rtc *r, uint64_t now)
{
	uint64_t t0 = r->flags_tsc;
	uint8_t c = 0;

	if (now <= t0)
		return;
	if (rtc_running(r) && rtc_secs_at(r, now) > rtc_secs_at(r, t0)) {
		c |= CMOS_C_UF;
		if (rtc_alarm_hit(r, rtc_secs_at(r, t0) + 1, rtc_secs_at(r, now)))
			c |= CMOS_C_AF;
	}
	if (rtc_periodic_hit(r, t0, now))
		c |= CMOS_C_PF;
	r->regs[CMOS_REG_C] |= c;
	r->flags_tsc = now;
}

/* The clock stops: the time registers keep the time it stopped at. */
static void rtc_stop(struct dev_rtc *r, uint64_t now)
{
	uint8_t t[RTC_TIME_REGS];

	rtc_render(r, rtc_secs_at(r, now), t);
	for (uint8_t i = 0; i < RTC_TIME_REGS; i++)
		if (!rtc_is_alarm(i))
			r->regs[i] = t[i];
}

/* The clock starts from the time registers, its next update one second
 * after the divider's last one, or half a second from now when the
 * divider just left reset. */
static void rtc_start(struct dev_rtc *r, uint64_t now, bool divider_released)
{
	r->base_secs = rtc_parse(r, r->regs);
	if (divider_released)
		r->base_tsc = now - r->hz / 2;
	else if (now > r->base_tsc)
		r->base_tsc = now - (now - r->base_tsc) % r->hz;
	r->flags_tsc = now;
}

/* A write to a time register of the running clock: that field of the
 * current time changes, the divider's phase does not. */
static void rtc_set_field(struct dev_rtc *r, uint8_t reg, uint8_t val, uint64_t now)
{
	uint8_t t[RTC_TIME_REGS];

	rtc_render(r, rtc_secs_at(r, now), t);
	t[reg] = val;
	if (now > r->base_tsc)
		r->base_tsc = now - (now - r->base_tsc) % r->hz;
	r->base_secs = rtc_parse(r, t);
	r->flags_tsc = now;
}

void rtc_init(struct dev_rtc *r, uint64_t secs, uint64_t secs_tsc, uint64_t hz, uint64_t now)
{
	for (unsigned i = 0; i < CMOS_SIZE; i++)
		r->regs[i] = 0;
	r->regs[CMOS_REG_A] = CMOS_A_POWER_ON;
	r->regs[CMOS_REG_B] = CMOS_B_POWER_ON;
	r->index = 0;
	r->base_secs = secs;
	r->base_tsc = secs_tsc;
	r->hz = hz ? hz : 1;
	r->flags_tsc = now;
}

static uint8_t rtc_read_c(struct dev_rtc *r, uint64_t now)
{
	uint8_t b = r->regs[CMOS_REG_B], c;

	rtc_account(r, now);
	c = r->regs[CMOS_REG_C];
	r->regs[CMOS_REG_C] = 0;
	if (c & b & (CMOS_C_PF | CMOS_C_AF | CMOS_C_UF))        /* PIE, AIE, UIE line up */
		c |= CMOS_C_IRQF;
	return c;
}

static bool rtc_uip(const struct dev_rtc *r, uint64_t now)
{
	uint64_t window = r->hz * RTC_UIP_US / 1000000u;

	return rtc_running(r) && now >= r->base_tsc &&
	       (now - r->base_tsc) % r->hz >= r->hz - (window ? window : 1);
}

uint8_t rtc_read(struct dev_rtc *r, uint8_t reg, uint64_t now)
{
	uint8_t t[RTC_TIME_REGS];

	reg &= CMOS_INDEX_MASK;
	if (reg < RTC_TIME_REGS && !rtc_is_alarm(reg) && rtc_running(r)) {
		rtc_render(r, rtc_secs_at(r, now), t);
		return t[reg];
	}
	switch (reg) {
	case CMOS_REG_A: return (uint8_t)(r->regs[CMOS_REG_A] | (rtc_uip(r, now) ? CMOS_A_UIP : 0));
	case CMOS_REG_C: return rtc_read_c(r, now);
	case CMOS_REG_D: return CMOS_D_VRT;
	default: return r->regs[reg];
	}
}

/* A and B: what runs and how it reads; the clock stops or starts when
 * SET or the divider reset change. */
static void rtc_write_control(struct dev_rtc *r, uint8_t reg, uint8_t val, uint64_t now)
{
	bool was = rtc_running(r), released = false;

	if (reg == CMOS_REG_A) {
		released = rtc_dv_reset(r->regs[CMOS_REG_A]) && !rtc_dv_reset(val);
		r->regs[CMOS_REG_A] = val & (uint8_t)~CMOS_A_UIP;
	} else {
		r->regs[CMOS_REG_B] = (val & CMOS_B_SET) ? (uint8_t)(val & ~CMOS_B_UIE) : val;
	}
	if (was && !rtc_running(r))
		rtc_stop(r, now);
	else if (!was && rtc_running(r))
		rtc_start(r, now, released);
}

void rtc_write(struct dev_rtc *r, uint8_t reg, uint8_t val, uint64_t now)
{
	reg &= CMOS_INDEX_MASK;
	if (reg == CMOS_REG_C || reg == CMOS_REG_D)
		return;                         /* read-only */
	rtc_account(r, now);
	if (reg == CMOS_REG_A || reg == CMOS_REG_B)
		rtc_write_control(r, reg, val, now);
	else if (reg < RTC_TIME_REGS && !rtc_is_alarm(reg) && rtc_running(r))
		rtc_set_field(r, reg, val, now);
	else
		r->regs[reg] = val;
}
