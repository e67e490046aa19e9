/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hand-off from boot/ (UEFI) to vmm_main(): everything tickvisor
 * learned from the firmware before ExitBootServices. After the hand-off
 * no boot service is used again; only the runtime ResetSystem() remains
 * callable, through efi_shutdown.
 */
#ifndef VMM_HOST_BOOT_INFO_H
#define VMM_HOST_BOOT_INFO_H

#include "drivers/fbcon.h"
#include "vmm/host/options.h"

#define TV_VERSION "0.1.0"

enum mem_type {
	MEM_USABLE,             /* free RAM once boot services are gone */
	MEM_BOOT_SERVICES,      /* firmware boot-services RAM: free after the switch
				   to our own page tables, stack and descriptor tables */
	MEM_LOADER,             /* tickvisor's image and what boot/ loaded */
	MEM_RUNTIME,            /* firmware runtime code/data: never touched */
	MEM_ACPI,               /* ACPI tables and NVS */
	MEM_MMIO,
	MEM_RESERVED,
};

/* RAM as far as memory types and MMIO go: what the firmware or tickvisor
 * keeps in it, or will. */
static inline bool mem_type_is_ram(uint32_t type)
{
	return type == MEM_USABLE || type == MEM_BOOT_SERVICES || type == MEM_LOADER ||
	       type == MEM_RUNTIME || type == MEM_ACPI;
}

struct mem_range {
	uint64_t base;
	uint64_t size;
	uint32_t type;          /* enum mem_type */
};

struct boot_cpu {
	uint32_t apic_id;
	bool bsp;
};

struct boot_info {
	uint64_t rsdp;                  /* physical address, 0 when none */
	uint32_t ncpus;                 /* from MP services (or 1), BSP first */
	struct boot_cpu cpus[TV_MAX_CPUS];
	uint32_t cpus_dropped;          /* enabled CPUs beyond TV_MAX_CPUS: not in cpus[] */
	struct mem_range *mem;          /* memory map, sorted by base */
	uint32_t nmem;
	uint64_t image_base, image_size; /* tickvisor itself */
	/* UEFI runtime ResetSystem(EfiResetShutdown); returns only on failure. */
	void (*efi_shutdown)(int status);
	/* UEFI runtime ResetSystem(EfiResetCold) (end=reset's last way). */
	void (*efi_reset)(void);
	/* The VMX check made before ExitBootServices, while the firmware's
	 * console still showed its answer: NULL when VMX is usable, else the
	 * reason (printed then); whether that check locked
	 * IA32_FEATURE_CONTROL. */
	const char *vmx_unusable;
	bool feature_control_locked;
	/* The GOP framebuffer for the screen console; format FB_NONE and
	 * screen_none the reason when there is none. */
	struct fb_info screen;
	const char *screen_none;
	char cfg_path[TV_PATH_LEN];
	struct tv_config cfg;
};

/* Entered on the BSP after ExitBootServices, on a tickvisor stack, with
 * interrupts off and the firmware's page tables still in CR3. */
__noreturn void vmm_main(struct boot_info *bi);

#endif
