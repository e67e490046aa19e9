/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The PC's two cascaded 8259A interrupt controllers and their edge/level
 * control registers (Intel 8259A data sheet; ELCR as in the PIIX/ICH
 * data sheets): port numbers only. The host keeps its 8259s masked
 * (vmm/host/platform.c); a guest sees masked stand-ins (vmm/dev/dev_pic.c).
 */
#ifndef DRIVERS_PIC_H
#define DRIVERS_PIC_H

enum pic_port {
	PIC1_CMD  = 0x20,
	PIC1_DATA = 0x21,       /* interrupt mask register (OCW1) */
	PIC2_CMD  = 0xa0,
	PIC2_DATA = 0xa1,
	PIC_ELCR1 = 0x4d0,      /* edge/level control, IRQ 0-7 */
	PIC_ELCR2 = 0x4d1,      /* IRQ 8-15 */
};
#define PIC_MASK_ALL    0xffu

#endif
