// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_rep_progress: while one CPU runs a long REP string instruction, the
 * others run on. On hardware every logical processor executes at once, and
 * a REP is interruptible between its iterations (SDM Vol. 2B, "REP/REPE/
 * REPZ/REPNE/REPNZ": an interrupt or exception is taken between iterations
 * and the instruction resumes where it stopped), so a CPU that only reads
 * its TSC in a loop sees it advance by a few cycles per read, whatever
 * another CPU executes. KVM and Xen run each vCPU on its own host thread
 * and never hold one vCPU for another's instruction.
 *
 * CPU 0 reads its TSC back to back and keeps the largest step between two
 * reads while every other CPU runs REP LODSB over 1 MiB, REPS times.
 * Debian's Bochs 3.0 ran such a REP whole in one turn of its SMP loop
 * (main.cc: one trace per CPU per turn, the clock moved by the mean of a
 * turn's instructions), so CPU 0 stood still while the clock jumped: a
 * step of 1 MiB / CPUs cycles, 10 ms at 50 MHz on 2 CPUs. In make bench's
 * Linux guest it stretched the housekeeper's delivery of posted timers
 * (issue 24: 11,000 cycles behind a vCPU's 14,204-iteration REP).
 * scripts/bochs-patches/0010 ends a REP's turn after a trace's worth of
 * iterations; without it this test fails on 2 CPUs.
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/timer_util.h"

#define REP_BYTES               (1u << 20)
#define REPS                    4u
#define MAX_STEP_US_DEFAULT     200u    /* a VM exit or two; 10,000 without the patch */

static uint8_t buf[REP_BYTES];
static volatile unsigned reps_done[MAX_CPUS];

static void rep_loop(void *arg)
{
	(void)arg;
	for (unsigned r = 0; r < REPS; r++) {
		const void *src = buf;
		uint64_t count = REP_BYTES;

		__asm__ volatile("cld; rep lodsb"
				 : "+S"(src), "+c"(count) : : "rax", "memory");
		reps_done[smp_id()]++;
	}
}

static bool all_done(unsigned n)
{
	for (unsigned cpu = 1; cpu < n; cpu++)
		if (reps_done[cpu] < REPS)
			return false;
	return true;
}

int main(int argc, char **argv)
{
	uint64_t max_step_us = arg_get_ulong("max_step_us", MAX_STEP_US_DEFAULT);
	uint64_t max_step = 0, reads = 0, last, step_us;
	unsigned n;

	(void)argc;
	(void)argv;
	report_prefix_push("smp_rep_progress");
	if (!tmr_init())
		return report_summary();
	if (!smp_init_report())
		return report_summary();
	n = cpu_count();
	for (unsigned cpu = 1; cpu < n; cpu++)
		on_cpu_async(cpu, rep_loop, NULL);
	last = rdtsc();
	while (!all_done(n)) {
		uint64_t now = rdtsc();

		if (now - last > max_step)
			max_step = now - last;
		last = now;
		reads++;
	}
	step_us = max_step * 1000000 / tmr_clock.tsc_hz;
	report(n > 1 && reads > 1000, "CPU 0 read its TSC %lu times while %u CPUs ran %u REP "
	       "LODSB of %u bytes each", reads, n - 1, REPS, REP_BYTES);
	report(step_us <= max_step_us, "the largest step between two reads: %lu us (%lu TSC "
	       "cycles; at most %lu us)", step_us, max_step, max_step_us);
	return report_summary();
}
