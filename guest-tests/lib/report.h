/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Test results, as kvm-unit-tests prints them (DESIGN.md, "Result
 * protocol"):
 *
 *	PASS: <prefixes><message>     FAIL: ...     SKIP: ...
 *	XFAIL: ... (expected failure) XPASS: ... (unexpected pass, a failure)
 *	INFO: ...                     (not a test)
 *	SUMMARY: N tests, M unexpected failures[, X expected failures][, K skipped]
 *
 * Prefixes pushed with report_prefix_push("a") and ("b") print as "a: b: ".
 * They are shared by all CPUs; counters are atomic, and each line comes
 * out whole under the console lock.
 */
#ifndef GUEST_REPORT_H
#define GUEST_REPORT_H

#include "lib/bits.h"

/* Exit statuses of a test image. */
#define EXIT_PASS               0
#define EXIT_FAIL               1
#define EXIT_SKIP               77      /* every test was skipped */

/* Counts a test; returns pass so callers can stop early. */
bool report(bool pass, const char *fmt, ...) __printf(2, 3);
void report_pass(const char *fmt, ...) __printf(1, 2);
void report_fail(const char *fmt, ...) __printf(1, 2);
void report_skip(const char *fmt, ...) __printf(1, 2);
/* xfail: a failure is known and expected here (XFAIL); a pass is then
 * news and counts as a failure (XPASS). Without xfail, like report(). */
bool report_xfail(bool xfail, bool pass, const char *fmt, ...) __printf(3, 4);
void report_info(const char *fmt, ...) __printf(1, 2);

void report_prefix_push(const char *prefix);
void report_prefix_pop(void);

/* Prints SUMMARY and returns EXIT_FAIL if anything failed, EXIT_SKIP if
 * every test was skipped (or none ran), EXIT_PASS otherwise. */
int report_summary(void);

/* For the runtime: a FAIL line without prefixes, e.g. an unexpected
 * exception, counted as a failed test. */
void report_fail_raw(const char *fmt, ...) __printf(1, 2);

#endif
