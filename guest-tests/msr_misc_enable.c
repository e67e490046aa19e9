// SPDX-License-Identifier: BSD-2-Clause
/*
 * msr_misc_enable: IA32_MISC_ENABLE (0x1a0) as the Intel SDM Vol. 4 table
 * "Architectural MSRs" describes it, for the CPUID tickvisor shows (issue
 * 10.4, issue 23.1). Read/write bits read back what was written; read-only
 * bits keep their value; reserved bits raise #GP and change nothing.
 * "Limit CPUID Maxval" (22) makes CPUID.0:EAX read 2 while it is set.
 * KVM (kvm_set_msr_common: EMON kept, BTS/PEBS unavailable read-only)
 * and Bochs (reserved-bit masks of its MSR table raise #GP) agree on the
 * read-only and reserved parts.
 *
 * Issue 23.1: a guest written for KVM (kvm-unit-tests' msr test) writes
 * 0x400c50809 with the read-only bits 7, 11, 12 as they were and reads it
 * back; KVM stores every one of its bits. Enhanced SpeedStep (16) and
 * MONITOR FSM (18) are therefore kept here too, without effect (the
 * features stay hidden in CPUID, as KVM with its default quirks), and XD
 * bit disable (34) is read/write with the effects the SDM gives it: while
 * it is set CPUID.80000001H:EDX[20] (NX) reads 0 and EFER.NXE is reserved,
 * so a WRMSR setting it raises #GP. KVM stores bit 34 without effect and
 * Bochs has no IA32_MISC_ENABLE: the effects rest on the SDM alone. A set
 * NXE stays as it is when XD is disabled (the SDM names no effect on
 * EFER's value); the next EFER write must clear it. The EFER checks that
 * tickvisor must then make itself (reserved bits, LME while paging, LMA
 * kept) are those of Bochs's SetEFER and KVM's set_efer; they are checked
 * here with XD enabled too, where the CPU makes them.
 */
#include "lib/guest.h"

#define ME_FAST_STRING          BIT(0)
#define ME_AUTO_THERMAL         BIT(3)
#define ME_PERFMON              BIT(7)
#define ME_BTS_UNAVAIL          BIT(11)
#define ME_PEBS_UNAVAIL         BIT(12)
#define ME_EIST                 BIT(16)
#define ME_MONITOR              BIT(18)
#define ME_LIMIT_CPUID          BIT(22)
#define ME_XTPR_DISABLE         BIT(23)
#define ME_XD_DISABLE           BIT(34)
#define ME_RO                   (ME_PERFMON | ME_BTS_UNAVAIL | ME_PEBS_UNAVAIL)
#define CPUID_1_ECX_SSE3        BIT(0)
#define CPUID_1_ECX_MONITOR     BIT(3)
#define CPUID_1_ECX_EIST        BIT(7)
#define CPUID_80000001_EDX_NX   BIT(20)
#define EFER_SCE                BIT(0)
#define EFER_LMA                BIT(10)
/* kvm-unit-tests x86/msr.c: the value and the bits it keeps from before */
#define KUT_MISC_ENABLE         0x400c50809ul
#define KUT_MISC_ENABLE_KEEP    0x1880ul

static uint64_t initial;

static void test_reset_value(void)
{
	uint32_t pmu_version = cpuid(0xa).a & 0xff;

	initial = rdmsr(MSR_MISC_ENABLE);
	report(initial & ME_FAST_STRING, "fast strings on at reset (0x%lx)", initial);
	report((initial & (ME_BTS_UNAVAIL | ME_PEBS_UNAVAIL)) == (ME_BTS_UNAVAIL | ME_PEBS_UNAVAIL),
	       "BTS and PEBS unavailable");
	report(!!(initial & ME_PERFMON) == (pmu_version != 0),
	       "performance monitoring available = %d, as CPUID 0xA (version %u)",
	       !!(initial & ME_PERFMON), pmu_version);
	report(!(initial & ME_LIMIT_CPUID), "limit CPUID maxval off at reset");
}

static void test_rw_bit(uint64_t bit, const char *name)
{
	uint64_t v0 = rdmsr(MSR_MISC_ENABLE), v1, v2;
	int vec = wrmsr_safe(MSR_MISC_ENABLE, v0 ^ bit);

	v1 = rdmsr(MSR_MISC_ENABLE);
	wrmsr_safe(MSR_MISC_ENABLE, v0);
	v2 = rdmsr(MSR_MISC_ENABLE);
	report(vec == 0 && v1 == (v0 ^ bit) && v2 == v0,
	       "%s (R/W): toggled 0x%lx -> 0x%lx, back 0x%lx (vector %d)", name, v0, v1, v2, vec);
}

static void test_ro_bits(void)
{
	uint64_t ro = ME_PERFMON | ME_BTS_UNAVAIL | ME_PEBS_UNAVAIL;
	uint64_t v0 = rdmsr(MSR_MISC_ENABLE), v1;
	int vec = wrmsr_safe(MSR_MISC_ENABLE, v0 ^ ro);

	v1 = rdmsr(MSR_MISC_ENABLE);
	report(vec == 0 && v1 == v0, "read-only bits 7, 11, 12 keep their value (0x%lx, vector %d)",
	       v1, vec);
}

static void test_reserved_bit(uint64_t bit, const char *name)
{
	uint64_t v0 = rdmsr(MSR_MISC_ENABLE);
	int vec = wrmsr_safe(MSR_MISC_ENABLE, v0 | bit);

	report(vec == GP_VECTOR && rdmsr(MSR_MISC_ENABLE) == v0,
	       "%s: #GP, value unchanged (vector %d)", name, vec);
}

static bool cpu_nx(void)
{
	return cpuid(0x80000001).d & CPUID_80000001_EDX_NX;
}

/* The kvm-unit-tests write: 0x400c50809 with the read-only bits as they
 * were reads back exactly; the plain value (bit 12 clear) is taken too,
 * its read-only bits unchanged. Both restored after. */
static void test_kvm_value(void)
{
	uint64_t v0 = rdmsr(MSR_MISC_ENABLE);
	uint64_t want = (KUT_MISC_ENABLE & ~KUT_MISC_ENABLE_KEEP) | (v0 & KUT_MISC_ENABLE_KEEP);
	uint64_t r1 = 0, r2 = 0;
	int vec1 = wrmsr_safe(MSR_MISC_ENABLE, want), vec2;

	if (!vec1)
		r1 = rdmsr(MSR_MISC_ENABLE);
	wrmsr_safe(MSR_MISC_ENABLE, v0);
	vec2 = wrmsr_safe(MSR_MISC_ENABLE, KUT_MISC_ENABLE);
	if (!vec2)
		r2 = rdmsr(MSR_MISC_ENABLE);
	wrmsr_safe(MSR_MISC_ENABLE, v0);
	report(vec1 == 0 && r1 == want,
	       "0x%lx (kvm-unit-tests' value, RO bits kept) reads back 0x%lx (vector %d)",
	       want, r1, vec1);
	report(vec2 == 0 && r2 == ((KUT_MISC_ENABLE & ~ME_RO) | (v0 & ME_RO)),
	       "0x%lx as it is: taken, read-only bits unchanged: 0x%lx (vector %d)",
	       KUT_MISC_ENABLE, r2, vec2);
	report(rdmsr(MSR_MISC_ENABLE) == v0, "restored to 0x%lx", rdmsr(MSR_MISC_ENABLE));
}

/* EFER writes the CPU (XD enabled) or tickvisor (XD disabled: EFER.NXE
 * is reserved, EFER writes exit) checks: a reserved bit, LME cleared
 * while paging is on (this guest runs in long mode) and LMA written as 0
 * (ignored: LMA is the processor's). */
static void check_efer_rules(const char *when)
{
	uint64_t e0 = rdmsr(MSR_EFER);
	int vec_rsvd = wrmsr_safe(MSR_EFER, e0 | BIT(63));
	int vec_lme = wrmsr_safe(MSR_EFER, e0 & ~EFER_LME);
	int vec_lma = wrmsr_safe(MSR_EFER, (e0 & ~EFER_LMA) ^ EFER_SCE);
	uint64_t e1 = rdmsr(MSR_EFER);

	wrmsr(MSR_EFER, e0);
	report(vec_rsvd == GP_VECTOR && vec_lme == GP_VECTOR && vec_lma == 0 &&
	       e1 == (e0 ^ EFER_SCE) && rdmsr(MSR_EFER) == e0,
	       "%s: EFER bit 63 #GP (%d), clearing LME in long mode #GP (%d), "
	       "SCE toggled with LMA written 0: 0x%lx (%d)", when, vec_rsvd, vec_lme, e1, vec_lma);
}

/* SDM Vol. 4, IA32_MISC_ENABLE bit 34: "When set to 1, the Execute
 * Disable Bit feature (XD Bit) is disabled and the XD Bit extended
 * feature flag will be cleared (CPUID.80000001H: EDX[20]=0)"; IA32_EFER
 * bit 11 (NXE) exists only with that flag. */
static void test_xd_disable(void)
{
	uint64_t v0 = rdmsr(MSR_MISC_ENABLE), e0 = rdmsr(MSR_EFER), e_nx, e_off;
	bool nx_off;
	int vec, vec_nxe, vec_plain, vec_set_nxe_on, vec_keep;

	test_rw_bit(ME_XD_DISABLE, "XD bit disable (34)");
	check_efer_rules("XD enabled");

	/* NXE clear, then XD disabled: NX gone from CPUID, NXE #GPs, other
	 * EFER writes work, EFER rules as the CPU's. */
	wrmsr(MSR_EFER, e0 & ~EFER_NXE);
	vec = wrmsr_safe(MSR_MISC_ENABLE, v0 | ME_XD_DISABLE);
	nx_off = !cpu_nx();
	vec_nxe = wrmsr_safe(MSR_EFER, e0 | EFER_NXE);
	e_nx = rdmsr(MSR_EFER);
	vec_plain = wrmsr_safe(MSR_EFER, (e0 & ~EFER_NXE) ^ EFER_SCE);
	e_off = rdmsr(MSR_EFER);
	wrmsr_safe(MSR_EFER, e0 & ~EFER_NXE);
	report(vec == 0 && nx_off, "XD disabled: CPUID.80000001H:EDX[20] (NX) reads 0 (vector %d)",
	       vec);
	report(vec_nxe == GP_VECTOR && !(e_nx & EFER_NXE),
	       "XD disabled: WRMSR EFER.NXE=1 #GP (vector %d), EFER stays 0x%lx", vec_nxe, e_nx);
	report(vec_plain == 0 && e_off == ((e0 & ~EFER_NXE) ^ EFER_SCE),
	       "XD disabled: EFER write without NXE taken: 0x%lx (vector %d)", e_off, vec_plain);
	check_efer_rules("XD disabled");

	/* XD enabled again: NX back, NXE writable. */
	wrmsr(MSR_MISC_ENABLE, v0);
	vec = wrmsr_safe(MSR_EFER, e0 | EFER_NXE);
	e_nx = rdmsr(MSR_EFER);
	report(cpu_nx() && vec == 0 && (e_nx & EFER_NXE),
	       "XD enabled again: NX in CPUID, EFER.NXE=1 taken: 0x%lx (vector %d)", e_nx, vec);

	/* NXE set, then XD disabled: the write is taken and NXE stays; an
	 * EFER write keeping NXE #GPs, one clearing it is taken. */
	vec_set_nxe_on = wrmsr_safe(MSR_MISC_ENABLE, v0 | ME_XD_DISABLE);
	e_nx = rdmsr(MSR_EFER);
	vec_keep = wrmsr_safe(MSR_EFER, e_nx);
	vec_plain = wrmsr_safe(MSR_EFER, e_nx & ~EFER_NXE);
	e_off = rdmsr(MSR_EFER);
	wrmsr(MSR_MISC_ENABLE, v0);
	wrmsr(MSR_EFER, e0);
	report(vec_set_nxe_on == 0 && (e_nx & EFER_NXE) && vec_keep == GP_VECTOR &&
	       vec_plain == 0 && !(e_off & EFER_NXE),
	       "XD disabled with NXE set: taken (%d), NXE stays, rewriting it #GP (%d), "
	       "clearing it taken (%d)", vec_set_nxe_on, vec_keep, vec_plain);
	report(rdmsr(MSR_EFER) == e0 && cpu_nx(), "EFER restored to 0x%lx", rdmsr(MSR_EFER));
}

static void test_limit_cpuid(void)
{
	uint64_t v0 = rdmsr(MSR_MISC_ENABLE);
	uint32_t max0 = cpuid(0).a, limited, after;

	wrmsr(MSR_MISC_ENABLE, v0 | ME_LIMIT_CPUID);
	limited = cpuid(0).a;
	wrmsr(MSR_MISC_ENABLE, v0);
	after = cpuid(0).a;
	report(max0 > 2 && limited == 2 && after == max0,
	       "limit CPUID maxval: CPUID.0:EAX %#x -> %#x -> %#x", max0, limited, after);
}

int main(int argc, char **argv)
{
	uint32_t ecx1 = cpuid(1).c;

	(void)argc;
	(void)argv;
	test_reset_value();
	test_rw_bit(ME_FAST_STRING, "fast strings (0)");
	test_rw_bit(ME_AUTO_THERMAL, "automatic thermal control (3)");
	test_rw_bit(ME_LIMIT_CPUID, "limit CPUID maxval (22)");
	test_rw_bit(ME_XTPR_DISABLE, "xTPR message disable (23)");
	test_ro_bits();
	test_reserved_bit(BIT(1), "reserved bit 1");
	test_reserved_bit(BIT(13), "reserved bit 13");
	test_reserved_bit(BIT(63), "reserved bit 63");
	test_reserved_bit(BIT(17), "reserved bit 17");
	test_reserved_bit(BIT(35), "reserved bit 35");
	test_rw_bit(ME_EIST, "Enhanced SpeedStep (16), kept without effect");
	if (tickvisor_present())
		report(!(cpuid(1).c & (CPUID_1_ECX_EIST | CPUID_1_ECX_MONITOR)),
		       "EIST and MONITOR stay hidden in CPUID");
	if (ecx1 & CPUID_1_ECX_SSE3)
		test_rw_bit(ME_MONITOR, "MONITOR FSM (18), kept without effect");
	else
		test_reserved_bit(ME_MONITOR, "MONITOR FSM (18) without SSE3");
	if (cpu_nx())
		test_xd_disable();
	else
		test_reserved_bit(ME_XD_DISABLE, "XD bit disable (34) without NX");
	test_kvm_value();
	test_limit_cpuid();
	report(rdmsr(MSR_MISC_ENABLE) == initial, "value restored (0x%lx)", rdmsr(MSR_MISC_ENABLE));
	return report_summary();
}
