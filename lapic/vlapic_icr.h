/* SPDX-License-Identifier: BSD-2-Clause */
/* Interprocessor interrupts: ICR decoding and destination matching. */
#ifndef LAPIC_VLAPIC_ICR_H
#define LAPIC_VLAPIC_ICR_H

#include "lapic/vlapic.h"

struct lapic_ipi {
	uint8_t vector;
	uint8_t dm;             /* LAPIC_DM_* */
	uint8_t shorthand;      /* LAPIC_SH_* */
	bool logical;
	bool level_assert;
	bool trigger_level;
	uint32_t dest;          /* 8-bit (xAPIC) or 32-bit (x2APIC) */
	bool x2apic;            /* decoded in x2APIC format */
};

/* Decodes the value written, once: no later re-read of ICR/ICR2. */
void vlapic_icr_decode(uint64_t icr, bool x2apic, struct lapic_ipi *ipi);
/* Does `target` match the IPI's destination (shorthand expanded)? */
bool vlapic_ipi_matches(const struct vlapic *src, const struct vlapic *target,
			const struct lapic_ipi *ipi);
/* Sends from src to every matching APIC of its group. */
void vlapic_send_ipi(struct vlapic *src, const struct lapic_ipi *ipi);

#endif
