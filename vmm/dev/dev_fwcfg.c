// SPDX-License-Identifier: BSD-2-Clause
/*
 * QEMU's fw_cfg, the legacy port interface only (selector 0x510, data
 * 0x511): the signature, the interface ID, the RAM size and the CPU
 * count, so guests written for QEMU find them. Other keys read as 0.
 */
#include "drivers/fwcfg.h"
#include "vmm/dev/dev_ports.h"

#define FWCFG_ID_TRADITIONAL 1u
#define FWCFG_MAX_CPUS       0x000fu
#define FWCFG_FILE_DIR       0x0019u

/* Byte `off` of item `key`, little-endian like QEMU (the file directory
 * count is big-endian, and 0 here). */
static uint8_t fwcfg_byte(const struct guest *g, uint16_t key, uint32_t off)
{
	static const char sig[4] = { 'Q', 'E', 'M', 'U' };
	uint64_t v;

	switch (key) {
	case FWCFG_SIGNATURE: return off < 4 ? (uint8_t)sig[off] : 0;
	case FWCFG_ID:        v = FWCFG_ID_TRADITIONAL; break;
	case FWCFG_RAM_SIZE:  v = g->ram_size; break;
	case FWCFG_NB_CPUS:
	case FWCFG_MAX_CPUS:  v = g->nvcpus; break;
	default:              return 0;
	}
	return off < 8 ? (uint8_t)(v >> (8 * off)) : 0;
}

int io_fwcfg(struct vcpu *v, struct io_req *r)
{
	struct guest_devices *d = &v->guest->dev;

	spin_lock(&d->lock);
	if (r->port == FWCFG_PORT_SEL) {
		if (!r->in && r->size == 2) {
			d->fwcfg_key = (uint16_t)r->val;
			d->fwcfg_off = 0;
		} else if (r->in) {
			r->val = ~0u;
		}
	} else if (r->in) {
		r->val = 0;
		for (unsigned i = 0; i < r->size; i++)
			r->val |= (uint32_t)fwcfg_byte(v->guest, d->fwcfg_key, d->fwcfg_off++) << (8 * i);
	}
	spin_unlock(&d->lock);
	return 0;
}
