// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer/entry_plan.h: the entry-time timer decision (DESIGN.md, "Data
 * flow of one guest timer tick", steps 3-4). Due means the guest TSC plus
 * the advance has reached the target, by signed difference across the
 * 2^64 wrap (Xen vpt.c compares the same way); a due expiry is dated now,
 * or at the target while inside the advance window, and the entry stub
 * waits until the target less the measured entry cost, never longer than
 * the advance and never below TSC 0. The backend's deadline is the target
 * in host TSC, advance early; the preemption-timer count derived from it
 * rounds up to whole ticks of 2^rate cycles and saturates at 32 bits (SDM
 * Vol. 3C, "VMX-Preemption Timer"; Bochs cpu/apic.cc
 * set_vmx_preemption_timer and KVM's nested emulation, checked in
 * test_preempt.c, agree on the tick model).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "timer/entry_plan.h"

/* Host TSC 1,000,000, guest TSC = host + 5,000, advance 300, entry 40. */
#define NOW     1000000ull
#define OFF     5000ull
#define ADV     300ull
#define ENTRY   40ull

static struct timer_plan_in in_at(uint64_t target_guest, enum timer_kind backend)
{
	return (struct timer_plan_in){
		.armed = true, .target = target_guest, .host_now = NOW, .tsc_offset = OFF,
		.advance_tsc = ADV, .entry_tsc = ENTRY, .backend = backend,
	};
}

/* Past, exactly now, inside the advance window, its edge, and beyond. */
static void test_due_window(void **state)
{
	struct timer_plan_in in;

	in = in_at(NOW + OFF - 1000, TIMER_PREEMPT);            /* long past */
	assert_true(timer_plan_due(&in));
	in = in_at(NOW + OFF, TIMER_PREEMPT);                   /* exactly now */
	assert_true(timer_plan_due(&in));
	in = in_at(NOW + OFF + ADV, TIMER_PREEMPT);             /* window's far edge */
	assert_true(timer_plan_due(&in));
	in = in_at(NOW + OFF + ADV + 1, TIMER_PREEMPT);         /* one beyond */
	assert_false(timer_plan_due(&in));
	in.advance_tsc = 0;                                     /* advance off */
	in.target = NOW + OFF + 1;
	assert_false(timer_plan_due(&in));
	in.target = NOW + OFF;
	assert_true(timer_plan_due(&in));
	in.armed = false;                                       /* never when unarmed */
	assert_false(timer_plan_due(&in));
}

/* The guest TSC wraps past 2^64 (a guest may write IA32_TSC near it): a
 * target just past the wrap is ahead, one just before it is behind. */
static void test_due_across_wrap(void **state)
{
	struct timer_plan_in in = in_at(0, TIMER_PREEMPT);

	in.tsc_offset = UINT64_MAX - NOW - 99;                  /* guest TSC = 2^64 - 100 */
	in.advance_tsc = 0;
	in.target = 50;                                         /* 150 ahead, past the wrap */
	assert_false(timer_plan_due(&in));
	in.advance_tsc = 149;
	assert_false(timer_plan_due(&in));
	in.advance_tsc = 150;
	assert_true(timer_plan_due(&in));
	in.advance_tsc = 0;
	in.target = UINT64_MAX - 200;                           /* 100 behind */
	assert_true(timer_plan_due(&in));
}

/* Late: dated now, no wait (a wait below 0 is none). */
static void test_expiry_late(void **state)
{
	struct timer_plan_in in = in_at(NOW + OFF - 1000, TIMER_PREEMPT);
	struct timer_entry_plan p;

	timer_plan_expiry(&in, &p);
	assert_int_equal(p.expire_at, NOW + OFF);
	/* target_host - entry: in the past, so the stub goes at once. */
	assert_int_equal(p.spin_until, NOW - 1000 - ENTRY);
	assert_true(p.spin_until < NOW);
}

/* Early, inside the window: dated at the target; the stub waits for the
 * target less the entry cost. */
static void test_expiry_early(void **state)
{
	struct timer_plan_in in = in_at(NOW + OFF + 200, TIMER_PREEMPT);
	struct timer_entry_plan p;

	assert_true(timer_plan_due(&in));
	timer_plan_expiry(&in, &p);
	assert_int_equal(p.expire_at, NOW + OFF + 200);
	assert_int_equal(p.spin_until, NOW + 200 - ENTRY);
}

/* The wait never exceeds the advance that brought us here early: a due
 * decision made on another advance (or a stale target) cannot hold the
 * CPU in root mode for longer. */
static void test_expiry_wait_capped(void **state)
{
	struct timer_plan_in in = in_at(NOW + OFF + ADV, TIMER_PREEMPT);
	struct timer_entry_plan p;

	in.entry_tsc = 0;
	timer_plan_expiry(&in, &p);
	assert_int_equal(p.spin_until, NOW + ADV);
	assert_int_equal(timer_plan_spin_until(NOW + 100000, ENTRY, NOW, ADV), NOW + ADV);
	assert_int_equal(timer_plan_spin_until(NOW + ADV + ENTRY, ENTRY, NOW, ADV), NOW + ADV);
	assert_int_equal(timer_plan_spin_until(NOW + ADV + ENTRY + 1, ENTRY, NOW, ADV), NOW + ADV);
	assert_int_equal(timer_plan_spin_until(NOW + 100, ENTRY, NOW, 0), NOW);
}

/* A TSC deadline of 1 with the host TSC near 0 (SDM "TSC-Deadline Mode":
 * fires at once): target_host - now is hugely negative; the wait must
 * not wrap below 0 into 2^64 cycles in root mode (issue 10.7). */
static void test_expiry_far_past_no_wrap(void **state)
{
	struct timer_plan_in in = in_at(1, TIMER_PREEMPT);
	struct timer_entry_plan p;

	in.host_now = 500;
	in.tsc_offset = 0;
	timer_plan_expiry(&in, &p);
	assert_int_equal(p.expire_at, 500);
	assert_int_equal(p.spin_until, 0);
	/* Just not below 0: a real (past) time. */
	in.host_now = 1 + ENTRY + 10;
	timer_plan_expiry(&in, &p);
	assert_int_equal(p.spin_until, 0);
	in.host_now = 5000;
	in.target = 4000;
	timer_plan_expiry(&in, &p);
	assert_int_equal(p.spin_until, 4000 - ENTRY);
}

/* Preemption-timer backend: the target in host TSC, advance early; off
 * when unarmed. */
static void test_arm_preempt(void **state)
{
	struct timer_plan_in in = in_at(NOW + OFF + 10000, TIMER_PREEMPT);
	struct timer_entry_plan p = timer_plan_arm(&in);

	assert_int_equal(p.hw, TIMER_PREEMPT);
	assert_int_equal(p.hw_at, NOW + 10000 - ADV);
	in.armed = false;
	p = timer_plan_arm(&in);
	assert_int_equal(p.hw, TIMER_PREEMPT);
	assert_int_equal(p.hw_at, TIMER_PLAN_NEVER);
}

/* Host LAPIC and HPET backends: the same deadline as a host deadline; 0
 * (disarm) when unarmed. */
static void test_arm_host_backends(void **state)
{
	static const enum timer_kind kinds[] = { TIMER_LAPIC, TIMER_HPET };

	for (unsigned i = 0; i < 2; i++) {
		struct timer_plan_in in = in_at(NOW + OFF + 10000, kinds[i]);
		struct timer_entry_plan p = timer_plan_arm(&in);

		assert_int_equal(p.hw, kinds[i]);
		assert_int_equal(p.hw_at, NOW + 10000 - ADV);
		in.armed = false;
		p = timer_plan_arm(&in);
		assert_int_equal(p.hw, kinds[i]);
		assert_int_equal(p.hw_at, 0);
	}
}

/* Posted (issue 13.2): the housekeeping CPU arms its own host timer for
 * the target; the vCPU's entry arms no guest-timer hardware at all,
 * armed or not (the preemption timer stays off unless vmm/ adds the time
 * limit or the stop poll). Before timer=posted the plan armed a host
 * deadline for any backend that was not the preemption timer. */
static void test_arm_posted(void **state)
{
	struct timer_plan_in in = in_at(NOW + OFF + 10000, TIMER_POSTED);
	struct timer_entry_plan p = timer_plan_arm(&in);

	assert_int_equal(p.hw, TIMER_PREEMPT);
	assert_int_equal(p.hw_at, TIMER_PLAN_NEVER);
	in.armed = false;
	p = timer_plan_arm(&in);
	assert_int_equal(p.hw, TIMER_PREEMPT);
	assert_int_equal(p.hw_at, TIMER_PLAN_NEVER);
}

/* A guest TSC offset that wraps (guest TSC set near 2^64, or below the
 * host's): the host deadline is computed modulo 2^64 and lands right. */
static void test_arm_offset_wrap(void **state)
{
	struct timer_plan_in in = in_at(0, TIMER_PREEMPT);
	struct timer_entry_plan p;

	in.tsc_offset = UINT64_MAX - NOW - 99;                  /* guest = 2^64 - 100 */
	in.target = 900;                                        /* 1000 ahead */
	p = timer_plan_arm(&in);
	assert_int_equal(p.hw_at, NOW + 1000 - ADV);
	in.tsc_offset = (uint64_t)-(int64_t)(NOW / 2);          /* guest TSC behind host */
	in.target = NOW / 2 + 1000;
	p = timer_plan_arm(&in);
	assert_int_equal(p.hw_at, NOW + 1000 - ADV);
}

/* The plan's preemption deadline becomes the VMCS count right before the
 * entry: rate shift and rounding up (never early), and 32-bit saturation
 * for a deadline far ahead (the timer then exits early and re-arms). */
static void test_arm_preempt_value(void **state)
{
	struct timer_plan_in in = in_at(NOW + OFF + 10000, TIMER_PREEMPT);
	struct timer_entry_plan p = timer_plan_arm(&in);
	uint64_t entry_now = NOW + 123;

	assert_int_equal(preempt_value(p.hw_at, entry_now, 0), 10000 - ADV - 123);
	/* rate 5: ceil(hw_at / 32) - floor(now / 32). */
	assert_int_equal(preempt_value(p.hw_at, entry_now, 5),
			 ((p.hw_at - 1) >> 5) + 1 - (entry_now >> 5));
	assert_true(((entry_now >> 5) + preempt_value(p.hw_at, entry_now, 5)) << 5 >= p.hw_at);
	/* Due by the entry: 0. */
	assert_int_equal(preempt_value(p.hw_at, p.hw_at, 5), 0);
	/* 2^40 cycles ahead at rate 0: saturated. */
	in.target = NOW + OFF + (1ull << 40);
	p = timer_plan_arm(&in);
	assert_int_equal(preempt_value(p.hw_at, NOW, 0), PREEMPT_VALUE_MAX);
	/* ... but not at rate 10 (2^30 ticks). */
	assert_int_equal(preempt_value(p.hw_at, NOW, 10),
			 ((p.hw_at - 1) >> 10) + 1 - (NOW >> 10));
	assert_true(preempt_value(p.hw_at, NOW, 10) < PREEMPT_VALUE_MAX);
}

/* A whole entry with advance: not due before the window; due inside it,
 * dated at the target; a periodic re-arm then plans the next target. */
static void test_sequence_periodic(void **state)
{
	struct timer_plan_in in = in_at(NOW + OFF + 1000, TIMER_LAPIC);
	struct timer_entry_plan p;

	assert_false(timer_plan_due(&in));
	p = timer_plan_arm(&in);
	assert_int_equal(p.hw_at, NOW + 1000 - ADV);
	/* The host timer fired at its deadline: the entry finds it due. */
	in.host_now = p.hw_at;
	assert_true(timer_plan_due(&in));
	timer_plan_expiry(&in, &p);
	assert_int_equal(p.expire_at, NOW + OFF + 1000);
	assert_int_equal(p.spin_until, NOW + 1000 - ENTRY);
	/* Re-armed one period (10,000) on. */
	in.target += 10000;
	p = timer_plan_arm(&in);
	assert_int_equal(p.hw, TIMER_LAPIC);
	assert_int_equal(p.hw_at, NOW + 11000 - ADV);
	assert_false(timer_plan_due(&in));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due_window),
		cmocka_unit_test(test_due_across_wrap),
		cmocka_unit_test(test_expiry_late),
		cmocka_unit_test(test_expiry_early),
		cmocka_unit_test(test_expiry_wait_capped),
		cmocka_unit_test(test_expiry_far_past_no_wrap),
		cmocka_unit_test(test_arm_preempt),
		cmocka_unit_test(test_arm_host_backends),
		cmocka_unit_test(test_arm_posted),
		cmocka_unit_test(test_arm_offset_wrap),
		cmocka_unit_test(test_arm_preempt_value),
		cmocka_unit_test(test_sequence_periodic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
