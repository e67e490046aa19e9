/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ACPI table parser: RSDP -> XSDT/RSDT -> MADT, HPET, FADT, SPCR. Pure C with no
 * privileged instructions and no output; it also runs in the host unit
 * tests. References are to ACPI 6.4 by section title, and to the IA-PC
 * HPET Specification 1.0a for the HPET table.
 *
 * Firmware feeds it, so nothing is trusted: every table is bounded by its
 * own Length, checksum-checked before use, and read through byte loads
 * (tables are not naturally aligned).
 */
#ifndef DRIVERS_ACPI_H
#define DRIVERS_ACPI_H

#include "drivers/base.h"

#define ACPI_MAX_NOTES          8u
#define ACPI_NOTE_LEN           96u
/* Far above any real table (a large DSDT is ~100 KiB), low enough that a
 * corrupt Length cannot make us map and sum gigabytes. */
#define ACPI_TABLE_MAX_LEN      (1u * 1024 * 1024)

/* "Root System Description Pointer (RSDP) Structure" */
enum acpi_rsdp_off {
	ACPI_RSDP_SIGNATURE     = 0,    /* "RSD PTR " */
	ACPI_RSDP_CHECKSUM      = 8,    /* over the first 20 bytes */
	ACPI_RSDP_OEMID         = 9,
	ACPI_RSDP_REVISION      = 15,   /* 0: ACPI 1.0, 2: ACPI 2.0 and later */
	ACPI_RSDP_RSDT          = 16,
	ACPI_RSDP_LENGTH        = 20,   /* revision >= 2 from here on */
	ACPI_RSDP_XSDT          = 24,
	ACPI_RSDP_XCHECKSUM     = 32,   /* over Length bytes */
};
#define ACPI_RSDP_V1_LEN        20u
#define ACPI_RSDP_V2_LEN        36u
#define ACPI_RSDP_MAX_LEN       4096u

/* "System Description Table Header" */
enum acpi_sdt_off {
	ACPI_SDT_SIGNATURE      = 0,
	ACPI_SDT_LENGTH         = 4,
	ACPI_SDT_REVISION       = 8,
	ACPI_SDT_CHECKSUM       = 9,
	ACPI_SDT_OEMID          = 10,
	ACPI_SDT_OEM_TABLE_ID   = 16,
	ACPI_SDT_OEM_REVISION   = 24,
	ACPI_SDT_CREATOR_ID     = 28,
	ACPI_SDT_CREATOR_REV    = 32,
	ACPI_SDT_HDR_LEN        = 36,   /* RSDT/XSDT entries start here */
};

/* "Generic Address Structure (GAS)": 12 bytes */
enum acpi_gas_off {
	ACPI_GAS_SPACE_ID       = 0,
	ACPI_GAS_BIT_WIDTH      = 1,
	ACPI_GAS_BIT_OFFSET     = 2,
	ACPI_GAS_ACCESS_SIZE    = 3,
	ACPI_GAS_ADDRESS        = 4,
	ACPI_GAS_LEN            = 12,
};
enum acpi_gas_space {
	ACPI_GAS_MEMORY         = 0,
	ACPI_GAS_IO             = 1,
	ACPI_GAS_PCI_CFG        = 2,
};

/* "Multiple APIC Description Table (MADT)" */
enum acpi_madt_off {
	ACPI_MADT_LAPIC_ADDR    = 36,
	ACPI_MADT_FLAGS         = 40,
	ACPI_MADT_ENTRIES       = 44,
};
#define ACPI_MADT_PCAT_COMPAT   BIT(0)  /* dual 8259 PICs are present */

/* MADT "Interrupt Controller Structure Types": byte 0 type, byte 1 length */
enum acpi_madt_type {
	ACPI_MADT_LAPIC         = 0,    /* "Processor Local APIC Structure" */
	ACPI_MADT_IOAPIC        = 1,    /* "I/O APIC Structure" */
	ACPI_MADT_ISO           = 2,    /* "Interrupt Source Override Structure" */
	ACPI_MADT_LAPIC_NMI     = 4,    /* "Local APIC NMI Structure" */
	ACPI_MADT_LAPIC_OVR     = 5,    /* "Local APIC Address Override Structure" */
	ACPI_MADT_X2APIC        = 9,    /* "Processor Local x2APIC Structure" */
	ACPI_MADT_X2APIC_NMI    = 10,   /* "Local x2APIC NMI Structure" */
};
enum acpi_madt_sub_off {
	ACPI_MADT_SUB_TYPE      = 0,
	ACPI_MADT_SUB_LENGTH    = 1,
	ACPI_LAPIC_UID          = 2,    /* type 0, length 8 */
	ACPI_LAPIC_ID           = 3,
	ACPI_LAPIC_FLAGS        = 4,
	ACPI_IOAPIC_ID          = 2,    /* type 1, length 12 */
	ACPI_IOAPIC_ADDR        = 4,
	ACPI_IOAPIC_GSI_BASE    = 8,
	ACPI_LAPIC_OVR_ADDR     = 4,    /* type 5, length 12 */
	ACPI_X2APIC_ID          = 4,    /* type 9, length 16 */
	ACPI_X2APIC_FLAGS       = 8,
	ACPI_X2APIC_UID         = 12,
	ACPI_ISO_BUS            = 2,    /* type 2, length 10 */
	ACPI_ISO_SOURCE         = 3,    /* the bus's IRQ */
	ACPI_ISO_GSI            = 4,
	ACPI_ISO_FLAGS          = 8,
	ACPI_LAPIC_NMI_UID      = 2,    /* type 4, length 6: UID 0xff is every CPU */
	ACPI_LAPIC_NMI_FLAGS    = 3,
	ACPI_LAPIC_NMI_LINT     = 5,
	ACPI_X2APIC_NMI_FLAGS   = 2,    /* type 10, length 12: UID ~0 is every CPU */
	ACPI_X2APIC_NMI_UID     = 4,
	ACPI_X2APIC_NMI_LINT    = 8,
};
/* MPS INTI flags of the NMI and override structures: polarity, trigger
 * mode; 0 in either field "conforms to the specifications of the bus",
 * 2 is reserved. */
#define ACPI_INTI_POLARITY      BITS(1, 0)
#define ACPI_INTI_ACTIVE_HIGH   1u
#define ACPI_INTI_ACTIVE_LOW    3u
#define ACPI_INTI_TRIGGER       BITS(3, 2)
#define ACPI_INTI_EDGE          1u
#define ACPI_INTI_LEVEL         3u
#define ACPI_MAX_ISOS           16u     /* ISA has 16 IRQs to override */
#define ACPI_MAX_NMIS           8u
#define ACPI_MAX_IOAPICS        8u      /* recorded; more are counted */
/* "Local APIC Flags" (types 0 and 9) */
#define ACPI_LAPIC_ENABLED      BIT(0)
#define ACPI_LAPIC_ONLINE_CAP   BIT(1)  /* defined from MADT revision 5 */
#define ACPI_MADT_REV_ONLINE_CAP 5u

/* IA-PC HPET 1.0a, "The ACPI 2.0 HPET Description Table (HPET)" */
enum acpi_hpet_off {
	ACPI_HPET_BLOCK_ID      = 36,
	ACPI_HPET_BASE          = 40,   /* GAS, system memory */
	ACPI_HPET_NUMBER        = 52,
	ACPI_HPET_MIN_TICK      = 53,
	ACPI_HPET_PAGE_PROT     = 55,
	ACPI_HPET_LEN           = 56,
};

/* Microsoft's "Serial Port Console Redirection Table" (SPCR, revision 1
 * and later): the firmware's console UART, where a server has one. */
enum acpi_spcr_off {
	ACPI_SPCR_TYPE          = 36,   /* interface type (DBG2 serial subtypes) */
	ACPI_SPCR_BASE          = 40,   /* GAS */
	ACPI_SPCR_BAUD          = 58,   /* 0: as the firmware left it; 3, 4, 6, 7 */
	ACPI_SPCR_LEN           = 80,
};
enum acpi_spcr_type {
	ACPI_SPCR_16550         = 0x00, /* fully 16550-compatible */
	ACPI_SPCR_16450         = 0x01, /* 16550 subset: no FIFO; polled output works */
	ACPI_SPCR_16550_GAS     = 0x12, /* 16550-compatible, its registers by the GAS */
};

/* "Fixed ACPI Description Table (FADT)": older revisions are shorter,
 * so each field is used only when Length covers it. */
enum acpi_fadt_off {
	ACPI_FADT_DSDT          = 40,
	ACPI_FADT_PM1A_CNT_BLK  = 64,
	ACPI_FADT_PM1B_CNT_BLK  = 68,
	ACPI_FADT_PM_TMR_BLK    = 76,
	ACPI_FADT_FLAGS         = 112,  /* end of the ACPI 1.0 FADT (116 bytes) */
	ACPI_FADT_RESET_REG     = 116,
	ACPI_FADT_RESET_VALUE   = 128,
	ACPI_FADT_X_DSDT        = 140,
	ACPI_FADT_X_PM1A_CNT_BLK = 172,
	ACPI_FADT_X_PM1B_CNT_BLK = 184,
	ACPI_FADT_X_PM_TMR_BLK  = 208,
};
/* "Fixed ACPI Description Table Fixed Feature Flags" */
#define ACPI_FADT_TMR_VAL_EXT   BIT(8)  /* PM timer is 32 bits, not 24 */
#define ACPI_FADT_RESET_REG_SUP BIT(10)
#define ACPI_FADT_HW_REDUCED    BIT(20) /* no fixed hardware (PM timer, PM1) */

/* "Generic Address Structure (GAS)" */
struct acpi_gas {
	uint8_t space_id;               /* enum acpi_gas_space */
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
};

struct acpi_info {
	bool present;                   /* a valid RSDP and root table were found */
	uint8_t rsdp_revision;
	char oem_id[7];                 /* RSDP OEMID; unprintable bytes as '?' */
	bool xsdt;                      /* root table was the XSDT, not the RSDT */

	/* MADT */
	bool has_madt;
	uint64_t lapic_addr;            /* with the 64-bit override applied */
	bool pcat_compat;               /* MADT flags PCAT_COMPAT: 8259s present */
	/* Enabled (or online-capable) processors from Local APIC and Local
	 * x2APIC entries, de-duplicated by APIC ID: all of them, also those
	 * beyond what tickvisor holds. Duplicates are found among IDs below
	 * 256 (the same CPU in both entry forms) and against the IDs held;
	 * two x2APIC entries with one ID of 256 or more beyond the first
	 * TV_MAX_CPUS count twice, since finding them would need a table
	 * as large as the MADT. */
	uint32_t ncpus;
	/* The first nids of them (at most TV_MAX_CPUS), in MADT order. */
	uint32_t nids;
	uint32_t apic_ids[TV_MAX_CPUS];
	uint32_t cpu_uids[TV_MAX_CPUS]; /* the ACPI Processor UID of each */
	/* Local APIC NMI and Local x2APIC NMI entries: the LINT pin wired
	 * to NMI, for every CPU or the one with that UID (issue 22.6). */
	uint32_t nnmis;
	struct acpi_lapic_nmi {
		bool all;               /* UID 0xff / 0xffffffff */
		uint32_t uid;
		uint8_t lint;           /* 0 or 1 */
		uint16_t flags;         /* MPS INTI flags */
	} nmis[ACPI_MAX_NMIS];
	bool has_ioapic;                /* the first I/O APIC entry */
	uint64_t ioapic_addr;
	uint8_t ioapic_id;
	uint32_t ioapic_gsi_base;
	uint32_t nioapics;              /* all I/O APIC entries */
	/* Every I/O APIC entry, up to ACPI_MAX_IOAPICS, the first included:
	 * all of them are masked at start (issue 22.6). */
	struct acpi_ioapic {
		uint64_t addr;
		uint8_t id;
		uint32_t gsi_base;
	} ioapics[ACPI_MAX_IOAPICS];
	/* Interrupt Source Overrides: where an ISA IRQ arrives and with what
	 * polarity and trigger mode (the GSI's mode, issue 22.6). */
	uint32_t nisos;
	struct acpi_iso {
		uint8_t irq;            /* ISA IRQ (bus 0) */
		uint32_t gsi;
		uint16_t flags;         /* MPS INTI flags */
	} isos[ACPI_MAX_ISOS];

	/* HPET table */
	bool has_hpet;
	uint64_t hpet_addr;
	uint8_t hpet_number;
	uint16_t hpet_min_tick;

	/* FADT */
	bool has_fadt;
	uint8_t fadt_revision;
	bool hw_reduced;                /* FADT flags HW_REDUCED_ACPI */
	uint32_t pm1a_cnt_port;         /* X_ field preferred when valid; 0 if none */
	uint32_t pm1b_cnt_port;         /* 0 if none */
	bool has_s5;                    /* the DSDT's \_S5 package, for power-off */
	uint8_t s5_typa, s5_typb;       /* its SLP_TYPa and SLP_TYPb */
	uint32_t pm_tmr_port;           /* 0 if none */
	bool pm_tmr_32bit;              /* FADT flags TMR_VAL_EXT */
	bool reset_supported;           /* RESET_REG_SUP and the table has RESET_REG */
	struct acpi_gas reset_reg;
	uint8_t reset_value;

	/* SPCR */
	bool has_spcr;
	uint8_t spcr_type;              /* enum acpi_spcr_type, or another type */
	struct acpi_gas spcr_base;
	/* Bytes per register, which is also their stride: the GAS's access
	 * size where it gives one (1: byte, 3: dword), else its bit width
	 * (8, 32); 0 when neither says 1, 2, 4 or 8 bytes. */
	uint8_t spcr_reg_bytes;
	uint32_t spcr_baud;             /* bits per second; 0: as the firmware set it */

	/* Problems that did not stop parsing, e.g. "HPET: bad checksum,
	 * table ignored"; notes past ACPI_MAX_NOTES are only counted. */
	uint32_t nnotes;
	uint32_t notes_dropped;
	char notes[ACPI_MAX_NOTES][ACPI_NOTE_LEN];
};

/* The NMI entries that name the CPU with this APIC ID: a bit per LINT
 * pin (BIT(0) LINT0, BIT(1) LINT1), each pin's flags in flags[pin]. */
unsigned acpi_lint_nmis(const struct acpi_info *a, uint32_t apic_id, uint16_t flags[2]);

/* The SLP_TYPa/b values of the \_S5 (soft-off) package in AML (a DSDT's
 * body): NameOp "_S5_" (or "\_S5_"), PackageOp, PkgLength, NumElements,
 * then integers (BytePrefix, WordPrefix, Zero, One). A minimal search, not
 * an interpreter: an _S5 built by a method is not found. False if there is
 * none it can read; never reads outside aml[0, len). */
bool acpi_aml_find_s5(const uint8_t *aml, size_t len, uint8_t *typa, uint8_t *typb);

/* Maps len bytes at physical address phys for reading; returns NULL if it
 * cannot. Mappings must stay valid until acpi_parse() returns. In the
 * hypervisor memory is identity mapped; tests map into buffers. */
typedef const void *(*acpi_map_fn)(uint64_t phys, size_t len, void *ctx);

/*
 * Fills *out from the tables reachable from the RSDP at rsdp_phys. Returns
 * 0 on success (out->present set), or -1 with a message in err ("RSDP: bad
 * checksum", "XSDT: truncated (length 20 < header 36)", ...) when the RSDP
 * or the root table is unusable. A bad or truncated MADT/HPET/FADT is
 * skipped with a note, not an error. The XSDT is used when the RSDP
 * revision is >= 2 and XsdtAddress != 0, else the RSDT.
 */
int acpi_parse(struct acpi_info *out, uint64_t rsdp_phys, acpi_map_fn map, void *ctx,
	       char *err, size_t errlen);

/* The map where physical memory is mapped 1:1: the hypervisor's own page
 * tables (below map_top) and UEFI boot services alike. */
const void *acpi_map_identity(uint64_t phys, size_t len, void *ctx);

#endif
