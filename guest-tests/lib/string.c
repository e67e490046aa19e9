// SPDX-License-Identifier: BSD-2-Clause
/*
 * String functions. The mem* ones use string instructions, so GCC's loop
 * pattern matching cannot turn their bodies back into calls to themselves.
 */
#include "lib/string.h"

void *memset(void *s, int c, size_t n)
{
	void *d = s;

	asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return s;
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	void *d = dst;

	asm volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
	return dst;
}

/* Overlap with dst above src: copy from the end, backwards (DF=1). */
void *memmove(void *dst, const void *src, size_t n)
{
	if ((uintptr_t)dst <= (uintptr_t)src || (uintptr_t)dst >= (uintptr_t)src + n)
		return memcpy(dst, src, n);
	if (n) {
		void *d = (char *)dst + n - 1;
		const void *s = (const char *)src + n - 1;

		asm volatile("std; rep movsb; cld"
			     : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	}
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			break;
	}
	return 0;
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 99;
}

/* Base 0 picks 16 for "0x", 8 for "0", else 10, as the C library does.
 * No overflow detection: command-line numbers are small. */
unsigned long strtoul(const char *s, char **end, int base)
{
	const char *s0 = s, *digits;
	unsigned long v = 0;
	bool neg = false;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if ((base == 0 || base == 16) && s[0] == '0' && (s[1] | 0x20) == 'x' &&
	    digit_value(s[2]) < 16) {
		s += 2;
		base = 16;
	} else if (base == 0) {
		base = *s == '0' ? 8 : 10;
	}
	for (digits = s; digit_value(*s) < base; s++)
		v = v * (unsigned long)base + (unsigned long)digit_value(*s);
	if (end)
		*end = (char *)(s == digits ? s0 : s);
	return neg ? -v : v;
}

long strtol(const char *s, char **end, int base)
{
	return (long)strtoul(s, end, base);
}

int atoi(const char *s)
{
	return (int)strtol(s, NULL, 10);
}
