/* SPDX-License-Identifier: BSD-2-Clause */
/* GDT, TSS and IDT layouts (SDM Vol. 3A, "Protected-Mode Memory Management"
 * and "Interrupt and Exception Handling"): ours replace the firmware's. */
#ifndef VMM_HOST_DESC_H
#define VMM_HOST_DESC_H

#include "drivers/base.h"

enum gdt_sel {
	SEL_NULL  = 0x00,
	SEL_CODE  = 0x08,       /* 64-bit ring 0 code */
	SEL_DATA  = 0x10,
	SEL_TSS   = 0x18,       /* 16-byte system descriptor */
};

struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __packed;
_Static_assert(sizeof(struct tss) == 104, "64-bit TSS is 104 bytes");

struct gdt {
	uint64_t entry[5];      /* null, code, data, TSS low, TSS high */
} __aligned(16);

struct idt_entry {
	uint16_t off_lo;
	uint16_t sel;
	uint8_t ist;
	uint8_t type;           /* P, DPL, gate type */
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t reserved;
} __packed;

struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __packed;

#define IDT_VECTORS      256u
#define IDT_IST_CRITICAL 1u     /* #DF, NMI, #MC run on their own stack */

#endif
