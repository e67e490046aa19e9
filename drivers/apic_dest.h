/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fixed IPIs to several CPUs at once in x2APIC mode (SDM Vol. 3A,
 * "Logical Destination Mode in x2APIC Mode"): every CPU's logical x2APIC
 * ID (its LDR, read-only) is derived from its x2APIC ID, the cluster
 * ID[19:4] in bits 31:16 and one bit, 1 << ID[3:0], in 15:0; an IPI in
 * logical mode reaches every CPU of the cluster it names whose bit its
 * mask has, up to 16 by one ICR write. Pure, unit-tested on the host.
 */
#ifndef DRIVERS_APIC_DEST_H
#define DRIVERS_APIC_DEST_H

#include "drivers/base.h"

/* A CPU's logical x2APIC ID. Bochs (apic.cc) and KVM (lapic.c) derive it
 * the same way; Xen since 2023 too. */
static inline uint32_t apic_x2apic_ldr(uint32_t id)
{
	return ((id >> 4) << 16) | (1u << (id & 0xf));
}

/* Logical destinations reach x2APIC IDs below 2^20 only (the cluster
 * field of the LDR is 16 bits). */
#define APIC_X2APIC_LOGICAL_IDS BIT(20)

struct apic_dest {
	uint32_t dest;          /* logical: an LDR mask; else an x2APIC ID */
	bool logical;
};

/* The ICR destinations that reach each CPU of ids[0..n) once: one logical
 * destination per cluster among them, a physical one for an ID no
 * logical destination reaches; in the order of each one's first ID, a
 * repeated ID adds nothing. Writes at most n to out; returns how many. */
uint32_t apic_x2apic_dests(const uint32_t *ids, uint32_t n, struct apic_dest *out);

#endif
