/* SPDX-License-Identifier: BSD-2-Clause */
/* The host's page tables. */
#ifndef VMM_HOST_PAGING_H
#define VMM_HOST_PAGING_H

#include "vmm/host/boot_info.h"

/* Identity map of all RAM and MMIO for the host, with memory types. */
void paging_init(const struct boot_info *bi);
/* IA32_PAT as the host's page tables need it (TV_PAT): on every CPU. */
void paging_pat_init(void);
uint64_t paging_cr3(void);

#endif
