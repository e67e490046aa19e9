// SPDX-License-Identifier: BSD-2-Clause
/*
 * COM1, a 16550 as far as a test image needs it: bytes written to THR go
 * to the host serial port (through the log, so lines of different CPUs do
 * not mix), the transmitter is always ready, LCR and the scratch register
 * keep what is written, no interrupts.
 */
#include "vmm/dev/dev_io.h"
#include "vmm/host/log.h"

#define COM1_BASE       0x3f8u
#define UART_LSR_IDLE   0x60u   /* THR empty, transmitter empty */
#define UART_IIR_NONE   0x01u
#define UART_MSR_READY  0xb0u   /* DCD, DSR, CTS */

int io_serial(struct vcpu *v, struct io_req *r)
{
	unsigned reg = r->port - COM1_BASE;
	char c;

	if (!r->in) {
		if (reg == 0 && !(v->guest->dev.uart_lcr & 0x80)) {  /* THR, DLAB clear */
			c = (char)r->val;
			log_raw(&c, 1);
		} else if (reg == 3) {
			v->guest->dev.uart_lcr = (uint8_t)r->val;
		} else if (reg == 7) {
			v->guest->dev.uart_scr = (uint8_t)r->val;
		}
		return 0;
	}
	switch (reg) {
	case 2: r->val = UART_IIR_NONE; break;
	case 3: r->val = v->guest->dev.uart_lcr; break;
	case 5: r->val = UART_LSR_IDLE; break;
	case 6: r->val = UART_MSR_READY; break;
	case 7: r->val = v->guest->dev.uart_scr; break;
	default: r->val = 0; break;
	}
	return 0;
}
