// SPDX-License-Identifier: BSD-2-Clause
/*
 * rtc_cmos: the CMOS clock at ports 0x70/0x71 behaves as an MC146818A
 * (Motorola MC146818A data sheet) the way Linux reads it
 * (drivers/rtc/rtc-mc146818-lib.c, mc146818_get_time(): wait while
 * A.UIP is set, read, re-read the seconds). Checked here:
 * - power-on state: A 0x26, B 0x02 (24-hour BCD), D 0x80 (VRT), the
 *   index port reads all ones, CMOS RAM 0x0e-0x7f reads 0;
 * - the time is valid BCD, and read twice across a second boundary it
 *   moved by exactly one second (carries included);
 * - UIP rises once a second, stays about 244 us (the data sheet's
 *   "UIP ... 244 us before the update"; QEMU's UIP_HOLD_LENGTH and
 *   Bochs's 244 us uip timer agree) and the new second shows when it
 *   falls; a waiting reader is never kept longer;
 * - binary and 12-hour modes (B.DM, B.24/12) show the same time;
 * - SET stops updates and UIP and clears UIE; a time written then is
 *   taken when SET clears (23:59:59 on 2024-02-28 rolls into the leap
 *   day); releasing the divider from reset (A.DV 110) makes the first
 *   update come half a second later;
 * - register C: UF after an update, PF at the periodic rate, AF on an
 *   alarm match, IRQF only with the enable bit; reading C clears it;
 * - the NMI bit (index bit 7) only selects the same register, word
 *   accesses split into index and data, C and D ignore writes.
 * QEMU's hw/rtc/mc146818rtc.c and Bochs's iodev/cmos.cc agree with all
 * of it except Bochs, which sets C's flags only with their enable bit.
 */
#include "lib/guest.h"
#include "lib/tsc.h"

#define CMOS_INDEX      0x70u
#define CMOS_DATA       0x71u
#define NMI_OFF         0x80u
#define REG_SEC         0x00u
#define REG_SEC_ALARM   0x01u
#define REG_MIN         0x02u
#define REG_MIN_ALARM   0x03u
#define REG_HOUR        0x04u
#define REG_HOUR_ALARM  0x05u
#define REG_WDAY        0x06u
#define REG_MDAY        0x07u
#define REG_MON         0x08u
#define REG_YEAR        0x09u
#define REG_A           0x0au
#define REG_B           0x0bu
#define REG_C           0x0cu
#define REG_D           0x0du
#define A_UIP           0x80u
#define A_DV_RESET      0x60u           /* DV = 110 */
#define B_SET           0x80u
#define B_PIE           0x40u
#define B_AIE           0x20u
#define B_UIE           0x10u
#define B_BINARY        0x04u
#define B_24H           0x02u
#define C_IRQF          0x80u
#define C_PF            0x40u
#define C_AF            0x20u
#define C_UF            0x10u
#define DONT_CARE       0xc0u
#define UIP_US          244u
#define SECOND_US       1000000u

struct rtc_time { unsigned sec, min, hour, wday, mday, mon, year; };

static uint8_t cmos_read(uint8_t reg)
{
	outb(CMOS_INDEX, reg);
	return inb(CMOS_DATA);
}

static void cmos_write(uint8_t reg, uint8_t val)
{
	outb(CMOS_INDEX, reg);
	outb(CMOS_DATA, val);
}

static bool bcd_ok(uint8_t v)
{
	return (v & 0xf) <= 9 && (v >> 4) <= 9;
}

static unsigned bcd(uint8_t v)
{
	return (v >> 4) * 10u + (v & 0xfu);
}

/* TSC when A.UIP next reads `level`, 0 if it does not within limit_us. */
static uint64_t uip_wait(bool level, uint64_t limit_us)
{
	uint64_t end = tsc_deadline_us(limit_us);

	while (!tsc_passed(end))
		if (!!(cmos_read(REG_A) & A_UIP) == level)
			return rdtsc();
	return 0;
}

/* Waits (polling every 500 us, few exits) until the seconds change: an
 * update just ended. False if none came within 1.1 s. */
static bool wait_tick(void)
{
	uint8_t s0 = cmos_read(REG_SEC);
	uint64_t end = tsc_deadline_us(1100000);

	while (!tsc_passed(end)) {
		tsc_delay_us(500);
		if (cmos_read(REG_SEC) != s0)
			return true;
	}
	return false;
}

/* The update about a second after the one wait_tick() saw: UIP's rise
 * and fall timed closely, and the seconds read while UIP was set; false
 * if they did not come. */
static bool next_update_timed(uint64_t *rise, uint64_t *fall, uint8_t *sec_during)
{
	tsc_delay_us(SECOND_US - 20000);        /* most of the second without exits */
	*rise = uip_wait(true, 40000);
	*sec_during = cmos_read(REG_SEC);
	*fall = *rise ? uip_wait(false, 10000) : 0;
	return *fall != 0;
}

/* Raw time registers, BCD checked when `bcd_mode`. */
static bool read_raw(uint8_t raw[10], bool bcd_mode)
{
	bool ok = true;

	for (uint8_t r = REG_SEC; r <= REG_YEAR; r++) {
		raw[r] = cmos_read(r);
		if (bcd_mode && r != REG_HOUR && !bcd_ok(raw[r]))
			ok = false;
	}
	return ok && (!bcd_mode || bcd_ok(raw[REG_HOUR] & 0x7f));
}

static unsigned dec(uint8_t v, bool binary)
{
	return binary ? v : bcd(v);
}

static struct rtc_time decode(const uint8_t raw[10], bool binary)
{
	return (struct rtc_time){
		dec(raw[REG_SEC], binary), dec(raw[REG_MIN], binary), dec(raw[REG_HOUR], binary),
		dec(raw[REG_WDAY], binary), dec(raw[REG_MDAY], binary), dec(raw[REG_MON], binary),
		dec(raw[REG_YEAR], binary),
	};
}

static bool time_valid(const struct rtc_time *t)
{
	return t->sec < 60 && t->min < 60 && t->hour < 24 && t->wday >= 1 && t->wday <= 7 &&
	       t->mday >= 1 && t->mday <= 31 && t->mon >= 1 && t->mon <= 12 && t->year <= 99;
}

/* Seconds within the day. */
static unsigned tod(const struct rtc_time *t)
{
	return t->hour * 3600 + t->min * 60 + t->sec;
}

static void test_power_on(void)
{
	bool ram_zero = true;

	report_prefix_push("power-on");
	report(cmos_read(REG_D) == 0x80, "D: VRT set, rest 0 (%#x)", cmos_read(REG_D));
	report((cmos_read(REG_A) & 0x7f) == 0x26, "A: DV 32.768 kHz, RS 1024 Hz (%#x)",
	       cmos_read(REG_A) & 0x7f);
	report(cmos_read(REG_B) == B_24H, "B: 24-hour, BCD, no interrupts, SET clear (%#x)",
	       cmos_read(REG_B));
	report(inb(CMOS_INDEX) == 0xff, "index port reads all ones");
	for (uint8_t r = 0x0e; r < 0x80; r++)
		ram_zero &= cmos_read(r) == 0;
	report(ram_zero, "CMOS RAM 0x0e-0x7f reads 0");
	report_prefix_pop();
}

/* The time read right after two consecutive updates moved by one
 * second; UIP timed at the second and third. */
static void test_second_boundary(void)
{
	uint64_t rise2, fall2, rise3, fall3;
	uint8_t raw1[10], raw2[10], during2, during3, after;
	struct rtc_time t1, t2;
	bool bcd1, bcd2, ok;

	report_prefix_push("update");
	ok = wait_tick();
	bcd1 = read_raw(raw1, true);
	ok = ok && next_update_timed(&rise2, &fall2, &during2);
	bcd2 = read_raw(raw2, true);
	ok = ok && next_update_timed(&rise3, &fall3, &during3);
	after = cmos_read(REG_SEC);
	if (!report(ok, "UIP rose and fell once a second (A reads %#x)", cmos_read(REG_A))) {
		report_prefix_pop();
		return;
	}
	t1 = decode(raw1, false);
	t2 = decode(raw2, false);
	report(bcd1 && bcd2 && time_valid(&t1) && time_valid(&t2),
	       "time registers are valid BCD: 20%02u-%02u-%02u %02u:%02u:%02u (weekday %u)",
	       t1.year, t1.mon, t1.mday, t1.hour, t1.min, t1.sec, t1.wday);
	report((tod(&t1) + 1) % 86400 == tod(&t2),
	       "read twice across a second boundary: %02u:%02u:%02u then %02u:%02u:%02u",
	       t1.hour, t1.min, t1.sec, t2.hour, t2.min, t2.sec);
	report(during2 == raw1[REG_SEC] && during3 == raw2[REG_SEC],
	       "while UIP is set the old second still reads (%#x, %#x)", during2, during3);
	report(bcd(after) == (t2.sec + 1) % 60, "when UIP falls the new second reads (%#x)", after);
	report(tsc_to_us(fall2 - rise2) >= UIP_US - 40 && tsc_to_us(fall2 - rise2) <= UIP_US + 60,
	       "UIP lasted %lu us (244 us window)", (unsigned long)tsc_to_us(fall2 - rise2));
	report(tsc_to_us(rise3 - rise2) >= SECOND_US - 100 &&
	       tsc_to_us(rise3 - rise2) <= SECOND_US + 100,
	       "UIP rises once a second (%lu us apart)", (unsigned long)tsc_to_us(rise3 - rise2));
	report_prefix_pop();
}

/* Binary and 12-hour modes show the same time as BCD 24-hour. */
static void test_modes(void)
{
	uint8_t bcd_raw[10], bin_raw[10], h12;
	struct rtc_time b, n;
	unsigned h;

	report_prefix_push("modes");
	wait_tick();
	read_raw(bcd_raw, true);
	cmos_write(REG_B, B_24H | B_BINARY);
	read_raw(bin_raw, false);
	cmos_write(REG_B, B_BINARY);            /* 12-hour, binary */
	h12 = cmos_read(REG_HOUR);
	cmos_write(REG_B, B_24H);
	b = decode(bcd_raw, false);
	n = decode(bin_raw, true);
	report(b.sec == n.sec && b.min == n.min && b.hour == n.hour && b.mday == n.mday &&
	       b.mon == n.mon && b.year == n.year && b.wday == n.wday,
	       "binary mode: the same time as BCD (%u:%u:%u)", n.hour, n.min, n.sec);
	h = (h12 & 0x7fu) % 12 + (h12 & 0x80u ? 12 : 0);
	report(h == b.hour && (h12 & 0x7fu) >= 1 && (h12 & 0x7fu) <= 12,
	       "12-hour mode: hour %#x (1-12, bit 7 PM) is %u", h12, b.hour);
	report_prefix_pop();
}

/* SET: no updates, no UIP; a time written then starts when SET clears. */
static void test_set(void)
{
	uint8_t sec0, raw[10];
	bool uip = false, still = true;
	struct rtc_time t;

	report_prefix_push("set");
	cmos_write(REG_B, B_24H | B_SET | B_UIE);
	report(cmos_read(REG_B) == (B_24H | B_SET), "SET clears UIE (B %#x)", cmos_read(REG_B));
	sec0 = cmos_read(REG_SEC);
	for (unsigned i = 0; i < 110; i++) {    /* 1.1 s */
		tsc_delay_us(10000);
		uip |= cmos_read(REG_A) & A_UIP;
		still &= cmos_read(REG_SEC) == sec0;
	}
	report(!uip && still, "for 1.1 s: UIP never set, the seconds stay %#x", sec0);
	cmos_write(REG_YEAR, 0x24);
	cmos_write(REG_MON, 0x02);
	cmos_write(REG_MDAY, 0x28);
	cmos_write(REG_HOUR, 0x23);
	cmos_write(REG_MIN, 0x59);
	cmos_write(REG_SEC, 0x59);
	report(cmos_read(REG_SEC) == 0x59 && cmos_read(REG_MDAY) == 0x28,
	       "time registers keep what SET let be written");
	cmos_write(REG_B, B_24H);
	report(wait_tick(), "SET cleared: the clock updates again");
	read_raw(raw, true);
	t = decode(raw, false);
	report(t.year == 24 && t.mon == 2 && t.mday == 29 && t.hour == 0 && t.min == 0 &&
	       t.sec == 0, "23:59:59 2024-02-28 rolled into 00:00:00 2024-02-29 (got %02u-%02u "
	       "%02u:%02u:%02u)", t.mon, t.mday, t.hour, t.min, t.sec);
	report(t.wday == 5, "2024-02-29 is a Thursday (weekday 5, got %u)", t.wday);
	report_prefix_pop();
}

/* Divider reset: the clock stops; released, the first update comes
 * half a second later. */
static void test_divider(void)
{
	uint64_t released, first;
	uint8_t sec0;

	report_prefix_push("divider");
	wait_tick();
	cmos_write(REG_A, A_DV_RESET | 0x06);
	sec0 = cmos_read(REG_SEC);
	tsc_delay_us(1200000);
	report(cmos_read(REG_SEC) == sec0 && !(cmos_read(REG_A) & A_UIP),
	       "divider in reset: no update for 1.2 s, no UIP");
	cmos_write(REG_A, 0x26);
	released = rdtsc();
	tsc_delay_us(490000);
	first = uip_wait(true, 20000);
	report(first && tsc_to_us(first - released) >= 500000 - UIP_US - 2000 &&
	       tsc_to_us(first - released) <= 500000 - UIP_US + 2000,
	       "released: UIP rises %lu us later (first update after 500 ms)",
	       first ? (unsigned long)tsc_to_us(first - released) : 0ul);
	report_prefix_pop();
}

/* Register C: flags whatever B enables, IRQF with the enable bit. */
static void test_flags(void)
{
	uint8_t c_upd, c_again, c_pf, c_af, c_noaf;

	report_prefix_push("C");
	(void)cmos_read(REG_C);
	wait_tick();
	c_upd = cmos_read(REG_C);
	c_again = cmos_read(REG_C);
	report((c_upd & (C_UF | C_IRQF)) == C_UF, "an update sets UF, no IRQF without UIE (%#x)",
	       c_upd);
	report(c_again == 0, "reading C cleared it");
	cmos_write(REG_B, B_24H | B_PIE);
	(void)cmos_read(REG_C);
	tsc_delay_us(3000);                     /* RS 6: 1024 Hz, a period is 977 us */
	c_pf = cmos_read(REG_C);
	report((c_pf & (C_PF | C_IRQF)) == (C_PF | C_IRQF), "PF and IRQF with PIE (%#x)", c_pf);
	cmos_write(REG_B, B_24H);
	cmos_write(REG_SEC_ALARM, DONT_CARE);
	cmos_write(REG_MIN_ALARM, DONT_CARE);
	cmos_write(REG_HOUR_ALARM, DONT_CARE);
	(void)cmos_read(REG_C);
	wait_tick();
	c_af = cmos_read(REG_C);
	report((c_af & (C_AF | C_UF | C_IRQF)) == (C_AF | C_UF),
	       "alarm 'any' matches every update: AF, UF, no IRQF without AIE (%#x)", c_af);
	cmos_write(REG_HOUR_ALARM, 0x25);       /* 25 o'clock never comes */
	(void)cmos_read(REG_C);
	wait_tick();
	c_noaf = cmos_read(REG_C);
	report((c_noaf & (C_AF | C_UF)) == C_UF, "alarm hour 25: no AF (%#x)", c_noaf);
	report_prefix_pop();
}

static void test_ram_and_ports(void)
{
	bool ok = true;

	report_prefix_push("ports");
	for (uint8_t r = 0x0e; r < 0x80; r++)
		cmos_write(r, (uint8_t)(r ^ 0x5a));
	for (uint8_t r = 0x0e; r < 0x80; r++)
		ok &= cmos_read(r) == (uint8_t)(r ^ 0x5a);
	report(ok, "CMOS RAM 0x0e-0x7f keeps what is written");
	report(cmos_read(NMI_OFF | REG_D) == 0x80 && cmos_read(NMI_OFF | 0x20) == (0x20 ^ 0x5a),
	       "index bit 7 (NMI mask) selects the same register");
	cmos_write(REG_D, 0);
	cmos_write(REG_C, 0xff);
	report(cmos_read(REG_D) == 0x80 && (cmos_read(REG_C) & 0x0f) == 0,
	       "C and D ignore writes");
	outw(CMOS_INDEX, 0x21 | 0xa5 << 8);
	report(cmos_read(0x21) == 0xa5, "outw(0x70): index 0x21, then 0xa5 to the data port");
	report(inw(CMOS_INDEX) == 0xa5ff, "inw(0x70): 0xff from the index port, data from 0x71");
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("rtc_cmos");
	test_power_on();
	test_second_boundary();
	test_modes();
	test_flags();
	test_set();
	test_divider();
	test_ram_and_ports();
	report_prefix_pop();
	return report_summary();
}
