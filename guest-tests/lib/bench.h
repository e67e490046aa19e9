/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Benchmark figures in the format tests/bench.py reads:
 *   BENCH name=N unit=U n=.. min=.. p50=.. p99=.. max=.. mean=..
 *   HIST name=N lo=.. width=.. counts=c0,c1,...   (last bucket: overflow)
 *   SERIES name=N every=K values=v0,v1,...
 * Samples are signed (a latency may be negative when the expected time
 * is only known within bounds).
 */
#ifndef GUEST_BENCH_H
#define GUEST_BENCH_H

#include "lib/bits.h"

#define BENCH_HIST_BUCKETS 32u

struct bench_stats {
	uint64_t n;
	int64_t min, p50, p99, max;
	int64_t mean;           /* rounded toward zero */
};

/* Sorts v[0..n) in place, ascending (cycle counts a test reports as
 * min/p50/max itself). */
void sort_u64(uint64_t *v, unsigned n);
/* Sorts samples in place and fills *st. */
void bench_stats(int64_t *samples, uint64_t n, struct bench_stats *st);
/* Prints the BENCH line, and the HIST line when hist is true. */
void bench_report(const char *name, const char *unit, int64_t *samples, uint64_t n, bool hist);
/* A BENCH line for one already-computed value (e.g. exits per operation). */
void bench_report_value(const char *name, const char *unit, uint64_t n, int64_t value);
void bench_series(const char *name, const int64_t *values, uint64_t n, uint64_t every);

#endif
