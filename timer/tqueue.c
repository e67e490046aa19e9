// SPDX-License-Identifier: BSD-2-Clause
/*
 * A sorted array rather than a heap: it holds at most one node per vCPU
 * (16), where an insertion's shift costs less than a heap's bookkeeping
 * and the first node is always order[0].
 */
#include "timer/tqueue.h"
#include "timer/timebase.h"

void tqueue_init(struct tqueue *q)
{
	q->n = 0;
}

static uint32_t index_of(const struct tqueue *q, const struct tqueue_node *n)
{
	uint32_t i = 0;

	while (i < q->n && q->order[i] != n)
		i++;
	return i;
}

static void remove_at(struct tqueue *q, uint32_t i)
{
	for (q->n--; i < q->n; i++)
		q->order[i] = q->order[i + 1];
}

void tqueue_cancel(struct tqueue *q, struct tqueue_node *n)
{
	n->gen++;
	if (!n->queued)
		return;
	remove_at(q, index_of(q, n));
	n->queued = false;
}

bool tqueue_set(struct tqueue *q, struct tqueue_node *n, uint64_t key)
{
	uint32_t i;

	if (n->queued) {
		tqueue_cancel(q, n);
	} else if (q->n == TQUEUE_MAX) {
		return false;
	} else {
		n->gen++;       /* what tqueue_cancel() does with a node not queued */
	}
	/* After every node whose key has been reached by ours: equal keys
	 * keep arrival order. */
	for (i = q->n; i > 0 && !timebase_reached(key, q->order[i - 1]->key); i--)
		q->order[i] = q->order[i - 1];
	q->order[i] = n;
	q->n++;
	n->key = key;
	n->queued = true;
	return true;
}

struct tqueue_ticket tqueue_peek(const struct tqueue *q)
{
	struct tqueue_node *n = q->n ? q->order[0] : NULL;

	return (struct tqueue_ticket){ .node = n, .key = n ? n->key : 0, .gen = n ? n->gen : 0 };
}

bool tqueue_claim(struct tqueue *q, struct tqueue_ticket t)
{
	if (!t.node || !t.node->queued || t.node->gen != t.gen)
		return false;
	tqueue_cancel(q, t.node);
	return true;
}
