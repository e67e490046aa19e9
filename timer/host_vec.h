/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The host interrupt vectors of the host-timer backends: timer/host.c
 * programs them into the local APIC timer and the HPET routes. The host
 * kernel allocates every host vector (vmm/host/irq.h) and takes these two
 * from here, so timer/ needs nothing of vmm/.
 */
#ifndef TIMER_HOST_VEC_H
#define TIMER_HOST_VEC_H

enum timer_host_vector {
	VEC_HOST_TIMER   = 0xec,    /* host LAPIC timer (guest timer fallback) */
	VEC_HPET         = 0xed,    /* HPET comparator (guest timer fallback) */
};

#endif
