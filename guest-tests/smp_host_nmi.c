// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_host_nmi: tickvisor's own CPUs take NMIs and go on.
 *
 * A host NMI reaches a CPU either in VMX root mode (vector 2 through the
 * host IDT) or while it runs a guest, where with "NMI exiting" it is a VM
 * exit (exception-or-NMI exit, interruption type NMI) and is not
 * delivered to the guest (Intel SDM Vol. 3C, "Pin-Based VM-Execution
 * Controls": NMI exiting). Either way tickvisor must handle it and resume
 * what it interrupted: the guest keeps running and sees no NMI of its
 * own. KVM (vmx.c: an NMI exit runs the host NMI handler, then re-enters)
 * and Xen (vmx.c: EXIT_REASON_EXCEPTION_NMI with an NMI type calls
 * do_nmi) do the same.
 *
 * TV_HC_HOST_NMI asks tickvisor to send an NMI IPI to the CPU of one of
 * this guest's vCPUs and returns that CPU's count of handled host NMIs:
 *  - to the caller's own CPU (in root mode, inside the VMCALL exit);
 *  - to the AP's CPU while the AP spins in the guest (NMI VM exits);
 *  - to the AP's CPU while the AP is halted (HLT exit: root mode, asleep).
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define NR_NMIS                 10u
#define EXIT_EXCEPTION_NMI      0u      /* basic exit reason */
#define RESUME_US               200u    /* the AP must make progress in this */

static unsigned peer;
static volatile uint32_t guest_nmis;
static volatile uint64_t ap_spins;
static volatile bool ap_stop;

static void on_nmi(struct ex_regs *r)
{
	(void)r;
	guest_nmis++;
}

/* NR_NMIS host NMIs to vCPU `cpu`'s CPU: each is handled (the count goes
 * up by exactly one per hypercall). */
static bool send_host_nmis(unsigned cpu, uint64_t *first, uint64_t *last)
{
	uint64_t prev = 0, n;

	for (unsigned i = 0; i < NR_NMIS; i++) {
		n = tv_hypercall(TV_HC_HOST_NMI, cpu, 0, 0, NULL);
		if (n == TV_HC_ERROR || (i && n != prev + 1))
			return false;
		if (!i)
			*first = n;
		prev = n;
	}
	*last = prev;
	return true;
}

static void test_own_cpu(void)
{
	uint64_t first = 0, last = 0;
	bool sent = send_host_nmis(smp_id(), &first, &last);

	report(sent, "own CPU, root mode: %u host NMIs handled, one each (count %lu..%lu)",
	       NR_NMIS, first, last);
}

static void ap_spin(void *arg)
{
	(void)arg;
	while (!ap_stop)
		ap_spins++;
}

static void test_guest_mode(void)
{
	uint64_t first = 0, last = 0, exits0, spins0;
	bool sent, resumed;

	ap_stop = false;
	ap_spins = 0;
	if (!on_cpu_async(peer, ap_spin, NULL))
		return;
	while (!ap_spins)
		pause();
	exits0 = tv_exits(EXIT_EXCEPTION_NMI);
	sent = send_host_nmis(peer, &first, &last);
	spins0 = ap_spins;
	tsc_delay_us(RESUME_US);
	resumed = ap_spins > spins0;
	report(sent, "CPU %u spinning in the guest: %u host NMIs handled, one each (count %lu..%lu)",
	       peer, NR_NMIS, first, last);
	report(resumed, "and the guest code they interrupted runs on (%lu -> %lu)", spins0, ap_spins);
	report_info("NMI VM exits meanwhile: %lu", tv_exits(EXIT_EXCEPTION_NMI) - exits0);
	ap_stop = true;
	on_cpu_wait(peer);
}

static void noop(void *arg)
{
	(void)arg;
}

static void test_halted(void)
{
	uint64_t first = 0, last = 0, hlt0 = smp_hlt_exits();
	bool sent, idle;

	/* The AP is idle: STI; HLT, a HLT exit, asleep in root mode. */
	idle = on_cpu(peer, noop, NULL);
	smp_wait_halted(hlt0, 1000);
	sent = send_host_nmis(peer, &first, &last);
	report(idle && sent, "CPU %u halted%s: %u host NMIs handled, one each (count %lu..%lu)",
	       peer, idle ? "" : " (on_cpu() did not reach it first)", NR_NMIS, first, last);
	report(on_cpu(peer, noop, NULL), "and CPU %u still takes work", peer);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("smp_host_nmi");
	handle_irq(NMI_VECTOR, on_nmi);
	if (!tickvisor_present()) {
		report_skip("host NMIs: not running under tickvisor");
	} else if (smp_init_peer(&peer)) {
		test_own_cpu();
		test_guest_mode();
		test_halted();
		report(guest_nmis == 0, "the guest saw none of them (%u NMIs)", guest_nmis);
	}
	report_prefix_pop();
	return report_summary();
}
