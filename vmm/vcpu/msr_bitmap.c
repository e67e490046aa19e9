// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/io.h"
#include "drivers/string.h"
#include "vmm/vcpu/msr_bitmap.h"
#include "vmm/host/mem.h"

/* MSRs the guest reads and writes directly: their guest values live in
 * the VMCS, or tickvisor never uses them. */
static const uint32_t msr_passthrough[] = {
	MSR_FS_BASE, MSR_GS_BASE, MSR_KERNEL_GS_BASE, MSR_STAR, MSR_LSTAR, MSR_CSTAR,
	MSR_SFMASK, MSR_TSC_AUX, MSR_IA32_SYSENTER_CS, MSR_IA32_SYSENTER_ESP,
	MSR_IA32_SYSENTER_EIP, MSR_IA32_PAT, MSR_EFER,
};

/* Read-low, read-high, write-low, write-high quarters of 1 KiB; a set
 * bit makes the access exit. */
void msr_bitmap_set(uint8_t *bm, uint32_t msr, bool read_exit, bool write_exit)
{
	uint32_t base = msr >= 0xc0000000u ? 1024u : 0u, bit = msr & 0x1fffu;
	uint8_t m = (uint8_t)BIT(bit % 8);

	bm[base + bit / 8] = read_exit ? bm[base + bit / 8] | m : bm[base + bit / 8] & ~m;
	bm[2048 + base + bit / 8] = write_exit ? bm[2048 + base + bit / 8] | m
					       : bm[2048 + base + bit / 8] & ~m;
}

uint8_t *msr_bitmap_new(void)
{
	uint8_t *bm = mem_alloc(PAGE_SIZE);

	memset(bm, 0xff, PAGE_SIZE);
	for (unsigned i = 0; i < ARRAY_SIZE(msr_passthrough); i++)
		msr_bitmap_set(bm, msr_passthrough[i], false, false);
	/* Reading the TSC MSR gives TSC + offset without an exit. */
	msr_bitmap_set(bm, MSR_IA32_TSC, false, true);
	return bm;
}
