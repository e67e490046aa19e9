// SPDX-License-Identifier: BSD-2-Clause
#include "lib/bench.h"
#include "lib/printf.h"

/* Shell sort: no allocation, fine for thousands of samples. */
static void sort(int64_t *a, uint64_t n)
{
	static const uint64_t gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };

	for (unsigned g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++)
		for (uint64_t i = gaps[g]; i < n; i++) {
			int64_t t = a[i];
			uint64_t j = i;

			for (; j >= gaps[g] && a[j - gaps[g]] > t; j -= gaps[g])
				a[j] = a[j - gaps[g]];
			a[j] = t;
		}
}

/* Insertion sort: the few hundred unsigned values tests keep. */
void sort_u64(uint64_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j && v[j - 1] > v[j]; j--) {
			uint64_t t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

void bench_stats(int64_t *s, uint64_t n, struct bench_stats *st)
{
	int64_t sum = 0;

	*st = (struct bench_stats){ .n = n };
	if (!n)
		return;
	sort(s, n);
	for (uint64_t i = 0; i < n; i++)
		sum += s[i];
	st->min = s[0];
	st->max = s[n - 1];
	st->p50 = s[(n - 1) / 2];
	st->p99 = s[(n - 1) * 99 / 100];
	st->mean = sum / (int64_t)n;
}

static void hist(const char *name, const int64_t *s, uint64_t n, const struct bench_stats *st)
{
	uint64_t counts[BENCH_HIST_BUCKETS + 1] = { 0 };
	int64_t width = (st->p99 - st->min) / (int64_t)BENCH_HIST_BUCKETS + 1;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t b = (uint64_t)((s[i] - st->min) / width);

		counts[b < BENCH_HIST_BUCKETS ? b : BENCH_HIST_BUCKETS]++;
	}
	printf("HIST name=%s lo=%ld width=%ld counts=", name, st->min, width);
	for (unsigned b = 0; b <= BENCH_HIST_BUCKETS; b++)
		printf("%lu%s", counts[b], b < BENCH_HIST_BUCKETS ? "," : "\n");
}

void bench_report(const char *name, const char *unit, int64_t *s, uint64_t n, bool with_hist)
{
	struct bench_stats st;

	bench_stats(s, n, &st);
	printf("BENCH name=%s unit=%s n=%lu min=%ld p50=%ld p99=%ld max=%ld mean=%ld\n", name, unit,
	       st.n, st.min, st.p50, st.p99, st.max, st.mean);
	if (with_hist && n)
		hist(name, s, n, &st);
}

void bench_report_value(const char *name, const char *unit, uint64_t n, int64_t v)
{
	printf("BENCH name=%s unit=%s n=%lu min=%ld p50=%ld p99=%ld max=%ld mean=%ld\n", name, unit,
	       n, v, v, v, v, v);
}

void bench_series(const char *name, const int64_t *v, uint64_t n, uint64_t every)
{
	printf("SERIES name=%s every=%lu values=", name, every);
	for (uint64_t i = 0; i < n; i++)
		printf("%ld%s", v[i], i + 1 < n ? "," : "\n");
}
