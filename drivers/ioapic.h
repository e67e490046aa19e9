/* SPDX-License-Identifier: BSD-2-Clause */
/* I/O APIC (82093AA datasheet): redirection entries for host interrupts. */
#ifndef DRIVERS_IOAPIC_H
#define DRIVERS_IOAPIC_H

#include "drivers/base.h"

#define IOAPIC_REDIR_MASKED   BIT(16)
#define IOAPIC_REDIR_LEVEL    BIT(15)

/* Number of redirection entries, or 0 if nothing answers at base. */
unsigned ioapic_entries(uint64_t base);
/* Routes input `pin` as a fixed, edge-triggered interrupt with `vector`
 * to the physical APIC ID `dest`. */
void ioapic_route(uint64_t base, unsigned pin, uint8_t vector, uint32_t dest);

#endif
