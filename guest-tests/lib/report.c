// SPDX-License-Identifier: BSD-2-Clause
/* Result lines and counters; see report.h. */
#include "lib/report.h"
#include "lib/printf.h"
#include "lib/string.h"

#define PREFIX_MAX_DEPTH        8u
#define PREFIX_BUF_LEN          160u

static uint32_t nr_tests, nr_failures, nr_xfailures, nr_skipped;

/* Protected by the console lock, which every user of them holds. */
static char prefix_buf[PREFIX_BUF_LEN];         /* "a: b: " */
static size_t prefix_end[PREFIX_MAX_DEPTH];     /* length before each push */
static unsigned prefix_depth;

static void count(uint32_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static void va_report(const char *kind, bool prefixed, const char *fmt, va_list ap)
{
	console_lock();
	printf("%s: %s", kind, prefixed ? prefix_buf : "");
	vprintf(fmt, ap);
	putchar('\n');
	console_unlock();
}

#define REPORT_VA(kind, prefixed, fmt)			\
	do {						\
		va_list ap;				\
							\
		va_start(ap, fmt);			\
		va_report(kind, prefixed, fmt, ap);	\
		va_end(ap);				\
	} while (0)

bool report(bool pass, const char *fmt, ...)
{
	count(&nr_tests);
	if (!pass)
		count(&nr_failures);
	REPORT_VA(pass ? "PASS" : "FAIL", true, fmt);
	return pass;
}

void report_pass(const char *fmt, ...)
{
	count(&nr_tests);
	REPORT_VA("PASS", true, fmt);
}

void report_fail(const char *fmt, ...)
{
	count(&nr_tests);
	count(&nr_failures);
	REPORT_VA("FAIL", true, fmt);
}

void report_fail_raw(const char *fmt, ...)
{
	count(&nr_tests);
	count(&nr_failures);
	REPORT_VA("FAIL", false, fmt);
}

void report_skip(const char *fmt, ...)
{
	count(&nr_tests);
	count(&nr_skipped);
	REPORT_VA("SKIP", true, fmt);
}

bool report_xfail(bool xfail, bool pass, const char *fmt, ...)
{
	const char *kind = pass ? (xfail ? "XPASS" : "PASS") : (xfail ? "XFAIL" : "FAIL");

	count(&nr_tests);
	if (xfail && !pass)
		count(&nr_xfailures);
	else if (xfail || !pass)
		count(&nr_failures);
	REPORT_VA(kind, true, fmt);
	return pass;
}

void report_info(const char *fmt, ...)
{
	REPORT_VA("INFO", true, fmt);
}

/* Pushes past PREFIX_MAX_DEPTH are counted but not shown, so that
 * pushes and pops still pair up. */
void report_prefix_push(const char *prefix)
{
	size_t len;

	console_lock();
	if (prefix_depth < PREFIX_MAX_DEPTH) {
		len = strlen(prefix_buf);
		prefix_end[prefix_depth] = len;
		snprintf(prefix_buf + len, sizeof(prefix_buf) - len, "%s: ", prefix);
	}
	prefix_depth++;
	console_unlock();
}

void report_prefix_pop(void)
{
	console_lock();
	if (prefix_depth && --prefix_depth < PREFIX_MAX_DEPTH)
		prefix_buf[prefix_end[prefix_depth]] = '\0';
	console_unlock();
}

int report_summary(void)
{
	uint32_t tests = __atomic_load_n(&nr_tests, __ATOMIC_RELAXED);
	uint32_t failures = __atomic_load_n(&nr_failures, __ATOMIC_RELAXED);
	uint32_t xfailures = __atomic_load_n(&nr_xfailures, __ATOMIC_RELAXED);
	uint32_t skipped = __atomic_load_n(&nr_skipped, __ATOMIC_RELAXED);

	console_lock();
	printf("SUMMARY: %u tests, %u unexpected failures", tests, failures);
	if (xfailures)
		printf(", %u expected failures", xfailures);
	if (skipped)
		printf(", %u skipped", skipped);
	putchar('\n');
	console_unlock();
	if (failures)
		return EXIT_FAIL;
	return tests == skipped ? EXIT_SKIP : EXIT_PASS;
}
