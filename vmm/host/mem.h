/* SPDX-License-Identifier: BSD-2-Clause */
/* Host memory: the global pool (vmm/host/pool.h). */
#ifndef VMM_HOST_MEM_H
#define VMM_HOST_MEM_H

#include "vmm/host/boot_info.h"

/* Pool from the usable RAM of the UEFI map (above 1 MiB: the low pages
 * are kept for the AP start-up trampoline). */
void mem_init(const struct boot_info *bi);
/* Bytes of the UEFI map of that type. Boot-services RAM is never taken
 * into the pool (vmm/main.c, host_memory()). */
uint64_t mem_type_bytes(const struct boot_info *bi, enum mem_type type);
/* Zeroed, page-aligned; panics when out of memory (a host invariant). */
void *mem_alloc(uint64_t size);
void *mem_alloc_aligned(uint64_t size, uint64_t align);
/* Like mem_alloc_aligned but returns NULL on failure, for guest RAM. */
void *mem_try_alloc(uint64_t size, uint64_t align);
void mem_free(void *p, uint64_t size);
uint64_t mem_free_bytes(void);
uint64_t mem_largest_free(void);
/* A page below 1 MiB, for the AP trampoline; 0 if none. */
uint64_t mem_low_page(void);

#endif
