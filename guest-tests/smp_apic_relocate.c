// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_apic_relocate: each CPU moves its own xAPIC page (Intel SDM Vol. 3A,
 * "Relocating the Local APIC Registers": IA32_APIC_BASE is per processor,
 * and so is the page it places) while the other keeps using its own.
 * KVM (lapic.c: each vCPU's apic->base_address, apic_mmio_in_range per
 * vCPU) and Bochs (cpu/apic.cc: bx_local_apic_c::is_selected compares
 * with that CPU's base) agree: a CPU's APIC answers only that CPU's
 * accesses at its base. For the other CPU the address is whatever is
 * there without it: unassigned memory (reads all ones) or RAM.
 *
 * - the AP moves to AP_BASE and uses it (ID, TPR, self-IPI and EOI there);
 *   the BSP reads AP_BASE as unassigned, its own page still at 0xfee00000;
 * - the BSP moves to BSP_BASE as well; each CPU sees the other's base as
 *   unassigned and its own as its APIC, the AP busy at its base meanwhile;
 * - the AP moves into RAM: for the BSP that page stays RAM (reads and
 *   writes reach it); both move back to 0xfee00000.
 */
#include "lib/apic_util.h"
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define BSP_BASE   0xfeb00000ull        /* free MMIO space below the I/O APIC */
#define AP_BASE    0xfea00000ull
#define RAM_BASE   0x03000000ull        /* 48 MiB: inside the guest's RAM */
#define VEC        0x62u
#define MAGIC      0x5aa5c33cu

static unsigned peer;
static volatile uint32_t runs[2];
static volatile uint32_t busy_stop, busy_bad, busy_loops;

static uint32_t rd(uint64_t base, uint32_t off)
{
	return *(volatile uint32_t *)(base + off);
}

static void wr(uint64_t base, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(base + off) = v;
}

static uint64_t my_base(void)
{
	return rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_ADDR;
}

/* EOI where this CPU's APIC is now. */
static void on_vec(struct ex_regs *r)
{
	(void)r;
	runs[this_cpu()->apic_id ? 1 : 0]++;
	wr(my_base(), LAPIC_EOI, 0);
}

static bool move_to(uint64_t base)
{
	uint64_t v = rdmsr(MSR_IA32_APIC_BASE);

	return apic_base_write_safe((v & ~APIC_BASE_ADDR) | base) == 0 && my_base() == base;
}

/* This CPU's APIC at base: its ID, TPR, a self-IPI taken and EOIed there. */
static bool use_apic_at(uint64_t base)
{
	unsigned me = this_cpu()->apic_id ? 1 : 0;
	uint32_t before = runs[me];
	uint64_t deadline = tsc_deadline_us(100000);
	bool ok;

	ok = FIELD_GET(LAPIC_ID_XAPIC, rd(base, LAPIC_ID)) == this_cpu()->apic_id;
	wr(base, LAPIC_TPR, 0x20);
	ok &= rd(base, LAPIC_TPR) == 0x20;
	wr(base, LAPIC_TPR, 0);
	wr(base, LAPIC_ICR_HI, 0);
	wr(base, LAPIC_ICR_LO, (LAPIC_DEST_SELF << 18) | VEC);
	while (runs[me] == before && !tsc_passed(deadline))
		pause();
	return ok && runs[me] == before + 1;
}

/*
 * The AP's side runs as one on_cpu_async() call stepped through by the
 * BSP: the runtime's own IPIs (on_cpu kicks) are EOIed at 0xfee00000 and
 * must not reach a CPU whose APIC is elsewhere.
 */
static volatile uint32_t ap_step, ap_done;
static volatile bool ap_uses, ap_default_unassigned, ap_bsp_base_unassigned, ap_ram_uses,
	ap_back;

static bool ap_wait_step(uint32_t step)
{
	uint64_t deadline = tsc_deadline_us(2000000);

	while (ap_step < step)
		if (tsc_passed(deadline))
			return false;
	return true;
}

static void ap_busy(void)
{
	while (!busy_stop) {
		if (FIELD_GET(LAPIC_ID_XAPIC, rd(AP_BASE, LAPIC_ID)) != this_cpu()->apic_id)
			busy_bad++;
		busy_loops++;
	}
}

static void ap_steps(void *arg)
{
	(void)arg;
	ap_uses = move_to(AP_BASE) && use_apic_at(AP_BASE);
	ap_default_unassigned = rd(LAPIC_MMIO_BASE, LAPIC_VERSION) == 0xffffffffu;
	ap_done = 1;
	if (!ap_wait_step(2))
		goto out;
	ap_busy();
	ap_done = 2;
	if (!ap_wait_step(3))
		goto out;
	ap_bsp_base_unassigned = rd(BSP_BASE, LAPIC_VERSION) == 0xffffffffu;
	ap_uses &= use_apic_at(AP_BASE);
	ap_done = 3;
	if (!ap_wait_step(4))
		goto out;
	ap_ram_uses = move_to(RAM_BASE) && use_apic_at(RAM_BASE);
	ap_done = 4;
	if (!ap_wait_step(5))
		goto out;
out:
	ap_back = move_to(LAPIC_MMIO_BASE) && use_apic_at(LAPIC_MMIO_BASE);
	ap_done = 5;
}

/* Lets the AP run step `step` and waits for it to finish. */
static bool ap_run_step(uint32_t step)
{
	uint64_t deadline = tsc_deadline_us(2000000);

	ap_step = step;
	while (ap_done < step)
		if (tsc_passed(deadline))
			return false;
	return true;
}

static void test_ap_moves(void)
{
	report_prefix_push("AP moves");
	report(ap_run_step(1) && ap_uses, "the AP uses its APIC at %#llx", AP_BASE);
	report(ap_default_unassigned, "for the AP, 0xfee00000 is unassigned (reads all ones)");
	report(rd(AP_BASE, LAPIC_VERSION) == 0xffffffffu,
	       "for the BSP, the AP's base is unassigned (reads all ones)");
	report(use_apic_at(LAPIC_MMIO_BASE), "the BSP still uses its APIC at 0xfee00000");
	report_prefix_pop();
}

static void test_both_moved(void)
{
	uint64_t deadline = tsc_deadline_us(100000);
	bool bsp_uses, bsp_sees;

	report_prefix_push("both moved");
	ap_step = 2;
	while (busy_loops < 10 && !tsc_passed(deadline))
		pause();
	bsp_uses = move_to(BSP_BASE) && use_apic_at(BSP_BASE);
	bsp_sees = rd(AP_BASE, LAPIC_VERSION) == 0xffffffffu &&
		   rd(LAPIC_MMIO_BASE, LAPIC_VERSION) == 0xffffffffu;
	busy_stop = 1;
	report(ap_run_step(2) && busy_loops >= 10 && !busy_bad,
	       "the AP used its own base while the BSP moved (%u reads, %u wrong)", busy_loops,
	       busy_bad);
	report(bsp_uses, "the BSP uses its APIC at %#llx", BSP_BASE);
	report(bsp_sees, "for the BSP, the AP's base and 0xfee00000 are unassigned");
	report(ap_run_step(3) && ap_bsp_base_unassigned && ap_uses,
	       "for the AP, the BSP's base is unassigned; its own still works");
	report(move_to(LAPIC_MMIO_BASE) && use_apic_at(LAPIC_MMIO_BASE),
	       "the BSP moves back to 0xfee00000");
	report_prefix_pop();
}

static void test_ap_in_ram(void)
{
	volatile uint32_t *ram = (volatile uint32_t *)(RAM_BASE + LAPIC_VERSION);
	uint32_t seen;

	report_prefix_push("AP in RAM");
	*ram = MAGIC;
	report(ap_run_step(4) && ap_ram_uses, "the AP uses its APIC at %#llx (RAM)", RAM_BASE);
	seen = *ram;
	report(seen == MAGIC, "for the BSP the page is still RAM (%#x)", seen);
	*ram = ~MAGIC;
	report(ap_run_step(5) && ap_back, "the AP moves back to 0xfee00000");
	seen = *ram;
	report(seen == ~MAGIC, "the BSP's store went to RAM (%#x)", seen);
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("smp_apic_relocate");
	handle_irq(VEC, on_vec);
	if (!smp_init_peer(&peer))
		return report_summary();
	if (apic_is_x2apic()) {
		report_skip("x2APIC mode: no MMIO page to move");
		return report_summary();
	}
	if (!on_cpu_async(peer, ap_steps, NULL))
		return report_summary();
	test_ap_moves();
	test_both_moved();
	test_ap_in_ram();
	ap_step = 5;
	report(on_cpu_wait(peer) && ap_back, "the AP is back at 0xfee00000");
	report_prefix_pop();
	return report_summary();
}
