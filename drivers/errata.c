// SPDX-License-Identifier: BSD-2-Clause
/*
 * Host timer errata: which CPUs' timers tickvisor must not pick (issue
 * 22.4). The lists are facts read from other projects, not their code:
 *
 * TSC-deadline timer: Linux, arch/x86/kernel/apic/apic.c, deadline_match[]
 * and apic_validate_deadline_timer() (v6.16; before v5.8 the same numbers
 * sat in hsx/bdx/skx_deadline_rev() and apic_check_deadline_errata()).
 * Xen's xen/arch/x86/apic.c deadline_match[] (check_deadline_errata())
 * carries the same rows with the raw model numbers, which is where the
 * model numbers below were checked. Rules, as both apply them:
 * - only Intel family 6; a model (or model and stepping) with no row is fine;
 * - on a listed CPU, microcode below the row's revision is broken;
 * - Haswell-X, Broadwell-D and Skylake-X have one row per stepping, and a
 *   stepping of theirs with no row is fine. (Linux up to v5.7 and Xen up
 *   to 2025 called the unlisted Haswell-X and Broadwell-D steppings, and
 *   Skylake-X steppings 0-2, broken whatever the microcode; those are
 *   pre-production parts. Linux's conversion to per-stepping rows dropped
 *   that, and its Skylake-X 5..15 row of revision 0 said "fine" and was
 *   removed as redundant in 2025.)
 * Models 0x8e and 0x9e are matched whole, so Coffee/Whiskey/Comet Lake
 * parts sharing them are held to Kaby Lake's 0x52 (their microcode is
 * well past it). Field reports agree: sig 0x306c3 at revisions 0x16 and
 * 0x19 get Linux's "please update microcode to version: 0x22".
 */
#include "drivers/errata.h"

#define STEP_ANY        0xffu

struct deadline_row {
	uint8_t model;
	uint8_t stepping;       /* STEP_ANY: every stepping */
	uint32_t min_rev;       /* first microcode revision with a working timer */
	const char *why;
};

#define DL_WHY(m, rev, name, step) \
	"TSC-deadline timer broken before microcode " #rev " on " name \
	" (family 6 model " #m step ")"
#define DL(m, rev, name)          { m, STEP_ANY, rev, DL_WHY(m, rev, name, "") }
#define DL_STEP(m, s, rev, name)  { m, s, rev, DL_WHY(m, rev, name, " stepping " #s) }

static const struct deadline_row deadline_rows[] = {
	DL(0x3c, 0x22, "Haswell"),
	DL_STEP(0x3f, 2, 0x3a, "Haswell-EP"),
	DL_STEP(0x3f, 4, 0x0f, "Haswell-EX"),
	DL(0x45, 0x20, "Haswell ULT"),
	DL(0x46, 0x17, "Haswell GT3e"),

	DL(0x3d, 0x25, "Broadwell"),
	DL(0x47, 0x17, "Broadwell GT3e"),
	DL(0x4f, 0x0b000020, "Broadwell-EP/EX"),
	DL_STEP(0x56, 2, 0x00000011, "Broadwell-DE"),
	DL_STEP(0x56, 3, 0x0700000e, "Broadwell-DE"),
	DL_STEP(0x56, 4, 0x0f00000c, "Broadwell-DE"),
	DL_STEP(0x56, 5, 0x0e000003, "Broadwell-DE"),

	DL(0x4e, 0xb2, "Skylake mobile"),
	DL(0x5e, 0xb2, "Skylake desktop"),
	DL_STEP(0x55, 3, 0x01000136, "Skylake-SP"),
	DL_STEP(0x55, 4, 0x02000014, "Skylake-SP"),

	DL(0x8e, 0x52, "Kaby Lake mobile"),
	DL(0x9e, 0x52, "Kaby Lake desktop"),
};

struct cpu_sig errata_decode_sig(uint32_t eax)
{
	uint32_t family = (uint32_t)FIELD_GET(CPUID1_FAMILY, eax);
	uint32_t model = (uint32_t)FIELD_GET(CPUID1_MODEL, eax);
	struct cpu_sig s = { family, model, (uint32_t)FIELD_GET(CPUID1_STEPPING, eax) };

	/* SDM Vol. 2A, CPUID, "Version Information": the extended family
	 * counts only with base family 0xf, the extended model with 6 or 0xf. */
	if (family == 0xf)
		s.family += (uint32_t)FIELD_GET(CPUID1_EXT_FAMILY, eax);
	if (family == 0x6 || family == 0xf)
		s.model |= (uint32_t)FIELD_GET(CPUID1_EXT_MODEL, eax) << 4;
	return s;
}

const char *errata_tsc_deadline(uint32_t family, uint32_t model, uint32_t stepping,
				uint32_t microcode_rev)
{
	if (family != 6)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(deadline_rows); i++) {
		const struct deadline_row *r = &deadline_rows[i];

		if (r->model != model ||
		    (r->stepping != STEP_ANY && r->stepping != stepping))
			continue;
		return microcode_rev < r->min_rev ? r->why : NULL;
	}
	return NULL;
}

/*
 * VMX-preemption timer: KVM, arch/x86/kvm/vmx/vmx.c,
 * vmx_preemption_cpu_tfms[] and cpu_has_broken_vmx_preemption_timer()
 * (v6.16), which took them from VirtualBox (src/VBox/VMM/VMMAll/HMVMXAll.cpp,
 * HMIsSubjectToVmxPreemptTimerErratum(): the same nine signatures, with
 * the erratum "VMX-Preemption Timer Does Not Count Down at the Rate
 * Specified"). Both compare CPUID.01H:EAX with its reserved bits 15:14
 * and 31:28 cleared, the processor type (13:12) kept; KVM then leaves the
 * timer off, VirtualBox assumes a rate shift of 0. Each row names Intel's
 * specification update (document number), erratum and stepping.
 */
#define CPUID1_RESERVED         (BITS(15, 14) | BITS(31, 28))
#define PT_WHY(sig, what) \
	"VMX-preemption timer does not count at the rate IA32_VMX_MISC says (" \
	what ", CPUID.1.EAX " #sig ")"

struct preempt_row {
	uint32_t sig;
	const char *why;
};

static const struct preempt_row preempt_rows[] = {
	{ 0x000206e6, PT_WHY(0x000206e6, "erratum BA86 of 323344, Xeon 7500 D0") },
	{ 0x00020652, PT_WHY(0x00020652, "errata AAX65 of 323056, AAT59 of 322814, "
			     "AAU65 of 322911: Xeon L3406, Core i3/i5/i7 300-600 C2") },
	{ 0x00020655, PT_WHY(0x00020655, "erratum AAU65 of 322911, Core i3-500/i5-600 K0") },
	{ 0x000106e5, PT_WHY(0x000106e5, "errata AAO95 of 322373, AAN92 of 322166, "
			     "AAP86 of 320767: Xeon 3400, Core i5-700/i7-700..900 B1") },
	{ 0x000106a0, PT_WHY(0x000106a0, "erratum AAM126 of 321333, Xeon 3500 C0") },
	{ 0x000106a1, PT_WHY(0x000106a1, "erratum AAM126 of 321333, Xeon 3500 C1") },
	{ 0x000106a4, PT_WHY(0x000106a4, "erratum AAJ124 of 320836, Core i7-900 C0") },
	{ 0x000106a5, PT_WHY(0x000106a5, "errata AAM126 of 321333, AAK139 of 321324, "
			     "AAJ124 of 320836: Xeon 3500/5500, Core i7-900 D0") },
	/* Listed by KVM and VirtualBox with no erratum named. */
	{ 0x000306a8, PT_WHY(0x000306a8, "Xeon E3-1220 v2, no erratum number") },
};

const char *errata_preempt_timer(uint32_t cpuid1_eax)
{
	uint32_t sig = cpuid1_eax & ~(uint32_t)CPUID1_RESERVED;

	for (size_t i = 0; i < ARRAY_SIZE(preempt_rows); i++)
		if (preempt_rows[i].sig == sig)
			return preempt_rows[i].why;
	return NULL;
}
