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
 *
 * expect=tickvisor also holds CPUID to the features tickvisor shows a
 * guest on the Bochs models make test boots (vmm/exit/exit_cpuid.c): x2APIC,
 * TSC-deadline, TSC_ADJUST, leaf 0xB and the hypervisor leaves it makes
 * itself whatever the host has; XSAVE (with OSXSAVE following the guest's
 * CR4) and AVX it passes through from the host, and skylake_x, haswell,
 * sandy_bridge and cnl all have them (the Bochs CPU database, cpu/cpudb/intel/, enables
 * BX_ISA_XSAVE and BX_ISA_AVX on each; Sandy Bridge lacks only x2APIC,
 * which tickvisor emulates). Bit positions: SDM Vol. 2A, CPUID, "Feature
 * Information" and leaf 07H; Linux's cpufeatures.h and Bochs's cpuid.h
 * agree. A model without one is booted with features=LIST (names below,
 * comma-separated): what is left out then prints SKIP with the reason.
 */
#include "lib/guest.h"

#define MSR_NONEXISTENT         0xdeadbeefu     /* in no architectural or model range */
#define CPUID_LOOPS             16u
#define RAM_SLACK               (2 * MiB)

static bool expect_tv;                  /* expect=tickvisor */
static const char *features;            /* features=LIST, or NULL: all */

/* Is feature `name` expected (expect=tickvisor, and in features= if given)?
 * If not, says so with a SKIP and the reason. */
static bool want_feature(const char *name, const char *what)
{
	const char *p = features;
	size_t n = strlen(name);

	if (!expect_tv || !tickvisor_present()) {
		report_skip("%s: only checked with expect=tickvisor under tickvisor", what);
		return false;
	}
	if (!p)
		return true;
	while (*p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
		while (*p && *p != ',')
			p++;
		if (*p)
			p++;
	}
	report_skip("%s: not expected on this CPU model (features=%s)", what, features);
	return false;
}

static void test_feature_bits(void)
{
	uint32_t c1 = cpuid(1).c;

	if (want_feature("x2apic", "x2APIC"))
		report(c1 & CPUID_1_ECX_X2APIC, "CPUID.1:ECX[21] x2APIC");
	if (want_feature("tscdl", "TSC-deadline"))
		report(c1 & CPUID_1_ECX_TSC_DEADLINE, "CPUID.1:ECX[24] TSC-deadline timer");
	if (want_feature("tsc_adjust", "TSC_ADJUST")) {
		uint64_t v;
		int vec = rdmsr_safe(MSR_IA32_TSC_ADJUST, &v);

		report((cpuid_indexed(7, 0).b & CPUID_7_EBX_TSC_ADJUST) && vec == 0,
		       "CPUID.(7,0):EBX[1] TSC_ADJUST, and RDMSR 0x3b reads it (vector %d)", vec);
	}
	if (want_feature("avx", "AVX"))
		report((c1 & CPUID_1_ECX_AVX) && (c1 & CPUID_1_ECX_XSAVE) &&
		       (cpuid_indexed(0xd, 0).a & XCR0_AVX),
		       "CPUID.1:ECX[28] AVX, with its YMM state in CPUID.(0DH,0):EAX[2]");
}

/* XSAVE and the OSXSAVE bit, which mirrors CR4.OSXSAVE both ways (SDM
 * Vol. 2A, CPUID: "OSXSAVE: a value of 1 indicates that the OS has set
 * CR4.OSXSAVE[bit 18]"). */
static void test_xsave(void)
{
	uint64_t cr4 = read_cr4();
	bool on, off;

	if (!want_feature("xsave", "XSAVE"))
		return;
	if (!report(cpuid(1).c & CPUID_1_ECX_XSAVE, "CPUID.1:ECX[26] XSAVE"))
		return;
	write_cr4(cr4 | X86_CR4_OSXSAVE);
	on = cpuid(1).c & CPUID_1_ECX_OSXSAVE;
	report(on && xgetbv(0) == XCR0_X87, "CR4.OSXSAVE=1: CPUID.1:ECX[27] OSXSAVE set, "
	       "XGETBV(0) reads 0x%lx (x87)", xgetbv(0));
	write_cr4(cr4 & ~(uint64_t)X86_CR4_OSXSAVE);
	off = !(cpuid(1).c & CPUID_1_ECX_OSXSAVE);
	report(off, "CR4.OSXSAVE=0: CPUID.1:ECX[27] OSXSAVE clear again");
	write_cr4(cr4);
}

/* Leaf 0xB as vmm/exit/exit_cpuid.c builds it: one thread per core, one core
 * per vCPU; EDX is the x2APIC ID, here the initial APIC ID. */
static void test_topology(void)
{
	struct cpuid t0, t1;
	uint32_t id = cpuid(1).b >> 24, n = fwcfg_cpu_count();

	if (!want_feature("leaf_b", "CPUID leaf 0xB"))
		return;
	if (!report(cpuid(0).a >= 0xb, "CPUID.0:EAX = 0x%x reaches leaf 0xB", cpuid(0).a))
		return;
	t0 = cpuid_indexed(0xb, 0);
	t1 = cpuid_indexed(0xb, 1);
	report(((t0.c >> 8) & 0xff) == 1 && (t0.b & 0xffff) == 1 && t0.d == id,
	       "CPUID.(0BH,0): SMT level, 1 thread, x2APIC ID %u (ECX 0x%x EBX 0x%x EDX 0x%x)",
	       id, t0.c, t0.b, t0.d);
	report(((t1.c >> 8) & 0xff) == 2 && (t1.b & 0xffff) == n && t1.d == id,
	       "CPUID.(0BH,1): core level, %u logical CPUs as fw_cfg says (ECX 0x%x EBX 0x%x)",
	       n, t1.c, t1.b);
}

/* 0x40000000: tickvisor's signature and its highest leaf, 0x40000010
 * (TSC and APIC timer kHz, as other hypervisors put them there). */
static void test_hv_leaves(void)
{
	struct cpuid h = cpuid(CPUID_HV_BASE), k;

	if (!want_feature("hv_leaf", "hypervisor leaves"))
		return;
	report(h.a >= 0x40000010u, "CPUID 0x40000000: EAX 0x%x, up to 0x40000010", h.a);
	k = cpuid(0x40000010u);
	report(k.a && k.b, "CPUID 0x40000010: TSC %u kHz, APIC timer %u kHz", k.a, k.b);
}

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
	features = arg_get("features");
	report_prefix_push("basic");
	test_cpuid();
	test_feature_bits();
	test_xsave();
	test_topology();
	test_hv_leaves();
	test_serial();
	test_unknown_msr();
	test_fwcfg();
	test_hc_basic();
	test_hc_exits();
	report_prefix_pop();
	return report_summary();
}
