// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer/tqueue.c: the housekeeping CPU's timer queue (issue 13.2). One
 * node per vCPU, earliest key first, keys compared by signed difference
 * (STYLE.md); a ticket peeked before the housekeeper's spin to the exact
 * target is claimable only if its node was not re-armed or cancelled in
 * between (issue 13.3: no late post into a reset or ended vCPU), checked
 * here against a model of the queue over random operation sequences.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "timer/tqueue.h"

static struct tqueue q;
static struct tqueue_node node[TQUEUE_MAX + 1];

static int setup(void **state)
{
	tqueue_init(&q);
	for (unsigned i = 0; i < ARRAY_SIZE(node); i++)
		node[i] = (struct tqueue_node){ 0 };
	return 0;
}

static void assert_order(const struct tqueue_node *const *want, unsigned n)
{
	assert_int_equal(q.n, n);
	for (unsigned i = 0; i < n; i++)
		assert_ptr_equal(q.order[i], want[i]);
}

static void test_empty(void **state)
{
	struct tqueue_ticket t = tqueue_peek(&q);

	assert_null(t.node);
	assert_false(tqueue_claim(&q, t));
	assert_false(tqueue_is_first(&q, &node[0]));
	tqueue_cancel(&q, &node[0]);            /* not queued: only stales tickets */
	assert_int_equal(q.n, 0);
	assert_int_equal(node[0].gen, 1);
}

static void test_ordered_by_key(void **state)
{
	const struct tqueue_node *want[] = { &node[2], &node[0], &node[3], &node[1] };

	assert_true(tqueue_set(&q, &node[0], 200));
	assert_true(tqueue_set(&q, &node[1], 400));
	assert_true(tqueue_set(&q, &node[2], 100));
	assert_true(tqueue_set(&q, &node[3], 300));
	assert_order(want, 4);
	assert_true(tqueue_is_first(&q, &node[2]));
	assert_int_equal(tqueue_peek(&q).key, 100);
}

/* Re-arming moves a node (it is never queued twice); equal keys keep
 * the order they were set in. */
static void test_rearm_moves_ties_fifo(void **state)
{
	const struct tqueue_node *moved[] = { &node[1], &node[0] };
	const struct tqueue_node *ties[] = { &node[1], &node[0], &node[2] };

	tqueue_set(&q, &node[0], 100);
	tqueue_set(&q, &node[1], 200);
	tqueue_set(&q, &node[0], 300);
	assert_order(moved, 2);
	tqueue_set(&q, &node[2], 300);
	assert_order(ties, 3);
	tqueue_set(&q, &node[1], 300);          /* a re-set is a new arrival */
	assert_ptr_equal(q.order[2], &node[1]);
}

/* Host TSC keys near 2^64: a key just past the wrap is later, not
 * earlier (an unsigned compare would fire it first). */
static void test_wrap(void **state)
{
	const struct tqueue_node *want[] = { &node[0], &node[1], &node[2] };

	tqueue_set(&q, &node[2], 50);                   /* after the wrap */
	tqueue_set(&q, &node[0], UINT64_MAX - 100);
	tqueue_set(&q, &node[1], UINT64_MAX);
	assert_order(want, 3);
}

static void test_claim(void **state)
{
	struct tqueue_ticket t;

	tqueue_set(&q, &node[0], 100);
	tqueue_set(&q, &node[1], 200);
	t = tqueue_peek(&q);
	assert_ptr_equal(t.node, &node[0]);
	assert_true(tqueue_claim(&q, t));
	assert_false(node[0].queued);
	assert_true(tqueue_is_first(&q, &node[1]));
	/* A ticket is good once. */
	assert_false(tqueue_claim(&q, t));
}

/* Between the peek and the claim the vCPU cancels (INIT, LVTT mode
 * change, TSC deadline 0, guest end) or re-arms, possibly at the very
 * same key: the claim fails, nothing is posted for the old arming. */
static void test_stale_tickets(void **state)
{
	struct tqueue_ticket t;

	tqueue_set(&q, &node[0], 100);
	t = tqueue_peek(&q);
	tqueue_cancel(&q, &node[0]);
	assert_false(tqueue_claim(&q, t));
	assert_int_equal(q.n, 0);

	tqueue_set(&q, &node[0], 100);
	t = tqueue_peek(&q);
	tqueue_set(&q, &node[0], 100);
	assert_false(tqueue_claim(&q, t));
	assert_true(node[0].queued);            /* the new arming stays */
	assert_true(tqueue_claim(&q, tqueue_peek(&q)));

	/* Cancelled and armed again in between: a new generation. */
	tqueue_set(&q, &node[0], 100);
	t = tqueue_peek(&q);
	tqueue_cancel(&q, &node[0]);
	tqueue_set(&q, &node[0], 100);
	assert_false(tqueue_claim(&q, t));

	/* Another node moved in front: the ticket's own node is unchanged
	 * and still due, so it may still be claimed. */
	setup(NULL);
	tqueue_set(&q, &node[0], 100);
	t = tqueue_peek(&q);
	tqueue_set(&q, &node[1], 50);
	assert_true(tqueue_claim(&q, t));
	assert_true(tqueue_is_first(&q, &node[1]));
}

static void test_full(void **state)
{
	for (unsigned i = 0; i < TQUEUE_MAX; i++)
		assert_true(tqueue_set(&q, &node[i], 1000 - i));
	assert_false(tqueue_set(&q, &node[TQUEUE_MAX], 1));
	assert_false(node[TQUEUE_MAX].queued);
	assert_int_equal(q.n, TQUEUE_MAX);
	assert_true(tqueue_set(&q, &node[0], 1));       /* a queued one may move */
	assert_true(tqueue_is_first(&q, &node[0]));
}

/* Random sets, cancels, peeks and claims against a model: every queued
 * node once, in key order, and a claim succeeds exactly when its node
 * was untouched since the peek. */
static uint64_t rng_state = 0x7471756575650001ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void check_invariants(const bool *queued, const uint64_t *key)
{
	unsigned count = 0;

	for (unsigned i = 0; i < TQUEUE_MAX; i++) {
		assert_int_equal(node[i].queued, queued[i]);
		count += queued[i];
		if (queued[i])
			assert_int_equal(node[i].key, key[i]);
	}
	assert_int_equal(q.n, count);
	for (unsigned i = 1; i < q.n; i++)
		assert_true((int64_t)(q.order[i]->key - q.order[i - 1]->key) >= 0);
}

static void test_random_against_model(void **state)
{
	bool queued[TQUEUE_MAX] = { false }, touched = false;
	uint64_t key[TQUEUE_MAX] = { 0 }, base = UINT64_MAX - 5000;  /* crosses the wrap */
	struct tqueue_ticket t = { 0 };

	for (unsigned step = 0; step < 200000; step++) {
		unsigned i = (unsigned)(rng() % TQUEUE_MAX);

		switch (rng() % 4) {
		case 0:
			key[i] = base + rng() % 10000;
			assert_true(tqueue_set(&q, &node[i], key[i]));
			queued[i] = true;
			touched |= t.node == &node[i];
			break;
		case 1:
			tqueue_cancel(&q, &node[i]);
			queued[i] = false;
			touched |= t.node == &node[i];
			break;
		case 2:
			t = tqueue_peek(&q);
			touched = false;
			break;
		default: {
			bool want = t.node && !touched && queued[t.node - node];

			assert_int_equal(tqueue_claim(&q, t), want);
			if (want)
				queued[t.node - node] = false;
			touched = true;         /* claimed or stale: never again */
		}
		}
		check_invariants(queued, key);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_empty, setup),
		cmocka_unit_test_setup(test_ordered_by_key, setup),
		cmocka_unit_test_setup(test_rearm_moves_ties_fifo, setup),
		cmocka_unit_test_setup(test_wrap, setup),
		cmocka_unit_test_setup(test_claim, setup),
		cmocka_unit_test_setup(test_stale_tickets, setup),
		cmocka_unit_test_setup(test_full, setup),
		cmocka_unit_test_setup(test_random_against_model, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
