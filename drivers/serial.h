/* SPDX-License-Identifier: BSD-2-Clause */
/* 16550 UART, polled output only: the result channel of every run. */
#ifndef DRIVERS_SERIAL_H
#define DRIVERS_SERIAL_H

#include "drivers/base.h"

#define SERIAL_COM1 0x3f8u

/* Takes the 16550 at base for all output; 0: no serial output at all. */
void serial_init(uint16_t base);
/* The same at baud bits per second (0: 115200). */
void serial_init_baud(uint16_t base, uint32_t baud);
/* Whether a 16550 answers at base (its scratch register keeps a value). */
bool serial_probe(uint16_t base);
/* The port in use, 0 for none. */
uint16_t serial_port(void);
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
