// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/acpi.c, the host's ACPI parser, over firmware tables: a 5-byte
 * header, then the image (at most 64 KiB). Header byte 0, bits 1:0: the
 * image's physical address, 0, 0xE0000, 0x7FFE0000 or 2^64 - 64 KiB;
 * bits 2-4: make the checksums of the RSDP, the extended RSDP and the
 * root table right; bytes 1-2 (LE16): also those of the root table's
 * entries 0-15; bytes 3-4 (LE16): the RSDP's offset in the image. With
 * a checksum made right the parser goes past it; left as the mutation
 * made it, the table is refused (SPCR, MCFG, DSDT are seeded too: the
 * parser must skip them by signature). Every mapping
 * is a heap copy of exactly the bytes asked for (ASan: nothing read past
 * what was mapped). Invariants:
 *  - 0 with `present`, or -1 with a one-line reason;
 *  - notes, OEM ID, counts and addresses within their bounds: at most
 *    TV_MAX_CPUS APIC IDs held, distinct, never the x2APIC broadcast;
 *    I/O ports below 0x10000 and none for a hardware-reduced FADT; an
 *    HPET with a base address; nothing from a table that was not found;
 *  - the same tables parse the same.
 */
#include <stdlib.h>

#include "drivers/acpi.h"
#include "tests/fuzz/fuzz.h"

#define HDR_LEN         5u
#define IMAGE_MAX       (64 * 1024u)

static const uint64_t bases[] = { 0, 0xe0000, 0x7ffe0000, UINT64_MAX - IMAGE_MAX + 1 };

struct image {
	uint8_t *mem;
	size_t size;
	uint64_t base;
	void **maps;                    /* every mapping, freed after the parse */
	size_t nmaps, cap;
};

static const void *map(uint64_t phys, size_t len, void *ctx)
{
	struct image *im = ctx;
	void *p;

	if (phys < im->base || phys - im->base > im->size || len > im->size - (phys - im->base))
		return NULL;
	if (im->nmaps == im->cap) {
		im->cap = im->cap ? 2 * im->cap : 64;
		im->maps = realloc(im->maps, im->cap * sizeof(*im->maps));
	}
	p = malloc(len ? len : 1);
	memcpy(p, im->mem + (phys - im->base), len);
	im->maps[im->nmaps++] = p;
	return p;
}

static void unmap_all(struct image *im)
{
	for (size_t i = 0; i < im->nmaps; i++)
		free(im->maps[i]);
	im->nmaps = 0;
}

/* The image bytes [phys, phys + len), or NULL. */
static uint8_t *at(struct image *im, uint64_t phys, uint64_t len)
{
	if (phys < im->base || phys - im->base > im->size || len > im->size - (phys - im->base))
		return NULL;
	return im->mem + (phys - im->base);
}

/* Makes bytes [0, len) of t sum to 0 by the byte at `field`. */
static void fix_sum(uint8_t *t, size_t len, size_t field)
{
	uint8_t s = 0;

	t[field] = 0;
	for (size_t i = 0; i < len; i++)
		s += t[i];
	t[field] = (uint8_t)-s;
}

/* A table's checksum, when its header and Length lie in the image. */
static void fix_table(struct image *im, uint64_t phys)
{
	uint8_t *t = at(im, phys, ACPI_SDT_HDR_LEN);
	uint32_t len;

	if (!t)
		return;
	len = get_le32(t + ACPI_SDT_LENGTH);
	if (len >= ACPI_SDT_HDR_LEN && at(im, phys, len))
		fix_sum(t, len, ACPI_SDT_CHECKSUM);
}

static void fix_checksums(struct image *im, uint64_t rsdp, uint8_t flags, uint16_t mask)
{
	uint8_t *r = at(im, rsdp, ACPI_RSDP_V2_LEN), *t;
	uint64_t root;
	bool xsdt;
	uint32_t len, esize;

	if (!r)
		return;
	xsdt = r[ACPI_RSDP_REVISION] >= 2 && get_le64(r + ACPI_RSDP_XSDT);
	root = xsdt ? get_le64(r + ACPI_RSDP_XSDT) : get_le32(r + ACPI_RSDP_RSDT);
	esize = xsdt ? 8 : 4;
	t = at(im, root, ACPI_SDT_HDR_LEN);
	if (t && (len = get_le32(t + ACPI_SDT_LENGTH)) >= ACPI_SDT_HDR_LEN && at(im, root, len)) {
		for (uint32_t i = 0; i < 16 && ACPI_SDT_HDR_LEN + (i + 1) * esize <= len; i++) {
			const uint8_t *e = t + ACPI_SDT_HDR_LEN + i * esize;

			if (mask & BIT(i))
				fix_table(im, xsdt ? get_le64(e) : get_le32(e));
		}
		if (flags & 0x10)
			fix_table(im, root);
	}
	/* The extended checksum covers the first one: that one first. */
	if (flags & 0x04)
		fix_sum(r, ACPI_RSDP_V1_LEN, ACPI_RSDP_CHECKSUM);
	if ((flags & 0x08) && (len = get_le32(r + ACPI_RSDP_LENGTH)) >= ACPI_RSDP_V2_LEN &&
	    len <= ACPI_RSDP_MAX_LEN && at(im, rsdp, len))
		fix_sum(r, len, ACPI_RSDP_XCHECKSUM);
}

static void check_info(const struct acpi_info *a)
{
	FUZZ_CHECK(a->present);
	FUZZ_CHECK(a->oem_id[sizeof(a->oem_id) - 1] == 0 || memchr(a->oem_id, 0, sizeof(a->oem_id)));
	for (const char *c = a->oem_id; *c; c++)
		FUZZ_CHECK(*c >= 0x20 && *c < 0x7f);
	FUZZ_CHECK(!a->xsdt || a->rsdp_revision >= 2);
	FUZZ_CHECK(a->nnotes <= ACPI_MAX_NOTES && (a->nnotes == ACPI_MAX_NOTES || !a->notes_dropped));
	for (uint32_t i = 0; i < a->nnotes; i++)
		FUZZ_CHECK(memchr(a->notes[i], 0, ACPI_NOTE_LEN) && a->notes[i][0]);
	FUZZ_CHECK(a->nids <= TV_MAX_CPUS && a->nids <= a->ncpus);
	FUZZ_CHECK(a->ncpus == a->nids || a->nids == TV_MAX_CPUS);
	for (uint32_t i = 0; i < a->nids; i++) {
		FUZZ_CHECK(a->apic_ids[i] != 0xffffffffu);
		for (uint32_t j = 0; j < i; j++)
			FUZZ_CHECK(a->apic_ids[i] != a->apic_ids[j]);
	}
	if (!a->has_madt)
		FUZZ_CHECK(!a->ncpus && !a->lapic_addr && !a->nioapics && !a->pcat_compat);
	FUZZ_CHECK(a->has_ioapic == (a->nioapics > 0));
	if (!a->has_ioapic)
		FUZZ_CHECK(!a->ioapic_addr && !a->ioapic_id && !a->ioapic_gsi_base);
	FUZZ_CHECK(a->has_hpet == (a->hpet_addr != 0));
	if (!a->has_hpet)
		FUZZ_CHECK(!a->hpet_number && !a->hpet_min_tick);
	FUZZ_CHECK(a->pm1a_cnt_port <= 0xffff && a->pm_tmr_port <= 0xffff);
	if (!a->has_fadt || a->hw_reduced)
		FUZZ_CHECK(!a->pm1a_cnt_port && !a->pm_tmr_port && !a->pm_tmr_32bit);
	if (!a->has_fadt)
		FUZZ_CHECK(!a->fadt_revision && !a->reset_supported && !a->reset_reg.address &&
			   !a->hw_reduced);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint8_t flags = fuzz_u8(&in);
	uint16_t mask = fuzz_u16(&in), off = fuzz_u16(&in);
	struct image im = { .size = MIN(in.n, (size_t)IMAGE_MAX), .base = bases[flags & 3] };
	struct acpi_info *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	char err[ACPI_NOTE_LEN], err2[ACPI_NOTE_LEN];
	uint64_t rsdp = im.base + off;
	int r, r2;

	im.mem = malloc(im.size ? im.size : 1);
	memcpy(im.mem, in.p, im.size);
	fix_checksums(&im, rsdp, flags, mask);
	memset(err, 0x5a, sizeof(err));
	r = acpi_parse(a, rsdp, map, &im, err, sizeof(err));
	unmap_all(&im);
	FUZZ_SAY("acpi_parse: %d %s, %u CPUs, MADT %d HPET %d FADT %d, %u notes\n", r,
		 r ? err : "", a->ncpus, a->has_madt, a->has_hpet, a->has_fadt, a->nnotes);
	FUZZ_CHECK(r == 0 || r == -1);
	if (r) {
		FUZZ_CHECK(memchr(err, 0, sizeof(err)) && err[0]);
		FUZZ_CHECK(!a->present);
	} else {
		check_info(a);
	}
	r2 = acpi_parse(b, rsdp, map, &im, err2, sizeof(err2));
	unmap_all(&im);
	FUZZ_CHECK(r2 == r);
	/* acpi_parse() zeroes *out, then sets fields: padding is zero too */
	FUZZ_CHECK(r ? !strcmp(err, err2) : !memcmp(a, b, sizeof(*a)));
	/* No map function: refused, not followed. */
	FUZZ_CHECK(acpi_parse(b, rsdp, NULL, &im, err2, sizeof(err2)) == -1);
	free(im.maps);
	free(im.mem);
	free(a);
	free(b);
	return 0;
}
