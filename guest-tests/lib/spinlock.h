/* SPDX-License-Identifier: BSD-2-Clause */
/* Test-and-test-and-set spinlock: enough for a handful of vCPUs. */
#ifndef GUEST_SPINLOCK_H
#define GUEST_SPINLOCK_H

#include "lib/processor.h"

struct spinlock {
	uint32_t v;                     /* 0 free, 1 held */
};

static inline bool spin_trylock(struct spinlock *l)
{
	return !__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE);
}

static inline void spin_lock(struct spinlock *l)
{
	while (!spin_trylock(l))
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED))
			cpu_relax();
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

#endif
