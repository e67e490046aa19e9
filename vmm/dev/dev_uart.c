// SPDX-License-Identifier: BSD-2-Clause
/*
 * COM1, a 16550 as far as a test image needs it: bytes written to THR go
 * to the host serial port (through the log, so lines of different CPUs do
 * not mix), the transmitter is always ready, LCR and the scratch register
 * keep what is written, no interrupts.
 */
#include "drivers/serial.h"
#include "drivers/uart.h"
#include "vmm/dev/dev_ports.h"
#include "vmm/host/log.h"

#define UART_LSR_IDLE   (UART_LSR_THRE | UART_LSR_TEMT)
#define UART_MSR_READY  (UART_MSR_DCD | UART_MSR_DSR | UART_MSR_CTS)

int io_serial(struct vcpu *v, struct io_req *r)
{
	unsigned reg = r->port - SERIAL_COM1;
	char c;

	if (!r->in) {
		if (reg == UART_THR && !(v->guest->dev.uart_lcr & UART_LCR_DLAB)) {
			c = (char)r->val;
			log_raw(&c, 1);
		} else if (reg == UART_LCR) {
			v->guest->dev.uart_lcr = (uint8_t)r->val;
		} else if (reg == UART_SCR) {
			v->guest->dev.uart_scr = (uint8_t)r->val;
		}
		return 0;
	}
	switch (reg) {
	case UART_IIR: r->val = UART_IIR_NO_INT; break;
	case UART_LCR: r->val = v->guest->dev.uart_lcr; break;
	case UART_LSR: r->val = UART_LSR_IDLE; break;
	case UART_MSR: r->val = UART_MSR_READY; break;
	case UART_SCR: r->val = v->guest->dev.uart_scr; break;
	default: r->val = 0; break;
	}
	return 0;
}
