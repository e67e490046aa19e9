// SPDX-License-Identifier: BSD-2-Clause
/*
 * Work for other CPUs: one mailbox per CPU, a kick IPI, and the APs'
 * idle loop; see smp.h.
 *
 * A mailbox holds one item at a time. `posted` and `done` count items:
 * posters (serialized by the lock) wait for done == posted, fill fn/arg,
 * bump posted with release order and kick; the owner runs the item and
 * bumps done with release order. The owner checks for work with
 * interrupts off and sleeps with STI; HLT, whose one-instruction
 * interrupt shadow keeps a kick that arrives in between from being lost.
 */
#include "lib/smp.h"
#include "lib/apic.h"
#include "lib/desc.h"
#include "lib/processor.h"
#include "lib/report.h"
#include "lib/spinlock.h"
#include "lib/tsc.h"

struct smp_mailbox {
	struct spinlock lock;           /* between posters */
	void (*fn)(void *);             /* the item, valid while posted != done */
	void *arg;
	uint32_t posted;                /* items posted; written under lock */
	uint32_t done;                  /* items finished; written by the owner */
} __aligned(64);                        /* one cache line each */

static struct smp_mailbox mailbox[MAX_CPUS];

static void wake_handler(struct ex_regs *regs)
{
	(void)regs;
	apic_eoi();
}

/* The spurious vector takes no EOI (SDM "Spurious Interrupt"). */
static void spurious_handler(struct ex_regs *regs)
{
	(void)regs;
}

void smp_call_init(void)
{
	irq_handler_fn prev;

	handle_irq(SMP_WAKE_VECTOR, wake_handler);
	prev = handle_irq(LAPIC_SPURIOUS_VECTOR, spurious_handler);
	if (prev)                       /* a test's own handler stays */
		handle_irq(LAPIC_SPURIOUS_VECTOR, prev);
}

/* Until *seq reaches want (wrapping counters), or the deadline. */
static bool wait_seq(const uint32_t *seq, uint32_t want, uint64_t deadline)
{
	while ((int32_t)(__atomic_load_n(seq, __ATOMIC_ACQUIRE) - want) < 0)
		if (tsc_passed(deadline))
			return false;
		else
			pause();
	return true;
}

bool on_cpu_async(unsigned cpu, void (*fn)(void *), void *arg)
{
	struct smp_mailbox *mb = &mailbox[cpu < MAX_CPUS ? cpu : 0];
	bool idle;

	if (cpu == smp_id()) {
		fn(arg);
		return true;
	}
	if (!cpu_online(cpu)) {
		report_fail("on_cpu(%u): CPU %u is not online", cpu, cpu);
		return false;
	}
	spin_lock(&mb->lock);
	idle = wait_seq(&mb->done, mb->posted, tsc_deadline_us(SMP_CALL_TIMEOUT_US));
	if (idle) {
		mb->fn = fn;
		mb->arg = arg;
		__atomic_store_n(&mb->posted, mb->posted + 1, __ATOMIC_RELEASE);
		apic_icr_write(smp_icr(LAPIC_DM_FIXED, SMP_WAKE_VECTOR, LAPIC_DEST_NONE, false), cpu);
	}
	spin_unlock(&mb->lock);
	if (!idle)
		report_fail("on_cpu(%u): earlier work still running after %u ms", cpu,
			    SMP_CALL_TIMEOUT_US / 1000);
	return idle;
}

bool on_cpu_wait(unsigned cpu)
{
	struct smp_mailbox *mb;

	if (cpu >= MAX_CPUS || cpu == smp_id())
		return true;
	mb = &mailbox[cpu];
	if (wait_seq(&mb->done, __atomic_load_n(&mb->posted, __ATOMIC_ACQUIRE),
		     tsc_deadline_us(SMP_CALL_TIMEOUT_US)))
		return true;
	report_fail("on_cpu(%u): no answer within %u ms", cpu, SMP_CALL_TIMEOUT_US / 1000);
	return false;
}

bool on_cpu(unsigned cpu, void (*fn)(void *), void *arg)
{
	return on_cpu_async(cpu, fn, arg) && on_cpu_wait(cpu);
}

bool on_cpus(void (*fn)(void *), void *arg)
{
	unsigned me = smp_id();
	bool ok = true;

	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (cpu != me && cpu_online(cpu))
			ok &= on_cpu_async(cpu, fn, arg);
	fn(arg);
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (cpu != me && cpu_online(cpu))
			ok &= on_cpu_wait(cpu);
	return ok;
}

/* Anything posted before this start (the CPU was INITed with work
 * pending) is dropped, then the CPU counts itself online. */
void smp_idle(void)
{
	struct smp_mailbox *mb = &mailbox[smp_id()];

	__atomic_store_n(&mb->done, __atomic_load_n(&mb->posted, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	percpu_set_online(true);
	for (;;) {
		cli();
		if (__atomic_load_n(&mb->posted, __ATOMIC_ACQUIRE) == mb->done) {
			safe_halt();
			continue;
		}
		sti();
		mb->fn(mb->arg);
		cli();
		__atomic_store_n(&mb->done, mb->done + 1, __ATOMIC_RELEASE);
	}
}

bool ap_task_start(struct ap_task *t, unsigned cpu, void (*fn)(void *), void *arg,
		   uint64_t timeout_us)
{
	uint64_t deadline = tsc_deadline_us(timeout_us);

	t->ready = t->go = 0;
	if (!on_cpu_async(cpu, fn, arg))
		return false;
	while (!t->ready && !tsc_passed(deadline))
		pause();
	return t->ready;
}

void ap_task_ready(struct ap_task *t)
{
	t->ready = 1;
}

bool ap_task_wait_go(struct ap_task *t, uint64_t timeout_us)
{
	uint64_t deadline = tsc_deadline_us(timeout_us);

	while (!t->go && !tsc_passed(deadline))
		pause();
	return t->go;
}

bool ap_task_finish(struct ap_task *t, unsigned cpu)
{
	t->go = 1;
	return on_cpu_wait(cpu);
}
