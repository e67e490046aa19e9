/* SPDX-License-Identifier: BSD-2-Clause */
/* I/O APIC (82093AA datasheet): redirection entries for host interrupts. */
#ifndef DRIVERS_IOAPIC_H
#define DRIVERS_IOAPIC_H

#include "drivers/base.h"

#define IOAPIC_REDIR_MASKED   BIT(16)
#define IOAPIC_REDIR_LEVEL    BIT(15)
#define IOAPIC_REDIR_LOW      BIT(13)   /* input polarity: active low */

/* Number of redirection entries, or 0 if nothing answers at base. */
unsigned ioapic_entries(uint64_t base);
/* Routes input `pin` as a fixed interrupt with `vector` to the physical
 * APIC ID `dest`; `mode` is IOAPIC_REDIR_LEVEL and IOAPIC_REDIR_LOW as
 * the input is wired, 0 for edge-triggered, active high. */
void ioapic_route(uint64_t base, unsigned pin, uint8_t vector, uint32_t dest, uint32_t mode);
/* Masks input `pin` (an input that stays asserted). */
void ioapic_mask(uint64_t base, unsigned pin);
/* Masks every one of the n inputs (each entry otherwise kept): what the
 * firmware left routed must not interrupt tickvisor. Returns how many
 * were unmasked. */
unsigned ioapic_mask_all(uint64_t base, unsigned n);
/* Masks the unmasked inputs that deliver `vector`; returns how many. */
unsigned ioapic_mask_vector(uint64_t base, unsigned n, uint8_t vector);

#endif
