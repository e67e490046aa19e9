// SPDX-License-Identifier: BSD-2-Clause
/* IA32_TSC_ADJUST at bring-up and the TSC warp test (vmm/host/tsc_sync.h). */
#include "drivers/io.h"
#include "drivers/x86.h"
#include "vmm/host/irq.h"
#include "vmm/host/tsc_sync.h"

static bool has_tsc_adjust(void)
{
	return cpuid(0, 0).eax >= 7 && (cpuid(7, 0).ebx & CPUID_7_EBX_TSC_ADJUST);
}

int64_t tsc_adjust_undo(void)
{
	uint64_t was;

	if (!has_tsc_adjust() || !host_rdmsr_safe(MSR_IA32_TSC_ADJUST, &was) || !was)
		return 0;
	wrmsr(MSR_IA32_TSC_ADJUST, 0);
	return (int64_t)was;
}

bool tsc_adjust_write(int64_t v)
{
	uint64_t old;

	if (!has_tsc_adjust() || !host_rdmsr_safe(MSR_IA32_TSC_ADJUST, &old))
		return false;
	wrmsr(MSR_IA32_TSC_ADJUST, (uint64_t)v);
	return true;
}

/* One turn: the TSC read after the other CPU's (acquire on turn orders
 * it, RDTSC with LFENCE keeps it from running early), compared with it. */
static void take_turn(struct tsc_warp *w, uint64_t *back, uint32_t mine, uint32_t next)
{
	uint64_t now = rdtsc_ordered();

	if (w->last && now < w->last && w->last - now > *back)
		*back = w->last - now;
	w->last = now;
	/* Not over a TSC_WARP_OVER the BSP wrote when it gave up. */
	__atomic_compare_exchange_n(&w->turn, &mine, next, false, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}

/* The BSP waits for its turn at most TSC_WARP_TURN_US. */
static bool bsp_wait_turn(struct tsc_warp *w, uint64_t limit)
{
	uint64_t t0 = rdtsc();

	while (__atomic_load_n(&w->turn, __ATOMIC_ACQUIRE) != TSC_WARP_BSP) {
		if (rdtsc() - t0 > limit)
			return false;
		cpu_relax();
	}
	return true;
}

void tsc_warp_bsp(struct tsc_warp *w, uint64_t tsc_hz)
{
	uint64_t limit = TSC_WARP_TURN_US * tsc_hz / 1000000;

	for (uint32_t i = 0; i <= TSC_WARP_ROUNDS; i++) {
		if (!bsp_wait_turn(w, limit)) {
			w->timed_out = true;
			w->rounds = i;
			break;
		}
		if (i < TSC_WARP_ROUNDS)
			take_turn(w, &w->bsp_back, TSC_WARP_BSP, TSC_WARP_AP);
	}
	if (!w->timed_out)
		w->rounds = TSC_WARP_ROUNDS;
	__atomic_store_n(&w->turn, TSC_WARP_OVER, __ATOMIC_RELEASE);
}

void tsc_warp_ap(struct tsc_warp *w)
{
	for (;;) {
		uint32_t t = __atomic_load_n(&w->turn, __ATOMIC_ACQUIRE);

		if (t == TSC_WARP_OVER)
			return;
		if (t == TSC_WARP_AP)
			take_turn(w, &w->ap_back, TSC_WARP_AP, TSC_WARP_BSP);
		else
			cpu_relax();
	}
}
