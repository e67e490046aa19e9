/* SPDX-License-Identifier: BSD-2-Clause */
/* printf-style formatting into a buffer (no floating point). */
#ifndef DRIVERS_FMT_H
#define DRIVERS_FMT_H

#include <stdarg.h>
#include "drivers/base.h"

/* C99 semantics: returns the length the full output would have had and
 * writes at most size-1 characters plus a terminator. Supports the flags
 * "-0#+ ", width and precision (also "*"), lengths hh h l ll z, and
 * conversions d i u x X o p s c %. */
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int fmt_snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);
/* A failure's message into buf (nothing when size is 0), and -1: what the
 * parsers and builders that report into a caller's buffer return. */
int fmt_err(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);

#endif
