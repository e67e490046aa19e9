/* SPDX-License-Identifier: BSD-2-Clause */
/* 16550 UART on COM1, polled: the guest console. */
#ifndef GUEST_SERIAL_H
#define GUEST_SERIAL_H

#include "lib/bits.h"

#define COM1_PORT               0x3f8

enum uart_reg {                         /* offset from the base port */
	UART_THR = 0, UART_RBR = 0, UART_DLL = 0,       /* DLL/DLM: with LCR.DLAB */
	UART_IER = 1, UART_DLM = 1,
	UART_FCR = 2,
	UART_LCR = 3,
	UART_MCR = 4,
	UART_LSR = 5,
};
#define UART_LCR_8N1            0x03u
#define UART_LCR_DLAB           BIT(7)
#define UART_FCR_ENABLE_CLEAR   0x07u   /* FIFO on, both FIFOs cleared */
#define UART_MCR_DTR_RTS        0x03u   /* OUT2 off: no interrupts */
#define UART_LSR_THRE           BIT(5)  /* transmit holding register empty */
#define UART_LSR_TEMT           BIT(6)  /* ... and the shift register too */
#define UART_DIVISOR_115200     1u

void serial_init(void);
void serial_putc(char c);
/* Waits (bounded) until every byte has left the UART. */
void serial_flush(void);
uint8_t serial_lsr(void);

#endif
