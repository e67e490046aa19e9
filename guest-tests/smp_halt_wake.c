// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_halt_wake: an AP halted in HLT with IF=1 wakes on a fixed IPI
 * (Intel SDM Vol. 2, HLT: "An enabled interrupt ... will resume
 * execution"; DESIGN.md, "IPI rules": a halted target is woken).
 *
 * NR_WAKES rounds: the AP executes STI; HLT; under tickvisor the BSP
 * waits until the guest's HLT exits grow (the AP is really halted), then
 * stamps the TSC and sends the IPI. The AP's handler stamps its arrival
 * and the AP stamps its resumption after the HLT. Each round: one handler
 * run, on the AP only, before the instruction after HLT. The wake-up
 * latency (send to handler, TSC cycles; the vCPUs share one TSC) is
 * reported as min/p50/max and, under tickvisor or on bare hardware,
 * bounded by max_us=N (default 2000).
 * peer=N picks the AP (default 1).
 */
#include "lib/bench.h"
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/smp_hits.h"
#include "lib/tsc.h"

#define IPI_VECTOR              0x44u
#define NR_WAKES                20u
#define MAX_US_DEFAULT          2000u
#define HALT_SETTLE_US          100u    /* without tickvisor: time to reach HLT */

static struct smp_hits hits;
static unsigned peer;
static volatile uint32_t ap_round;      /* the AP is ready for this round */
static volatile uint32_t bsp_armed;     /* the BSP counted HLT exits: halt now */
static volatile uint32_t bsp_round;     /* the BSP has sent this round's IPI */
static uint64_t resume_tsc[NR_WAKES];   /* AP: after HLT */
static uint64_t handler_tsc[NR_WAKES];  /* AP: in the handler */
static uint64_t latency[NR_WAKES];

static void ipi_handler(struct ex_regs *regs)
{
	(void)regs;
	smp_hits_record(&hits);
	apic_eoi();
}

/* On the AP: NR_WAKES times STI; HLT, each when the BSP is ready to see
 * the HLT exit. A round whose IPI never comes ends the loop once the BSP
 * has given up (it sends one more kick then). */
static void ap_halt_loop(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < NR_WAKES; i++) {
		uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);

		cli();
		ap_round = i + 1;
		while (bsp_armed != i + 1 && !tsc_passed(deadline))
			pause();
		safe_halt();
		resume_tsc[i] = rdtsc();
		handler_tsc[i] = hits.last_tsc[peer];
		if (bsp_round != i + 1)
			break;
	}
}

/* One round; false on the first thing that went wrong. */
static bool wake_once(uint32_t i, bool *halted)
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);
	uint64_t hlt_before, t0;

	while (ap_round != i + 1 && !tsc_passed(deadline))
		pause();
	if (ap_round != i + 1)
		return false;
	hlt_before = smp_hlt_exits();
	bsp_armed = i + 1;
	*halted &= smp_wait_halted(hlt_before, HALT_SETTLE_US);
	bsp_round = i + 1;
	t0 = rdtsc();
	apic_icr_write(smp_icr(LAPIC_DM_FIXED, IPI_VECTOR, LAPIC_DEST_NONE, false), peer);
	if (!smp_hits_expect(&hits, (uint32_t)BIT(peer), i + 1, SMP_HITS_TIMEOUT_US, 0, NULL))
		return false;
	while (!resume_tsc[i] && !tsc_passed(deadline))
		pause();
	latency[i] = handler_tsc[i] - t0;
	return resume_tsc[i] && handler_tsc[i] >= t0 && handler_tsc[i] <= resume_tsc[i];
}

int main(int argc, char **argv)
{
	uint64_t max_us = arg_get_ulong("max_us", MAX_US_DEFAULT);
	bool halted = true, ok = true;
	unsigned done = 0;

	(void)argc;
	(void)argv;
	report_prefix_push("smp_halt_wake");
	handle_irq(IPI_VECTOR, ipi_handler);
	if (!smp_init_peer(&peer))
		return report_summary();
	smp_hits_clear(&hits);
	if (!on_cpu_async(peer, ap_halt_loop, NULL))
		return report_summary();
	while (done < NR_WAKES && ok)
		if ((ok = wake_once(done, &halted)))
			done++;
	if (done < NR_WAKES) {                  /* a stuck AP leaves its loop */
		bsp_round = bsp_armed = 0;
		apic_icr_write(smp_icr(LAPIC_DM_FIXED, IPI_VECTOR, LAPIC_DEST_NONE, false), peer);
	}
	report(on_cpu_wait(peer) && ok, "%u of %u wakes: AP %u halted with IF=1 woke on the IPI, "
	       "handler once, on CPU %u, before the instruction after HLT", done, NR_WAKES, peer, peer);
	if (tickvisor_present())
		report(halted, "every round the AP was halted (HLT exit) before the IPI");
	if (!done)
		return report_summary();
	sort_u64(latency, done);
	report_info("wake-up latency, IPI send to handler: min %lu p50 %lu max %lu cycles "
		    "(%lu us at %lu MHz)", latency[0], latency[done / 2], latency[done - 1],
		    tsc_to_us(latency[done - 1]), tsc_hz() / 1000000);
	/* Another hypervisor (QEMU TCG, the baseline) schedules as it likes. */
	if (tickvisor_present() || !hypervisor_present())
		report(tsc_to_us(latency[done - 1]) <= max_us, "wake-up latency at most %lu us",
		       max_us);
	else
		report_skip("wake-up latency bound: another hypervisor");
	return report_summary();
}
