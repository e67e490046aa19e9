// SPDX-License-Identifier: BSD-2-Clause
/*
 * basic: the guest environment tickvisor promises (DESIGN.md, "Guest
 * environment"): its CPUID identity with VMX hidden, the serial port,
 * #GP for unknown MSRs, fw_cfg, and the hypercalls with their exit
 * counters.
 *
 * With expect=tickvisor on the command line the tickvisor-specific
 * checks must pass; without it they are skipped where tickvisor is absent
 * (QEMU TCG, bare hardware), so the image also runs as a baseline.
 */
#include "lib/guest.h"

#define MSR_NONEXISTENT         0xdeadbeefu     /* in no architectural or model range */
#define CPUID_LOOPS             16u
#define RAM_SLACK               (2 * MiB)

static bool expect_tv;                  /* expect=tickvisor */

/* Gate for tickvisor-only checks: FAIL if tickvisor was expected but is
 * not there, SKIP if it was not expected. */
static bool need_tickvisor(const char *what)
{
	if (tickvisor_present())
		return true;
	if (expect_tv)
		report_fail("%s: tickvisor not detected", what);
	else
		report_skip("%s: not running under tickvisor", what);
	return false;
}

static void test_cpuid(void)
{
	char name[13];
	bool hv = hypervisor_name(name);

	if (hv || expect_tv)
		report(hv, "CPUID.1:ECX[31] hypervisor bit");
	else
		report_skip("CPUID.1:ECX[31] hypervisor bit: clear (bare hardware)");
	if (tickvisor_present() || expect_tv)
		report(!memcmp(name, TV_CPUID_SIGNATURE, 12), "CPUID 0x40000000 signature \"%s\"", name);
	else
		report_skip("CPUID 0x40000000 signature \"%s\": not tickvisor", name);
	if (hv || expect_tv)
		report(!(cpuid(1).c & CPUID_1_ECX_VMX), "CPUID.1:ECX[5] VMX reads 0");
	else
		report_skip("CPUID.1:ECX[5] VMX: bare hardware may have it");
}

/* Reaching this line proved output works; also check it is a UART. */
static void test_serial(void)
{
	uint8_t lsr;

	serial_flush();
	lsr = serial_lsr();
	report(lsr != 0xff && (lsr & UART_LSR_THRE), "serial: COM1 LSR 0x%02x, transmitter ready", lsr);
}

/*
 * Mandatory under tickvisor and on bare hardware (the SDM's answer).
 * Another hypervisor that lets the access through is not what this image
 * tests: QEMU TCG reads 0 and ignores writes.
 */
static void report_gp(int vec, const char *insn)
{
	if (vec != GP_VECTOR && hypervisor_present() && !tickvisor_present() && !expect_tv)
		report_skip("%s 0x%x: no #GP under this hypervisor (vector %d)",
			    insn, MSR_NONEXISTENT, vec);
	else
		report(vec == GP_VECTOR, "%s 0x%x raises #GP (vector %d)", insn, MSR_NONEXISTENT, vec);
}

static void test_unknown_msr(void)
{
	uint64_t v;

	report_gp(rdmsr_safe(MSR_NONEXISTENT, &v), "RDMSR");
	report_gp(wrmsr_safe(MSR_NONEXISTENT, 0), "WRMSR");
}

static void test_fwcfg(void)
{
	uint64_t ram, mb_ram = boot_ram_size();
	uint16_t cpus;

	if (!fwcfg_present()) {
		if (expect_tv)
			report_fail("fw_cfg: no \"QEMU\" signature at 0x510");
		else
			report_skip("fw_cfg: absent");
		return;
	}
	fwcfg_read(FWCFG_NB_CPUS, &cpus, sizeof(cpus));
	report(cpus >= 1 && cpus <= MAX_CPUS, "fw_cfg: CPU count %u", cpus);
	ram = fwcfg_ram_size();
	report(mb_ram && ram + RAM_SLACK >= mb_ram && ram <= mb_ram + RAM_SLACK,
	       "fw_cfg: RAM %lu KiB, Multiboot says %lu KiB", ram / KiB, mb_ram / KiB);
}

static void test_hc_basic(void)
{
	struct tv_info info;
	uint64_t r;

	if (need_tickvisor("hypercall PING")) {
		r = tv_hypercall(TV_HC_PING, 0, 0, 0, NULL);
		report(r == TV_HC_PING_REPLY, "hypercall PING returns 0x%lx", r);
	}
	if (need_tickvisor("hypercall with unknown function")) {
		r = tv_hypercall(0x7fffffff, 0, 0, 0, NULL);
		report(r == TV_HC_ERROR, "hypercall 0x7fffffff returns -1 (0x%lx)", r);
	}
	if (need_tickvisor("hypercall INFO")) {
		/* Separate statements: argument evaluation order would let the
		 * message read info before the hypercall filled it. */
		bool ok = tv_get_info(&info);

		report(ok && info.nr_vcpus == fwcfg_cpu_count(),
		       "hypercall INFO: %lu vCPUs, as fw_cfg says", info.nr_vcpus);
		report_info("TSC %lu Hz, APIC timer %lu Hz, APICv %s, timer backend %lu",
			    info.tsc_hz, info.apic_timer_hz,
			    info.flags & TV_INFO_APICV ? "on" : "off",
			    FIELD_GET(TV_INFO_TIMER, info.flags));
	}
}

/* Nothing between the two counter reads may take a CPUID exit. */
static void test_hc_exits(void)
{
	uint64_t before, after;

	if (need_tickvisor("TV_HC_EXITS(CPUID)")) {
		before = tv_exits(VMX_EXIT_CPUID);
		for (unsigned i = 0; i < CPUID_LOOPS; i++)
			cpuid(0);
		after = tv_exits(VMX_EXIT_CPUID);
		report(after - before == CPUID_LOOPS, "TV_HC_EXITS(CPUID) grows by %lu after %u CPUIDs",
		       after - before, CPUID_LOOPS);
	}
	if (need_tickvisor("TV_HC_EXITS(VMCALL)")) {
		before = tv_exits(VMX_EXIT_VMCALL);
		after = tv_exits(VMX_EXIT_VMCALL);
		report(after - before == 1, "TV_HC_EXITS(VMCALL) counts its own exit (+%lu)",
		       after - before);
	}
	if (need_tickvisor("TV_HC_EXITS(total)")) {
		before = tv_exits(TV_EXITS_TOTAL);
		after = tv_exits(TV_EXITS_TOTAL);
		report(after > before, "TV_HC_EXITS(total) grows: %lu -> %lu", before, after);
	}
}

int main(int argc, char **argv)
{
	const char *expect = arg_get("expect");

	(void)argc;
	(void)argv;
	expect_tv = expect && !strcmp(expect, "tickvisor");
	report_prefix_push("basic");
	test_cpuid();
	test_serial();
	test_unknown_msr();
	test_fwcfg();
	test_hc_basic();
	test_hc_exits();
	report_prefix_pop();
	return report_summary();
}
