/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Guest page-table walk: guest-linear to guest-physical, in software, for
 * fetching the instruction behind an EPT violation. Pure C: guest memory
 * is reached only through read_phys, so it also runs in host unit tests.
 */
#ifndef VMM_GWALK_H
#define VMM_GWALK_H

#include "drivers/base.h"

struct gwalk_env {
	uint64_t cr0, cr3, cr4, efer;   /* guest values */
	/*
	 * PAE paging only: the four PDPTE registers (under EPT, the VMCS
	 * guest PDPTE fields: the CPU walks these, not memory), or NULL to
	 * read them at CR3 as MOV to CR3 would.
	 */
	const uint64_t *pdptes;
	/* Reads len bytes of guest-physical memory; false if any is outside RAM. */
	bool (*read_phys)(void *ctx, uint64_t gpa, void *buf, size_t len);
	void *ctx;
};

/*
 * Translates gla as the guest's paging mode would. Returns 0 with *gpa,
 * or -1 with a static reason in *why ("not present at level 2",
 * "reserved bit set at level 1", "page table outside RAM", ...). Only
 * presence is checked, not access rights (the instruction fetched has
 * already run into an EPT violation), and no A/D bit is set.
 */
int gwalk_translate(const struct gwalk_env *env, uint64_t gla, uint64_t *gpa, const char **why);

/* Reads len bytes at gla, translating each page on its own (an
 * instruction may straddle two pages mapped anywhere). */
int gwalk_read_linear(const struct gwalk_env *env, uint64_t gla, void *buf, size_t len,
		      const char **why);

#endif
