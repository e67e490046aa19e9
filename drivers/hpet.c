// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/hpet.h"
#include "drivers/io.h"

static uint64_t hpet_rd(const struct hpet *h, uint32_t reg)
{
	return mmio_read64(h->base + reg);
}

static void hpet_wr(const struct hpet *h, uint32_t reg, uint64_t v)
{
	mmio_write64(h->base + reg, v);
}

bool hpet_probe(struct hpet *h, uint64_t base)
{
	uint64_t cap = mmio_read64(base + HPET_GCAP_ID);
	uint64_t period = FIELD_GET(HPET_GCAP_PERIOD, cap);

	/* Nothing there reads all-ones (or zero); the period must be legal. */
	if (cap == ~0ull || !cap || !period || period > HPET_MAX_PERIOD_FS ||
	    !FIELD_GET(HPET_GCAP_REV, cap))
		return false;
	h->base = base;
	h->period_fs = period;
	h->freq_hz = 1000000000000000ull / period;
	h->ncomparators = (uint32_t)FIELD_GET(HPET_GCAP_NUM_TIM, cap) + 1;
	h->counter_64 = cap & HPET_GCAP_COUNT_64;
	h->vendor = (uint16_t)FIELD_GET(HPET_GCAP_VENDOR, cap);
	return true;
}

void hpet_enable(const struct hpet *h)
{
	uint64_t conf = hpet_rd(h, HPET_GEN_CONF);

	/* Legacy replacement routing off: comparators 0/1 must not steal
	 * IRQ0/8 from anyone, we route them ourselves. */
	hpet_wr(h, HPET_GEN_CONF, (conf & ~HPET_CONF_LEG_RT) | HPET_CONF_ENABLE);
}

void hpet_halt(const struct hpet *h)
{
	hpet_wr(h, HPET_GEN_CONF, hpet_rd(h, HPET_GEN_CONF) & ~HPET_CONF_ENABLE);
}

uint64_t hpet_read_counter(const struct hpet *h)
{
	if (h->counter_64)
		return hpet_rd(h, HPET_MAIN_CNT);
	return mmio_read32(h->base + HPET_MAIN_CNT);
}

uint64_t hpet_comparator_caps(const struct hpet *h, unsigned n)
{
	return hpet_rd(h, HPET_TN(HPET_TN_CONF, n));
}

unsigned hpet_comparator_bits(const struct hpet *h, unsigned n)
{
	return h->counter_64 && (hpet_comparator_caps(h, n) & HPET_TN_SIZE_64) ? 64 : 32;
}

void hpet_route(const struct hpet *h, unsigned n, uint32_t fsb_addr, uint32_t fsb_data,
		unsigned gsi, bool level)
{
	uint64_t conf = hpet_comparator_caps(h, n);

	conf &= ~(HPET_TN_INT_ENB | HPET_TN_PERIODIC | HPET_TN_INT_LEVEL | HPET_TN_32MODE |
		  HPET_TN_INT_ROUTE | HPET_TN_FSB_EN);
	if (fsb_addr) {
		hpet_wr(h, HPET_TN(HPET_TN_FSB, n), ((uint64_t)fsb_addr << 32) | fsb_data);
		conf |= HPET_TN_FSB_EN;
	} else {
		conf |= FIELD_PREP(HPET_TN_INT_ROUTE, gsi);
		if (level)
			conf |= HPET_TN_INT_LEVEL;
	}
	hpet_wr(h, HPET_TN(HPET_TN_CONF, n), conf);
	hpet_wr(h, HPET_GINTR_STA, BIT(n));
}

void hpet_arm(const struct hpet *h, unsigned n, uint64_t when)
{
	uint64_t conf = hpet_comparator_caps(h, n);

	/* A level-triggered comparator holds its line while its status bit
	 * is set, also from a match while it was disabled: an old one would
	 * interrupt at once. */
	if (conf & HPET_TN_INT_LEVEL)
		hpet_wr(h, HPET_GINTR_STA, BIT(n));
	hpet_wr(h, HPET_TN(HPET_TN_CMP, n), when);
	hpet_wr(h, HPET_TN(HPET_TN_CONF, n), conf | HPET_TN_INT_ENB);
}

void hpet_disarm(const struct hpet *h, unsigned n)
{
	uint64_t conf = hpet_comparator_caps(h, n);

	hpet_wr(h, HPET_TN(HPET_TN_CONF, n), conf & ~HPET_TN_INT_ENB);
	if (conf & HPET_TN_INT_LEVEL)
		hpet_wr(h, HPET_GINTR_STA, BIT(n));
}

bool hpet_ack(const struct hpet *h, unsigned n)
{
	if (!(hpet_rd(h, HPET_GINTR_STA) & BIT(n)))
		return false;
	hpet_wr(h, HPET_GINTR_STA, BIT(n));
	return true;
}
