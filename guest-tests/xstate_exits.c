// SPDX-License-Identifier: BSD-2-Clause
/*
 * The guest's vector registers survive tickvisor's exits (issue 22.8).
 * The guest enables every XCR0 component it is offered, fills YMM0-15,
 * then (where offered) ZMM0-31 and the opmask registers k0-k7 with
 * distinct patterns, takes 1,000 VM exits (CPUID, and CMOS port I/O that
 * tickvisor emulates) in one stretch of assembly that touches no vector
 * register, and compares every register with what it wrote.
 *
 * Why it can break: VMX neither saves nor loads vector state, so the
 * registers stay in the CPU across every exit, and only root-mode code
 * can change them: a host compiled with vector instructions, an XRSTOR of
 * initial state on the exit path, or XCR0 lowered under live state. SDM
 * Vol. 1 13.1/13.3 says clearing XCR0 bits preserves the components but
 * may cost SSE/AVX a power and performance penalty afterwards when
 * AVX-512 state is not initial; KVM keeps the host's XCR0 a superset of
 * the guest's for the same reason. tickvisor therefore never writes a
 * smaller XCR0 while a guest's registers are live (vmm/vcpu/vcpu_xstate.h).
 * Bochs preserves state when XCR0 bits are cleared (cpu/xsave.cc XSETBV
 * only sets xcr0), as the SDM says, so on Bochs this test fails only for
 * root-mode code that writes the registers themselves.
 */
#include "lib/guest.h"

#define EXIT_ROUNDS     250u    /* 4 exits each: 2 CPUID, OUT 0x70, IN 0x71 */
#define CMOS_INDEX      0x70
#define CMOS_SECONDS    0x00

static uint64_t supported;
static uint64_t in_ymm[16][4] __aligned(64);
static uint64_t out_ymm[16][4] __aligned(64);
static uint64_t in_zmm[32][8] __aligned(64);
static uint64_t out_zmm[32][8] __aligned(64);
static uint64_t in_k[8], out_k[8];

static void fill_patterns(void)
{
	for (unsigned r = 0; r < 16; r++)
		for (unsigned q = 0; q < 4; q++)
			in_ymm[r][q] = 0x5900000000000000ull | (uint64_t)r << 16 | q;
	for (unsigned r = 0; r < 32; r++)
		for (unsigned q = 0; q < 8; q++)
			in_zmm[r][q] = 0x2a00000000000000ull | (uint64_t)r << 16 | q;
	for (unsigned r = 0; r < 8; r++)
		in_k[r] = 0xc0ffee0000000000ull | r;
}

/* The exits: no vector register in between (the guest is built with
 * -mgeneral-regs-only, and this is one asm statement with its loads). */
#define EXIT_LOOP                                                       \
	"mov $" STR(EXIT_ROUNDS) ", %%r8d\n\t"                          \
	"2: xor %%eax, %%eax\n\t"                                       \
	"xor %%ecx, %%ecx\n\t"                                          \
	"cpuid\n\t"                                                     \
	"mov $" STR(CMOS_SECONDS) ", %%al\n\t"                          \
	"out %%al, $" STR(CMOS_INDEX) "\n\t"                            \
	"in $0x71, %%al\n\t"                                            \
	"mov $1, %%eax\n\t"                                             \
	"xor %%ecx, %%ecx\n\t"                                          \
	"cpuid\n\t"                                                     \
	"dec %%r8d\n\t"                                                 \
	"jnz 2b\n\t"

#define Y_LD(n) "vmovdqu " #n "*32(%[in]), %%ymm" #n "\n\t"
#define Y_ST(n) "vmovdqu %%ymm" #n ", " #n "*32(%[out])\n\t"
#define Y_ALL(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7) \
		 m(8) m(9) m(10) m(11) m(12) m(13) m(14) m(15)

static void run_ymm(void)
{
	asm volatile(Y_ALL(Y_LD) EXIT_LOOP Y_ALL(Y_ST)
		     : : [in] "r"(in_ymm), [out] "r"(out_ymm)
		     : "rax", "rbx", "rcx", "rdx", "r8", "memory");
}

#define Z_LD(n) "vmovdqu64 " #n "*64(%[in]), %%zmm" #n "\n\t"
#define Z_ST(n) "vmovdqu64 %%zmm" #n ", " #n "*64(%[out])\n\t"
#define Z_ALL(m) Y_ALL(m) m(16) m(17) m(18) m(19) m(20) m(21) m(22) m(23) \
		 m(24) m(25) m(26) m(27) m(28) m(29) m(30) m(31)
#define K_LD(n) "kmovq " #n "*8(%[kin]), %%k" #n "\n\t"
#define K_ST(n) "kmovq %%k" #n ", " #n "*8(%[kout])\n\t"
#define K_ALL(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7)

static void run_zmm(void)
{
	asm volatile(Z_ALL(Z_LD) K_ALL(K_LD) EXIT_LOOP Z_ALL(Z_ST) K_ALL(K_ST)
		     : : [in] "r"(in_zmm), [out] "r"(out_zmm), [kin] "r"(in_k), [kout] "r"(out_k)
		     : "rax", "rbx", "rcx", "rdx", "r8", "memory");
}

/* First register whose words differ, or -1. */
static int first_diff(const uint64_t *a, const uint64_t *b, unsigned regs, unsigned words)
{
	for (unsigned r = 0; r < regs; r++)
		for (unsigned q = 0; q < words; q++)
			if (a[r * words + q] != b[r * words + q])
				return (int)r;
	return -1;
}

static void test_ymm(void)
{
	int bad;

	xsetbv(0, XCR0_X87 | XCR0_SSE | XCR0_AVX);
	run_ymm();
	bad = first_diff(&in_ymm[0][0], &out_ymm[0][0], 16, 4);
	report(bad < 0, "YMM0-15 intact after %u exits with XCR0 0x%lx (first bad: ymm%d)",
	       EXIT_ROUNDS * 4, xgetbv(0), bad);
}

static void test_zmm(void)
{
	uint64_t xcr0 = XCR0_X87 | XCR0_SSE | XCR0_AVX | XCR0_AVX512;
	int bad;

	if ((supported & XCR0_AVX512) != XCR0_AVX512) {
		report_skip("AVX-512: the CPU has none (CPUID.(0DH,0) lacks XCR0 bits 7:5)");
		return;
	}
	xsetbv(0, xcr0);
	run_zmm();
	bad = first_diff(&in_zmm[0][0], &out_zmm[0][0], 32, 8);
	report(bad < 0, "ZMM0-31 intact after %u exits with XCR0 0x%lx (first bad: zmm%d)",
	       EXIT_ROUNDS * 4, xgetbv(0), bad);
	bad = first_diff(in_k, out_k, 8, 1);
	report(bad < 0, "k0-k7 intact after %u exits (first bad: k%d)", EXIT_ROUNDS * 4, bad);
	report(xgetbv(0) == xcr0, "XCR0 still 0x%lx after the exits", xgetbv(0));
}

int main(int argc, char **argv)
{
	struct cpuid d;

	(void)argc;
	(void)argv;
	if (!(cpuid(1).c & CPUID_1_ECX_XSAVE) || !(cpuid(1).c & CPUID_1_ECX_AVX)) {
		report_fail("no XSAVE/AVX (CPUID.1:ECX 0x%x): every CPU model the suites use has them",
			    cpuid(1).c);
		return report_summary();
	}
	write_cr4(read_cr4() | X86_CR4_OSXSAVE);
	d = cpuid_indexed(0xd, 0);
	supported = d.a | (uint64_t)d.d << 32;
	fill_patterns();
	test_ymm();
	test_zmm();
	xsetbv(0, XCR0_X87);
	return report_summary();
}
