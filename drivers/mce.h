/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Machine checks (Intel SDM Vol. 3B, "Machine-Check Architecture"): what
 * the banks say, and what it leaves running. Pure: the MSR reads are the
 * caller's (vmm/host/mce.c), so the verdict is unit-tested on the host.
 */
#ifndef DRIVERS_MCE_H
#define DRIVERS_MCE_H

#include "drivers/base.h"

#define EXC_VECTOR_MC           18u     /* #MC */
#define MSR_IA32_MC0_STATUS     0x401u  /* bank i: CTL 0x400 + 4i, STATUS +1, ADDR +2, MISC +3 */

#define MCG_CAP_COUNT           0xffu           /* bits 7:0: banks */
#define MCG_CAP_SER_P           BIT(24)         /* software error recovery */
#define MCG_STATUS_RIPV         BIT(0)          /* restart IP valid */
#define MCG_STATUS_EIPV         BIT(1)          /* error IP valid */
#define MCG_STATUS_MCIP         BIT(2)          /* machine check in progress */

#define MCI_STATUS_VAL          BIT(63)
#define MCI_STATUS_OVER         BIT(62)
#define MCI_STATUS_UC           BIT(61)
#define MCI_STATUS_EN           BIT(60)
#define MCI_STATUS_MISCV        BIT(59)
#define MCI_STATUS_ADDRV        BIT(58)
#define MCI_STATUS_PCC          BIT(57)
#define MCI_STATUS_S            BIT(56)
#define MCI_STATUS_AR           BIT(55)

#define MCE_MAX_BANKS           32u

struct mce_bank {
	uint8_t bank;
	uint64_t status, addr, misc;
};

/* One #MC as the banks recorded it: only banks with STATUS.VAL set. */
struct mce_record {
	uint64_t mcg_cap, mcg_status;
	unsigned nbanks;
	struct mce_bank bank[MCE_MAX_BANKS];
};

enum mce_verdict {
	MCE_RESUME,             /* corrected or action optional: log, go on */
	MCE_END_GUEST,          /* the interrupted guest cannot go on; the host can */
	MCE_FATAL,              /* the processor context is lost: stop tickvisor */
};

/* What the record leaves running, with a one-line reason in *why. A
 * guest is what was interrupted when in_guest (the #MC came as a VM
 * exit); otherwise tickvisor itself was. */
enum mce_verdict mce_judge(const struct mce_record *r, bool in_guest, const char **why);

#endif
