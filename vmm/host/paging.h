/* SPDX-License-Identifier: BSD-2-Clause */
/* The host's page tables. */
#ifndef VMM_HOST_PAGING_H
#define VMM_HOST_PAGING_H

#include "vmm/host/boot_info.h"

/* Identity map of all RAM and MMIO (2 MiB or 1 GiB pages) for the host. */
void paging_init(const struct boot_info *bi);
uint64_t paging_cr3(void);

#endif
