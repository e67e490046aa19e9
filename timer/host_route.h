/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which I/O APIC input an HPET comparator interrupts through, when it
 * cannot send an MSI (FSB) message itself, and in which mode. Comparator
 * n serves CPU n, so every comparator needs an input of its own: an I/O
 * APIC redirection entry names one destination, and sharing one input
 * would deliver every comparator's interrupt to whichever CPU wrote the
 * entry last. Pure, host-tested; every CPU computes the same answer from
 * the same read-only capability registers and ACPI tables, so the CPUs
 * need not agree at run time.
 */
#ifndef TIMER_HOST_ROUTE_H
#define TIMER_HOST_ROUTE_H

#include "drivers/acpi.h"
#include "drivers/base.h"

/*
 * The input for comparator n, or -1 if none is left. caps[i] is
 * comparator i's configuration and capability register (IA-PC HPET
 * specification 1.0a, "Timer N Configuration and Capability Register":
 * Tn_INT_ROUTE_CAP in bits 63:32, Tn_FSB_INT_DEL_CAP bit 15) for i <= n;
 * `usable` has a bit for each I/O APIC input that exists and whose mode
 * a comparator can drive (host_route_mode). Comparators are served in
 * order, each taking the highest usable input its routing capability
 * allows that no lower-numbered one took; comparators with FSB delivery
 * take none.
 */
int host_route_pin(const uint64_t *caps, unsigned n, uint32_t usable);

/* How an input is driven: its redirection entry's trigger mode and
 * polarity, and (level) the comparator's Tn_INT_TYPE_CNF. */
struct host_route_mode {
	bool level;
	bool active_low;
};

/*
 * The mode of global system interrupt gsi, as the platform wires it: the
 * Interrupt Source Override naming it decides; without one, and for a
 * field of it that "conforms to the bus" (ACPI 6.4, "Interrupt Source
 * Override Structure", MPS INTI flags), the bus's rule: ISA inputs
 * (GSIs 0-15, and every override's source) are edge-triggered, active
 * high; the inputs above are PCI interrupt lines, level-triggered,
 * active low, shared with PCI devices (which is why Intel's PCH
 * datasheets forbid edge-triggered HPET timers on IRQ 20-23 and FreeBSD's
 * acpi_hpet sets Tn_INT_TYPE_CNF on them). false for a mode a comparator
 * cannot drive: a reserved encoding, or edge-triggered active low.
 */
bool host_route_mode(uint32_t gsi, const struct acpi_iso *isos, unsigned nisos,
		     struct host_route_mode *m);

/* The inputs 0..pins-1 of an I/O APIC whose first input is gsi_base that
 * host_route_mode accepts: host_route_pin's `usable`. */
uint32_t host_route_usable(unsigned pins, uint32_t gsi_base, const struct acpi_iso *isos,
			   unsigned nisos);

#endif
