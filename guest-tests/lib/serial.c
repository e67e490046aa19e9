// SPDX-License-Identifier: BSD-2-Clause
/*
 * COM1 console. Waits are bounded: a machine without a UART reads 0xff
 * from the ports, and a wedged UART must not hang a test forever, so
 * after the bound the byte is written anyway.
 */
#include "lib/serial.h"
#include "lib/io.h"

/* About 100 ms at 1 us per port read: far above one byte at 115200 baud. */
#define UART_POLL_LIMIT         100000u

void serial_init(void)
{
	outb(COM1_PORT + UART_IER, 0);
	outb(COM1_PORT + UART_LCR, UART_LCR_DLAB);
	outb(COM1_PORT + UART_DLL, UART_DIVISOR_115200);
	outb(COM1_PORT + UART_DLM, 0);
	outb(COM1_PORT + UART_LCR, UART_LCR_8N1);
	outb(COM1_PORT + UART_FCR, UART_FCR_ENABLE_CLEAR);
	outb(COM1_PORT + UART_MCR, UART_MCR_DTR_RTS);
}

uint8_t serial_lsr(void)
{
	return inb(COM1_PORT + UART_LSR);
}

static void serial_wait(uint8_t bits)
{
	for (unsigned i = 0; i < UART_POLL_LIMIT; i++)
		if ((serial_lsr() & bits) == bits)
			return;
}

void serial_putc(char c)
{
	serial_wait(UART_LSR_THRE);
	outb(COM1_PORT + UART_THR, (uint8_t)c);
}

void serial_flush(void)
{
	serial_wait(UART_LSR_THRE | UART_LSR_TEMT);
}
