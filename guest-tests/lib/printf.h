/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Formatted output to the serial console. Conversions: %d %i %u %x %X %o
 * %p %s %c %%, with flags - 0 # (and + space), a width (or *), a
 * precision for strings and numbers, and the length modifiers hh h l ll
 * z t j. No floating point.
 *
 * Console output is serialized by a lock that the holding CPU may take
 * again (an exception handler printing while printf runs on the same CPU
 * must not deadlock); each printf() call comes out whole.
 */
#ifndef GUEST_PRINTF_H
#define GUEST_PRINTF_H

#include "lib/bits.h"

int printf(const char *fmt, ...) __printf(1, 2);
int vprintf(const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);
/* Returns the length the whole output would have; writes at most size
 * bytes including the NUL. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
/* Writes s and a newline, like the C library's. */
int puts(const char *s);
int putchar(int c);

/* Hold these around several printf() calls that must stay together. */
void console_lock(void);
void console_unlock(void);

#endif
