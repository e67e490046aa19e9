// SPDX-License-Identifier: BSD-2-Clause
/* 16550 UART: 115200 8N1, FIFOs on, no interrupts. */
#include "drivers/serial.h"
#include "drivers/io.h"
#include "drivers/uart.h"

static uint16_t serial_base;

bool serial_probe(uint16_t base)
{
	/* Nothing decodes the port: reads float to 0xff. A 16550 keeps what
	 * is written to its scratch register; two patterns rule out a bus
	 * that echoes the last byte or holds a constant. */
	if (inb(base + UART_LSR) == 0xff)
		return false;
	outb(base + UART_SCR, 0x5a);
	if (inb(base + UART_SCR) != 0x5a)
		return false;
	outb(base + UART_SCR, 0xa5);
	return inb(base + UART_SCR) == 0xa5;
}

uint16_t serial_port(void)
{
	return serial_base;
}

void serial_init_baud(uint16_t base, uint32_t baud)
{
	/* The divisor latch divides 1.8432 MHz / 16 = 115200. */
	uint32_t div = baud && baud <= 115200 ? 115200 / baud : 1;

	serial_base = base;
	if (!base)
		return;
	outb(base + UART_IER, 0);
	outb(base + UART_LCR, UART_LCR_DLAB);
	outb(base + UART_DLL, (uint8_t)div);
	outb(base + UART_DLH, (uint8_t)(div >> 8));
	outb(base + UART_LCR, UART_LCR_8N1);
	outb(base + UART_FCR, UART_FCR_ENABLE_CLEAR);
	outb(base + UART_MCR, UART_MCR_DTR_RTS_OUT2);
}

void serial_init(uint16_t base)
{
	serial_init_baud(base, 115200);
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

	while (!(inb(serial_base + UART_LSR) & UART_LSR_THRE) && ++spins < 100000)
		;
	outb(serial_base + UART_THR, (uint8_t)c);
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
	if (!serial_base)
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
	if (!serial_base)
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

	if (!serial_base)
		return;
	ring_drain();
	while (!(inb(serial_base + UART_LSR) & UART_LSR_TEMT) && ++spins < 1000000)
		;
}
