/* SPDX-License-Identifier: BSD-2-Clause */
/* 16550 UART, polled output only: the result channel of every run. */
#ifndef DRIVERS_SERIAL_H
#define DRIVERS_SERIAL_H

#include "drivers/base.h"

#define SERIAL_COM1 0x3f8u

void serial_init(uint16_t base);
/* From now on output is queued in buf and sent as the UART has room. */
void serial_set_buffer(void *buf, size_t size);
void serial_putc(char c);
/* Sends what fits without waiting; cheap when nothing is queued. */
void serial_poll(void);
bool serial_pending(void);
void serial_write(const char *s, size_t n);
/* Sends everything queued and waits (bounded) until the last byte has
 * left the transmitter. */
void serial_flush(void);

#endif
