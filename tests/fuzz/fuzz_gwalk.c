// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/emul/gwalk.c over a random guest: a header picks CR0.PG, CR4.PAE/PSE/
 * LA57, EFER.LMA/NXE, CR3, the PDPTE registers (or none: read at CR3),
 * a linear address and a read length; the rest of the input is guest RAM,
 * RAM_SIZE bytes in an exact-size heap buffer (ASan: no access past it).
 * Invariants:
 *  - a walk reads at most one entry per level of its mode, each 4 or 8
 *    bytes, aligned to its size, inside RAM or refused by read_phys;
 *  - a translation keeps the page offset and stays below 2^52; without
 *    paging it is the 32-bit linear address; outside IA-32e mode bits
 *    63:32 of the address change nothing; a non-canonical IA-32e address
 *    fails;
 *  - every address of one 4 KiB page translates alike (same frame, or the
 *    same reason to fail);
 *  - gwalk_read_linear() succeeds exactly when each byte translates into
 *    RAM, and returns those bytes.
 */
#include <stdlib.h>

#include "drivers/x86.h"
#include "tests/fuzz/fuzz.h"
#include "vmm/emul/gwalk.h"

#define RAM_SIZE        (8 * PAGE_SIZE)
#define READ_MAX        64u

struct ram {
	uint8_t *mem;
	bool walking;                   /* inside gwalk_translate: entry reads */
	unsigned entry_reads;
};

static bool ram_read(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	struct ram *r = ctx;

	if (r->walking) {
		r->entry_reads++;
		FUZZ_CHECK(len == 4 || len == 8);
		FUZZ_CHECK(gpa % len == 0);
	}
	if (gpa > RAM_SIZE || len > RAM_SIZE - gpa)
		return false;
	memcpy(buf, r->mem + gpa, len);
	return true;
}

static unsigned max_levels(const struct gwalk_env *env)
{
	if (!(env->cr0 & CR0_PG))
		return 0;
	if (!(env->cr4 & CR4_PAE))
		return 2;
	if (!(env->efer & EFER_LMA))
		return env->pdptes ? 2 : 3;
	return env->cr4 & CR4_LA57 ? 5 : 4;
}

static bool canonical(const struct gwalk_env *env, uint64_t gla)
{
	unsigned bits = env->cr4 & CR4_LA57 ? 57 : 48;

	return (uint64_t)((int64_t)(gla << (64 - bits)) >> (64 - bits)) == gla;
}

static int translate(const struct gwalk_env *env, uint64_t gla, uint64_t *gpa, const char **why)
{
	struct ram *r = env->ctx;
	int ret;

	r->walking = true;
	r->entry_reads = 0;
	*why = NULL;
	ret = gwalk_translate(env, gla, gpa, why);
	r->walking = false;
	FUZZ_CHECK(r->entry_reads <= max_levels(env));
	FUZZ_CHECK(ret == 0 || ret == -1);
	if (ret) {
		FUZZ_CHECK(*why && **why);
		return ret;
	}
	FUZZ_CHECK((*gpa & 0xfff) == (gla & 0xfff));
	FUZZ_CHECK(*gpa < BIT(52));
	if (!(env->cr0 & CR0_PG))
		FUZZ_CHECK(*gpa == (uint32_t)gla);
	return 0;
}

static void check_page(const struct gwalk_env *env, uint64_t gla, uint16_t other)
{
	uint64_t gpa = 0, gpa2 = 0, gla2 = (gla & ~0xfffull) | (other & 0xfff);
	const char *why, *why2;
	int r = translate(env, gla, &gpa, &why), r2 = translate(env, gla2, &gpa2, &why2);

	FUZZ_CHECK(r == r2);
	if (r)
		FUZZ_CHECK(!strcmp(why, why2));
	else
		FUZZ_CHECK(gpa2 - gpa == gla2 - gla);
	if (!(env->cr0 & CR0_PG) || !(env->cr4 & CR4_PAE) || !(env->efer & EFER_LMA)) {
		uint64_t gpa3 = 0;
		const char *why3;

		FUZZ_CHECK(translate(env, gla ^ ((uint64_t)other << 32), &gpa3, &why3) == r);
		FUZZ_CHECK(r || gpa3 == gpa);
	} else if (!canonical(env, gla)) {
		FUZZ_CHECK(r == -1 && !strcmp(why, "non-canonical address"));
	}
}

static void check_read(const struct gwalk_env *env, const struct ram *ram, uint64_t gla,
		       size_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	const char *why = NULL;
	int r = gwalk_read_linear(env, gla, buf, len, &why);
	bool all = true;

	for (size_t i = 0; i < len && all; i++) {
		uint64_t gpa;
		const char *w;

		if (translate(env, gla + i, &gpa, &w) || gpa >= RAM_SIZE)
			all = false;
		else if (!r)
			FUZZ_CHECK(buf[i] == ram->mem[gpa]);
	}
	FUZZ_CHECK((r == 0) == all);
	FUZZ_CHECK(r == 0 || (why && *why));
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint8_t f = fuzz_u8(&in);
	uint64_t pdpte[4];
	struct ram ram = { .mem = calloc(1, RAM_SIZE) };
	struct gwalk_env env = {
		.cr0 = CR0_PE | (f & 1 ? CR0_PG : 0),
		.cr4 = (f & 2 ? CR4_PAE : 0) | (f & 4 ? CR4_PSE : 0) | (f & 8 ? CR4_LA57 : 0),
		.efer = (f & 16 ? EFER_LMA : 0) | (f & 32 ? EFER_NXE : 0),
		.read_phys = ram_read, .ctx = &ram,
	};
	uint64_t gla;
	uint16_t other;
	size_t len;

	env.cr3 = fuzz_u64(&in);
	gla = fuzz_u64(&in);
	other = fuzz_u16(&in);
	len = fuzz_u8(&in) % (READ_MAX + 1);
	if (f & 64) {
		for (unsigned i = 0; i < 4; i++)
			pdpte[i] = fuzz_u64(&in);
		env.pdptes = pdpte;
	}
	memcpy(ram.mem, in.p, MIN(in.n, (size_t)RAM_SIZE));

	check_page(&env, gla, other);
	check_read(&env, &ram, gla, len);
	free(ram.mem);
	return 0;
}
