// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_init_kick: an INIT sent while the target vCPU is on its way into
 * the guest is acted on at once (issue 10.8; DESIGN.md, "IPI rules": a
 * target on another CPU gets a kick). tickvisor checks for INIT before
 * each VM entry and otherwise relies on the kick, a host IPI that, with
 * interrupts off until VMRESUME, stays pending and exits the guest right
 * after the entry (bhyve vmx_run: "Interrupts are disabled from this
 * point on until the guest starts executing"). An `sti` between the check
 * and the entry takes the kick in root mode and loses it: the target runs
 * on until its next exit.
 *
 * The target makes that window likely: with its TSC deadline set at T
 * (LVT masked), it executes CPUID (one exit each) until it reads a TSC past T,
 * then spins without exits. Its last exit is then usually the one during
 * which T passed, whose entry path expires the timer and re-arms the host
 * timer backend (the path that enabled interrupts). The BSP sends INIT at
 * T + d for d swept over the whole exit (NR_TRIES steps of STEP_TSC) and
 * checks that within ACT_US the target stops spinning (INIT holds it in
 * wait-for-SIPI). Then it restarts the target for the next try. Meant for
 * host timer backends (timer=lapic, timer=hpet); with the preemption
 * timer it passes trivially. Under Bochs, whose runs repeat to the cycle,
 * the entry path that enabled interrupts while re-arming the host timer
 * lost 6 of the 64 INITs with timer=lapic and 4 with timer=hpet.
 * peer=N picks the target (default 1).
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define TIMER_VECTOR    0x51u
#define NR_TRIES        64u
#define START_TSC       (-600)  /* first d: T - 600 cycles */
#define STEP_TSC        25u     /* sweeps 1600 cycles, several exits long */
#define LEAD_US         200u    /* T after the target's start */
#define ACT_US          300u    /* INIT acted on within, a few exits */

static unsigned peer;
static volatile uint64_t deadline_t;    /* T of this try, 0 until armed */
static volatile uint64_t spins;         /* the target's quiet loop */

/* On the target: TSC deadline at T with the LVT entry masked (the timer
 * still expires, through the same entry path, but injects nothing), CPUID
 * exits until T has passed, then spin without exits until INIT takes the
 * CPU away. IF stays 1: Bochs 3.0 recomputes its interrupt masking at VM
 * entry only when RFLAGS.IF changes, so a guest entered with IF=0 from a
 * host with IF=0 takes no external-interrupt exit (against the SDM,
 * "External-interrupt exiting": RFLAGS.IF does not matter then). */
static void target_run(void *arg)
{
	uint64_t t;

	(void)arg;
	apic_write(LAPIC_LVT_TIMER, TIMER_VECTOR | LAPIC_LVT_MASKED |
		   (uint32_t)FIELD_PREP(LAPIC_LVT_TIMER_MODE, LAPIC_TIMER_TSC_DEADLINE));
	t = tsc_deadline_us(LEAD_US);
	wrmsr(MSR_IA32_TSC_DEADLINE, t);
	deadline_t = t;
	while (rdtsc() < t)
		(void)cpuid(0);
	for (;;)
		spins = spins + 1;
}

/* The target has stopped spinning: INIT holds it. */
static bool target_stopped(void)
{
	uint64_t before = spins;

	tsc_delay_us(20);
	return spins == before;
}

/* One try: true if the INIT sent at T + d stopped the target in time. */
static bool try_once(int64_t d, bool *ran)
{
	uint64_t wait = tsc_deadline_us(SMP_CALL_TIMEOUT_US), until;

	deadline_t = 0;
	*ran = on_cpu_async(peer, target_run, NULL);
	while (*ran && !deadline_t && !tsc_passed(wait))
		cpu_relax();
	if (!*ran || !deadline_t) {
		*ran = false;
		return false;
	}
	until = deadline_t + (uint64_t)d;
	while (rdtsc() < until)
		cpu_relax();
	apic_icr_write(smp_icr(LAPIC_DM_INIT, 0, LAPIC_DEST_NONE, false), peer);
	tsc_delay_us(ACT_US);
	return target_stopped();
}

int main(int argc, char **argv)
{
	unsigned lost = 0, restarted = 0, tries = 0;
	int64_t first_lost = 0;

	(void)argc;
	(void)argv;
	report_prefix_push("smp_init_kick");
	if (!smp_init_peer(&peer))
		return report_summary();
	for (unsigned i = 0; i < NR_TRIES; i++) {
		int64_t d = START_TSC + (int64_t)(i * STEP_TSC);
		bool ran;

		if (!try_once(d, &ran) && ran && !lost++)
			first_lost = d;
		if (!ran)
			break;
		tries++;
		/* INIT again (also recovers a lost one), then SIPI. */
		restarted += smp_start_ap(peer);
	}
	report(tries == NR_TRIES, "%u of %u tries ran on CPU %u", tries, NR_TRIES, peer);
	if (lost)
		report_fail("INIT acted on within %u us: %u of %u lost, the first sent at "
			    "T + %ld cycles", ACT_US, lost, tries, (long)first_lost);
	else
		report_pass("INIT acted on within %u us in all %u tries", ACT_US, tries);
	report(restarted == tries, "CPU %u restarted after each try: %u of %u", peer, restarted,
	       tries);
	return report_summary();
}
