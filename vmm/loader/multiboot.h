/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Multiboot v1 loader for guest kernels, after QEMU's -kernel/-initrd
 * support: finds the Multiboot header, loads an ELF32/ELF64 kernel (or an
 * a.out kludge image), places the modules and writes the boot information
 * into guest RAM. Pure C with no privileged instructions and no output, so
 * it also runs in the host unit tests; every problem becomes one line of
 * text.
 *
 * References are to the Multiboot Specification version 0.6.96 by section
 * title ("Header layout", "Machine state", "Boot information format"), and
 * to the ELF specification (TIS ELF 1.2; ELF-64 Object File Format 1.5 for
 * the 64-bit layouts): "ELF Identification", "ELF Header", "Program Header".
 *
 * The image is untrusted input: every offset, size and address is checked
 * against the file, guest RAM and 2^64 before use, and nothing is written
 * to guest RAM until the kernel, the modules and the boot information are
 * all known to fit.
 */
#ifndef VMM_LOADER_MULTIBOOT_H
#define VMM_LOADER_MULTIBOOT_H

#include "drivers/base.h"

/* "Header layout": where the loader looks, and what it finds there. */
#define MB_HEADER_MAGIC         0x1BADB002u
#define MB_SEARCH_LEN           8192u   /* header lies wholly in these bytes */
#define MB_HEADER_ALIGN         4u

/* "Header layout", flags: bits 0-15 are requirements a loader must fail
 * on if it does not understand them, bits 16-31 optional features. */
#define MB_HF_PAGE_ALIGN        BIT(0)  /* modules 4 KiB aligned: always so */
#define MB_HF_MEMORY_INFO       BIT(1)  /* mem_* fields: always given */
#define MB_HF_VIDEO_MODE        BIT(2)  /* a preferred mode: a hint, ignored */
#define MB_HF_REQUIRED          BITS(15, 0)
#define MB_HF_UNDERSTOOD        (MB_HF_PAGE_ALIGN | MB_HF_MEMORY_INFO | MB_HF_VIDEO_MODE)
#define MB_HF_AOUT_KLUDGE       BIT(16) /* load by the address fields */

/* "Header layout": the Multiboot header, at a 4-byte aligned file offset. */
struct mb_header {
	uint32_t magic;                 /* MB_HEADER_MAGIC */
	uint32_t flags;                 /* MB_HF_* */
	uint32_t checksum;              /* magic + flags + checksum == 0 */
	/* "The address fields of Multiboot header", if MB_HF_AOUT_KLUDGE */
	uint32_t header_addr;           /* physical address of this header */
	uint32_t load_addr;             /* of the first byte loaded */
	uint32_t load_end_addr;         /* end of the loaded bytes; 0: to EOF */
	uint32_t bss_end_addr;          /* end of the zeroed area; 0: no bss */
	uint32_t entry_addr;            /* physical entry point */
	/* "The graphics fields of Multiboot header", if MB_HF_VIDEO_MODE */
	uint32_t mode_type;
	uint32_t width;
	uint32_t height;
	uint32_t depth;
} __packed;
#define MB_HEADER_LEN           12u     /* magic, flags, checksum */
#define MB_HEADER_AOUT_LEN      32u     /* ... and the address fields */

/* "Machine state": EAX holds this when the kernel is entered. */
#define MB_BOOTLOADER_MAGIC     0x2BADB002u

/* "Boot information format", flags: which fields of mb_info are valid. */
#define MB_INFO_MEMORY          BIT(0)  /* mem_lower, mem_upper */
#define MB_INFO_BOOTDEV         BIT(1)
#define MB_INFO_CMDLINE         BIT(2)
#define MB_INFO_MODS            BIT(3)
#define MB_INFO_AOUT_SYMS       BIT(4)
#define MB_INFO_ELF_SHDR        BIT(5)
#define MB_INFO_MEM_MAP         BIT(6)
#define MB_INFO_DRIVES          BIT(7)
#define MB_INFO_CONFIG_TABLE    BIT(8)
#define MB_INFO_BOOT_LOADER_NAME BIT(9)
#define MB_INFO_APM_TABLE       BIT(10)
#define MB_INFO_VBE             BIT(11)
#define MB_INFO_FRAMEBUFFER     BIT(12)

/* "Boot information format": the structure EBX points to. */
struct mb_info {
	uint32_t flags;                 /* MB_INFO_* */
	uint32_t mem_lower;             /* KiB from 0, at most 640 */
	uint32_t mem_upper;             /* KiB from 1 MiB to the first hole */
	uint32_t boot_device;
	uint32_t cmdline;               /* physical address of a C string */
	uint32_t mods_count;
	uint32_t mods_addr;             /* physical address of mb_module_entry[] */
	uint32_t syms[4];               /* a.out symbols or ELF section headers */
	uint32_t mmap_length;           /* bytes of mb_mmap_entry at mmap_addr */
	uint32_t mmap_addr;
	uint32_t drives_length;
	uint32_t drives_addr;
	uint32_t config_table;
	uint32_t boot_loader_name;      /* physical address of a C string */
	uint32_t apm_table;
	uint32_t vbe_control_info;
	uint32_t vbe_mode_info;
	uint16_t vbe_mode;
	uint16_t vbe_interface_seg;
	uint16_t vbe_interface_off;
	uint16_t vbe_interface_len;
	uint64_t framebuffer_addr;
	uint32_t framebuffer_pitch;
	uint32_t framebuffer_width;
	uint32_t framebuffer_height;
	uint8_t framebuffer_bpp;
	uint8_t framebuffer_type;
	uint8_t color_info[6];
} __packed;

/* "Boot information format", modules: one per mods_count. */
struct mb_module_entry {
	uint32_t mod_start;             /* physical, 4 KiB aligned here */
	uint32_t mod_end;               /* one past the last byte */
	uint32_t string;                /* physical address of a C string */
	uint32_t reserved;              /* 0 */
} __packed;

/* "Boot information format", memory map: `size` sits at offset -4 of
 * the entry it describes, so an entry takes size + 4 bytes and mmap_addr
 * points at a `size` field. */
struct mb_mmap_entry {
	uint32_t size;                  /* MB_MMAP_ENTRY_SIZE */
	uint64_t base_addr;
	uint64_t length;
	uint32_t type;                  /* MB_MMAP_* */
} __packed;
#define MB_MMAP_ENTRY_SIZE      20u     /* bytes after the size field */
#define MB_MMAP_AVAILABLE       1u
#define MB_MMAP_RESERVED        2u
#define MB_MMAP_ENTRIES         4u      /* low RAM, EBDA, BIOS, high RAM */

_Static_assert(sizeof(struct mb_header) == 48, "Header layout");
_Static_assert(offsetof(struct mb_header, header_addr) == MB_HEADER_LEN, "Header layout");
_Static_assert(offsetof(struct mb_header, mode_type) == MB_HEADER_AOUT_LEN, "Header layout");
_Static_assert(offsetof(struct mb_info, cmdline) == 16, "Boot information format");
_Static_assert(offsetof(struct mb_info, syms) == 28, "Boot information format");
_Static_assert(offsetof(struct mb_info, mmap_length) == 44, "Boot information format");
_Static_assert(offsetof(struct mb_info, boot_loader_name) == 64, "Boot information format");
_Static_assert(offsetof(struct mb_info, vbe_mode) == 80, "Boot information format");
_Static_assert(offsetof(struct mb_info, framebuffer_addr) == 88, "Boot information format");
_Static_assert(offsetof(struct mb_info, framebuffer_bpp) == 108, "Boot information format");
_Static_assert(sizeof(struct mb_info) == 116, "Boot information format");
_Static_assert(sizeof(struct mb_module_entry) == 16, "Boot information format");
_Static_assert(offsetof(struct mb_mmap_entry, base_addr) == 4, "Boot information format");
_Static_assert(offsetof(struct mb_mmap_entry, type) == 20, "Boot information format");
_Static_assert(sizeof(struct mb_mmap_entry) == MB_MMAP_ENTRY_SIZE + 4, "Boot information format");

/* What the guest is told about memory (QEMU's choice too): 639 KiB of
 * conventional memory below the EBDA, and everything from 1 MiB up. */
#define MB_MEM_LOWER_KIB        639u
#define MB_EBDA_START           0x9FC00ull
#define MB_EBDA_END             0xA0000ull
#define MB_BIOS_START           0xF0000ull
#define MB_HIGH_START           (1 * MiB)
#define MB_MIN_RAM              (2 * MiB)
#define MB_LOADER_NAME          "tickvisor"
#define MB_ERR_LEN              160u    /* enough for any reason given */
/* PT_LOAD segments with memory accepted: real kernels have a handful, and
 * a bound keeps the pairwise overlap check and the loader's stack small. */
#define MB_MAX_SEGMENTS         32u

/* A boot module (initrd) as the caller has it in host memory. */
struct mb_module {
	const void *data;
	uint64_t size;
	const char *string;             /* e.g. the path and its arguments */
};

/* Where the guest starts: see "Machine state". */
struct mb_result {
	uint32_t entry;                 /* physical entry point (EIP) */
	uint32_t mbi;                   /* physical address of the mb_info (EBX) */
	uint32_t magic;                 /* MB_BOOTLOADER_MAGIC (EAX) */
	uint64_t kernel_start;          /* loaded physical range [start, end) */
	uint64_t kernel_end;
	uint64_t used_end;              /* end of kernel, modules and MBI */
};

/*
 * Loads `image` into guest RAM `ram` (host pointer; guest-physical 0 is
 * ram[0], ram_size bytes, already zeroed), places the modules and the boot
 * information after the kernel, each page aligned, and fills *out. Returns
 * 0, or -1 with a one-line reason in err and guest RAM left untouched.
 * Everything is placed below min(ram_size, 4 GiB): the boot information
 * holds 32-bit addresses. `cmdline` (NULL: empty) goes to the kernel as
 * is; QEMU prefixes it with the kernel's path, a caller may too.
 */
int multiboot_load(uint8_t *ram, uint64_t ram_size, const void *image, uint64_t image_size,
		   const char *cmdline, const struct mb_module *mods, unsigned nmods,
		   struct mb_result *out, char *err, size_t errlen);

#endif
