/* SPDX-License-Identifier: BSD-2-Clause */
/* The few C library string functions a freestanding hypervisor needs. */
#ifndef DRIVERS_STRING_H
#define DRIVERS_STRING_H

#include "drivers/base.h"

void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
/* Copies at most size-1 bytes and always terminates (when size > 0);
 * returns strlen(src) so truncation can be detected. */
size_t strlcpy(char *d, const char *s, size_t size);

#endif
