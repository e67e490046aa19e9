// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_startup: bringing APs up the way an OS does (Intel SDM Vol. 3A,
 * "MP Initialization Protocol Algorithm for MP Systems"), and what each
 * AP finds when it arrives (DESIGN.md, "Guest environment": APs start by
 * the guest's INIT/SIPI; vCPU n has initial APIC ID n).
 *
 *   mode=per-ap       INIT, SIPI, SIPI to each AP in turn (default); the
 *                     second SIPI must not restart an AP that is running
 *   mode=broadcast    INIT to all excluding self, 10 ms, one SIPI to all
 *                     excluding self
 *   apic=xapic|x2apic the BSP's APIC mode for the INITs and SIPIs
 *   cpus=N            the CPU count the configuration promises
 *
 * Checks: all APs online within a bound; per AP the state the trampoline
 * saw (CS = vector << 8, EDX = signature, CR0 after INIT, entered once)
 * and the local APIC INIT left (ID = index, SVR 0xff, masked LVT timer);
 * the IDs through CPUID.1, CPUID 0xB and the APIC in xAPIC and x2APIC
 * mode; a stray SIPI to a running AP is ignored; INIT-SIPI restarts a
 * running AP with its APIC reset but its mode and ID kept.
 */
#include "lib/apic_util.h"
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/tsc.h"

#define CR0_NW                  BIT(29)
#define CR0_CD                  BIT(30)
#define CR0_POWER_UP            0x60000010u     /* CD, NW, ET */
#define CR0_AFTER_INIT          0x00000010u     /* ET; CD, NW unchanged: here clear */
#define LVT_RESET               LAPIC_LVT_MASKED
#define BOUND_MS_DEFAULT        100u    /* beyond the SDM's own delays */
#define STRAY_SIPI_WAIT_US      2000u
#define RESTART_TPR             0x20u

/* What an AP reports about itself when asked (ask_ids()). */
struct ap_ids {
	uint32_t initial_id;            /* CPUID.1:EBX[31:24] */
	uint32_t x2apic_id;             /* CPUID 0xB:EDX */
	uint32_t topo_count;            /* CPUID 0xB.1:EBX[15:0] */
	uint32_t apic_id;               /* the APIC ID register, as the mode reads it */
	uint32_t ldr;
	bool x2apic;
	unsigned smp_id;
};

static struct ap_ids ids[MAX_CPUS];
static unsigned ncpus;
static uint32_t signature;              /* the BSP's CPUID.1:EAX */

/*
 * One line per property of all APs: the first AP that differs is named
 * with the value it has. `cpu` is the loop variable in cond and got.
 */
#define REPORT_APS(cond, got, what, ...)						\
	do {										\
		unsigned bad_ = 0;							\
		uint64_t val_ = 0;							\
											\
		for (unsigned cpu = 1; cpu < ncpus && !bad_; cpu++)			\
			if (!(cond)) {							\
				bad_ = cpu;						\
				val_ = (uint64_t)(got);					\
			}								\
		if (bad_)								\
			report_fail(what ": CPU %u has 0x%lx", ##__VA_ARGS__, bad_, val_); \
		else									\
			report_pass(what, ##__VA_ARGS__);				\
	} while (0)

static void ask_ids(void *arg)
{
	struct ap_ids *d = &ids[smp_id()];

	(void)arg;
	d->initial_id = cpuid(1).b >> 24;
	d->x2apic_id = cpuid_indexed(0xb, 0).d;
	d->topo_count = cpuid_indexed(0xb, 1).b & 0xffff;
	d->apic_id = apic_id();
	d->ldr = apic_read(LAPIC_LDR);
	d->x2apic = apic_is_x2apic();
	d->smp_id = smp_id();
}

/* report() from an AP: the counters and the console lock are shared.
 * The AP checks it is the CPU the BSP asked for. */
static void ap_report(void *arg)
{
	unsigned want = (unsigned)(uintptr_t)arg;

	report(smp_id() == want, "CPU %u: report() from the AP itself (asked CPU %u)", smp_id(),
	       want);
}

static void test_config(void)
{
	unsigned want = (unsigned)arg_get_ulong("cpus", 0);
	struct tv_info info;

	ncpus = cpu_count();
	signature = cpuid(1).a;
	if (want)
		report(ncpus == want, "fw_cfg: %u CPUs, the configuration gives %u", ncpus, want);
	if (tickvisor_present() && tv_get_info(&info))
		report(info.nr_vcpus == ncpus, "TV_HC_INFO: %lu vCPUs, as fw_cfg says", info.nr_vcpus);
	report((cpuid(1).b >> 24) == 0 && (rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_BSP),
	       "BSP: initial APIC ID 0, IA32_APIC_BASE.BSP set");
}

static bool test_bringup(enum smp_boot_mode mode, const char *name)
{
	uint64_t bound_ms = arg_get_ulong("bound_ms", BOUND_MS_DEFAULT);
	uint64_t t0, cycles, sdm_us;
	unsigned up;

	sdm_us = mode == SMP_BOOT_PER_AP
		 ? (ncpus - 1) * (SMP_INIT_DELAY_US + 2 * SMP_SIPI_DELAY_US)
		 : SMP_INIT_DELAY_US + SMP_SIPI_DELAY_US;
	t0 = rdtsc();
	up = smp_boot(mode);
	cycles = rdtsc() - t0;
	report_info("trampoline at 0x%x (SIPI vector 0x%02x); %s bring-up took %lu us "
		    "(%lu cycles), SDM delays %lu us", smp_trampoline_page(),
		    smp_trampoline_page() >> 12, name, tsc_to_us(cycles), cycles, sdm_us);
	if (!report(up == ncpus, "%s: %u of %u CPUs online", name, up, ncpus))
		return false;
	report(tsc_to_us(cycles) <= sdm_us + bound_ms * 1000,
	       "%s: all online within %lu ms beyond the SDM delays", name, bound_ms);
	for (unsigned cpu = 1; cpu < ncpus; cpu++)
		if (!on_cpu(cpu, ap_report, (void *)(uintptr_t)cpu))
			report_fail("CPU %u: on_cpu() did not run report() there", cpu);
	return true;
}

/*
 * What the trampoline logged for each AP's latest pass. CR0 after INIT is
 * 0x10 with CD and NW unchanged (SDM "Processor State After Reset",
 * table note 2): a vCPU's first start finds them set as at power-up, a
 * restart finds them as the trampoline left them, clear. CD/NW are
 * checked on bare hardware and under tickvisor, which keeps them per
 * vCPU in the CR0 read shadow (vmm/vcpu/vcpu_setup.c: VM entry does not load
 * them, SDM "Loading Guest Control Registers, Debug Registers, and
 * MSRs"); other hypervisors differ (QEMU TCG sets them again on INIT).
 */
static void test_trampoline(uint32_t entries)
{
	uint16_t cs = (uint16_t)(smp_trampoline_page() >> 4);
	bool first = entries == 1;
	bool cd_nw_known = !hypervisor_present() || tickvisor_present();
	uint32_t cr0 = first ? CR0_POWER_UP : CR0_AFTER_INIT;
	uint32_t mask = cd_nw_known ? ~0u : ~(uint32_t)(CR0_CD | CR0_NW);

	REPORT_APS(smp_tramp_log(cpu)->entries == entries, smp_tramp_log(cpu)->entries,
		   "trampoline entered %u time(s)", entries);
	REPORT_APS(smp_tramp_log(cpu)->cs == cs, smp_tramp_log(cpu)->cs,
		   "SIPI start: CS = 0x%04x (vector << 8)", cs);
	REPORT_APS(smp_tramp_log(cpu)->edx == signature, smp_tramp_log(cpu)->edx,
		   "SIPI start: EDX = CPUID.1:EAX 0x%x", signature);
	REPORT_APS((smp_tramp_log(cpu)->cr0 & mask) == (cr0 & mask), smp_tramp_log(cpu)->cr0,
		   "SIPI start: CR0 = 0x%x (INIT state, CD/NW %s)%s", cr0 & mask,
		   first ? "set as at power-up" : "unchanged by INIT",
		   cd_nw_known ? "" : " apart from CD/NW");
	if (!cd_nw_known)
		report_skip("SIPI start: CR0.CD/NW not checked under this hypervisor "
			    "(CPU 1 has CR0 0x%x)", smp_tramp_log(1)->cr0);
}

/* The local APIC as INIT left it, read by each AP before touching it. */
static void test_init_state(uint32_t starts, bool x2)
{
	uint64_t want_base = LAPIC_MMIO_BASE | APIC_BASE_EN | (x2 ? APIC_BASE_EXTD : 0);
	uint64_t mask = APIC_BASE_ADDR | APIC_BASE_EN | APIC_BASE_EXTD | APIC_BASE_BSP;

	REPORT_APS(smp_ap_boot(cpu)->starts == starts, smp_ap_boot(cpu)->starts,
		   "ap_start() reached %u time(s)", starts);
	REPORT_APS((smp_ap_boot(cpu)->apic_base & mask) == want_base, smp_ap_boot(cpu)->apic_base,
		   "IA32_APIC_BASE: 0x%lx (enabled, %s, not BSP)", want_base, x2 ? "x2APIC" : "xAPIC");
	REPORT_APS(smp_ap_boot(cpu)->id_reg == cpu, smp_ap_boot(cpu)->id_reg,
		   "APIC ID register = CPU index");
	REPORT_APS(smp_ap_boot(cpu)->svr == 0xff, smp_ap_boot(cpu)->svr,
		   "SVR 0xff: software-disabled");
	REPORT_APS(smp_ap_boot(cpu)->lvt_timer == LVT_RESET && !smp_ap_boot(cpu)->tmict,
		   smp_ap_boot(cpu)->lvt_timer, "LVT timer masked, TMICT 0");
	REPORT_APS(!smp_ap_boot(cpu)->tpr, smp_ap_boot(cpu)->tpr, "TPR 0");
	if (x2)
		REPORT_APS(smp_ap_boot(cpu)->ldr == x2apic_ldr(cpu), smp_ap_boot(cpu)->ldr,
			   "LDR derived from the x2APIC ID");
	else
		REPORT_APS(!smp_ap_boot(cpu)->ldr && smp_ap_boot(cpu)->dfr == 0xffffffffu,
			   smp_ap_boot(cpu)->ldr, "LDR 0, DFR 0xffffffff");
}

static void test_ids(const char *mode)
{
	bool x2 = !strcmp(mode, "x2APIC");

	report_prefix_push(mode);
	if (!report(on_cpus(ask_ids, NULL), "on_cpu() reaches every CPU")) {
		report_prefix_pop();
		return;
	}
	REPORT_APS(ids[cpu].initial_id == cpu && ids[cpu].smp_id == cpu, ids[cpu].initial_id,
		   "CPUID.1:EBX[31:24] = CPU index");
	REPORT_APS(ids[cpu].x2apic_id == cpu && ids[cpu].topo_count == ncpus,
		   ids[cpu].x2apic_id, "CPUID 0xB: x2APIC ID = index, %u processors", ncpus);
	REPORT_APS(ids[cpu].x2apic == x2 && ids[cpu].apic_id == cpu, ids[cpu].apic_id,
		   "APIC ID register = CPU index");
	if (x2)
		REPORT_APS(ids[cpu].ldr == x2apic_ldr(cpu), ids[cpu].ldr,
			   "LDR = (ID >> 4) << 16 | 1 << (ID & 15)");
	report_prefix_pop();
}

static void test_both_modes(void)
{
	if (!apic_x2apic_offered())     /* SKIP, or FAIL where offered */
		return;
	report(smp_set_x2apic(true), "all CPUs to x2APIC");
	test_ids("x2APIC");
	report(smp_set_x2apic(false), "all CPUs back to xAPIC");
	test_ids("xAPIC");
}

/* A SIPI to an AP that is not waiting for one is ignored (SDM: "the
 * STARTUP IPI ... is ignored" outside wait-for-SIPI). */
static void test_stray_sipi(unsigned cpu)
{
	uint32_t entries = smp_tramp_log(cpu)->entries;
	uint32_t starts = smp_ap_boot(cpu)->starts;

	apic_icr_write(smp_icr(LAPIC_DM_STARTUP, smp_trampoline_page() >> 12, LAPIC_DEST_NONE, false),
		       cpu);
	tsc_delay_us(STRAY_SIPI_WAIT_US);
	report(smp_tramp_log(cpu)->entries == entries && smp_ap_boot(cpu)->starts == starts &&
	       on_cpu(cpu, ask_ids, NULL), "SIPI to running CPU %u: ignored", cpu);
}

static void raise_tpr(void *arg)
{
	(void)arg;
	apic_write(LAPIC_TPR, RESTART_TPR);
}

/* INIT-SIPI again: the APs restart with their APIC reset, mode and ID
 * kept (SDM "x2APIC State Transitions": INIT keeps xAPIC or x2APIC). */
static void test_restart(enum smp_boot_mode mode, bool x2)
{
	bool ok = true;

	report_prefix_push("restart");
	for (unsigned cpu = 1; cpu < ncpus; cpu++)
		ok &= on_cpu(cpu, raise_tpr, NULL);
	if (mode == SMP_BOOT_BROADCAST)
		ok &= smp_boot(mode) == ncpus;
	else
		for (unsigned cpu = 1; cpu < ncpus; cpu++)
			ok &= smp_start_ap(cpu);
	if (report(ok && cpus_online() == ncpus, "INIT-SIPI brings running APs back")) {
		test_trampoline(2);
		test_init_state(2, x2);
		report(on_cpus(ask_ids, NULL), "on_cpu() reaches every CPU");
	}
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	const char *mode_arg = arg_get("mode"), *apic_arg = arg_get("apic");
	bool bcast = mode_arg && !strcmp(mode_arg, "broadcast");
	bool x2 = apic_arg && !strcmp(apic_arg, "x2apic");
	enum smp_boot_mode mode = bcast ? SMP_BOOT_BROADCAST : SMP_BOOT_PER_AP;

	(void)argc;
	(void)argv;
	report_prefix_push("smp_startup");
	test_config();
	if (ncpus < 2) {
		report_skip("one CPU: nothing to start");
		return report_summary();
	}
	if (x2 && !enable_x2apic()) {
		report_skip("apic=x2apic: no x2APIC, INIT/SIPI through the xAPIC ICR");
		x2 = false;
	}
	report_prefix_push(x2 ? "x2APIC ICR" : "xAPIC ICR");
	if (test_bringup(mode, bcast ? "broadcast INIT + SIPI" : "per-AP INIT-SIPI-SIPI")) {
		test_trampoline(1);
		test_init_state(1, false);
		test_both_modes();
		if (x2)
			smp_set_x2apic(true);
		test_stray_sipi(ncpus - 1);
		test_restart(mode, x2);
	}
	report_prefix_pop();
	return report_summary();
}
