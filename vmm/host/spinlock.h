/* SPDX-License-Identifier: BSD-2-Clause */
/* Ticket spinlock: fair between CPUs, so no CPU starves on the serial lock. */
#ifndef VMM_HOST_SPINLOCK_H
#define VMM_HOST_SPINLOCK_H

#include "drivers/base.h"

struct spinlock {
	uint32_t next;          /* ticket handed to the next arrival */
	uint32_t owner;         /* ticket now holding the lock */
};

static inline void spin_lock(struct spinlock *l)
{
	uint32_t me = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);

	while (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) != me)
		__builtin_ia32_pause();
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->owner, l->owner + 1, __ATOMIC_RELEASE);
}

#endif
