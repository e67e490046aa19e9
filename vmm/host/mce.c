// SPDX-License-Identifier: BSD-2-Clause
/*
 * Machine checks on the host's CPUs. Without CR4.MCE a machine-check
 * exception shuts the processor down (SDM Vol. 3A, "Machine-Check
 * Exception (#MC)"), with it the #MC goes to the IDT, or, in VMX non-root
 * operation with bit 18 of the exception bitmap set, to a VM exit (Vol.
 * 3C, "Exception Bitmap"): tickvisor intercepts it in every guest
 * (vmm/vcpu/vcpu_setup.c), so a host error is never taken by the guest's own
 * handler, and judges it here (drivers/mce.c). The banks are read with
 * faults fixed up: CPUs and emulators that claim MCA (CPUID.1:EDX.MCA)
 * without its MSRs exist (Bochs).
 */
#include "drivers/io.h"
#include "drivers/x86.h"
#include "vmm/host/irq.h"
#include "vmm/host/log.h"
#include "vmm/host/mce.h"
#include "vmm/host/percpu.h"

static uint64_t read_msr_or_0(uint32_t msr)
{
	uint64_t v;

	return host_rdmsr_safe(msr, &v) ? v : 0;
}

/* MCA as CPUID claims it, and its MSRs as the CPU has them: the
 * banks are read only then. */
static bool has_mca(void)
{
	static int ok = -1;
	uint64_t v;

	if (ok < 0)
		ok = (cpuid(1, 0).edx & CPUID_1_EDX_MCA) && host_rdmsr_safe(MSR_IA32_MCG_CAP, &v);
	return ok;
}

void mce_cpu_init(bool report)
{
	uint64_t cap;

	if (!(cpuid(1, 0).edx & CPUID_1_EDX_MCE)) {
		if (report)
			pr_warn("machine checks: this CPU has no #MC (CPUID.1:EDX.MCE clear)");
		return;
	}
	write_cr4(read_cr4() | CR4_MCE);
	if (!report)
		return;
	if (!has_mca()) {
		pr_info("machine checks: CR4.MCE on every CPU, no machine-check banks (%s)",
			cpuid(1, 0).edx & CPUID_1_EDX_MCA ? "CPUID claims MCA, IA32_MCG_CAP raises #GP" :
			"no MCA");
		return;
	}
	cap = read_msr_or_0(MSR_IA32_MCG_CAP);
	pr_info("machine checks: CR4.MCE on every CPU, %u banks (MCG_CAP %#lx%s), "
		"#MC in a guest intercepted", (unsigned)(cap & MCG_CAP_COUNT), (unsigned long)cap,
		cap & MCG_CAP_SER_P ? ", software error recovery" : "");
}

static void collect(struct mce_record *r)
{
	unsigned n = 0;

	r->mcg_cap = has_mca() ? read_msr_or_0(MSR_IA32_MCG_CAP) : 0;
	r->mcg_status = has_mca() ? read_msr_or_0(MSR_IA32_MCG_STATUS) : 0;
	for (unsigned b = 0; b < (r->mcg_cap & MCG_CAP_COUNT) && n < MCE_MAX_BANKS; b++) {
		uint32_t msr = MSR_IA32_MC0_STATUS + 4 * b;
		uint64_t st = read_msr_or_0(msr);

		if (!(st & MCI_STATUS_VAL))
			continue;
		r->bank[n] = (struct mce_bank){
			.bank = (uint8_t)b, .status = st,
			.addr = st & MCI_STATUS_ADDRV ? read_msr_or_0(msr + 1) : 0,
			.misc = st & MCI_STATUS_MISCV ? read_msr_or_0(msr + 2) : 0,
		};
		n++;
	}
	r->nbanks = n;
}

enum mce_verdict mce_handle(bool in_guest, const char *who)
{
	static const char *const verdicts[] = {
		[MCE_RESUME] = "resumed", [MCE_END_GUEST] = "the guest ends",
		[MCE_FATAL] = "fatal",
	};
	struct mce_record r = { 0 };
	const char *why;
	enum mce_verdict v;

	collect(&r);
	v = mce_judge(&r, in_guest, &why);
	pr_err("machine check on cpu%u in %s: MCG_STATUS %#lx, %u bank%s: %s: %s",
	       this_cpu()->index, who, (unsigned long)r.mcg_status, r.nbanks,
	       r.nbanks == 1 ? "" : "s", why, verdicts[v]);
	for (unsigned i = 0; i < r.nbanks; i++)
		pr_err("  MC%u_STATUS %#lx ADDR %#lx MISC %#lx", r.bank[i].bank,
		       (unsigned long)r.bank[i].status, (unsigned long)r.bank[i].addr,
		       (unsigned long)r.bank[i].misc);
	if (v == MCE_FATAL)
		return v;
	/* Logged: clear the banks, then MCIP, so that the next #MC is taken
	 * rather than shutting the CPU down (SDM: software clears MCIP). */
	for (unsigned i = 0; i < r.nbanks; i++)
		wrmsr(MSR_IA32_MC0_STATUS + 4 * r.bank[i].bank, 0);
	if (has_mca())
		wrmsr(MSR_IA32_MCG_STATUS, 0);
	return v;
}
