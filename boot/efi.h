/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers shared by the UEFI stage (boot/ only: the one place GNU-EFI is used). */
#ifndef BOOT_EFI_H
#define BOOT_EFI_H

#include <efi.h>
#include "vmm/host/boot_info.h"

/* Only GNU-EFI's headers, crt0 and self-relocation are used: libefi's
 * InitializeLib would bring a second memset/memcpy, and we need little of
 * it. These are set once in efi_main(). */
extern EFI_SYSTEM_TABLE *ST;
extern EFI_BOOT_SERVICES *BS;
extern EFI_RUNTIME_SERVICES *RT;
extern EFI_GUID efi_loaded_image_guid;

static inline bool efi_guid_eq(const EFI_GUID *a, const EFI_GUID *b)
{
	return !__builtin_memcmp(a, b, sizeof(*a));
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab);
const char *efi_status_str(EFI_STATUS st);
/* Fatal error before ExitBootServices: print, then end as end= says
 * (power off in an emulator; on a real PC wait for a key or 60 s first). */
__noreturn void efi_fail(const char *fmt, ...) __printf(1, 2);
/* Power off through the runtime service; usable before and after EBS. */
void efi_shutdown(int status);
void efi_reset(void);

/* Reads a whole file from the volume tickvisor was loaded from into
 * EfiLoaderData pages. path uses '/' or '\'. Returns EFI status. */
EFI_STATUS efi_read_file(EFI_HANDLE image, const char *path, void **data, UINT64 *size);

/* True when the firmware's console (the ConOut variable) includes a
 * serial terminal: its lines reach that UART through the firmware. */
bool efi_conout_has_uart(void);

/* The GOP's current mode as a framebuffer the screen console can draw on;
 * NULL, or why there is none (fb->format is then FB_NONE). */
const char *efi_gop_screen(struct fb_info *fb);

/* Enumerates CPUs with EFI_MP_SERVICES_PROTOCOL (CPUID fallback: 1 CPU). */
void efi_enum_cpus(struct boot_info *bi);

/* ACPI RSDP from the configuration table (2.0 preferred), or 0. */
uint64_t efi_find_rsdp(void);

/* Whether [base, base+size) overlaps RAM (enum mem_type's RAM types)
 * by the UEFI memory map. */
bool efi_range_is_ram(uint64_t base, uint64_t size);

/* The serial port (boot/efi_serial.c): COM1 if a 16550 answers there,
 * from the first line on; whether the firmware's console writes that
 * UART itself; then the UART serial= (or the ACPI SPCR) names. */
void efi_serial_early(void);
bool efi_serial_fw_writes(void);
void efi_serial_apply(const struct tv_options *o, uint64_t rsdp);

/* Reads load options as ASCII; false when absent or not printable text
 * (some boot managers pass binary data). */
bool efi_load_options(EFI_HANDLE image, char *buf, size_t len, size_t *raw_size);

#endif
