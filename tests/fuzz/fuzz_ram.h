/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fake guest RAM for the loader targets (fuzz_multiboot.c, fuzz_linux.c):
 * an mmap()ed region between two inaccessible guard pages, read-only
 * while a loader runs. Its first write to each page faults; the handler
 * records the page as written and makes it writable. So a target knows,
 * at no cost per byte, which pages a load wrote: none when it failed
 * ("guest RAM left untouched"), and only those of the ranges it reports
 * when it succeeded. A fault outside the RAM (the guard pages, anything
 * else) goes to the handler that was there before (ASan's report).
 * Written pages are dropped afterwards (MADV_DONTNEED), so RAM is zero
 * again for the next input, as the loaders expect.
 */
#ifndef TESTS_FUZZ_FUZZ_RAM_H
#define TESTS_FUZZ_FUZZ_RAM_H

#include <signal.h>
#include <sys/mman.h>

#include "tests/fuzz/fuzz.h"

#define FUZZ_RAM_MAX    (256 * MiB)     /* a LE16 page count's reach */
#define FUZZ_RAM_DIRTY  (FUZZ_RAM_MAX / PAGE_SIZE)

static uint8_t *fuzz_ram;               /* guest-physical 0 */
static uint64_t fuzz_ram_size;          /* this input's RAM, a page multiple */
static uint64_t fuzz_ram_dirty[FUZZ_RAM_DIRTY];  /* page numbers written */
static unsigned fuzz_ram_ndirty;
static struct sigaction fuzz_ram_old;

static void fuzz_ram_fault(int sig, siginfo_t *si, void *uc)
{
	uint8_t *a = si->si_addr;

	if (a >= fuzz_ram && a < fuzz_ram + fuzz_ram_size && fuzz_ram_ndirty < FUZZ_RAM_DIRTY) {
		uint64_t page = (uint64_t)(a - fuzz_ram) / PAGE_SIZE;

		if (!mprotect(fuzz_ram + page * PAGE_SIZE, PAGE_SIZE, PROT_READ | PROT_WRITE)) {
			fuzz_ram_dirty[fuzz_ram_ndirty++] = page;
			return;
		}
	}
	/* Not ours: the previous handler sees the fault when it repeats. */
	sigaction(SIGSEGV, &fuzz_ram_old, NULL);
}

static void fuzz_ram_init(void)
{
	struct sigaction sa = { .sa_sigaction = fuzz_ram_fault, .sa_flags = SA_SIGINFO };
	uint8_t *base = mmap(NULL, FUZZ_RAM_MAX + 2 * PAGE_SIZE, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	FUZZ_CHECK(base != MAP_FAILED);
	fuzz_ram = base + PAGE_SIZE;
	sigemptyset(&sa.sa_mask);
	FUZZ_CHECK(sigaction(SIGSEGV, &sa, &fuzz_ram_old) == 0);
}

/* RAM of `size` bytes (rounded up to pages, at most FUZZ_RAM_MAX), all
 * zero, read-only until written; the rest inaccessible. */
static void fuzz_ram_begin(uint64_t size)
{
	size = MIN(ALIGN_UP(size, PAGE_SIZE), (uint64_t)FUZZ_RAM_MAX);
	if (fuzz_ram_size)
		FUZZ_CHECK(mprotect(fuzz_ram, fuzz_ram_size, PROT_NONE) == 0);
	if (size)
		FUZZ_CHECK(mprotect(fuzz_ram, size, PROT_READ) == 0);
	fuzz_ram_size = size;
	fuzz_ram_ndirty = 0;
}

/* Was any page outside [start, end) written? */
static __unused bool fuzz_ram_wrote_outside(uint64_t start, uint64_t end)
{
	for (unsigned i = 0; i < fuzz_ram_ndirty; i++) {
		uint64_t p = fuzz_ram_dirty[i] * PAGE_SIZE;

		if (p + PAGE_SIZE <= start || p >= end)
			return true;
	}
	return false;
}

/* Zero again what was written: one madvise() from the lowest page
 * written to the highest (those between are zero already). */
static void fuzz_ram_end(void)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (unsigned i = 0; i < fuzz_ram_ndirty; i++) {
		lo = MIN(lo, fuzz_ram_dirty[i]);
		hi = MAX(hi, fuzz_ram_dirty[i]);
	}
	if (fuzz_ram_ndirty)
		FUZZ_CHECK(madvise(fuzz_ram + lo * PAGE_SIZE, (hi - lo + 1) * PAGE_SIZE,
				   MADV_DONTNEED) == 0);
	fuzz_ram_ndirty = 0;
}

#endif
