// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_init_stale: INIT throws away the interrupts an AP had pending.
 *
 * Intel SDM Vol. 3A, "Local APIC State After an INIT Reset ('Wait-for-
 * SIPI' State)": INIT resets the local APIC like power-up except for the
 * APIC ID and base, and "Local APIC State After Power-Up or Reset": IRR
 * and ISR are 0. So an interrupt that waited in the AP's IRR before an
 * INIT must never be delivered after the SIPI: not in its trampoline, not
 * once it enables its APIC again. With APIC virtualization the pending
 * state also sits outside the register page (RVI/SVI in the VMCS, the
 * posted-interrupt descriptor), and INIT must clear that too. KVM
 * (lapic.c kvm_lapic_reset(): IRR/ISR cleared, then
 * apicv_post_state_restore/hwapic_irr_update with -1 to clear RVI/SVI,
 * and the PIR dropped) and Bochs (cpu/apic.cc bx_local_apic_c::init():
 * irr, isr and tmr zeroed) agree.
 *
 * The BSP sends vector STALE_VEC to an AP that holds it back (IF=0, or
 * TPR above its class with IF=1), waits until the AP sees it in its IRR,
 * then INITs and SIPIs the AP; the AP's handler notes every STALE_VEC
 * and whether its APIC was enabled then. In xAPIC and x2APIC mode.
 *
 * INIT also leaves the APIC software-disabled (SVR 0xff), and a
 * software-disabled APIC accepts no fixed interrupt, a self-IPI included
 * (SDM "Local APIC State After It Has Been Software Disabled"). So the
 * restarted AP sends itself EARLY_VEC before it enables its APIC: it must
 * neither show up in IRR nor arrive later. With APICv that needs the
 * CPU's virtual-interrupt delivery off again after the INIT (it would take
 * an x2APIC SELF IPI write itself).
 */
#include "lib/guest.h"
#include "lib/apic_util.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define STALE_VEC               0x61u
#define EARLY_VEC               0x62u   /* self-IPI while INIT's SVR still disables */
#define HOLD_TPR                0xf0u   /* above STALE_VEC's class 6 */
#define WATCH_US                2000u   /* how long the restarted AP is watched */

enum hold_how { HOLD_CLI, HOLD_TPR_HIGH, HOLD_NR };
static const char *const hold_name[HOLD_NR] = { "IF=0", "TPR 0xf0" };

static unsigned peer;
static volatile uint32_t stale_hits, stale_disabled_hits, early_hits;
static volatile bool early_sent, early_in_irr;
static volatile uint32_t ap_state;      /* AP_* below */
enum { AP_IDLE, AP_HOLDING, AP_SAW_IRR, AP_TIMED_OUT };

static void on_stale(struct ex_regs *r)
{
	(void)r;
	stale_hits++;
	if (!(apic_read(LAPIC_SVR) & LAPIC_SVR_ENABLE))
		stale_disabled_hits++;
	apic_eoi();
}

static void on_early(struct ex_regs *r)
{
	(void)r;
	early_hits++;
	apic_eoi();
}

/* On the restarted AP, before it enables its APIC (IF=0). */
static void ap_early(unsigned apic_id)
{
	if (apic_id != peer)
		return;
	if (apic_is_x2apic())
		wrmsr(MSR_X2APIC_SELF_IPI, EARLY_VEC);
	else
		apic_icr_write(smp_icr(LAPIC_DM_FIXED, EARLY_VEC, LAPIC_DEST_SELF, false), 0);
	early_in_irr = apic_vec_test(LAPIC_IRR, EARLY_VEC);
	early_sent = true;
}

/* On the AP: hold STALE_VEC back until the INIT takes this CPU away
 * (bounded, in case it never comes). */
static void ap_hold(void *arg)
{
	enum hold_how how = *(const enum hold_how *)arg;
	uint64_t deadline = tsc_deadline_us(SMP_CALL_TIMEOUT_US);

	if (how == HOLD_CLI)
		cli();
	else
		apic_write(LAPIC_TPR, HOLD_TPR);
	ap_state = AP_HOLDING;
	while (!apic_vec_test(LAPIC_IRR, STALE_VEC) && !tsc_passed(deadline))
		pause();
	ap_state = apic_vec_test(LAPIC_IRR, STALE_VEC) ? AP_SAW_IRR : AP_TIMED_OUT;
	/* CPUID exits under tickvisor, so the INIT is seen at the next
	 * exit. Without exits it would depend on the kick IPI, and Bochs 3.0
	 * loses those while a guest entered with IF=0 keeps IF=0: its VM
	 * entry re-evaluates interrupt masking before it is in guest mode
	 * (vmx.cc, handleCpuContextChange() ahead of in_vmx_guest = true),
	 * so external-interrupt exiting does not see host interrupts. */
	while (!tsc_passed(deadline))
		cpuid(0);
	apic_write(LAPIC_TPR, 0);
}

static volatile bool ap_irr_clear, ap_isr_clear;

static void ap_look(void *arg)
{
	(void)arg;
	ap_irr_clear = !apic_vec_test(LAPIC_IRR, STALE_VEC);
	ap_isr_clear = !apic_vec_test(LAPIC_ISR, STALE_VEC);
	tsc_delay_us(WATCH_US);         /* IF=1 here: anything pending comes in */
}

static bool wait_state(uint32_t want)
{
	uint64_t deadline = tsc_deadline_us(SMP_CALL_TIMEOUT_US);

	while (ap_state != want && !tsc_passed(deadline))
		pause();
	return ap_state == want;
}

static void run_one(enum hold_how how, bool x2)
{
	const char *mode = x2 ? "x2APIC" : "xAPIC";
	bool restarted, looked;

	stale_hits = stale_disabled_hits = early_hits = 0;
	early_sent = early_in_irr = false;
	ap_state = AP_IDLE;
	if (!on_cpu_async(peer, ap_hold, &how) || !wait_state(AP_HOLDING)) {
		report_fail("%s, %s: CPU %u did not start holding", mode, hold_name[how], peer);
		return;
	}
	apic_icr_write(smp_icr(LAPIC_DM_FIXED, STALE_VEC, LAPIC_DEST_NONE, false), peer);
	if (!report(wait_state(AP_SAW_IRR), "%s, %s: vector 0x%x waits in CPU %u's IRR",
		    mode, hold_name[how], STALE_VEC, peer))
		return;
	smp_ap_early_hook = ap_early;
	restarted = smp_start_ap(peer);
	smp_ap_early_hook = NULL;
	if (!report(restarted, "%s, %s: INIT-SIPI restarts CPU %u", mode, hold_name[how], peer))
		return;
	/* The runtime put the AP back in x2APIC mode only if INIT kept it. */
	ap_irr_clear = ap_isr_clear = false;    /* the AP's look, not a stale one, decides */
	looked = on_cpu(peer, ap_look, NULL);
	report(looked && ap_irr_clear && ap_isr_clear,
	       "%s, %s: IRR and ISR clear after INIT (%s; IRR %s, ISR %s)", mode, hold_name[how],
	       looked ? "AP looked" : "on_cpu() did not reach the AP",
	       ap_irr_clear ? "clear" : "set", ap_isr_clear ? "clear" : "set");
	report(early_sent && !early_in_irr && early_hits == 0,
	       "%s, %s: the restarted AP's APIC, software-disabled by INIT, takes no self-IPI "
	       "(%s, IRR %s, delivered %u times)", mode, hold_name[how],
	       early_sent ? "sent" : "not sent", early_in_irr ? "set" : "clear", early_hits);
	report(stale_hits == 0, "%s, %s: the interrupt from before INIT never arrives "
	       "(%u times, %u of them with the APIC still disabled)", mode, hold_name[how],
	       stale_hits, stale_disabled_hits);
}

static void test_mode(bool x2)
{
	for (enum hold_how how = 0; how < HOLD_NR; how++)
		run_one(how, x2);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("smp_init_stale");
	handle_irq(STALE_VEC, on_stale);
	handle_irq(EARLY_VEC, on_early);
	if (smp_init_peer(&peer))
		smp_run_both_modes(test_mode);
	report_prefix_pop();
	return report_summary();
}
