/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TSCs that agree across CPUs (issue 22.4). A firmware may leave
 * IA32_TSC_ADJUST non-zero, which offsets that CPU's TSC by the amount
 * (SDM Vol. 3B, "Time-Stamp Counter Adjustment"); each CPU undoes it at
 * bring-up, as Linux does (arch/x86/kernel/tsc_sync.c forces the boot
 * CPU's to 0 and the others' to the boot CPU's). Then each AP plays a
 * TSC ping-pong with the BSP (the warp test): the two take turns reading
 * the TSC, each read ordered after the other's, so with TSCs in step no
 * read is below the one before; one that is shows the CPUs' TSCs apart
 * by at least that much.
 */
#ifndef VMM_HOST_TSC_SYNC_H
#define VMM_HOST_TSC_SYNC_H

#include "drivers/base.h"

#define TSC_WARP_ROUNDS     64u
/*
 * An AP that takes longer over one turn has stopped. Not shorter than the
 * second smp.c gives an AP to answer its SIPI: QEMU TCG with 64 vCPU
 * threads on 2 busy host cores left one AP without a turn for over 200 ms,
 * the bound before, and a CPU merely slow read as TSCs out of step.
 */
#define TSC_WARP_TURN_US    1000000u

/* The state one AP and the BSP share during the test. */
struct tsc_warp {
	uint32_t turn;                  /* TSC_WARP_BSP, _AP or _OVER */
	uint64_t last;                  /* the TSC read of the turn before */
	uint64_t bsp_back;              /* most the BSP read below the AP's: AP ahead */
	uint64_t ap_back;               /* most the AP read below the BSP's: AP behind */
	bool timed_out;
	uint32_t rounds;                /* round trips done */
};

enum { TSC_WARP_BSP = 0, TSC_WARP_AP = 1, TSC_WARP_OVER = 2 };

/* IA32_TSC_ADJUST of this CPU set to 0 if it is not; what it was (0 when
 * the CPU has no such MSR). */
int64_t tsc_adjust_undo(void);
/* IA32_TSC_ADJUST of this CPU written (inject=, on CPUs that have it). */
bool tsc_adjust_write(int64_t v);
/* The BSP's half of the warp test against one AP; w zeroed first by the
 * BSP before the AP starts its half. */
void tsc_warp_bsp(struct tsc_warp *w, uint64_t tsc_hz);
void tsc_warp_ap(struct tsc_warp *w);

#endif
