// SPDX-License-Identifier: BSD-2-Clause
/*
 * The verdict on a machine check, from Intel SDM Vol. 3B, "Machine-Check
 * Architecture": IA32_MCG_STATUS ("IA32_MCG_STATUS MSR") and each bank's
 * IA32_MCi_STATUS ("IA32_MCi_STATUS MSRs"), judged as "Machine-Check
 * Software Handler Guidelines for Error Recovery" says:
 * - PCC (processor context corrupt) in any valid bank: nothing on this
 *   processor can be trusted to go on: fatal.
 * - An uncorrected error (UC) on a CPU without software error recovery
 *   (MCG_CAP.MCG_SER_P clear), or one whose bank overflowed (OVER: an
 *   earlier uncorrected error was lost): fatal as well; there is no way
 *   to tell what it touched.
 * - RIPV clear (the interrupted context cannot be restarted) or an
 *   uncorrected error that requires action (S and AR: SRAR, poisoned data
 *   consumed): the interrupted context ends. A guest is only that
 *   context; tickvisor's own code is everything, so in the host it is fatal.
 * - Otherwise (corrected, UCNA, action optional - SRAO): log and resume.
 * Linux's mce_severity() (arch/x86/kernel/cpu/mce/severity.c) ranks the
 * same conditions the same way, a guest standing where Linux has a user
 * process (kill the context, keep the kernel). KVM never gives the guest
 * a host #MC: it intercepts #MC and runs the host's handler (vmx.c,
 * handle_exception_nmi -> kvm_machine_check).
 */
#include "drivers/mce.h"

enum mce_verdict mce_judge(const struct mce_record *r, bool in_guest, const char **why)
{
	bool ser = r->mcg_cap & MCG_CAP_SER_P, action = false, uncorrected = false;
	unsigned n = r->nbanks < MCE_MAX_BANKS ? r->nbanks : MCE_MAX_BANKS;

	for (unsigned i = 0; i < n; i++) {
		uint64_t st = r->bank[i].status;

		if (!(st & MCI_STATUS_VAL))
			continue;
		if (st & MCI_STATUS_PCC) {
			*why = "processor context corrupt (MCi_STATUS.PCC)";
			return MCE_FATAL;
		}
		if (!(st & MCI_STATUS_UC))
			continue;
		uncorrected = true;
		if (st & MCI_STATUS_OVER) {
			*why = "uncorrected error with overflow (MCi_STATUS.UC, OVER)";
			return MCE_FATAL;
		}
		if (!ser) {
			*why = "uncorrected error, no software error recovery (MCG_CAP.MCG_SER_P clear)";
			return MCE_FATAL;
		}
		if ((st & MCI_STATUS_S) && (st & MCI_STATUS_AR))
			action = true;
	}
	if (!(r->mcg_status & MCG_STATUS_RIPV) || action) {
		*why = !(r->mcg_status & MCG_STATUS_RIPV) ?
		       "interrupted context cannot restart (MCG_STATUS.RIPV clear)" :
		       "uncorrected error requires action (MCi_STATUS.S, AR)";
		return in_guest ? MCE_END_GUEST : MCE_FATAL;
	}
	*why = uncorrected ? "uncorrected error, action optional or none required" :
	       n ? "corrected error" : "no bank reports an error";
	return MCE_RESUME;
}
