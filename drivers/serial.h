/* SPDX-License-Identifier: BSD-2-Clause */
/* 16550 UART, polled output only: the result channel of every run. */
#ifndef DRIVERS_SERIAL_H
#define DRIVERS_SERIAL_H

#include "drivers/base.h"

#define SERIAL_COM1 0x3f8u

/*
 * How the UART's eight registers are reached: I/O ports base + n (a PC's
 * COM ports), or memory at base + n (byte registers) or base + 4n (32-bit
 * registers, read and written whole, as Intel's PCH LPSS UARTs and most
 * 16550s outside the PC's I/O space have them).
 */
enum serial_space {
	SERIAL_SPACE_IO,
	SERIAL_SPACE_MMIO8,
	SERIAL_SPACE_MMIO32,
};

struct serial_uart {
	enum serial_space space;
	uint64_t base;                  /* I/O port or physical address; 0: no UART */
};

/* MMIO UARTs lie below the architectural MAXPHYADDR limit (52 bits). */
#define SERIAL_MMIO_LIMIT (1ull << 52)

#define SERIAL_UART_IO(port) ((struct serial_uart){ SERIAL_SPACE_IO, (port) })

/* The baud rates tickvisor sets: 115200 / divisor for divisors 1, 2, 3,
 * 6, 12 of the PC's 1.8432 MHz clock (serial= and the SPCR's rates). */
static inline bool serial_baud_valid(uint32_t baud)
{
	return baud == 115200 || baud == 57600 || baud == 38400 || baud == 19200 ||
	       baud == 9600;
}

/* Takes u for all output (NULL or base 0: no serial output at all),
 * 8N1, FIFOs on, no interrupts, at baud bits per second, or with the
 * divisor left as the firmware set it where baud is 0. */
void serial_init(const struct serial_uart *u, uint32_t baud);
/* Whether a 16550 answers at u (its scratch register keeps a value). */
bool serial_probe(const struct serial_uart *u);
/* The UART in use (base 0 for none). */
struct serial_uart serial_current(void);
/* Bytes of address space u's eight registers span. */
static inline uint64_t serial_span(const struct serial_uart *u)
{
	return u->space == SERIAL_SPACE_MMIO32 ? 32u : 8u;
}
bool serial_same(const struct serial_uart *a, const struct serial_uart *b);
/* "0x2f8", "MMIO 0xfe032000 (32-bit registers)": for log lines. */
void serial_describe(const struct serial_uart *u, char *buf, size_t n);
/* A ring for serial_queue(): lines sent later, before the next byte
 * written directly or at serial_flush(). */
void serial_set_buffer(void *buf, size_t size);
void serial_queue(const char *s, size_t n);
/* Direct output (queued lines go first); waits for the UART. */
void serial_putc(char c);
void serial_write(const char *s, size_t n);
/* Sends everything queued and waits (bounded) until the last byte has
 * left the transmitter. */
void serial_flush(void);

#endif
