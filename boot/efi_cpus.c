// SPDX-License-Identifier: BSD-2-Clause
/*
 * CPU enumeration before ExitBootServices with EFI_MP_SERVICES_PROTOCOL
 * (UEFI PI spec, vol. 2, "MP Services Protocol"). GNU-EFI does not define
 * it. Under Bochs OVMF publishes no ACPI tables, so this list is the only
 * source of APIC IDs there; elsewhere the MADT cross-checks it.
 */
#include "boot/efi.h"
#include "drivers/io.h"

#define MP_STATUS_BSP     BIT(0)
#define MP_STATUS_ENABLED BIT(1)

struct efi_mp_processor_info {
	UINT64 processor_id;            /* the local APIC ID */
	UINT32 status_flag;
	UINT32 package, core, thread;   /* EFI_CPU_PHYSICAL_LOCATION */
};

struct efi_mp_services;
typedef EFI_STATUS (EFIAPI *efi_mp_get_count)(struct efi_mp_services *self,
					     UINTN *count, UINTN *enabled);
typedef EFI_STATUS (EFIAPI *efi_mp_get_info)(struct efi_mp_services *self, UINTN n,
					    struct efi_mp_processor_info *info);

struct efi_mp_services {
	efi_mp_get_count get_number_of_processors;
	efi_mp_get_info get_processor_info;
	void *startup_all_aps, *startup_this_ap, *switch_bsp, *enable_disable_ap, *who_am_i;
};

static EFI_GUID mp_services_guid = {
	0x3fdda605, 0xa76e, 0x4f46, { 0xad, 0x29, 0x12, 0xf4, 0x53, 0x1b, 0x3d, 0x08 }
};

static void single_cpu(struct boot_info *bi)
{
	bi->ncpus = 1;
	bi->cpus[0].apic_id = cpuid(1, 0).ebx >> 24;
	bi->cpus[0].bsp = true;
}

/*
 * Every enabled processor counts; the first TV_MAX_CPUS are kept, and the
 * BSP always is: should it come late in the firmware's list, it takes
 * the last kept AP's place (that AP is then one of those dropped).
 */
static void keep_cpu(struct boot_info *bi, uint32_t apic_id, bool bsp)
{
	uint32_t slot = bi->ncpus;

	if (slot == TV_MAX_CPUS) {
		bi->cpus_dropped++;
		if (!bsp)
			return;
		slot--;
	} else {
		bi->ncpus++;
	}
	bi->cpus[slot].apic_id = apic_id;
	bi->cpus[slot].bsp = bsp;
}

void efi_enum_cpus(struct boot_info *bi)
{
	struct efi_mp_services *mp;
	struct efi_mp_processor_info info;
	UINTN count, enabled;

	if (EFI_ERROR(BS->LocateProtocol(&mp_services_guid, NULL, (void **)&mp)) ||
	    EFI_ERROR(mp->get_number_of_processors(mp, &count, &enabled))) {
		single_cpu(bi);
		return;
	}
	bi->ncpus = 0;
	for (UINTN i = 0; i < count; i++) {
		if (EFI_ERROR(mp->get_processor_info(mp, i, &info)) ||
		    !(info.status_flag & MP_STATUS_ENABLED))
			continue;
		keep_cpu(bi, (uint32_t)info.processor_id, info.status_flag & MP_STATUS_BSP);
	}
	if (!bi->ncpus) {
		single_cpu(bi);
		return;
	}
	/* vmm/ takes CPU 0 to be the BSP (the CPU running this code). */
	for (uint32_t i = 1; i < bi->ncpus; i++)
		if (bi->cpus[i].bsp) {
			struct boot_cpu t = bi->cpus[0];
			bi->cpus[0] = bi->cpus[i];
			bi->cpus[i] = t;
		}
}

uint64_t efi_find_rsdp(void)
{
	static EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
	uint64_t v1 = 0;

	for (UINTN i = 0; i < ST->NumberOfTableEntries; i++) {
		EFI_CONFIGURATION_TABLE *t = &ST->ConfigurationTable[i];
		if (efi_guid_eq(&t->VendorGuid, &acpi20))
			return (uint64_t)t->VendorTable;
		if (efi_guid_eq(&t->VendorGuid, &acpi10))
			v1 = (uint64_t)t->VendorTable;
	}
	return v1;
}
