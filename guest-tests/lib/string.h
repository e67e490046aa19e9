/* SPDX-License-Identifier: BSD-2-Clause */
/* The C library string functions tests need. GCC also emits calls to the
 * mem* ones for struct copies and zeroing, so they must exist. */
#ifndef GUEST_STRING_H
#define GUEST_STRING_H

#include "lib/bits.h"

void *memset(void *s, int c, size_t n);
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
unsigned long strtoul(const char *s, char **end, int base);
long strtol(const char *s, char **end, int base);
int atoi(const char *s);

#endif
