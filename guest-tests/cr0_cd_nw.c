// SPDX-License-Identifier: BSD-2-Clause
/*
 * cr0_cd_nw: CR0.CD and CR0.NW as a guest sees them (issue 27.2). VM
 * entry and VM exit leave both bits of the physical CR0 alone (Intel SDM
 * Vol. 3C, "Loading Guest Control Registers, Debug Registers, and MSRs"
 * and "Loading Host Control Registers, Debug Registers, MSRs"; Bochs
 * cpu/vmx.cc, VMX_KEEP_CR0_BITS, does the same), so tickvisor owns them
 * in the CR0 guest/host mask and the guest reads its own values from the
 * read shadow. Checks:
 *
 *  - the start: CR0 as the loader left it plus paging (Multiboot: PE;
 *    tickvisor adds ET), CD and NW clear: caching on;
 *  - MOV to CR0 with NW set and CD clear raises #GP(0), CR0 unchanged
 *    (SDM Vol. 2B, "MOV - Move to/from Control Registers": "an attempt is
 *    made to write invalid bit combinations in CR0 (such as setting the
 *    PG flag to 1 when the PE flag is set to 0, or setting the CD flag to
 *    0 when the NW flag is set to 1)"); so does PG with PE clear, also
 *    when the same write changes CD (an exit tickvisor answers), and a
 *    bit of 63:32 in long mode;
 *  - CD, then CD+NW, then CD alone are accepted and read back, also
 *    after a VM exit (CPUID), and clearing both restores the start.
 *
 * What CD=1 does to caching is not checked: tickvisor keeps the host's
 * caching (docs/design-notes.md, "Guest CR0.CD/NW"), and Bochs models no
 * caches, so no timing would show it either way.
 */
#include "lib/guest.h"

static int write_cr0_safe(uint64_t val)
{
	exception_clear();
	asm volatile(ASM_TRY("1f") "mov %0, %%cr0\n1:" : : "r"(val) : "memory");
	return exception_vector();
}

static void expect_gp(uint64_t val, const char *why)
{
	uint64_t before = read_cr0();
	int vec = write_cr0_safe(val);

	report(vec == GP_VECTOR && read_cr0() == before,
	       "CR0 <- 0x%lx (%s): #GP, CR0 stays 0x%lx (vector %d, CR0 0x%lx)", val, why, before,
	       vec, read_cr0());
}

static void expect_ok(uint64_t val, const char *what)
{
	int vec = write_cr0_safe(val);
	uint64_t now = read_cr0();

	(void)cpuid(0);                         /* a VM exit in between */
	report(vec == 0 && now == val && read_cr0() == val,
	       "CR0 <- 0x%lx (%s): read back, also after a VM exit (vector %d, CR0 0x%lx)", val,
	       what, vec, read_cr0());
}

int main(int argc, char **argv)
{
	uint64_t cr0 = read_cr0();
	uint64_t want = X86_CR0_PE | X86_CR0_PG;

	(void)argc;
	(void)argv;
	report_prefix_push("cr0_cd_nw");
	report((cr0 & want) == want && !(cr0 & (X86_CR0_CD | X86_CR0_NW)),
	       "start: CR0 0x%lx: PE, PG, CD and NW clear (caching on)", cr0);
	expect_gp(cr0 | X86_CR0_NW, "NW without CD");
	expect_gp(cr0 & ~(uint64_t)X86_CR0_PE, "PG without PE");
	expect_gp((cr0 & ~(uint64_t)X86_CR0_PE) | X86_CR0_CD, "PG without PE, CD set");
	expect_gp(cr0 | X86_CR0_CD | BIT(32), "CD and reserved bit 32");
	expect_ok(cr0 | X86_CR0_CD, "CD");
	expect_ok(cr0 | X86_CR0_CD | X86_CR0_NW, "CD and NW");
	expect_gp(cr0 | X86_CR0_NW, "CD cleared with NW set");
	expect_ok(cr0 | X86_CR0_CD, "NW cleared, CD kept");
	expect_ok(cr0, "both cleared");
	return report_summary();
}
