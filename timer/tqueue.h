/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The housekeeping CPU's timer queue (DESIGN.md, "Exitless timer"): one
 * node per vCPU whose APIC timer it serves, ordered by the host TSC of
 * that timer's next expiry, the earliest first. Pure logic, host-tested;
 * the caller (vmm/apic/housekeeper.c) holds one lock around every call.
 *
 * Firing takes two steps under that lock with a wait between them: the
 * housekeeper peeks at the first node (a ticket: node, key, generation),
 * drops the lock to spin to the exact key, then claims the ticket. Every
 * change of a node - set to a new key, cancelled - bumps its generation,
 * so a claim succeeds only if nothing touched the node since the peek: a
 * vCPU that re-armed, stopped or reset its timer in between, or a guest
 * that ended, is never posted the stale expiry.
 */
#ifndef TIMER_TQUEUE_H
#define TIMER_TQUEUE_H

#include "drivers/base.h"

#define TQUEUE_MAX      TV_MAX_CPUS     /* one node per vCPU */

struct tqueue_node {
	uint64_t key;           /* host TSC of the expiry, while queued */
	uint32_t gen;           /* bumped by every set and cancel */
	bool queued;
};

struct tqueue {
	uint32_t n;
	struct tqueue_node *order[TQUEUE_MAX];  /* by key, earliest first */
};

/* The first node as the housekeeper saw it; node NULL: the queue was empty. */
struct tqueue_ticket {
	struct tqueue_node *node;
	uint64_t key;
	uint32_t gen;
};

void tqueue_init(struct tqueue *q);
/* Queues n (again) for `key`, taking it out of its old place first.
 * Keys are host TSC values near each other: ordered by signed difference,
 * so the order holds across a wrap of the counter. Ties keep arrival
 * order. False (and n untouched) only if the queue is full of others. */
bool tqueue_set(struct tqueue *q, struct tqueue_node *n, uint64_t key);
/* Takes n out of the queue, if it is in it; its tickets become stale. */
void tqueue_cancel(struct tqueue *q, struct tqueue_node *n);
/* The earliest node. */
struct tqueue_ticket tqueue_peek(const struct tqueue *q);
/* If the ticket's node is still queued unchanged since the peek, takes it
 * out and returns true: the caller then owns that expiry. */
bool tqueue_claim(struct tqueue *q, struct tqueue_ticket t);
/* Is n the earliest node? */
static inline bool tqueue_is_first(const struct tqueue *q, const struct tqueue_node *n)
{
	return q->n && q->order[0] == n;
}

#endif
