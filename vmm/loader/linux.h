/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Linux x86 boot protocol loader for bzImage kernels, its 32-bit entry:
 * the protected-mode kernel placed by its setup header, a zero page
 * (struct boot_params) holding a copy of that header, the e820 map, the
 * command line and the initrd, and the RSDP's address. Pure C with no
 * privileged instructions and no output, like multiboot.c, so the host
 * unit tests run it; every problem becomes one line of text.
 *
 * References: Documentation/arch/x86/boot.rst ("The Real-Mode Kernel
 * Header", "Details of Header Fields", "Loading The Rest of The Kernel",
 * "32-bit Boot Protocol") and Documentation/arch/x86/zero-page.rst, by
 * section title; offsets as in arch/x86/include/uapi/asm/bootparam.h.
 *
 * The image is untrusted input: every field is checked against the file
 * and guest RAM before use, and nothing is written to guest RAM until the
 * kernel, the initrd, the command line and the zero page are all known
 * to fit.
 */
#ifndef VMM_LOADER_LINUX_H
#define VMM_LOADER_LINUX_H

#include "drivers/base.h"

/* "The Real-Mode Kernel Header": offsets in the file and in the zero
 * page alike (the header is copied to the same offset). */
enum linux_hdr_off {
	LX_SETUP_SECTS          = 0x1f1,        /* 0 means 4 */
	LX_SYSSIZE              = 0x1f4,        /* protected-mode code, 16-byte paras */
	LX_VID_MODE             = 0x1fa,
	LX_BOOT_FLAG            = 0x1fe,        /* 0xAA55 */
	LX_JUMP                 = 0x200,        /* 0xEB, header length - 2 */
	LX_HEADER               = 0x202,        /* "HdrS" */
	LX_VERSION              = 0x206,
	LX_TYPE_OF_LOADER       = 0x210,
	LX_LOADFLAGS            = 0x211,
	LX_CODE32_START         = 0x214,
	LX_RAMDISK_IMAGE        = 0x218,
	LX_RAMDISK_SIZE         = 0x21c,
	LX_HEAP_END_PTR         = 0x224,
	LX_CMD_LINE_PTR         = 0x228,
	LX_INITRD_ADDR_MAX      = 0x22c,
	LX_KERNEL_ALIGNMENT     = 0x230,
	LX_RELOCATABLE          = 0x234,
	LX_MIN_ALIGNMENT        = 0x235,
	LX_XLOADFLAGS           = 0x236,
	LX_CMDLINE_SIZE         = 0x238,
	LX_PREF_ADDRESS         = 0x258,
	LX_INIT_SIZE            = 0x260,
	LX_HDR_MIN_END          = 0x264,        /* protocol 2.10 ends with init_size */
	LX_HDR_MAX_END          = 0x290,        /* zero page: edd_mbr_sig_buffer follows */
};
#define LX_HDR_MAGIC            0x53726448u     /* "HdrS" */
#define LX_BOOT_FLAG_MAGIC      0xaa55u
#define LX_JUMP_OPCODE          0xebu
#define LX_PROTOCOL_MIN         0x020au /* 2.10: pref_address and init_size */
#define LX_SECTOR               512u
#define LX_SETUP_SECTS_DEFAULT  4u
/* loadflags */
#define LX_LOADED_HIGH          BIT(0)  /* bzImage: protected mode at 1 MiB */
#define LX_CAN_USE_HEAP         BIT(7)
#define LX_LOADER_UNDEFINED     0xffu   /* type_of_loader: no assigned ID */
#define LX_BZIMAGE_LOAD         0x100000ull     /* "Loading The Rest of The Kernel" */

/* zero-page.rst: the fields outside the setup header. */
enum linux_bp_off {
	LX_BP_ACPI_RSDP         = 0x070,
	LX_BP_EXT_RAMDISK_IMAGE = 0x0c0,
	LX_BP_EXT_RAMDISK_SIZE  = 0x0c4,
	LX_BP_EXT_CMD_LINE_PTR  = 0x0c8,
	LX_BP_E820_ENTRIES      = 0x1e8,
	LX_BP_SENTINEL          = 0x1ef,
	LX_BP_E820_TABLE        = 0x2d0,
	LX_BP_SIZE              = 0x1000,
};
#define LX_E820_ENTRY_LEN       20u     /* u64 addr, u64 size, u32 type */
#define LX_E820_RAM             1u
#define LX_E820_RESERVED        2u
#define LX_E820_ENTRIES         4u      /* low RAM, EBDA, BIOS, high RAM */

/*
 * Guest-physical layout of what the loader writes below 1 MiB. The
 * protocol wants the command line between the end of the setup heap and
 * 0xA0000; there is no real-mode setup here, so the first free pages do.
 * The BIOS area holds the ACPI tables (vmm/dev/acpi_tables.h).
 */
#define LX_BDA_EBDA_SEG         0x40eull        /* BIOS data area: EBDA segment */
#define LX_BDA_BASE_MEM_KIB     0x413ull        /* ... and conventional memory, KiB */
#define LX_GDT_ADDR             0x6000ull
#define LX_ZERO_PAGE            0x7000ull
#define LX_CMDLINE_ADDR         0x8000ull
#define LX_CMDLINE_MAX          0x7fffu /* up to 0x10000, NUL included */
#define LX_EBDA_START           0x9fc00ull
#define LX_EBDA_END             0xa0000ull
#define LX_BIOS_START           0xf0000ull
#define LX_HIGH_START           (1 * MiB)
#define LX_BASE_MEM_KIB         639u
#define LX_INITRD_ALIGN         4u      /* between concatenated cpio archives */

/* "32-bit Boot Protocol": __BOOT_CS and __BOOT_DS, 4 GiB flat. */
#define LX_BOOT_CS              0x10u
#define LX_BOOT_DS              0x18u
#define LX_GDT_ENTRIES          4u
#define LX_GDT_LIMIT            (LX_GDT_ENTRIES * 8u - 1u)
#define LX_GDT_CODE32           0x00cf9b000000ffffull   /* base 0, 4 GiB, execute/read */
#define LX_GDT_DATA32           0x00cf93000000ffffull   /* base 0, 4 GiB, read/write */

#define LX_ERR_LEN              192u

/* One file of the initrd; several are concatenated (cpio archives may
 * be, as with GRUB's `initrd a b`). */
struct linux_initrd {
	const void *data;
	uint64_t size;
	const char *name;               /* for messages */
};

struct linux_boot {
	const char *cmdline;            /* NULL: empty */
	const struct linux_initrd *initrd;
	unsigned ninitrd;
	uint64_t acpi_rsdp;             /* boot_params.acpi_rsdp_addr, 0: none */
};

/* Where the guest starts ("32-bit Boot Protocol"): CS = LX_BOOT_CS,
 * DS = ES = SS = LX_BOOT_DS from the GDT at `gdt`, ESI = boot_params,
 * EBX = EBP = EDI = 0, paging off, interrupts off. */
struct linux_result {
	uint32_t entry;                 /* startup_32: the loaded kernel's start */
	uint32_t boot_params;           /* ESI */
	uint32_t gdt;                   /* GDTR base; limit LX_GDT_LIMIT */
	uint16_t protocol;              /* e.g. 0x020f */
	uint64_t kernel_start;          /* loaded protected-mode image [start, end) */
	uint64_t kernel_end;
	uint64_t runtime_start;         /* [start, end): init_size from the run address */
	uint64_t runtime_end;
	uint64_t initrd_start;          /* 0 and 0: no initrd */
	uint64_t initrd_size;
};

/* True if the image has the setup header magic "HdrS" at 0x202. */
bool linux_is_bzimage(const void *image, uint64_t image_size);

/*
 * Loads the bzImage `image` into guest RAM `ram` (guest-physical 0 is
 * ram[0], ram_size bytes) by the 32-bit boot protocol and fills *out.
 * Returns 0, or -1 with a one-line reason in err and guest RAM untouched.
 */
int linux_load(uint8_t *ram, uint64_t ram_size, const void *image, uint64_t image_size,
	       const struct linux_boot *boot, struct linux_result *out, char *err, size_t errlen);

#endif
