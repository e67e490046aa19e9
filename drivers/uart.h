/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * 16550 UART registers (National Semiconductor PC16550D data sheet,
 * "Register Descriptions"): offsets from the port base and their bits.
 * Shared by the host's serial driver (drivers/serial.c) and the guest's
 * emulated COM1 (vmm/dev/dev_uart.c). Plain C, no I/O.
 */
#ifndef DRIVERS_UART_H
#define DRIVERS_UART_H

#include "drivers/base.h"

enum uart_reg {
	UART_THR = 0,   /* transmit holding (write, DLAB=0) */
	UART_RBR = 0,   /* receive buffer (read, DLAB=0) */
	UART_DLL = 0,   /* divisor latch low (DLAB=1) */
	UART_IER = 1,
	UART_DLH = 1,   /* divisor latch high (DLAB=1) */
	UART_IIR = 2,   /* interrupt identification (read) */
	UART_FCR = 2,   /* FIFO control (write) */
	UART_LCR = 3,
	UART_MCR = 4,
	UART_LSR = 5,
	UART_MSR = 6,   /* modem status */
	UART_SCR = 7,   /* scratch */
};
#define UART_IIR_NO_INT        BIT(0)           /* no interrupt pending */
#define UART_FCR_ENABLE_CLEAR  0x07u            /* enable, clear RX and TX FIFOs */
#define UART_LCR_8N1           0x03u
#define UART_LCR_DLAB          BIT(7)
#define UART_MCR_DTR_RTS_OUT2  0x0bu
#define UART_LSR_THRE          BIT(5)           /* THR empty */
#define UART_LSR_TEMT          BIT(6)           /* transmitter empty */
#define UART_MSR_CTS           BIT(4)
#define UART_MSR_DSR           BIT(5)
#define UART_MSR_DCD           BIT(7)

#endif
