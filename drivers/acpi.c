// SPDX-License-Identifier: BSD-2-Clause
/*
 * ACPI table parser (see acpi.h). The walk is RSDP -> root table -> one
 * handler per table signature -> one handler per MADT subtable type. Every
 * problem becomes text: fatal ones (RSDP, root table) end up in the
 * caller's err, the rest in out->notes, because drivers/ sits below the
 * logging layer and prints nothing itself.
 */
#include <stdarg.h>
#include "drivers/acpi.h"
#include "drivers/fmt.h"
#include "drivers/string.h"

struct acpi_walk {
	struct acpi_info *out;
	acpi_map_fn map;
	void *ctx;
	char why[ACPI_NOTE_LEN];        /* why the last table was rejected */
	uint32_t seen;                  /* BIT(i): acpi_tables[i] was parsed */
	uint8_t madt_rev;               /* revision of the MADT being walked */
	bool lapic_ovr;                 /* a Local APIC Address Override was used */
	uint32_t dup_ids;               /* duplicate APIC IDs in the MADT */
	uint64_t low_ids[256 / 64];     /* BIT(id % 64): APIC ID id < 256 was listed */
};

static void acpi_get_gas(struct acpi_gas *g, const uint8_t *p)
{
	g->space_id = p[ACPI_GAS_SPACE_ID];
	g->bit_width = p[ACPI_GAS_BIT_WIDTH];
	g->bit_offset = p[ACPI_GAS_BIT_OFFSET];
	g->access_size = p[ACPI_GAS_ACCESS_SIZE];
	g->address = get_le64(p + ACPI_GAS_ADDRESS);
}

static __printf(2, 3) void acpi_note(struct acpi_info *out, const char *fmt, ...)
{
	va_list ap;

	if (out->nnotes == ACPI_MAX_NOTES) {
		out->notes_dropped++;
		return;
	}
	va_start(ap, fmt);
	fmt_vsnprintf(out->notes[out->nnotes++], ACPI_NOTE_LEN, fmt, ap);
	va_end(ap);
}

/* Records why a table was rejected; returns false for the caller to pass on. */
static __printf(2, 3) bool acpi_why(struct acpi_walk *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fmt_vsnprintf(w->why, sizeof(w->why), fmt, ap);
	va_end(ap);
	return false;
}

static const uint8_t *acpi_map(struct acpi_walk *w, uint64_t phys, size_t len)
{
	if (phys > UINT64_MAX - len)    /* would wrap around the address space */
		return NULL;
	return w->map(phys, len, w->ctx);
}

/* All bytes of a table, its checksum field included, sum to zero. */
static bool acpi_checksum_ok(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum += p[i];
	return sum == 0;
}

/* OEM IDs are space padded, may be NUL padded, and end up in log lines. */
static void acpi_copy_id(char *d, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i]; i++)
		d[i] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
	d[i] = 0;
}

/* The ACPI 2.0+ part of the "Root System Description Pointer (RSDP)
 * Structure": Length, XsdtAddress and the extended checksum over Length. */
static bool acpi_read_rsdp2(struct acpi_walk *w, uint64_t phys, uint64_t *root, bool *xsdt)
{
	const uint8_t *p = acpi_map(w, phys, ACPI_RSDP_V2_LEN);
	uint32_t len;

	if (!p)
		return acpi_why(w, "RSDP: cannot map %u bytes at %#lx", ACPI_RSDP_V2_LEN, phys);
	len = get_le32(p + ACPI_RSDP_LENGTH);
	if (len < ACPI_RSDP_V2_LEN || len > ACPI_RSDP_MAX_LEN)
		return acpi_why(w, "RSDP: bad length %u (expected %u..%u)",
				len, ACPI_RSDP_V2_LEN, ACPI_RSDP_MAX_LEN);
	p = acpi_map(w, phys, len);
	if (!p)
		return acpi_why(w, "RSDP: cannot map %u bytes at %#lx", len, phys);
	if (!acpi_checksum_ok(p, len))
		return acpi_why(w, "RSDP: bad extended checksum");
	if (get_le64(p + ACPI_RSDP_XSDT)) {
		*root = get_le64(p + ACPI_RSDP_XSDT);
		*xsdt = true;
	}
	return true;
}

/* "Root System Description Pointer (RSDP) Structure": finds the root table. */
static bool acpi_read_rsdp(struct acpi_walk *w, uint64_t phys, uint64_t *root, bool *xsdt)
{
	const uint8_t *p = acpi_map(w, phys, ACPI_RSDP_V1_LEN);

	if (!p)
		return acpi_why(w, "RSDP: cannot map %u bytes at %#lx", ACPI_RSDP_V1_LEN, phys);
	if (memcmp(p + ACPI_RSDP_SIGNATURE, "RSD PTR ", 8))
		return acpi_why(w, "RSDP: bad signature");
	if (!acpi_checksum_ok(p, ACPI_RSDP_V1_LEN))
		return acpi_why(w, "RSDP: bad checksum");
	w->out->rsdp_revision = p[ACPI_RSDP_REVISION];
	acpi_copy_id(w->out->oem_id, p + ACPI_RSDP_OEMID, sizeof(w->out->oem_id) - 1);
	*root = get_le32(p + ACPI_RSDP_RSDT);
	*xsdt = false;
	/* Revision 0 is ACPI 1.0; 2 and later carry the XSDT address. */
	if (w->out->rsdp_revision >= 2 && !acpi_read_rsdp2(w, phys, root, xsdt))
		return false;
	if (!*root)
		return acpi_why(w, "RSDP: no RSDT or XSDT address");
	return true;
}

/*
 * "System Description Table Header": maps the table at phys after checking
 * its signature, a Length between the header size and ACPI_TABLE_MAX_LEN,
 * and the checksum over Length. name is the table's name in messages.
 */
static bool acpi_map_sdt(struct acpi_walk *w, uint64_t phys, const char *name,
			 const char *sig, const uint8_t **tp, uint32_t *lenp)
{
	const uint8_t *t = acpi_map(w, phys, ACPI_SDT_HDR_LEN);
	uint32_t len;

	if (!t)
		return acpi_why(w, "%s: cannot map header at %#lx", name, phys);
	if (memcmp(t + ACPI_SDT_SIGNATURE, sig, 4))
		return acpi_why(w, "%s: bad signature", name);
	len = get_le32(t + ACPI_SDT_LENGTH);
	if (len < ACPI_SDT_HDR_LEN)
		return acpi_why(w, "%s: truncated (length %u < header %u)",
				name, len, ACPI_SDT_HDR_LEN);
	if (len > ACPI_TABLE_MAX_LEN)
		return acpi_why(w, "%s: length %u over the %u limit",
				name, len, ACPI_TABLE_MAX_LEN);
	t = acpi_map(w, phys, len);
	if (!t)
		return acpi_why(w, "%s: cannot map %u bytes at %#lx", name, len, phys);
	if (!acpi_checksum_ok(t, len))
		return acpi_why(w, "%s: bad checksum", name);
	*tp = t;
	*lenp = len;
	return true;
}

/* --- MADT ----------------------------------------------------------------- */

/* Was APIC ID id listed before (and records it)? Every ID below 256 - an
 * xAPIC entry's, or the same CPU again in x2APIC form - is in a bitmap;
 * larger ones are compared with the IDs held (see acpi.h). */
static bool acpi_madt_seen(struct acpi_walk *w, uint32_t id)
{
	const struct acpi_info *out = w->out;

	if (id < 256) {
		uint64_t *word = &w->low_ids[id / 64], bit = BIT(id % 64);
		bool seen = *word & bit;

		*word |= bit;
		return seen;
	}
	for (uint32_t i = 0; i < out->nids; i++)
		if (out->apic_ids[i] == id)
			return true;
	return false;
}

/* Local APIC and Local x2APIC entries share the "Local APIC Flags". */
static void acpi_madt_add_cpu(struct acpi_walk *w, uint32_t id, uint32_t flags,
			      uint32_t broadcast, uint32_t uid)
{
	struct acpi_info *out = w->out;
	uint32_t usable = ACPI_LAPIC_ENABLED;

	/* Online Capable is a reserved bit before MADT revision 5. */
	if (w->madt_rev >= ACPI_MADT_REV_ONLINE_CAP)
		usable |= ACPI_LAPIC_ONLINE_CAP;
	if (!(flags & usable))
		return;
	if (id == broadcast) {
		acpi_note(out, "MADT: usable CPU with broadcast APIC ID %#x ignored", id);
		return;
	}
	if (acpi_madt_seen(w, id)) {
		w->dup_ids++;
		return;
	}
	out->ncpus++;
	if (out->nids < TV_MAX_CPUS) {
		out->cpu_uids[out->nids] = uid;
		out->apic_ids[out->nids++] = id;
	}
}

/* "Processor Local APIC Structure" */
static void acpi_madt_lapic(struct acpi_walk *w, const uint8_t *s)
{
	acpi_madt_add_cpu(w, s[ACPI_LAPIC_ID], get_le32(s + ACPI_LAPIC_FLAGS), 0xffu,
			  s[ACPI_LAPIC_UID]);
}

/* "Processor Local x2APIC Structure" */
static void acpi_madt_x2apic(struct acpi_walk *w, const uint8_t *s)
{
	acpi_madt_add_cpu(w, get_le32(s + ACPI_X2APIC_ID), get_le32(s + ACPI_X2APIC_FLAGS),
			  0xffffffffu, get_le32(s + ACPI_X2APIC_UID));
}

static void acpi_madt_add_nmi(struct acpi_walk *w, bool all, uint32_t uid, uint16_t flags,
			      uint8_t lint)
{
	struct acpi_info *out = w->out;

	if (lint > 1) {
		acpi_note(out, "MADT: NMI entry names LINT%u, which no local APIC has: ignored",
			  lint);
		return;
	}
	if (out->nnmis >= ACPI_MAX_NMIS) {
		acpi_note(out, "MADT: more than %u local APIC NMI entries: the rest ignored",
			  ACPI_MAX_NMIS);
		return;
	}
	out->nmis[out->nnmis++] = (struct acpi_lapic_nmi){ all, uid, lint, flags };
}

/* "Local APIC NMI Structure" */
static void acpi_madt_lapic_nmi(struct acpi_walk *w, const uint8_t *s)
{
	acpi_madt_add_nmi(w, s[ACPI_LAPIC_NMI_UID] == 0xff, s[ACPI_LAPIC_NMI_UID],
			  get_le16(s + ACPI_LAPIC_NMI_FLAGS), s[ACPI_LAPIC_NMI_LINT]);
}

/* "Local x2APIC NMI Structure" */
static void acpi_madt_x2apic_nmi(struct acpi_walk *w, const uint8_t *s)
{
	uint32_t uid = get_le32(s + ACPI_X2APIC_NMI_UID);

	acpi_madt_add_nmi(w, uid == 0xffffffffu, uid, get_le16(s + ACPI_X2APIC_NMI_FLAGS),
			  s[ACPI_X2APIC_NMI_LINT]);
}

unsigned acpi_lint_nmis(const struct acpi_info *a, uint32_t apic_id, uint16_t flags[2])
{
	unsigned pins = 0;
	bool known = false;
	uint32_t uid = 0;

	for (uint32_t i = 0; i < a->nids; i++)
		if (a->apic_ids[i] == apic_id) {
			uid = a->cpu_uids[i];
			known = true;
			break;
		}
	for (uint32_t i = 0; i < a->nnmis; i++) {
		const struct acpi_lapic_nmi *n = &a->nmis[i];

		if (!n->all && (!known || n->uid != uid))
			continue;
		pins |= BIT(n->lint);
		flags[n->lint] = n->flags;
	}
	return pins;
}

/* "I/O APIC Structure": the first one is the host's, the first
 * ACPI_MAX_IOAPICS are recorded, all are counted. */
static void acpi_madt_ioapic(struct acpi_walk *w, const uint8_t *s)
{
	struct acpi_info *out = w->out;

	if (out->nioapics < ACPI_MAX_IOAPICS)
		out->ioapics[out->nioapics] = (struct acpi_ioapic){
			.addr = get_le32(s + ACPI_IOAPIC_ADDR), .id = s[ACPI_IOAPIC_ID],
			.gsi_base = get_le32(s + ACPI_IOAPIC_GSI_BASE),
		};
	if (out->nioapics++)
		return;
	out->has_ioapic = true;
	out->ioapic_id = s[ACPI_IOAPIC_ID];
	out->ioapic_addr = get_le32(s + ACPI_IOAPIC_ADDR);
	out->ioapic_gsi_base = get_le32(s + ACPI_IOAPIC_GSI_BASE);
}

/* "Interrupt Source Override Structure": bus 0 (ISA) is the only bus the
 * ACPI specification defines for it; another is noted and ignored. */
static void acpi_madt_iso(struct acpi_walk *w, const uint8_t *s)
{
	struct acpi_info *out = w->out;

	if (s[ACPI_ISO_BUS] != 0) {
		acpi_note(out, "MADT: interrupt source override for bus %u ignored (only ISA, bus 0, exists)",
			  s[ACPI_ISO_BUS]);
		return;
	}
	if (out->nisos >= ACPI_MAX_ISOS) {
		acpi_note(out, "MADT: more than %u interrupt source overrides: the rest ignored",
			  ACPI_MAX_ISOS);
		return;
	}
	out->isos[out->nisos++] = (struct acpi_iso){ s[ACPI_ISO_SOURCE], get_le32(s + ACPI_ISO_GSI),
						     get_le16(s + ACPI_ISO_FLAGS) };
}

/* "Local APIC Address Override Structure": supersedes the 32-bit address
 * in the MADT header; only one may be defined. */
static void acpi_madt_lapic_ovr(struct acpi_walk *w, const uint8_t *s)
{
	uint64_t addr = get_le64(s + ACPI_LAPIC_OVR_ADDR);

	if (w->lapic_ovr || !addr) {
		acpi_note(w->out, "MADT: Local APIC Address Override %#lx ignored", addr);
		return;
	}
	w->lapic_ovr = true;
	w->out->lapic_addr = addr;
}

struct acpi_madt_ops {
	uint8_t min_len;                /* the structure's Length in ACPI 6.4 */
	void (*parse)(struct acpi_walk *w, const uint8_t *s);
};

static const struct acpi_madt_ops acpi_madt_ops[] = {
	[ACPI_MADT_LAPIC]       = { 8, acpi_madt_lapic },
	[ACPI_MADT_IOAPIC]      = { 12, acpi_madt_ioapic },
	[ACPI_MADT_ISO]         = { 10, acpi_madt_iso },
	[ACPI_MADT_LAPIC_NMI]   = { 6, acpi_madt_lapic_nmi },
	[ACPI_MADT_LAPIC_OVR]   = { 12, acpi_madt_lapic_ovr },
	[ACPI_MADT_X2APIC]      = { 16, acpi_madt_x2apic },
	[ACPI_MADT_X2APIC_NMI]  = { 12, acpi_madt_x2apic_nmi },
};

static void acpi_madt_entry(struct acpi_walk *w, const uint8_t *s, uint32_t off)
{
	uint8_t type = s[ACPI_MADT_SUB_TYPE], len = s[ACPI_MADT_SUB_LENGTH];
	const struct acpi_madt_ops *ops;

	if (type >= ARRAY_SIZE(acpi_madt_ops) || !acpi_madt_ops[type].parse)
		return;                 /* an interrupt controller we do not use */
	ops = &acpi_madt_ops[type];
	if (len < ops->min_len) {
		acpi_note(w->out, "MADT: type %u subtable at offset %u too short (%u < %u), skipped",
			  type, off, len, ops->min_len);
		return;
	}
	ops->parse(w, s);
}

/* "Multiple APIC Description Table (MADT)": a header, then subtables each
 * starting with Type and Length bytes. A Length that cannot be right ends
 * the walk, since the next subtable's start is then unknown. */
static bool acpi_parse_madt(struct acpi_walk *w, const uint8_t *t, uint32_t len)
{
	struct acpi_info *out = w->out;
	uint32_t off;
	uint8_t sublen;

	if (len < ACPI_MADT_ENTRIES) {
		acpi_note(out, "MADT: too short (length %u < %u), table ignored",
			  len, ACPI_MADT_ENTRIES);
		return false;
	}
	out->has_madt = true;
	out->lapic_addr = get_le32(t + ACPI_MADT_LAPIC_ADDR);
	out->pcat_compat = get_le32(t + ACPI_MADT_FLAGS) & ACPI_MADT_PCAT_COMPAT;
	w->madt_rev = t[ACPI_SDT_REVISION];
	for (off = ACPI_MADT_ENTRIES; off < len; off += sublen) {
		if (len - off < 2) {
			acpi_note(out, "MADT: stray byte at offset %u, ignored", off);
			break;
		}
		sublen = t[off + ACPI_MADT_SUB_LENGTH];
		if (sublen < 2 || sublen > len - off) {
			acpi_note(out, "MADT: subtable at offset %u has bad length %u (%u left), walk stopped",
				  off, sublen, len - off);
			break;
		}
		acpi_madt_entry(w, t + off, off);
	}
	if (w->dup_ids)
		acpi_note(out, "MADT: %u entries with duplicate APIC IDs ignored", w->dup_ids);
	return true;
}

/* --- HPET ----------------------------------------------------------------- */

/* IA-PC HPET 1.0a, "The ACPI 2.0 HPET Description Table (HPET)" */
static bool acpi_parse_hpet(struct acpi_walk *w, const uint8_t *t, uint32_t len)
{
	struct acpi_info *out = w->out;
	struct acpi_gas base;

	if (len < ACPI_HPET_LEN) {
		acpi_note(out, "HPET: too short (length %u < %u), table ignored",
			  len, ACPI_HPET_LEN);
		return false;
	}
	acpi_get_gas(&base, t + ACPI_HPET_BASE);
	/* The event timer block is memory mapped; anything else is bogus. */
	if (base.space_id != ACPI_GAS_MEMORY || !base.address) {
		acpi_note(out, "HPET: base %#lx in address space %u, table ignored",
			  base.address, base.space_id);
		return false;
	}
	out->has_hpet = true;
	out->hpet_addr = base.address;
	out->hpet_number = t[ACPI_HPET_NUMBER];
	out->hpet_min_tick = get_le16(t + ACPI_HPET_MIN_TICK);
	return true;
}

/* --- FADT ----------------------------------------------------------------- */

static bool acpi_fadt_has(uint32_t len, uint32_t off, uint32_t size)
{
	return off + size <= len;       /* len <= ACPI_TABLE_MAX_LEN: no overflow */
}

/* A register block as an I/O port: the 64-bit X_ GAS supersedes the 32-bit
 * field when its address is nonzero ("Fixed ACPI Description Table
 * (FADT)"), but is only a port when it is in System I/O space. */
static uint32_t acpi_fadt_port(struct acpi_walk *w, const uint8_t *t, uint32_t len,
			       uint32_t off, uint32_t x_off, const char *name)
{
	uint32_t port = acpi_fadt_has(len, off, 4) ? get_le32(t + off) : 0;
	struct acpi_gas x;

	if (acpi_fadt_has(len, x_off, ACPI_GAS_LEN)) {
		acpi_get_gas(&x, t + x_off);
		if (x.address && x.space_id == ACPI_GAS_IO && x.address <= 0xffff)
			return (uint32_t)x.address;
		if (x.address)
			acpi_note(w->out, "FADT: X_%s %#lx (space %u) is not an I/O port, %s used",
				  name, x.address, x.space_id, name);
	}
	if (port > 0xffff) {
		acpi_note(w->out, "FADT: %s %#x is not an I/O port, ignored", name, port);
		return 0;
	}
	return port;
}

/* One AML integer at a[0..n): BytePrefix, WordPrefix, DWordPrefix,
 * Zero, One (ACPI spec, "Data Objects Encoding"); its size in *used, 0
 * when it is none of those. */
static bool aml_integer(const uint8_t *a, size_t n, uint32_t *val, size_t *used)
{
	*used = 0;
	if (!n)
		return false;
	switch (a[0]) {
	case 0x00: *val = 0; *used = 1; return true;            /* ZeroOp */
	case 0x01: *val = 1; *used = 1; return true;            /* OneOp */
	case 0x0a:                                              /* BytePrefix */
		if (n < 2)
			return false;
		*val = a[1]; *used = 2; return true;
	case 0x0b:                                              /* WordPrefix */
		if (n < 3)
			return false;
		*val = get_le16(a + 1); *used = 3; return true;
	case 0x0c:                                              /* DWordPrefix */
		if (n < 5)
			return false;
		*val = get_le32(a + 1); *used = 5; return true;
	default:
		return false;
	}
}

bool acpi_aml_find_s5(const uint8_t *aml, size_t len, uint8_t *typa, uint8_t *typb)
{
	for (size_t i = 1; i + 4 <= len; i++) {
		size_t p, pkglen_bytes, used;
		uint32_t a, b = 0;
		uint8_t nelem;

		if (memcmp(aml + i, "_S5_", 4))
			continue;
		/* NameOp right before, or NameOp then the root prefix '\'. */
		if (!(aml[i - 1] == 0x08 || (aml[i - 1] == 0x5c && i >= 2 && aml[i - 2] == 0x08)))
			continue;
		p = i + 4;
		if (p >= len || aml[p] != 0x12)                 /* PackageOp */
			continue;
		p++;
		if (p >= len)
			continue;
		pkglen_bytes = (size_t)(aml[p] >> 6) + 1;       /* PkgLength: 1-4 bytes */
		p += pkglen_bytes;
		if (p >= len)
			continue;
		nelem = aml[p++];
		if (!nelem || !aml_integer(aml + p, len - p, &a, &used))
			continue;
		p += used;
		if (nelem > 1 && !aml_integer(aml + p, len - p, &b, &used))
			b = 0;
		*typa = (uint8_t)(a & 7);               /* SLP_TYPx is 3 bits */
		*typb = (uint8_t)(b & 7);
		return true;
	}
	return false;
}

/* The DSDT's \_S5 values (ACPI spec, "\_S5 (S5 System State)"): the
 * X_DSDT address where the FADT has a non-zero one, else DSDT. */
static void acpi_parse_dsdt(struct acpi_walk *w, const uint8_t *fadt, uint32_t flen)
{
	uint64_t phys = 0;
	const uint8_t *t;
	uint32_t len;

	if (acpi_fadt_has(flen, ACPI_FADT_X_DSDT, 8))
		phys = get_le64(fadt + ACPI_FADT_X_DSDT);
	if (!phys && acpi_fadt_has(flen, ACPI_FADT_DSDT, 4))
		phys = get_le32(fadt + ACPI_FADT_DSDT);
	if (!phys)
		return;
	if (!acpi_map_sdt(w, phys, "DSDT", "DSDT", &t, &len)) {
		acpi_note(w->out, "%s: no \\_S5, ACPI power-off not used", w->why);
		return;
	}
	w->out->has_s5 = acpi_aml_find_s5(t + ACPI_SDT_HDR_LEN, len - ACPI_SDT_HDR_LEN,
					  &w->out->s5_typa, &w->out->s5_typb);
}

static bool acpi_parse_fadt(struct acpi_walk *w, const uint8_t *t, uint32_t len)
{
	struct acpi_info *out = w->out;
	uint32_t flags = 0;

	out->has_fadt = true;
	out->fadt_revision = t[ACPI_SDT_REVISION];
	if (acpi_fadt_has(len, ACPI_FADT_FLAGS, 4))
		flags = get_le32(t + ACPI_FADT_FLAGS);
	out->hw_reduced = flags & ACPI_FADT_HW_REDUCED;
	/* HW-reduced ACPI: OSPM ignores the fixed hardware register fields
	 * (PM1, PM timer, their X_ forms) and TMR_VAL_EXT, but not RESET_REG. */
	if (!out->hw_reduced) {
		out->pm1a_cnt_port = acpi_fadt_port(w, t, len, ACPI_FADT_PM1A_CNT_BLK,
						    ACPI_FADT_X_PM1A_CNT_BLK, "PM1a_CNT_BLK");
		out->pm1b_cnt_port = acpi_fadt_port(w, t, len, ACPI_FADT_PM1B_CNT_BLK,
						    ACPI_FADT_X_PM1B_CNT_BLK, "PM1b_CNT_BLK");
		if (out->pm1a_cnt_port)
			acpi_parse_dsdt(w, t, len);
		out->pm_tmr_port = acpi_fadt_port(w, t, len, ACPI_FADT_PM_TMR_BLK,
						  ACPI_FADT_X_PM_TMR_BLK, "PM_TMR_BLK");
		out->pm_tmr_32bit = flags & ACPI_FADT_TMR_VAL_EXT;
	}
	/* RESET_REG_SUP is a reserved bit in the ACPI 1.0 FADT, which ends
	 * before RESET_REG: a short table cannot claim a reset register. */
	if (acpi_fadt_has(len, ACPI_FADT_RESET_VALUE, 1)) {
		acpi_get_gas(&out->reset_reg, t + ACPI_FADT_RESET_REG);
		out->reset_value = t[ACPI_FADT_RESET_VALUE];
		out->reset_supported = flags & ACPI_FADT_RESET_REG_SUP;
	}
	return true;
}

/* --- SPCR ----------------------------------------------------------------- */

/* Register width of a UART's GAS (acpi_info.spcr_reg_bytes). */
static uint8_t acpi_gas_reg_bytes(const struct acpi_gas *g)
{
	if (g->access_size >= 1 && g->access_size <= 4)
		return (uint8_t)(1u << (g->access_size - 1));
	if (!g->access_size && (g->bit_width == 8 || g->bit_width == 16 ||
				g->bit_width == 32 || g->bit_width == 64))
		return g->bit_width / 8;
	return 0;
}

/* The table is kept as found; whether tickvisor can drive that UART (a
 * 16550 by I/O port, or in memory with byte or 32-bit registers) is the
 * caller's call, which it names. */
static bool acpi_parse_spcr(struct acpi_walk *w, const uint8_t *t, uint32_t len)
{
	static const uint32_t bauds[8] = { [3] = 9600, [4] = 19200, [6] = 57600, [7] = 115200 };
	struct acpi_info *out = w->out;
	uint8_t baud;

	if (len < ACPI_SPCR_LEN) {
		acpi_note(out, "SPCR: too short (length %u < %u), table ignored",
			  len, ACPI_SPCR_LEN);
		return false;
	}
	baud = t[ACPI_SPCR_BAUD];
	if (baud >= ARRAY_SIZE(bauds) || (baud && !bauds[baud])) {
		acpi_note(out, "SPCR: baud rate code %u is not one the table defines, table "
			  "ignored", baud);
		return false;
	}
	out->has_spcr = true;
	out->spcr_type = t[ACPI_SPCR_TYPE];
	acpi_get_gas(&out->spcr_base, t + ACPI_SPCR_BASE);
	out->spcr_reg_bytes = acpi_gas_reg_bytes(&out->spcr_base);
	out->spcr_baud = bauds[baud];
	return true;
}

/* --- root table ------------------------------------------------------------ */

struct acpi_table_ops {
	char sig[4];
	const char *name;
	/* Returns false, with a note, when the table's contents are unusable. */
	bool (*parse)(struct acpi_walk *w, const uint8_t *t, uint32_t len);
};

static const struct acpi_table_ops acpi_tables[] = {
	{ { 'A', 'P', 'I', 'C' }, "MADT", acpi_parse_madt },
	{ { 'H', 'P', 'E', 'T' }, "HPET", acpi_parse_hpet },
	{ { 'F', 'A', 'C', 'P' }, "FADT", acpi_parse_fadt },
	{ { 'S', 'P', 'C', 'R' }, "SPCR", acpi_parse_spcr },
};

/* One root table entry: tables we do not use (DSDT, MCFG, SSDT...) are
 * skipped on their signature alone; for the others the first good copy
 * wins. */
static void acpi_visit(struct acpi_walk *w, const char *root, uint32_t idx, uint64_t phys)
{
	const uint8_t *t;
	uint32_t len, i;

	if (!phys) {
		acpi_note(w->out, "%s: entry %u is null, skipped", root, idx);
		return;
	}
	t = acpi_map(w, phys, ACPI_SDT_HDR_LEN);
	if (!t) {
		acpi_note(w->out, "%s: entry %u (%#lx) cannot be mapped, skipped", root, idx, phys);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(acpi_tables); i++)
		if (!memcmp(t + ACPI_SDT_SIGNATURE, acpi_tables[i].sig, 4))
			break;
	if (i == ARRAY_SIZE(acpi_tables))
		return;
	if (w->seen & BIT(i)) {
		acpi_note(w->out, "%s: another table at %#lx ignored", acpi_tables[i].name, phys);
		return;
	}
	if (!acpi_map_sdt(w, phys, acpi_tables[i].name, acpi_tables[i].sig, &t, &len)) {
		acpi_note(w->out, "%s, table ignored", w->why);
		return;
	}
	if (acpi_tables[i].parse(w, t, len))
		w->seen |= BIT(i);
}

/* "Root System Description Table (RSDT)" has 32-bit entries, "Extended
 * System Description Table (XSDT)" 64-bit ones (not 8-byte aligned). */
static bool acpi_walk_root(struct acpi_walk *w, uint64_t phys, bool xsdt)
{
	const char *name = xsdt ? "XSDT" : "RSDT";
	uint32_t esize = xsdt ? 8 : 4, len, n;
	const uint8_t *t;

	if (!acpi_map_sdt(w, phys, name, name, &t, &len))
		return false;
	n = (len - ACPI_SDT_HDR_LEN) / esize;
	if ((len - ACPI_SDT_HDR_LEN) % esize)
		acpi_note(w->out, "%s: length %u ends inside an entry, partial entry ignored",
			  name, len);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = t + ACPI_SDT_HDR_LEN + i * esize;

		acpi_visit(w, name, i, xsdt ? get_le64(e) : get_le32(e));
	}
	return true;
}

const void *acpi_map_identity(uint64_t phys, size_t len, void *ctx)
{
	(void)len;
	(void)ctx;
	return phys ? (const void *)(uintptr_t)phys : NULL;
}

int acpi_parse(struct acpi_info *out, uint64_t rsdp_phys, acpi_map_fn map, void *ctx,
	       char *err, size_t errlen)
{
	struct acpi_walk w = { .out = out, .map = map, .ctx = ctx };
	uint64_t root = 0;
	bool xsdt = false, ok;

	memset(out, 0, sizeof(*out));
	if (!map)
		ok = acpi_why(&w, "ACPI: no map function");
	else
		ok = acpi_read_rsdp(&w, rsdp_phys, &root, &xsdt) &&
		     acpi_walk_root(&w, root, xsdt);
	if (!ok) {
		if (err && errlen)
			strlcpy(err, w.why, errlen);
		return -1;
	}
	out->present = true;
	out->xsdt = xsdt;
	return 0;
}
