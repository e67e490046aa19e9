// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_nmi: NMI IPIs (ICR delivery mode 100b, vector field ignored; Intel
 * SDM Vol. 3A, "Interrupt Command Register (ICR)"), which the target
 * takes as interrupt 2 whatever its RFLAGS.IF:
 *
 *  - BSP -> AP, one at a time: the AP's NMI handler runs once per NMI,
 *    on the AP only;
 *  - to an AP spinning with IF=0: taken at once, IF still 0 inside;
 *  - to an AP halted with IF=0 (CLI; HLT, which only NMI, SMI and INIT
 *    end): it runs the handler and resumes after the HLT;
 *  - and for comparison INIT-SIPI to an AP halted with IF=0: INIT ends
 *    the halt too, the AP restarts and never returns past its HLT;
 *  - a SIPI to an AP halted with IF=0 is ignored (no wait-for-SIPI), and
 *    does not count for a later INIT either: that AP waits for a new SIPI;
 *  - to an AP halted inside its NMI handler: the NMI is blocked until the
 *    handler's IRET, so it is latched and the AP stays halted;
 *  - AP -> BSP;
 *
 * in xAPIC and in x2APIC mode. peer=N picks the AP (default 1);
 * hlt_exits=0 says HLT does not exit (tickvisor's hlt=guest: the AP
 * sleeps in the guest's HLT activity state), so the halt is waited for
 * by time, not seen as an exit.
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/smp_hits.h"
#include "lib/tsc.h"

#define NR_NMIS                 5u
#define HALT_SETTLE_US          1000u   /* without an HLT exit: time to reach HLT */
/* NMI sent -> the halted AP past its HLT. tickvisor's kick is an IPI,
 * its stop poll (hlt=guest under Bochs) 1 ms; anything near the guest's
 * time limit means the NMI did not wake it. */
#define WAKE_BOUND_US           20000u

static struct smp_hits hits;
static unsigned peer;
static volatile uint64_t nmi_rflags;    /* RFLAGS the last NMI interrupted */
static volatile uint32_t halt_in_nmi;   /* the peer's handler executes HLT */
static volatile uint32_t nmi_hlt_resumed;

static void nmi_handler(struct ex_regs *regs)
{
	nmi_rflags = regs->rflags;
	smp_hits_record(&hits);
	if (halt_in_nmi && smp_id() == peer) {
		hlt();
		nmi_hlt_resumed = 1;
	}
}

static void send_nmi(unsigned dest)
{
	apic_icr_write(smp_icr(LAPIC_DM_NMI, 0, LAPIC_DEST_NONE, false), dest);
}

static unsigned send_each(unsigned dest)
{
	for (unsigned i = 0; i < NR_NMIS; i++) {
		send_nmi(dest);
		if (!smp_hits_expect(&hits, (uint32_t)BIT(dest), i + 1, SMP_HITS_TIMEOUT_US, 0, NULL))
			return i;
	}
	return NR_NMIS;
}

static void ap_to_bsp(void *arg)
{
	*(unsigned *)arg = send_each(0);
}

static void report_one_way(unsigned from, unsigned to, unsigned arrived)
{
	bool ok = arrived == NR_NMIS &&
		  smp_hits_expect(&hits, (uint32_t)BIT(to), NR_NMIS, 0, SMP_HITS_QUIET_US, NULL);

	report(ok, "CPU %u -> CPU %u: %u NMIs, %u+%u handler runs on CPU 0+%u", from, to, NR_NMIS,
	       smp_hits_of(&hits, 0), smp_hits_of(&hits, peer), peer);
}

static volatile uint32_t ap_ready, ap_resumed;
static volatile uint64_t ap_if_after, ap_resumed_tsc;

/* On the AP: IF=0, spin until the NMI has run (bounded). */
static void ap_spin_cli(void *arg)
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);

	(void)arg;
	cli();
	ap_ready = 1;
	while (!smp_hits_of(&hits, peer) && !tsc_passed(deadline))
		pause();
	ap_if_after = read_rflags() & X86_EFLAGS_IF;
}

/* On the AP: IF=0 and HLT; only the NMI brings it past, with IF still 0
 * (the handler's IRET restores the RFLAGS the NMI interrupted). */
static void ap_halt_cli(void *arg)
{
	(void)arg;
	cli();
	ap_ready = 1;
	hlt();
	ap_resumed_tsc = rdtsc();
	ap_if_after = read_rflags() & X86_EFLAGS_IF;
	ap_resumed = 1;
}

static bool start_on_peer(void (*fn)(void *))
{
	uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);

	smp_hits_clear(&hits);
	ap_ready = ap_resumed = 0;
	nmi_rflags = ~0ull;
	if (!on_cpu_async(peer, fn, NULL))
		return false;
	while (!ap_ready && !tsc_passed(deadline))
		pause();
	return ap_ready;
}

static void test_cli_spin(void)
{
	bool back;

	if (!start_on_peer(ap_spin_cli))
		return;
	send_nmi(peer);
	back = on_cpu_wait(peer);
	report(back && smp_hits_of(&hits, peer) == 1 && !(nmi_rflags & X86_EFLAGS_IF) && !ap_if_after,
	       "CPU %u spinning with IF=0: NMI taken once (%u runs), IF=0 inside and after", peer,
	       smp_hits_of(&hits, peer));
}

/*
 * SDM Vol. 2A, HLT: "An enabled interrupt (including NMI and SMI), a
 * debug exception, the BINIT# signal, the INIT# signal, or the RESET#
 * signal will resume execution"; IF does not block NMIs (Vol. 3A, "NMI
 * Interrupt Handling"). So CLI; HLT ends for an NMI, which runs its
 * handler and returns after the HLT. Under tickvisor the AP sleeps in
 * tickvisor (hlt=exit) or in the guest's HLT activity state (hlt=guest),
 * and the NMI reaches it from another CPU by a kick.
 */
static void test_cli_halt(void)
{
	uint64_t hlt_before = smp_hlt_exits(), sent, wake_us = 0;
	bool exits = arg_get_ulong("hlt_exits", 1) != 0;
	bool halted, back;

	if (!start_on_peer(ap_halt_cli))
		return;
	if (tickvisor_present() && exits) {
		halted = smp_wait_halted(hlt_before, HALT_SETTLE_US);
	} else {
		tsc_delay_us(HALT_SETTLE_US);
		halted = !ap_resumed;
	}
	sent = rdtsc();
	send_nmi(peer);
	back = on_cpu_wait(peer);
	if (ap_resumed)
		wake_us = tsc_to_us(ap_resumed_tsc - sent);
	report(halted && back && ap_resumed && smp_hits_of(&hits, peer) == 1 &&
	       !(nmi_rflags & X86_EFLAGS_IF) && !ap_if_after && wake_us <= WAKE_BOUND_US,
	       "CPU %u halted with IF=0 (%s): the NMI wakes it in %lu us, %u run(s), resumes "
	       "after HLT with IF=0", peer,
	       !halted ? "not halted" : tickvisor_present() && exits ? "HLT exit seen" : "settled",
	       wake_us, smp_hits_of(&hits, peer));
}

static void noop(void *arg)
{
	(void)arg;
}

/* INIT ends the same halt (SDM HLT: "the INIT# signal ... will resume
 * execution"), into wait-for-SIPI: smp_start_ap()'s SIPI restarts the AP,
 * which drops the work it was halted in. */
static void test_cli_halt_init(void)
{
	uint64_t hlt_before = smp_hlt_exits();
	bool exits = arg_get_ulong("hlt_exits", 1) != 0, halted, restarted, answers;

	if (!start_on_peer(ap_halt_cli))
		return;
	if (tickvisor_present() && exits)
		halted = smp_wait_halted(hlt_before, HALT_SETTLE_US);
	else
		halted = (tsc_delay_us(HALT_SETTLE_US), !ap_resumed);
	restarted = smp_start_ap(peer);
	answers = restarted && on_cpu(peer, noop, NULL);
	report(halted && restarted && answers && !ap_resumed && !smp_hits_of(&hits, peer),
	       "CPU %u halted with IF=0: INIT-SIPI restarts it (%s, %s), not past its HLT", peer,
	       halted ? "was halted" : "not halted", answers ? "answers" : "does not answer");
}

#define STRAY_SIPI_WAIT_US      2000u

static void send_ipi(unsigned dm, unsigned vector)
{
	apic_icr_write(smp_icr(dm, vector, LAPIC_DEST_NONE, false), peer);
}

/*
 * SDM Vol. 3A, "MP Initialization Protocol": a SIPI is acted on only in
 * wait-for-SIPI, after an INIT. One sent to an AP halted with IF=0 is
 * not an event that ends its HLT, and is forgotten: after a later INIT
 * alone the AP stays in wait-for-SIPI. smp_start_ap() takes it back.
 */
static void test_stray_sipi_halted(void)
{
	uint64_t hlt_before = smp_hlt_exits();
	bool exits = arg_get_ulong("hlt_exits", 1) != 0, halted, ignored, waits, restarted;
	uint32_t starts;

	if (!start_on_peer(ap_halt_cli))
		return;
	if (tickvisor_present() && exits)
		halted = smp_wait_halted(hlt_before, HALT_SETTLE_US);
	else
		halted = (tsc_delay_us(HALT_SETTLE_US), !ap_resumed);
	starts = smp_ap_boot(peer)->starts;
	send_ipi(LAPIC_DM_STARTUP, smp_trampoline_page() >> 12);
	tsc_delay_us(STRAY_SIPI_WAIT_US);
	ignored = !ap_resumed && smp_ap_boot(peer)->starts == starts;
	percpu_set_offline(peer);
	send_ipi(LAPIC_DM_INIT, 0);
	tsc_delay_us(STRAY_SIPI_WAIT_US);
	waits = !ap_resumed && smp_ap_boot(peer)->starts == starts;
	restarted = smp_start_ap(peer) && on_cpu(peer, noop, NULL);
	report(halted && ignored && waits && restarted,
	       "CPU %u halted with IF=0: a SIPI is ignored (%s), a later INIT alone does not "
	       "start it (%s), INIT-SIPI-SIPI does", peer, ignored ? "yes" : "no",
	       waits ? "yes" : "no");
}

/* How long the AP halted in its NMI handler must stay so. */
#define BLOCKED_WATCH_US        5000u

/*
 * HLT in an NMI handler, a second NMI sent: NMIs are blocked from the
 * first one's delivery to the handler's IRET (SDM Vol. 3A, "NMI
 * Handling"), so the second is latched, not an "enabled interrupt" that
 * ends the HLT: the AP stays halted. INIT-SIPI takes it back.
 */
static void test_halt_in_nmi(void)
{
	bool exits = arg_get_ulong("hlt_exits", 1) != 0, halted, stayed, restarted;
	uint64_t hlt_before;

	halt_in_nmi = 1;
	nmi_hlt_resumed = 0;
	if (!start_on_peer(ap_spin_cli)) {
		halt_in_nmi = 0;
		return;
	}
	hlt_before = smp_hlt_exits();
	send_nmi(peer);
	halted = smp_hits_expect(&hits, (uint32_t)BIT(peer), 1, SMP_HITS_TIMEOUT_US, 0, NULL);
	if (tickvisor_present() && exits)
		halted = halted && smp_wait_halted(hlt_before, HALT_SETTLE_US);
	else
		tsc_delay_us(HALT_SETTLE_US);
	send_nmi(peer);
	tsc_delay_us(BLOCKED_WATCH_US);
	stayed = !nmi_hlt_resumed && smp_hits_of(&hits, peer) == 1;
	halt_in_nmi = 0;
	restarted = smp_start_ap(peer) && on_cpu(peer, noop, NULL);
	report(halted && stayed && restarted,
	       "CPU %u halted in its NMI handler: a second NMI is latched, it stays halted "
	       "%u us (%u handler runs%s), INIT-SIPI restarts it", peer, BLOCKED_WATCH_US,
	       smp_hits_of(&hits, peer), nmi_hlt_resumed ? ", resumed after the HLT" : "");
}

static void test_mode(bool x2)
{
	unsigned arrived = 0;

	report_prefix_push(x2 ? "x2APIC" : "xAPIC");
	smp_hits_clear(&hits);
	report_one_way(0, peer, send_each(peer));
	test_cli_spin();
	test_cli_halt();
	test_cli_halt_init();
	test_halt_in_nmi();
	test_stray_sipi_halted();
	smp_hits_clear(&hits);
	if (on_cpu(peer, ap_to_bsp, &arrived))
		report_one_way(peer, 0, arrived);
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("smp_nmi");
	handle_irq(NMI_VECTOR, nmi_handler);
	if (!smp_init_peer(&peer))
		return report_summary();
	smp_run_both_modes(test_mode);
	return report_summary();
}
