// SPDX-License-Identifier: BSD-2-Clause
/*
 * Freestanding string functions. GNU-EFI's libefi provides memset and
 * memcpy under other names only, and GCC may emit calls to these four
 * itself, so they are defined here for the hypervisor and the boot stub.
 */
#include "drivers/string.h"

/* Host unit tests link the C library's versions; only strlcpy (not in
 * glibc 2.36) is ours there too. */
#ifndef TV_HOST_TEST

void *memset(void *d, int c, size_t n)
{
	void *ret = d;

	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return ret;
}

void *memcpy(void *d, const void *s, size_t n)
{
	void *ret = d;

	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	return ret;
}

void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	if (dp <= sp || dp >= sp + n)
		return memcpy(d, s, n);
	while (n--)
		dp[n] = sp[n];
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] - y[i];
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i] != b[i])
			return (unsigned char)a[i] - (unsigned char)b[i];
		if (!a[i])
			return 0;
	}
	return 0;
}

int strcmp(const char *a, const char *b)
{
	return strncmp(a, b, SIZE_MAX);
}

char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

#endif /* !TV_HOST_TEST */

size_t strlcpy(char *d, const char *s, size_t size)
{
	size_t len = strlen(s);

	if (size) {
		size_t n = len < size - 1 ? len : size - 1;
		memcpy(d, s, n);
		d[n] = 0;
	}
	return len;
}
