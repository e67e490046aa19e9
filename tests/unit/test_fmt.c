// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/fmt.c against the host C library's snprintf: a table of fixed
 * cases, the truncation contract, and a seeded random-format comparison
 * over the subset fmt.h documents.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "drivers/fmt.h"

#define BUF_LEN 512

/* Formats the same arguments with both implementations and compares the
 * return value and the whole buffer (bytes past the output included). */
#define CHECK_HOST(fmt, ...) do {                                             \
		char a_[BUF_LEN], b_[BUF_LEN];                                \
		memset(a_, 0x5a, sizeof(a_));                                 \
		memset(b_, 0x5a, sizeof(b_));                                 \
		int na_ = fmt_snprintf(a_, sizeof(a_), fmt, __VA_ARGS__);     \
		int nb_ = snprintf(b_, sizeof(b_), fmt, __VA_ARGS__);         \
		if (na_ != nb_ || memcmp(a_, b_, sizeof(a_)))                 \
			fail_msg("format \"%s\": fmt \"%s\" (%d), host \"%s\" (%d)", \
				 fmt, a_, na_, b_, nb_);                      \
	} while (0)

/* For cases where C99 leaves the host free (or GCC would warn about a
 * flag that C99 says is ignored), the expected text is spelled out. */
#define CHECK_STR(want, fmt, ...) do {                                        \
		char a_[BUF_LEN];                                             \
		int na_ = fmt_snprintf(a_, sizeof(a_), fmt, __VA_ARGS__);     \
		assert_string_equal(a_, want);                                \
		assert_int_equal(na_, (int)strlen(want));                     \
	} while (0)

/* fmt_vsnprintf without the format attribute, for what GCC's format
 * checker rejects at compile time: a flag C99 ignores for a conversion,
 * or a null %s argument. */
static int fmt_nl(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

static void test_integers(void **state)
{
	static const int ints[] = { 0, 1, -1, 7, -42, 255, 4096, INT_MAX, INT_MIN };

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		int v = ints[i];

		CHECK_HOST("%d", v);
		CHECK_HOST("%i", v);
		CHECK_HOST("[%5d]", v);
		CHECK_HOST("[%-5d]", v);
		CHECK_HOST("[%05d]", v);
		CHECK_HOST("[%+d]", v);
		CHECK_HOST("[% d]", v);
		CHECK_HOST("[%+05d]", v);
		CHECK_HOST("[% 05d]", v);
		CHECK_HOST("[%-+8d]", v);
		CHECK_HOST("[%.3d]", v);
		CHECK_HOST("[%8.3d]", v);
		CHECK_HOST("[%-8.3d]", v);
		CHECK_HOST("[%.0d]", v);
		CHECK_HOST("[%+.0d]", v);
		CHECK_HOST("[%5.0d]", v);
		CHECK_HOST("[%u]", (unsigned)v);
		CHECK_HOST("[%x]", (unsigned)v);
		CHECK_HOST("[%X]", (unsigned)v);
		CHECK_HOST("[%o]", (unsigned)v);
		CHECK_HOST("[%#x]", (unsigned)v);
		CHECK_HOST("[%#X]", (unsigned)v);
		CHECK_HOST("[%#o]", (unsigned)v);
		CHECK_HOST("[%#10x]", (unsigned)v);
		CHECK_HOST("[%#-10x]", (unsigned)v);
		CHECK_HOST("[%#010x]", (unsigned)v);
		CHECK_HOST("[%#.5x]", (unsigned)v);
		CHECK_HOST("[%#.5o]", (unsigned)v);
		CHECK_HOST("[%#.0x]", (unsigned)v);
		CHECK_HOST("[%#.0o]", (unsigned)v);
		CHECK_HOST("[%.0u]", (unsigned)v);
		CHECK_HOST("[%-12u]", (unsigned)v);
		CHECK_HOST("[%012o]", (unsigned)v);
		CHECK_HOST("[%hd]", v);
		CHECK_HOST("[%hhd]", v);
		CHECK_HOST("[%hu]", v);
		CHECK_HOST("[%hhx]", v);
		CHECK_HOST("[%#hho]", v);
	}
}

static void test_lengths(void **state)
{
	static const long long lls[] = {
		0, 1, -1, 1234567890123ll, -987654321098ll, LLONG_MAX, LLONG_MIN,
	};

	for (size_t i = 0; i < sizeof(lls) / sizeof(lls[0]); i++) {
		long long v = lls[i];

		CHECK_HOST("[%lld]", v);
		CHECK_HOST("[%25lld]", v);
		CHECK_HOST("[%-25lld]", v);
		CHECK_HOST("[%+025lld]", v);
		CHECK_HOST("[%.22lli]", v);
		CHECK_HOST("[%ld]", (long)v);
		CHECK_HOST("[%lu]", (unsigned long)v);
		CHECK_HOST("[%llu]", (unsigned long long)v);
		CHECK_HOST("[%llx]", (unsigned long long)v);
		CHECK_HOST("[%#llX]", (unsigned long long)v);
		CHECK_HOST("[%#llo]", (unsigned long long)v);
		CHECK_HOST("[%#30llo]", (unsigned long long)v);
		CHECK_HOST("[%zu]", (size_t)v);
		CHECK_HOST("[%zx]", (size_t)v);
		CHECK_HOST("[%zd]", (ptrdiff_t)v);
	}
	CHECK_HOST("%lld", (long long)INT64_MIN);
	CHECK_HOST("%llx", (unsigned long long)UINT64_MAX);
	CHECK_HOST("%llo", (unsigned long long)UINT64_MAX);
	CHECK_HOST("%#llo", (unsigned long long)UINT64_MAX);
	CHECK_STR("-9223372036854775808", "%lld", (long long)INT64_MIN);
}

static void test_strings_chars(void **state)
{
	static const char *const strs[] = { "", "a", "hello", "hello, world" };

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		const char *s = strs[i];

		CHECK_HOST("[%s]", s);
		CHECK_HOST("[%8s]", s);
		CHECK_HOST("[%-8s]", s);
		CHECK_HOST("[%.3s]", s);
		CHECK_HOST("[%.0s]", s);
		CHECK_HOST("[%8.2s]", s);
		CHECK_HOST("[%-8.2s]", s);
		CHECK_HOST("[%*s]", 10, s);
		CHECK_HOST("[%*s]", -10, s);
		CHECK_HOST("[%.*s]", 2, s);
		CHECK_HOST("[%.*s]", -1, s);
		CHECK_HOST("[%*.*s]", -7, 3, s);
	}
	CHECK_HOST("[%c]", 'x');
	CHECK_HOST("[%5c]", 'x');
	CHECK_HOST("[%-5c]", 'x');
	CHECK_HOST("[%*c]", 3, 'y');
	CHECK_HOST("[%*c]", -3, 'y');
	CHECK_HOST("[%c%c%c]", 'a', 'b', 'c');
	CHECK_HOST("[%c]", 0);          /* a NUL in the middle of the output */
	CHECK_HOST("100%% %s", "done");
	CHECK_HOST("%%%d%%", 5);
	{
		char buf[32];

		assert_int_equal(fmt_nl(buf, sizeof(buf), "%s", NULL), 6);
		assert_string_equal(buf, "(null)");
		assert_int_equal(fmt_nl(buf, sizeof(buf), "[%-8s]", NULL), 10);
		assert_string_equal(buf, "[(null)  ]");
	}
}

static void test_star(void **state)
{
	CHECK_HOST("[%*d]", 6, 42);
	CHECK_HOST("[%*d]", -6, 42);
	CHECK_HOST("[%-*d]", 6, -42);
	CHECK_HOST("[%0*d]", 6, -42);
	CHECK_HOST("[%.*d]", 4, 42);
	CHECK_HOST("[%.*d]", -4, 42);
	CHECK_HOST("[%.*d]", 0, 0);
	CHECK_HOST("[%*.*d]", 8, 4, -42);
	CHECK_HOST("[%*.*x]", -8, 4, 0xabcu);
	CHECK_HOST("[%#*.*x]", 12, 6, 0xabcu);
	CHECK_HOST("[%0*lld]", 24, (long long)INT64_MIN);
}

static void test_pointer(void **state)
{
	void *p = (void *)(uintptr_t)0xffff800012345678ull;
	int local;

	CHECK_HOST("%p", p);
	CHECK_HOST("[%20p]", p);
	CHECK_HOST("[%-20p]", p);
	CHECK_HOST("%p", (void *)&local);
	CHECK_HOST("%p", (void *)(uintptr_t)1);
	/* glibc prints "(nil)"; C leaves %p implementation-defined. */
	CHECK_STR("0x0", "%p", NULL);
	CHECK_STR("[     0x0]", "[%8p]", NULL);
}

static void test_ignored_flags(void **state)
{
	static const struct { const char *fmt; unsigned v; const char *want; } cases[] = {
		{ "%+u", 5, "5" },          { "% u", 5, "5" },
		{ "%+x", 31, "1f" },        { "% X", 31, "1F" },
		{ "%+#x", 31, "0x1f" },     { "% #o", 8, "010" },
		{ "%#d", 12, "12" },        { "%-05d", 12, "12   " },
		{ "%+#.0x", 0, "" },        { "%#5.0o", 0, "    0" },
		{ "%08.3d", 5, "     005" }, { "%-#08x", 5, "0x5     " },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = fmt_nl(buf, sizeof(buf), cases[i].fmt, cases[i].v);

		if (strcmp(buf, cases[i].want) || n != (int)strlen(cases[i].want))
			fail_msg("format \"%s\": got \"%s\" (%d), want \"%s\"",
				 cases[i].fmt, buf, n, cases[i].want);
	}
}

static void test_truncation(void **state)
{
	char buf[16];
	int n;

	memset(buf, 'Z', sizeof(buf));
	n = fmt_snprintf(buf, 0, "hello %d", 12345);
	assert_int_equal(n, 11);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'Z');

	n = fmt_snprintf(NULL, 0, "%s-%08x", "abc", 0xbeefu);
	assert_int_equal(n, 12);

	memset(buf, 'Z', sizeof(buf));
	n = fmt_snprintf(buf, 1, "hello");
	assert_int_equal(n, 5);
	assert_int_equal(buf[0], 0);
	assert_int_equal(buf[1], 'Z');

	memset(buf, 'Z', sizeof(buf));
	n = fmt_snprintf(buf, 4, "%d", -123456);
	assert_int_equal(n, 7);
	assert_string_equal(buf, "-12");
	assert_int_equal(buf[4], 'Z');

	memset(buf, 'Z', sizeof(buf));
	n = fmt_snprintf(buf, 6, "%s", "hello");      /* fits exactly */
	assert_int_equal(n, 5);
	assert_string_equal(buf, "hello");
	assert_int_equal(buf[6], 'Z');

	/* every size from 0 up to past the end matches the host */
	for (size_t size = 0; size <= sizeof(buf); size++) {
		char a[sizeof(buf)], b[sizeof(buf)];

		memset(a, 'Z', sizeof(a));
		memset(b, 'Z', sizeof(b));
		assert_int_equal(fmt_snprintf(a, size, "[%-6s|%#x]", "ab", 0x1234u),
				 snprintf(b, size, "[%-6s|%#x]", "ab", 0x1234u));
		assert_memory_equal(a, b, sizeof(a));
	}
}

/* --- random formats over the documented subset ------------------------- */

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic and independent of the host libc */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static unsigned rnd(unsigned n)
{
	return (unsigned)(rng() % n);
}

enum arg_kind { ARG_INT, ARG_UINT, ARG_LONG, ARG_ULONG, ARG_LLONG, ARG_ULLONG,
		ARG_SIZE, ARG_SSIZE, ARG_STR, ARG_CHAR, ARG_PTR, ARG_NONE };

struct fuzz_arg {
	enum arg_kind kind;
	uint64_t v;
	const char *s;
};

/* Calls f (fmt or host) with nstar leading int arguments, then the value. */
#define FUZZ_CALL(f, buf, size, fmt, nstar, w, p, a, out) do {                 \
		switch ((a)->kind) {                                           \
		case ARG_INT:    FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (int)(a)->v, out); break; \
		case ARG_UINT:   FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (unsigned)(a)->v, out); break; \
		case ARG_LONG:   FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (long)(a)->v, out); break; \
		case ARG_ULONG:  FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (unsigned long)(a)->v, out); break; \
		case ARG_LLONG:  FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (long long)(a)->v, out); break; \
		case ARG_ULLONG: FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (unsigned long long)(a)->v, out); break; \
		case ARG_SIZE:   FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (size_t)(a)->v, out); break; \
		case ARG_SSIZE:  FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (ptrdiff_t)(a)->v, out); break; \
		case ARG_STR:    FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (a)->s, out); break; \
		case ARG_CHAR:   FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (int)(unsigned char)(a)->v, out); break; \
		case ARG_PTR:    FUZZ_STARS(f, buf, size, fmt, nstar, w, p, (void *)(uintptr_t)(a)->v, out); break; \
		case ARG_NONE:   FUZZ_STARS(f, buf, size, fmt, nstar, w, p, 0, out); break; \
		}                                                              \
	} while (0)

#define FUZZ_STARS(f, buf, size, fmt, nstar, w, p, val, out) do {              \
		if ((nstar) == 0)                                              \
			out = f(buf, size, fmt, val);                          \
		else if ((nstar) == 1)                                         \
			out = f(buf, size, fmt, w, val);                       \
		else                                                           \
			out = f(buf, size, fmt, w, p, val);                    \
	} while (0)

static const char *const fuzz_strs[] = {
	"", "x", "abc", "hello world", "0123456789abcdefghij", "%d not a format",
};

static void append(char *f, size_t *n, const char *s)
{
	while (*s)
		f[(*n)++] = *s++;
	f[*n] = 0;
}

static void append_num(char *f, size_t *n, unsigned v)
{
	char tmp[12];

	snprintf(tmp, sizeof(tmp), "%u", v);
	append(f, n, tmp);
}

static void append_literal(char *f, size_t *n)
{
	static const char lit[] = "abc XYZ-_:[]=%";

	for (unsigned i = rnd(4); i; i--) {
		char c = lit[rnd(sizeof(lit) - 1)];

		if (c == '%')
			append(f, n, "%%");
		else
			f[(*n)++] = c, f[*n] = 0;
	}
}

static uint64_t fuzz_value(void)
{
	static const uint64_t special[] = {
		0, 1, 7, 8, 9, 10, 15, 16, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000,
		0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
		INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX,
	};

	switch (rnd(4)) {
	case 0: return special[rnd(sizeof(special) / sizeof(special[0]))];
	case 1: return -(uint64_t)special[rnd(sizeof(special) / sizeof(special[0]))];
	case 2: return rng() >> rnd(64);
	default: return rng();
	}
}

/* Builds one conversion of the supported subset, avoiding what C99 leaves
 * undefined or implementation-defined (so the host is a valid oracle). */
static void fuzz_spec(char *f, size_t *n, struct fuzz_arg *a, int *nstar, int *w, int *p)
{
	static const char convs[] = "diuxXoscp%";
	static const char *const lens[] = { "", "hh", "h", "l", "ll", "z" };
	char conv = convs[rnd(sizeof(convs) - 1)];
	bool num = strchr("diuxXo", conv) != NULL;
	bool sgn = conv == 'd' || conv == 'i';
	unsigned len = num ? rnd(ARRAY_SIZE(lens)) : 0;

	*nstar = 0;
	append(f, n, "%");
	if (conv == '%') {
		append(f, n, "%");
		a->kind = ARG_NONE;
		return;
	}
	for (unsigned i = rnd(4); i; i--) {
		char fl = "-0#+ "[rnd(5)];

		if (fl == '-' || (num && fl == '0') || (sgn && (fl == '+' || fl == ' ')) ||
		    (fl == '#' && strchr("xXo", conv)))
			f[(*n)++] = fl, f[*n] = 0;
	}
	switch (rnd(3)) {
	case 0: break;
	case 1: append_num(f, n, 1 + rnd(40)); break;   /* "0" would be a flag */
	default:
		append(f, n, "*");
		*w = (int)rnd(81) - 40;
		(*nstar)++;
	}
	if (conv != 'c' && conv != 'p') {
		switch (rnd(4)) {
		case 0: break;
		case 1: append(f, n, "."); break;
		case 2: append(f, n, "."); append_num(f, n, rnd(30)); break;
		default:
			append(f, n, ".*");
			if (*nstar == 0)
				*w = (int)rnd(41) - 10;     /* only one star: it is w */
			else
				*p = (int)rnd(41) - 10;
			(*nstar)++;
		}
	}
	append(f, n, lens[len]);
	f[(*n)++] = conv;
	f[*n] = 0;

	a->v = fuzz_value();
	a->s = fuzz_strs[rnd(ARRAY_SIZE(fuzz_strs))];
	switch (conv) {
	case 's': a->kind = ARG_STR; break;
	case 'c': a->kind = ARG_CHAR; a->v = 1 + rnd(255); break;
	case 'p': a->kind = ARG_PTR; a->v |= 1; break;   /* glibc: NULL is "(nil)" */
	default:
		switch (len) {
		case 3: a->kind = sgn ? ARG_LONG : ARG_ULONG; break;
		case 4: a->kind = sgn ? ARG_LLONG : ARG_ULLONG; break;
		case 5: a->kind = sgn ? ARG_SSIZE : ARG_SIZE; break;
		default: a->kind = sgn ? ARG_INT : ARG_UINT; break;
		}
	}
}

static void test_fuzz_vs_host(void **state)
{
	rng_state = 0x7469636b76697372ull;      /* fixed seed: "tickvisr" */
	for (unsigned iter = 0; iter < 20000; iter++) {
		char f[128], a[160], b[160];
		size_t n = 0;
		struct fuzz_arg arg;
		int nstar, w = 0, p = 0, na, nb;
		size_t size = rnd(8) ? sizeof(a) : rnd(24);

		f[0] = 0;
		append_literal(f, &n);
		fuzz_spec(f, &n, &arg, &nstar, &w, &p);
		append_literal(f, &n);

		memset(a, 0x5a, sizeof(a));
		memset(b, 0x5a, sizeof(b));
		FUZZ_CALL(fmt_snprintf, a, size, f, nstar, w, p, &arg, na);
		FUZZ_CALL(snprintf, b, size, f, nstar, w, p, &arg, nb);
		if (na != nb || memcmp(a, b, sizeof(a)))
			fail_msg("iter %u: format \"%s\" w=%d p=%d v=%#llx size=%zu: "
				 "fmt \"%.*s\" (%d), host \"%.*s\" (%d)", iter, f, w, p,
				 (unsigned long long)arg.v, size,
				 (int)sizeof(a), a, na, (int)sizeof(b), b, nb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_strings_chars),
		cmocka_unit_test(test_star),
		cmocka_unit_test(test_pointer),
		cmocka_unit_test(test_ignored_flags),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_fuzz_vs_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
