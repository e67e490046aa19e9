// SPDX-License-Identifier: BSD-2-Clause
/* fw_cfg over legacy port I/O; see fwcfg.h. */
#include "lib/fwcfg.h"
#include "lib/io.h"
#include "lib/multiboot.h"
#include "lib/string.h"

void fwcfg_read(enum fwcfg_key key, void *buf, size_t len)
{
	uint8_t *p = buf;

	outw(FWCFG_PORT_SEL, key);
	while (len--)
		*p++ = inb(FWCFG_PORT_DATA);
}

/* Cached: each byte read is a VM exit under tickvisor. */
bool fwcfg_present(void)
{
	static int present = -1;
	char sig[4];

	if (present < 0) {
		fwcfg_read(FWCFG_SIGNATURE, sig, sizeof(sig));
		present = !memcmp(sig, "QEMU", sizeof(sig));
	}
	return present;
}

static uint64_t fwcfg_read_le(enum fwcfg_key key, size_t len)
{
	uint8_t b[8] = { 0 };
	uint64_t v = 0;

	fwcfg_read(key, b, len);
	for (size_t i = len; i--;)
		v = v << 8 | b[i];
	return v;
}

unsigned fwcfg_cpu_count(void)
{
	unsigned n = fwcfg_present() ? (unsigned)fwcfg_read_le(FWCFG_NB_CPUS, 2) : 0;

	return n ? n : 1;
}

uint64_t fwcfg_ram_size(void)
{
	return fwcfg_present() ? fwcfg_read_le(FWCFG_RAM_SIZE, 8) : boot_ram_size();
}
