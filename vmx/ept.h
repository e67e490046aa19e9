/* SPDX-License-Identifier: BSD-2-Clause */
/* Extended page tables (SDM Vol. 3C, "EPT Translation Mechanism"): 4-level,
 * 2 MiB pages where both addresses are aligned and the CPU has them
 * (small_only clear), 4 KiB otherwise. */
#ifndef VMX_EPT_H
#define VMX_EPT_H

#include "drivers/base.h"

#define EPT_R           BIT(0)
#define EPT_W           BIT(1)
#define EPT_X           BIT(2)
#define EPT_RWX         (EPT_R | EPT_W | EPT_X)
#define EPT_MT_UC       (0ull << 3)
#define EPT_MT_WB       (6ull << 3)
#define EPT_IGNORE_PAT  BIT(6)
#define EPT_LARGE       BIT(7)
#define EPT_ADDR        BITS(51, 12)

#define EPTP_MT_WB      6ull
#define EPTP_WALK_4     (3ull << 3)

/* EPT violation exit qualification */
#define EPT_QUAL_READ   BIT(0)
#define EPT_QUAL_WRITE  BIT(1)
#define EPT_QUAL_FETCH  BIT(2)
#define EPT_QUAL_GLA_VALID BIT(7)

struct ept {
	uint64_t *pml4;
	void *(*alloc_page)(void *ctx);         /* zeroed 4 KiB page or NULL */
	void (*free_page)(void *ctx, void *page);
	void *ctx;
	uint32_t pages;                         /* table pages held now */
	bool small_only;                        /* no 2 MiB leaves (EPT_VPID_CAP[16] clear) */
};

/* Returns false when a table page could not be allocated. */
bool ept_init(struct ept *e);
/* Maps [gpa, gpa+size) to hpa; flags 0 unmaps. Remapping inside a 2 MiB
 * mapping splits it (the caller flushes with INVEPT). Unmapping allocates
 * nothing and frees the tables it leaves empty. */
bool ept_map(struct ept *e, uint64_t gpa, uint64_t hpa, uint64_t size, uint64_t flags);
uint64_t ept_pointer(const struct ept *e);
/* Frees every table page (not the mapped memory). */
void ept_destroy(struct ept *e);

#endif
