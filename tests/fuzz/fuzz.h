/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared by the libFuzzer targets of tests/fuzz/: an invariant check that
 * stops the run at once (libFuzzer saves the input as a crash), and a
 * cursor that turns the fuzzer's bytes into the values a target needs,
 * reading zeros once the input runs out (so every input is valid).
 */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "drivers/base.h"

/* An invariant of the code under test: on violation, say which and trap
 * (not abort(): no handler may run past a broken invariant). */
#define FUZZ_CHECK(cond) do {                                                   \
	if (!(cond)) {                                                          \
		fprintf(stderr, "%s:%d: invariant violated: %s\n",               \
			__FILE__, __LINE__, #cond);                             \
		__builtin_trap();                                               \
	}                                                                       \
} while (0)

/* FUZZ_VERBOSE=1 in the environment: a target says what its code under
 * test answered (for looking at one input; never while fuzzing). */
#include <stdlib.h>
static inline bool fuzz_verbose(void)
{
	static int v = -1;

	if (v < 0)
		v = getenv("FUZZ_VERBOSE") != NULL;
	return v;
}

#define FUZZ_SAY(...) do { if (fuzz_verbose()) fprintf(stderr, __VA_ARGS__); } while (0)

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static inline uint64_t fuzz_uint(struct fuzz_in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)fuzz_u8(in) << (8 * i);
	return v;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in) { return (uint16_t)fuzz_uint(in, 2); }
static inline uint32_t fuzz_u32(struct fuzz_in *in) { return (uint32_t)fuzz_uint(in, 4); }
static inline uint64_t fuzz_u64(struct fuzz_in *in) { return fuzz_uint(in, 8); }

/* A string's end: the first NUL in s[0..n), or n. */
static inline size_t fuzz_strnlen(const char *s, size_t n)
{
	const char *z = memchr(s, 0, n);

	return z ? (size_t)(z - s) : n;
}

#endif
