// SPDX-License-Identifier: BSD-2-Clause
/* 16550 UART: 115200 8N1, FIFOs on, no interrupts. */
#include "drivers/serial.h"
#include "drivers/io.h"

enum uart_reg {
	UART_THR = 0,   /* transmit holding (DLAB=0) */
	UART_DLL = 0,   /* divisor latch low (DLAB=1) */
	UART_IER = 1,
	UART_DLH = 1,
	UART_FCR = 2,
	UART_LCR = 3,
	UART_MCR = 4,
	UART_LSR = 5,
};
#define UART_LCR_8N1   0x03u
#define UART_LCR_DLAB  BIT(7)
#define UART_LSR_THRE  BIT(5)
#define UART_LSR_TEMT  BIT(6)
#define UART_FCR_ENABLE_CLEAR 0x07u
#define UART_MCR_DTR_RTS_OUT2 0x0bu

static uint16_t serial_base;

void serial_init(uint16_t base)
{
	serial_base = base;
	outb(base + UART_IER, 0);
	outb(base + UART_LCR, UART_LCR_DLAB);
	outb(base + UART_DLL, 1);            /* 115200 baud */
	outb(base + UART_DLH, 0);
	outb(base + UART_LCR, UART_LCR_8N1);
	outb(base + UART_FCR, UART_FCR_ENABLE_CLEAR);
	outb(base + UART_MCR, UART_MCR_DTR_RTS_OUT2);
}

void serial_putc(char c)
{
	unsigned spins = 0;

	if (!serial_base)
		return;
	/* Bounded wait: a missing UART reads 0xff (THRE set), a wedged one
	 * must not hang the hypervisor. */
	while (!(inb(serial_base + UART_LSR) & UART_LSR_THRE) && ++spins < 100000)
		;
	outb(serial_base + UART_THR, (uint8_t)c);
}

void serial_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			serial_putc('\r');
		serial_putc(s[i]);
	}
}

void serial_flush(void)
{
	unsigned spins = 0;

	if (!serial_base)
		return;
	while (!(inb(serial_base + UART_LSR) & UART_LSR_TEMT) && ++spins < 1000000)
		;
}
