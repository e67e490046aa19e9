// SPDX-License-Identifier: BSD-2-Clause
/*
 * xsave_xsetbv: XSETBV and XCR0 (issue 10.7). Intel SDM Vol. 2C, XSETBV:
 * #UD while CR4.OSXSAVE is 0; #GP(0) for an XCR other than 0, XCR0 bit 0
 * clear, AVX (bit 2) without SSE (bit 1), AVX-512 bits 7:5 neither all
 * set nor all clear or set without AVX, or a bit CPUID.(EAX=0DH,ECX=0)
 * does not report. A value accepted reads back with XGETBV, turns the
 * features on (AVX instructions run once XCR0[2:1] = 11b) and survives
 * VM exits; CPUID.1:ECX.OSXSAVE follows CR4 and CPUID.(0DH,0):EBX the
 * size XCR0 needs; sub-leaf 1 offers nothing that needs IA32_XSS or
 * IA32_XFD, MSRs tickvisor does not emulate. KVM (__kvm_set_xcr) and Bochs (XSETBV in xsave.cc)
 * check the same conditions. Before tickvisor emulated it, a guest XCR0
 * of 3 panicked the host (#UD in root mode).
 */
#include "lib/guest.h"


static uint64_t supported;              /* CPUID.(0DH,0):EDX:EAX */

static int xsetbv_safe(uint32_t xcr, uint64_t val)
{
	exception_clear();
	asm volatile(ASM_TRY("1f") "xsetbv\n1:"
		     : : "c"(xcr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32)) : "memory");
	return exception_vector();
}

static void expect_gp(uint32_t xcr, uint64_t val, const char *why)
{
	uint64_t before = xgetbv(0);
	int vec = xsetbv_safe(xcr, val);

	report(vec == GP_VECTOR && xgetbv(0) == before, "XCR%u <- 0x%lx (%s): #GP, XCR0 stays 0x%lx "
	       "(vector %d)", xcr, val, why, before, vec);
}

static void expect_ok(uint64_t val)
{
	int vec = xsetbv_safe(0, val);
	uint64_t got = xgetbv(0);
	uint32_t size = cpuid_indexed(0xd, 0).b, want = 576;

	for (unsigned i = 2; i < 32; i++) {
		struct cpuid c = cpuid_indexed(0xd, i);

		if ((val & BIT(i)) && c.b + c.a > want)
			want = c.b + c.a;
	}
	report(vec == 0 && got == val, "XCR0 <- 0x%lx accepted, XGETBV reads 0x%lx", val, got);
	report(size == want, "CPUID.(0DH,0):EBX = %u bytes for XCR0 0x%lx (want %u)", size, val,
	       want);
}

static void test_without_osxsave(void)
{
	int vec;

	write_cr4(read_cr4() & ~X86_CR4_OSXSAVE);
	report(!(cpuid(1).c & CPUID_1_ECX_OSXSAVE), "CR4.OSXSAVE=0: CPUID.1:ECX.OSXSAVE reads 0");
	vec = xsetbv_safe(0, XCR0_X87 | XCR0_SSE);
	report(vec == UD_VECTOR, "CR4.OSXSAVE=0: XSETBV raises #UD (vector %d)", vec);
}

static void test_invalid(void)
{
	expect_gp(1, XCR0_X87, "XCR1");
	expect_gp(0x10, XCR0_X87, "XCR16");
	expect_gp(0, 0, "x87 bit clear");
	expect_gp(0, XCR0_SSE, "x87 bit clear, SSE set");
	expect_gp(0, XCR0_X87 | XCR0_AVX, "AVX without SSE");
	expect_gp(0, XCR0_X87 | XCR0_SSE | BIT(63), "reserved bit 63");
	for (unsigned i = 3; i < 32; i++)
		if (!(supported & BIT(i)) && !(BIT(i) & XCR0_AVX512)) {
			expect_gp(0, XCR0_X87 | XCR0_SSE | BIT(i), "bit CPUID 0xD does not report");
			break;
		}
	if ((supported & XCR0_AVX512) == XCR0_AVX512) {
		expect_gp(0, XCR0_X87 | XCR0_SSE | XCR0_AVX | BIT(5), "AVX-512 opmask alone");
		expect_gp(0, XCR0_X87 | XCR0_SSE | XCR0_AVX512, "AVX-512 without AVX");
	} else {
		expect_gp(0, XCR0_X87 | XCR0_SSE | XCR0_AVX512, "AVX-512 the CPU lacks");
	}
}

/* AVX needs XCR0[2:1] = 11b in the CPU while the guest runs: a YMM value
 * written before some VM exits reads back after them. Only instructions
 * of CPUID.1:ECX.AVX itself: the 256-bit integer forms (VEX.256 VPCMPEQD,
 * VPOR, ...) are AVX2 (SDM Vol. 2, their "CPUID Feature Flag" column),
 * which Sandy Bridge lacks and raises #UD for even with XCR0 = 7. */
static void test_avx_runs(void)
{
	static const uint64_t ones[4] __aligned(32) = { ~0ull, ~0ull, ~0ull, ~0ull };
	uint64_t out[4] = { 0 };
	uint32_t a = 0, b, c = 0, d;
	int vec;

	/* Only the first instruction has a fixup: a #UD there is the
	 * failure this looks for. */
	exception_clear();
	asm volatile(ASM_TRY("1f") "vmovdqu (%5), %%ymm3\n\t"
		     "cpuid\n\t"
		     "vmovdqu %%ymm3, (%4)\n1:"
		     : "+a"(a), "=&b"(b), "+c"(c), "=&d"(d) : "r"(out), "r"(ones) : "memory");
	vec = exception_vector();
	report(vec == 0 && out[0] == ~0ull && out[3] == ~0ull,
	       "AVX runs with XCR0 0x%lx and YMM3 survives an exit (vector %d, %lx..%lx)",
	       xgetbv(0), vec, out[0], out[3]);
}

/* XCR0 with AVX where the CPU has AVX: CPUID.1:ECX.AVX and the YMM state
 * component of CPUID.(0DH,0) must agree (SDM Vol. 1, "Detection of Intel
 * AVX Instructions": AVX needs both, and XCR0[2:1] = 11b); a CPU truly
 * without AVX is a SKIP that says so. */
static void test_avx(void)
{
	bool cpu_avx = cpuid(1).c & CPUID_1_ECX_AVX;

	if (!(supported & XCR0_AVX)) {
		if (cpu_avx)
			report_fail("AVX: CPUID.1:ECX[28] set, but CPUID.(0DH,0) offers no YMM state "
				    "(0x%lx)", supported);
		else
			report_skip("AVX: the CPU has none (CPUID.1:ECX[28] = 0, no YMM state in "
				    "CPUID.(0DH,0))");
		return;
	}
	report(cpu_avx, "AVX: YMM state offered and CPUID.1:ECX[28] set");
	expect_ok(XCR0_X87 | XCR0_SSE | XCR0_AVX);
	test_avx_runs();
}

/* The same for AVX-512 (CPUID.(7,0):EBX[16] AVX512F, XCR0 bits 7:5). */
static void test_avx512(void)
{
	bool cpu_avx512 = cpuid_indexed(7, 0).b & BIT(16);

	if ((supported & XCR0_AVX512) == XCR0_AVX512) {
		report(cpu_avx512, "AVX-512: opmask/ZMM state offered and CPUID.(7,0):EBX[16] set");
		expect_ok(XCR0_X87 | XCR0_SSE | XCR0_AVX | XCR0_AVX512);
	} else if (cpu_avx512) {
		report_fail("AVX-512: CPUID.(7,0):EBX[16] set, but CPUID.(0DH,0) lacks bits 7:5 "
			    "(0x%lx)", supported);
	} else {
		report_skip("AVX-512: the CPU has none (CPUID.(7,0):EBX[16] = 0)");
	}
}

int main(int argc, char **argv)
{
	struct cpuid d;

	(void)argc;
	(void)argv;
	if (!(cpuid(1).c & CPUID_1_ECX_XSAVE)) {
		report_skip("no XSAVE (CPUID.1:ECX[26])");
		return report_summary();
	}
	test_without_osxsave();
	write_cr4(read_cr4() | X86_CR4_OSXSAVE);
	report(cpuid(1).c & CPUID_1_ECX_OSXSAVE, "CR4.OSXSAVE=1: CPUID.1:ECX.OSXSAVE reads 1");
	d = cpuid_indexed(0xd, 0);
	supported = d.a | (uint64_t)d.d << 32;
	report((supported & 3) == 3, "CPUID.(0DH,0) reports x87 and SSE (0x%lx)", supported);
	report(xgetbv(0) == XCR0_X87, "XCR0 starts at 1 (0x%lx)", xgetbv(0));
	d = cpuid_indexed(0xd, 1);
	report(!(d.a & ~7u) && !d.c && !d.d, "CPUID.(0DH,1): no XSAVES/IA32_XSS or XFD "
	       "(EAX 0x%x ECX 0x%x EDX 0x%x)", d.a, d.c, d.d);
	test_invalid();
	expect_ok(XCR0_X87 | XCR0_SSE);
	test_avx();
	test_avx512();
	expect_ok(XCR0_X87);
	return report_summary();
}
