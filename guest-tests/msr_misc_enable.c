// SPDX-License-Identifier: BSD-2-Clause
/*
 * msr_misc_enable: IA32_MISC_ENABLE (0x1a0) as the Intel SDM Vol. 4 table
 * "Architectural MSRs" describes it, for the CPUID tickvisor shows (issue
 * 10.4). Read/write bits read back what was written; read-only bits keep
 * their value; reserved bits, and bits whose feature CPUID hides (Enhanced
 * SpeedStep 16 without CPUID.1:ECX[7], MONITOR FSM 18 without ECX[3],
 * XD disable 34: see vmm/exit_msr.c), raise #GP and change nothing.
 * "Limit CPUID Maxval" (22) makes CPUID.0:EAX read 2 while it is set.
 * KVM (kvm_set_msr_common: EMON kept, BTS/PEBS unavailable read-only)
 * and Bochs (reserved-bit masks of its MSR table raise #GP) agree on the
 * read-only and reserved parts.
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
#define CPUID_1_ECX_MONITOR     BIT(3)
#define CPUID_1_ECX_EIST        BIT(7)

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
	if (!(ecx1 & CPUID_1_ECX_EIST))
		test_reserved_bit(ME_EIST, "Enhanced SpeedStep (16) without CPUID EIST");
	if (!(ecx1 & CPUID_1_ECX_MONITOR))
		test_reserved_bit(ME_MONITOR, "MONITOR FSM (18) without CPUID MONITOR");
	test_reserved_bit(ME_XD_DISABLE, "XD bit disable (34), not offered");
	test_limit_cpuid();
	report(rdmsr(MSR_MISC_ENABLE) == initial, "value restored (0x%lx)", rdmsr(MSR_MISC_ENABLE));
	return report_summary();
}
