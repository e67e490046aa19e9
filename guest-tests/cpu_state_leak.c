// SPDX-License-Identifier: BSD-2-Clause
/*
 * cpu_state_leak: one guest's CPU state must not reach the next guest on
 * the same CPU (issue 15.5). Two runs of this image, one after the other
 * in the same boot: role=set writes marker values into everything VMX
 * does not switch and tickvisor passes through - STAR, LSTAR, CSTAR,
 * SFMASK, KERNEL_GS_BASE, TSC_AUX (MSR bitmap), DR0-DR3 and DR6 (MOV DR
 * does not exit), DR7, MXCSR, XMM and YMM registers, XCR0, CR0.CD/NW
 * (VM entry and exit leave them in the physical CR0) - and checks
 * they stick, DR7 across VM exits too; role=check expects the power-up
 * values (Intel SDM Vol. 3A, "Processor State After Reset": DR0-DR3 0,
 * DR6 FFFF0FF0H, DR7 400H, MXCSR 1F80H, XMM/YMM 0; Vol. 1: XCR0 1), and
 * CD/NW clear as the loader leaves them (vmm/vcpu/vcpu_setup.c). The
 * SDM gives no reset value for the SYSCALL MSRs and TSC_AUX: 0, as a new
 * vCPU has them under KVM and BitVisor. Bare Bochs passes role=check
 * except for SFMASK, which its reset sets to 0x20200.
 */
#include "lib/guest.h"

#define MXCSR_INIT              0x1f80u
#define MXCSR_MARK              0x9fc0u         /* FTZ, DAZ, all masked, RC=00 */
#define XCR0_AVX_ON             (XCR0_X87 | XCR0_SSE | XCR0_AVX)
#define CR0_CD_NW               (X86_CR0_CD | X86_CR0_NW)

static const struct { uint32_t msr; uint64_t mark; const char *name; } msrs[] = {
	{ MSR_STAR,           0x0023001000000000ull, "STAR" },
	{ MSR_LSTAR,          0xffffffff81000000ull, "LSTAR" },
	{ MSR_CSTAR,          0xffffffff81000100ull, "CSTAR" },
	{ MSR_SFMASK,         0x47700ull,            "SFMASK" },
	{ MSR_KERNEL_GS_BASE, 0xffff888000001000ull, "KERNEL_GS_BASE" },
	{ MSR_TSC_AUX,        0x5a5aull,             "TSC_AUX" },
};

static volatile uint64_t watched;       /* DR0's address: never written */

static uint64_t dr_marks[4];

static bool has_avx(void)
{
	uint32_t c = cpuid(1).c;

	return (c & CPUID_1_ECX_XSAVE) && (c & CPUID_1_ECX_AVX);
}

static uint32_t mxcsr_read(void)
{
	uint32_t v;

	asm volatile("stmxcsr %0" : "=m"(v));
	return v;
}

static void mxcsr_write(uint32_t v)
{
	asm volatile("ldmxcsr %0" : : "m"(v));
}

/* XMM0-15 all ones (SSE2 is on: the runtime sets CR4.OSFXSR). */
static void xmm_fill_ones(void)
{
	asm volatile("pcmpeqd %%xmm0, %%xmm0\n\t"
		     "movdqa %%xmm0, %%xmm1\n\tmovdqa %%xmm0, %%xmm2\n\tmovdqa %%xmm0, %%xmm3\n\t"
		     "movdqa %%xmm0, %%xmm4\n\tmovdqa %%xmm0, %%xmm5\n\tmovdqa %%xmm0, %%xmm6\n\t"
		     "movdqa %%xmm0, %%xmm7\n\tmovdqa %%xmm0, %%xmm8\n\tmovdqa %%xmm0, %%xmm9\n\t"
		     "movdqa %%xmm0, %%xmm10\n\tmovdqa %%xmm0, %%xmm11\n\tmovdqa %%xmm0, %%xmm12\n\t"
		     "movdqa %%xmm0, %%xmm13\n\tmovdqa %%xmm0, %%xmm14\n\tmovdqa %%xmm0, %%xmm15"
		     : : : "memory");
}

/* OR of XMM0-15 (or YMM0-15 with avx): 0 when all are zero. VORPS, not
 * VPOR: VEX.256 VPOR is AVX2 (SDM Vol. 2, POR), which Sandy Bridge lacks;
 * the bitwise OR is the same. */
static uint64_t vec_or(bool avx)
{
	uint64_t out[4] = { 0 };

	if (avx)
		asm volatile("vorps %%ymm1, %%ymm0, %%ymm0\n\tvorps %%ymm2, %%ymm0, %%ymm0\n\t"
			     "vorps %%ymm3, %%ymm0, %%ymm0\n\tvorps %%ymm4, %%ymm0, %%ymm0\n\t"
			     "vorps %%ymm5, %%ymm0, %%ymm0\n\tvorps %%ymm6, %%ymm0, %%ymm0\n\t"
			     "vorps %%ymm7, %%ymm0, %%ymm0\n\tvorps %%ymm8, %%ymm0, %%ymm0\n\t"
			     "vorps %%ymm9, %%ymm0, %%ymm0\n\tvorps %%ymm10, %%ymm0, %%ymm0\n\t"
			     "vorps %%ymm11, %%ymm0, %%ymm0\n\tvorps %%ymm12, %%ymm0, %%ymm0\n\t"
			     "vorps %%ymm13, %%ymm0, %%ymm0\n\tvorps %%ymm14, %%ymm0, %%ymm0\n\t"
			     "vorps %%ymm15, %%ymm0, %%ymm0\n\tvmovdqu %%ymm0, (%0)"
			     : : "r"(out) : "memory");
	else
		asm volatile("por %%xmm1, %%xmm0\n\tpor %%xmm2, %%xmm0\n\tpor %%xmm3, %%xmm0\n\t"
			     "por %%xmm4, %%xmm0\n\tpor %%xmm5, %%xmm0\n\tpor %%xmm6, %%xmm0\n\t"
			     "por %%xmm7, %%xmm0\n\tpor %%xmm8, %%xmm0\n\tpor %%xmm9, %%xmm0\n\t"
			     "por %%xmm10, %%xmm0\n\tpor %%xmm11, %%xmm0\n\tpor %%xmm12, %%xmm0\n\t"
			     "por %%xmm13, %%xmm0\n\tpor %%xmm14, %%xmm0\n\tpor %%xmm15, %%xmm0\n\t"
			     "movdqu %%xmm0, (%0)"
			     : : "r"(out) : "memory");
	return out[0] | out[1] | out[2] | out[3];
}

/* DR7: L0 with a write breakpoint (R/W0 = 01b, LEN0 = 8 bytes) on a
 * variable nobody writes, GE set: distinct from 400H, harmless. */
static uint64_t dr7_mark(void)
{
	return DR7_INIT | BIT(0) | BIT(9) | (1ull << 16) | (2ull << 18);
}

static void role_set(void)
{
	static const uint64_t ymm_ones[4] __aligned(32) = { ~0ull, ~0ull, ~0ull, ~0ull };
	uint64_t dr7 = dr7_mark(), ymm7[4] = { 0 };

	write_cr0(read_cr0() | CR0_CD_NW);              /* caching off, as the guest sees it */
	(void)cpuid(0);
	report((read_cr0() & CR0_CD_NW) == CR0_CD_NW, "set CR0.CD and NW (CR0 0x%lx)", read_cr0());
	for (unsigned i = 0; i < ARRAY_SIZE(msrs); i++) {
		wrmsr(msrs[i].msr, msrs[i].mark);
		report(rdmsr(msrs[i].msr) == msrs[i].mark, "set %s = 0x%lx", msrs[i].name,
		       msrs[i].mark);
	}
	dr_marks[0] = (uint64_t)&watched;
	dr_marks[1] = 0x1000;
	dr_marks[2] = 0x2000;
	dr_marks[3] = 0x3000;
	write_dr0(dr_marks[0]);
	write_dr1(dr_marks[1]);
	write_dr2(dr_marks[2]);
	write_dr3(dr_marks[3]);
	write_dr6(DR6_INIT | 0xf);
	write_dr7(dr7);
	(void)cpuid(0);                                 /* a VM exit in between */
	report(read_dr0() == dr_marks[0] && read_dr1() == dr_marks[1] &&
	       read_dr2() == dr_marks[2] && read_dr3() == dr_marks[3], "set DR0-DR3");
	report(read_dr6() == (DR6_INIT | 0xf), "set DR6 = 0x%lx", read_dr6());
	report(read_dr7() == dr7, "DR7 0x%lx survives a VM exit (0x%lx)", dr7, read_dr7());
	mxcsr_write(MXCSR_MARK);
	xmm_fill_ones();
	report(mxcsr_read() == MXCSR_MARK && vec_or(false) == ~0ull, "set MXCSR, XMM0-15");
	if (!has_avx()) {
		report_skip("no AVX: XCR0 and YMM not set");
		return;
	}
	write_cr4(read_cr4() | X86_CR4_OSXSAVE);
	xsetbv(0, XCR0_AVX_ON);
	/* A load (AVX), not VPCMPEQD (AVX2 on YMM). Bits 255:128 of YMM7
	 * checked apart: the low halves are all ones already. */
	asm volatile("vmovdqu %1, %%ymm7\n\tvmovdqu %%ymm7, %0" : "=m"(ymm7) : "m"(ymm_ones));
	report(xgetbv(0) == XCR0_AVX_ON && ymm7[2] == ~0ull && ymm7[3] == ~0ull &&
	       vec_or(true) == ~0ull, "set XCR0 = 7, YMM7 (0x%lx 0x%lx)", ymm7[2], ymm7[3]);
}

static void role_check(void)
{
	report(!(read_cr0() & CR0_CD_NW), "CR0.CD and NW clear, not the last guest's (CR0 0x%lx)",
	       read_cr0());
	for (unsigned i = 0; i < ARRAY_SIZE(msrs); i++)
		report(rdmsr(msrs[i].msr) == 0, "%s reads 0 (0x%lx)", msrs[i].name,
		       rdmsr(msrs[i].msr));
	report(!read_dr0() && !read_dr1() && !read_dr2() && !read_dr3(),
	       "DR0-DR3 read 0 (0x%lx 0x%lx 0x%lx 0x%lx)", read_dr0(), read_dr1(), read_dr2(),
	       read_dr3());
	report(read_dr6() == DR6_INIT, "DR6 reads 0x%lx (0x%lx)", DR6_INIT, read_dr6());
	report(read_dr7() == DR7_INIT, "DR7 reads 0x%lx (0x%lx)", DR7_INIT, read_dr7());
	report(mxcsr_read() == MXCSR_INIT, "MXCSR reads 0x%x (0x%x)", MXCSR_INIT, mxcsr_read());
	report(vec_or(false) == 0, "XMM0-15 read 0");
	if (!has_avx()) {
		report_skip("no AVX: XCR0 and YMM not checked");
		return;
	}
	write_cr4(read_cr4() | X86_CR4_OSXSAVE);
	report(xgetbv(0) == 1, "XCR0 reads 1 (0x%lx)", xgetbv(0));
	xsetbv(0, XCR0_AVX_ON);
	report(vec_or(true) == 0, "YMM0-15 read 0");
}

int main(int argc, char **argv)
{
	const char *role = arg_get("role");

	(void)argc;
	(void)argv;
	if (role && !strcmp(role, "set"))
		role_set();
	else if (role && !strcmp(role, "check"))
		role_check();
	else
		report_fail("argument role=set or role=check is required");
	return report_summary();
}
