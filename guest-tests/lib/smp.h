/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Several CPUs: bringing the APs up the way an OS does, and giving them
 * work (kvm-unit-tests' on_cpu()).
 *
 * Bring-up (Intel SDM Vol. 3A, "MP Initialization Protocol Algorithm for
 * MP Systems"): smp_init() copies the real-mode trampoline
 * (smp_trampoline.asm) to a free page below 1 MiB, sends INIT, waits
 * 10 ms, sends SIPI with the page's vector, waits 200 us, and so on. The
 * AP goes 16 -> 32 -> 64 bit through boot.asm on the BSP's page tables and
 * GDT, takes the stack of its CPU area (percpu.h, by initial APIC ID),
 * loads the shared IDT, software-enables its local APIC (SVR), counts
 * itself online and waits for work in smp_idle(): STI; HLT until a kick.
 *
 * CPUs are named by APIC ID, which is the index 0..cpu_count()-1 under
 * tickvisor (vCPU n has initial APIC ID n); smp_startup checks that.
 *
 * Work: on_cpu(cpu, fn, arg) runs fn(arg) on that CPU and waits for it;
 * on_cpu_async() only posts it. A poster fills the CPU's one-slot mailbox
 * and kicks it with a fixed IPI (SMP_WAKE_VECTOR, physical destination,
 * in whatever APIC mode the poster is in). fn runs with interrupts
 * enabled. Every wait is bounded (SMP_CALL_TIMEOUT_US): a CPU that does
 * not answer is a FAIL line and a false return, never a hang. The BSP
 * runs main() and takes no work; a call for the calling CPU runs inline.
 */
#ifndef GUEST_SMP_H
#define GUEST_SMP_H

#include "lib/apic.h"
#include "lib/percpu.h"

#define SMP_WAKE_VECTOR         0xf0u   /* on_cpu()'s kick: high, above any test's TPR */
#define SMP_INIT_DELAY_US       10000u  /* INIT to the first SIPI (SDM) */
#define SMP_SIPI_DELAY_US       200u    /* after each SIPI (SDM) */
#define SMP_ONLINE_TIMEOUT_US   200000u /* last SIPI to the AP counted online */
#define SMP_CALL_TIMEOUT_US     1000000u /* on_cpu(): post and answer, each */

enum smp_boot_mode {
	SMP_BOOT_PER_AP,        /* INIT, SIPI, SIPI to each AP in turn (SDM order) */
	SMP_BOOT_BROADCAST,     /* INIT, then one SIPI, to all excluding self */
};

/* What one AP's pass through the trampoline logged, per initial APIC ID;
 * smp_trampoline.asm writes these fields in this order. */
struct smp_tramp_log {
	uint32_t edx;                   /* EDX at the SIPI: the processor signature */
	uint32_t cr0;                   /* CR0 at the SIPI (0x60000010 after INIT) */
	uint16_t cs;                    /* CS at the SIPI: vector << 8 */
	uint16_t reserved;
	uint32_t entries;               /* passes through the trampoline */
};

/* An AP's local APIC as it found it in C, before the runtime wrote SVR:
 * the state INIT left. Filled on every start. */
struct smp_ap_boot {
	uint64_t arrive_tsc;            /* ap_start() entered */
	uint64_t online_tsc;            /* counted online */
	uint64_t apic_base;             /* IA32_APIC_BASE */
	uint32_t id_reg;                /* APIC ID as its mode reads it (xAPIC: 31:24) */
	uint32_t svr, tpr, ldr, dfr;    /* dfr: xAPIC only, 0 in x2APIC mode */
	uint32_t lvt_timer, tmict;
	uint32_t starts;                /* passes through ap_start() */
};

/* CPUs the guest has, from fw_cfg (1 without it); cached. */
unsigned cpu_count(void);
/* Whether `cpu` is counted online (has taken its place in smp_idle()). */
bool cpu_online(unsigned cpu);

/* ICR[31:0] of an edge-triggered, asserted IPI (apic.h fields). */
static inline uint32_t smp_icr(unsigned dm, unsigned vector, unsigned shorthand, bool logical)
{
	return LAPIC_ICR_ASSERT | (uint32_t)FIELD_PREP(LAPIC_ICR_DELIVERY, dm) |
	       (uint32_t)FIELD_PREP(LAPIC_ICR_SHORTHAND, shorthand) |
	       (logical ? LAPIC_ICR_DEST_LOGICAL : 0) | (vector & 0xffu);
}

/* Brings every AP up with SMP_BOOT_PER_AP; returns cpus_online(). */
unsigned smp_init(void);
/* The same with a chosen sequence. APs already online are not touched
 * (per AP) or not expected twice (broadcast: they are INITed again). */
unsigned smp_boot(enum smp_boot_mode mode);
/* INIT, SIPI, SIPI to one AP, online or not (an online AP is taken down
 * and restarted); true once it is online again within
 * SMP_ONLINE_TIMEOUT_US. */
bool smp_start_ap(unsigned cpu);

/* The trampoline's physical page (0 if none was found) and logs. */
uint32_t smp_trampoline_page(void);
const volatile struct smp_tramp_log *smp_tramp_log(unsigned cpu);
const volatile struct smp_ap_boot *smp_ap_boot(unsigned cpu);

/* Runs fn(arg) on `cpu` and waits until it returns. */
bool on_cpu(unsigned cpu, void (*fn)(void *), void *arg);
/* Posts fn(arg) to `cpu` (after its previous work is done) and returns. */
bool on_cpu_async(unsigned cpu, void (*fn)(void *), void *arg);
/* Waits until `cpu` has finished everything posted to it. */
bool on_cpu_wait(unsigned cpu);
/* fn(arg) on every online CPU at once, this one last, then waits. */
bool on_cpus(void (*fn)(void *), void *arg);

/*
 * A task that holds an AP in some state while this CPU works on it: the
 * AP calls ap_task_ready() once it is in that state and ap_task_wait_go()
 * (or polls `go`) until this CPU calls ap_task_finish().
 * ap_task_start() posts fn(arg) to `cpu` and waits (bounded by
 * timeout_us) until it is ready; false if it never was.
 */
struct ap_task {
	volatile uint32_t ready, go;
};
bool ap_task_start(struct ap_task *t, unsigned cpu, void (*fn)(void *), void *arg,
		   uint64_t timeout_us);
void ap_task_ready(struct ap_task *t);
/* On the AP: until ap_task_finish() or timeout_us; true if told to go. */
bool ap_task_wait_go(struct ap_task *t, uint64_t timeout_us);
/* Lets the AP go on and waits until fn has returned there. */
bool ap_task_finish(struct ap_task *t, unsigned cpu);

/* Switches every online CPU to x2APIC (true) or back to a software-
 * enabled xAPIC (false), APs first. false if the CPUs have no x2APIC. */
bool smp_set_x2apic(bool on);

/* For tests. The first check: smp_init() brought every CPU up ("N CPUs
 * online"). */
bool smp_init_report(void);
/* Two-CPU tests: *peer = the AP of argument peer=N (default 1); a SKIP
 * and false if there is no such CPU, else smp_init_report() and, if
 * that passed, IF=1. */
bool smp_init_peer(unsigned *peer);
/* test(false) in xAPIC mode, then test(true) with every CPU in x2APIC
 * mode, or a SKIP where there is none. */
void smp_run_both_modes(void (*test)(bool x2));
/* The guest's HLT exits so far under tickvisor, else 0. */
uint64_t smp_hlt_exits(void);
/* Another CPU was told to execute HLT after smp_hlt_exits() gave
 * hlt_before. Under tickvisor its HLT is a VM exit: waits (bounded) until
 * the count grows, so it surely is halted; false if it does not.
 * Elsewhere: waits settle_us and says true. */
bool smp_wait_halted(uint64_t hlt_before, uint64_t settle_us);

/* For tests of the state INIT leaves: if set, runs on every AP that
 * starts, in ap_start() after the snapshot and before the AP software-
 * enables its local APIC (IF=0, APIC in the mode INIT kept). */
extern void (*smp_ap_early_hook)(unsigned apic_id);

/* For the runtime: an AP's endless wait for work (on_cpu.c), and the
 * kick's handler. */
void __noreturn smp_idle(void);
void smp_call_init(void);

#endif
