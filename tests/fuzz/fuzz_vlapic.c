// SPDX-License-Identifier: BSD-2-Clause
/*
 * lapic/: the virtual LAPICs of a guest of 1 to 4 vCPUs under a random
 * sequence of operations (tests/fuzz/fuzz_vlapic.h): MMIO and MSR
 * register accesses, IA32_APIC_BASE, timer ticks and deadlines,
 * interrupts accepted and taken, EOIs, CR8, resets. After every one, on
 * every vCPU: IRR, ISR and TMR hold no vector below 16 and ISR nests one
 * vector per priority class, PPR follows TPR and ISR as the SDM defines
 * it, the pending vector is the highest IRR above PPR, the ESR holds only
 * the errors an access made (illegal register, send and receive illegal
 * vector) and latches them on a write, LVTs stay masked while the APIC is
 * software-disabled, the timer counts within TMICT; each operation's
 * outcome (a #GP, a bit set) is the SDM's.
 */
#include "tests/fuzz/fuzz_vlapic.h"

#define MAX_STEPS       4096u

static struct fv_group g;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	unsigned n = 1 + fuzz_u8(&in) % FV_MAX_CPU, op, cpu;
	uint64_t min_period = fuzz_u8(&in) * 100ull;

	fv_clk = 1000000;
	fv_init(&g, n, min_period);
	for (unsigned step = 0; step < MAX_STEPS && fv_step(&g, &in, &op, &cpu); step++)
		for (unsigned i = 0; i < n; i++)
			fv_check(g.l[i]);
	return 0;
}
