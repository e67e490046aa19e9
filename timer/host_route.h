/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which I/O APIC input an HPET comparator interrupts through, when it
 * cannot send an MSI (FSB) message itself. Comparator n serves CPU n, so
 * every comparator needs an input of its own: an I/O APIC redirection
 * entry names one destination, and sharing one input would deliver every
 * comparator's interrupt to whichever CPU wrote the entry last. Pure,
 * host-tested; every CPU computes the same answer from the same
 * read-only capability registers, so the CPUs need not agree at run time.
 */
#ifndef TIMER_HOST_ROUTE_H
#define TIMER_HOST_ROUTE_H

#include "drivers/base.h"

/*
 * The input for comparator n, or -1 if none is left. caps[i] is
 * comparator i's configuration and capability register (IA-PC HPET
 * specification 1.0a, "Timer N Configuration and Capability Register":
 * Tn_INT_ROUTE_CAP in bits 63:32, Tn_FSB_INT_DEL_CAP bit 15) for i <= n;
 * ioapic_pins is the I/O APIC's number of redirection entries. Comparators
 * are served in order, each taking the highest input its routing
 * capability allows that no lower-numbered one took (above the legacy ISA
 * inputs where it can); comparators with FSB delivery take none.
 */
int host_route_pin(const uint64_t *caps, unsigned n, unsigned ioapic_pins);

#endif
