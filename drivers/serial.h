/* SPDX-License-Identifier: BSD-2-Clause */
/* 16550 UART, polled output only: the result channel of every run. */
#ifndef DRIVERS_SERIAL_H
#define DRIVERS_SERIAL_H

#include "drivers/base.h"

#define SERIAL_COM1 0x3f8u

void serial_init(uint16_t base);
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
