// SPDX-License-Identifier: BSD-2-Clause
/* 16550 UART: 8N1, FIFOs on, no interrupts; I/O-port or MMIO registers. */
#include "drivers/fmt.h"
#include "drivers/serial.h"
#include "drivers/uart.h"

#ifndef TV_HOST_TEST
#include "drivers/io.h"
#define uart_inb            inb
#define uart_outb           outb
#define uart_mmio_read8     mmio_read8
#define uart_mmio_write8    mmio_write8
#define uart_mmio_read32    mmio_read32
#define uart_mmio_write32   mmio_write32
#else
/* The host unit test (tests/unit/test_serial.c) supplies the bus: a
 * fake register file behind these. */
uint8_t uart_inb(uint16_t port);
void uart_outb(uint16_t port, uint8_t v);
uint8_t uart_mmio_read8(uint64_t addr);
void uart_mmio_write8(uint64_t addr, uint8_t v);
uint32_t uart_mmio_read32(uint64_t addr);
void uart_mmio_write32(uint64_t addr, uint32_t v);
#endif

static struct serial_uart uart;         /* base 0: no serial output */

static inline uint8_t uart_read(const struct serial_uart *u, enum uart_reg r)
{
	switch (u->space) {
	case SERIAL_SPACE_MMIO8:
		return uart_mmio_read8(u->base + r);
	case SERIAL_SPACE_MMIO32:
		return (uint8_t)uart_mmio_read32(u->base + 4u * r);
	default:
		return uart_inb((uint16_t)(u->base + r));
	}
}

static inline void uart_write(const struct serial_uart *u, enum uart_reg r, uint8_t v)
{
	switch (u->space) {
	case SERIAL_SPACE_MMIO8:
		uart_mmio_write8(u->base + r, v);
		break;
	case SERIAL_SPACE_MMIO32:
		uart_mmio_write32(u->base + 4u * r, v);
		break;
	default:
		uart_outb((uint16_t)(u->base + r), v);
		break;
	}
}

bool serial_probe(const struct serial_uart *u)
{
	/* Nothing decodes the address: reads float to 0xff (or 0 on some
	 * MMIO buses). A 16550 keeps what is written to its scratch
	 * register; two patterns rule out a bus that echoes the last byte
	 * or holds a constant. */
	if (!u->base || uart_read(u, UART_LSR) == 0xff)
		return false;
	uart_write(u, UART_SCR, 0x5a);
	if (uart_read(u, UART_SCR) != 0x5a)
		return false;
	uart_write(u, UART_SCR, 0xa5);
	return uart_read(u, UART_SCR) == 0xa5;
}

struct serial_uart serial_current(void)
{
	return uart;
}

bool serial_same(const struct serial_uart *a, const struct serial_uart *b)
{
	return a->space == b->space && a->base == b->base;
}

void serial_describe(const struct serial_uart *u, char *buf, size_t n)
{
	if (u->space == SERIAL_SPACE_IO)
		fmt_snprintf(buf, n, "%#lx", (unsigned long)u->base);
	else
		fmt_snprintf(buf, n, "MMIO %#lx (%s registers)", (unsigned long)u->base,
			     u->space == SERIAL_SPACE_MMIO32 ? "32-bit" : "byte");
}

void serial_init(const struct serial_uart *u, uint32_t baud)
{
	/* The divisor latch divides 1.8432 MHz / 16 = 115200. */
	uint32_t div = baud ? 115200 / baud : 0;

	uart = u ? *u : (struct serial_uart){ 0 };
	if (!uart.base)
		return;
	uart_write(&uart, UART_IER, 0);
	if (div) {
		uart_write(&uart, UART_LCR, UART_LCR_DLAB);
		uart_write(&uart, UART_DLL, (uint8_t)div);
		uart_write(&uart, UART_DLH, (uint8_t)(div >> 8));
	}
	uart_write(&uart, UART_LCR, UART_LCR_8N1);
	uart_write(&uart, UART_FCR, UART_FCR_ENABLE_CLEAR);
	uart_write(&uart, UART_MCR, UART_MCR_DTR_RTS_OUT2);
}

#define UART_FIFO_SIZE 16u

/*
 * Output ring for deferred lines: while a guest runs, tickvisor's own log
 * lines are queued here instead of making the CPU wait out the line's
 * transmit time (87 us a byte at 115200 baud), time the guest would see
 * as lost. They go out, in order, before the guest's next serial byte or
 * when the guest ends. Guest bytes themselves are sent at once, waiting
 * for the UART as the guest would on bare metal. A full ring falls back
 * to waiting. Callers serialize (vmm/host/log.c holds a lock around every use).
 */
static char *ring;
static size_t ring_size, ring_head, ring_tail;     /* head: next in, tail: next out */

void serial_set_buffer(void *buf, size_t size)
{
	ring = buf;
	ring_size = size;
	ring_head = ring_tail = 0;
}

/* Blocking write of one byte (bounded: a missing UART reads 0xff, THRE
 * set; a wedged one must not hang the hypervisor). */
static void put_wait(char c)
{
	unsigned spins = 0;

	while (!(uart_read(&uart, UART_LSR) & UART_LSR_THRE) && ++spins < 100000)
		;
	uart_write(&uart, UART_THR, (uint8_t)c);
}

static void ring_drain(void)
{
	while (ring && ring_tail != ring_head) {
		put_wait(ring[ring_tail]);
		ring_tail = (ring_tail + 1) % ring_size;
	}
}

void serial_putc(char c)
{
	if (!uart.base)
		return;
	ring_drain();
	put_wait(c);
}

static void ring_put(char c)
{
	size_t next = (ring_head + 1) % ring_size;

	if (next == ring_tail) {                /* full: make room the slow way */
		put_wait(ring[ring_tail]);
		ring_tail = (ring_tail + 1) % ring_size;
	}
	ring[ring_head] = c;
	ring_head = next;
}

void serial_queue(const char *s, size_t n)
{
	if (!uart.base)
		return;
	if (!ring) {
		serial_write(s, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			ring_put('\r');
		ring_put(s[i]);
	}
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

	if (!uart.base)
		return;
	ring_drain();
	while (!(uart_read(&uart, UART_LSR) & UART_LSR_TEMT) && ++spins < 1000000)
		;
}
