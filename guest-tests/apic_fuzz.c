// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_fuzz: random values into random APIC registers, through xAPIC MMIO
 * (aligned 32-bit stores, 8/16/32-bit loads at any offset) and x2APIC
 * MSRs (with #GP caught), with mode switches through IA32_APIC_BASE.
 * Whatever the guest writes, tickvisor must neither crash nor wedge
 * (DESIGN.md: bad input is contained); afterwards the APIC is reset and
 * must work: a self-IPI is taken once and EOIs. ICR writes avoid INIT,
 * SIPI, NMI and SMI, which would (as on hardware) stop or reset this lone
 * vCPU; everything else is fair game. Under tickvisor only: Bochs's own
 * APIC stops the emulator on some of these values.
 *
 * Arguments: n=<operations> (3000), seed=<n>.
 */
#include "lib/apic_util.h"
#include "lib/guest.h"

#define VEC 0x70u
/* tickvisor's APIC: version 0x14, 7 LVTs, no EOI-broadcast suppression
 * (docs/guest-environment.md, "The local APIC and its timer"); fuzzing must not have changed it. */
#define APIC_VERSION_TV 0x00060014u

static volatile uint32_t runs;
static uint64_t rng;

static void on_vec(struct ex_regs *r)
{
	(void)r;
	runs++;
	apic_eoi();
}

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ICR low words that neither stop nor reset a lone vCPU. */
static uint32_t tame_icr(uint32_t v)
{
	uint32_t dm = (v >> 8) & 7;

	if (dm != LAPIC_DM_FIXED && dm != LAPIC_DM_LOWEST)
		v &= ~(7u << 8);
	return v;
}

static void fuzz_xapic(void)
{
	uint32_t off = (uint32_t)(rnd() % 0x400) & ~0xfu, v = (uint32_t)rnd();
	volatile uint8_t *page = (volatile uint8_t *)LAPIC_MMIO_BASE;
	unsigned r = (unsigned)(rnd() % 4), byte = (unsigned)(rnd() % 4);

	if (r == 0) {
		if (off == LAPIC_ICR_LO)
			v = tame_icr(v);
		*(volatile uint32_t *)(page + off) = v;
	} else if (r == 1) {
		(void)*(volatile uint32_t *)(page + off);
	} else if (r == 2) {
		(void)*(volatile uint16_t *)(page + off + (byte & 2));
	} else {
		(void)*(page + off + byte);
	}
}

static void fuzz_x2apic(void)
{
	uint32_t msr = 0x800 + (uint32_t)(rnd() % 0x100);
	uint64_t v = rnd() >> (rnd() % 64), old;

	if (msr == 0x830)
		v = (v & ~0xffffffffull) | tame_icr((uint32_t)v);
	if (rnd() % 2)
		wrmsr_safe(msr, v);
	else
		rdmsr_safe(msr, &old);
}

static void fuzz_mode(void)
{
	static const uint64_t modes[] = { APIC_BASE_EN, APIC_BASE_EN | APIC_BASE_EXTD, 0 };
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE) & (APIC_BASE_BSP | APIC_BASE_ADDR);

	apic_base_write_safe(base | modes[rnd() % 3]);
	if (!(rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_EN))
		apic_base_write_safe(base | APIC_BASE_EN);
}

int main(int argc, char **argv)
{
	unsigned n = (unsigned)arg_get_ulong("n", 3000);
	uint64_t base;
	uint32_t ver;

	(void)argc;
	(void)argv;
	report_prefix_push("apic_fuzz");
	if (!tickvisor_present()) {
		report_skip("random APIC registers only under tickvisor");
		return report_summary();
	}
	rng = arg_get_ulong("seed", 0x7469636b) | 1;
	apic_catch_spurious();
	handle_irq(VEC, on_vec);
	cli();
	for (unsigned i = 0; i < n; i++) {
		unsigned what = (unsigned)(rnd() % 64);

		if (what == 0)
			fuzz_mode();
		else if (apic_is_x2apic())
			fuzz_x2apic();
		else
			fuzz_xapic();
	}
	base = rdmsr(MSR_IA32_APIC_BASE);
	report((base & APIC_BASE_EN) && !!(base & APIC_BASE_EXTD) == apic_is_x2apic(),
	       "after %u random APIC accesses the APIC is enabled, in the mode IA32_APIC_BASE "
	       "says (0x%lx)", n, base);
	reset_apic();
	ver = apic_read(LAPIC_VERSION);
	report(ver == APIC_VERSION_TV, "after a reset the version register reads 0x%x (0x%x)",
	       APIC_VERSION_TV, ver);
	apic_write(LAPIC_TPR, 0);
	apic_sw_enable();
	for (unsigned i = 0; i < 8; i++)       /* EOI what the fuzzing left in service */
		apic_eoi();
	runs = 0;
	apic_self_ipi(VEC);
	sti();
	apic_util_wait(&runs, 1, 1000);
	cli();
	report(runs >= 1, "after a reset the APIC takes a self-IPI (%u)", runs);
	return report_summary();
}
