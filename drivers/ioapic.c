// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/io.h"
#include "drivers/ioapic.h"

enum ioapic_reg {
	IOAPIC_REGSEL = 0x00,
	IOAPIC_WIN    = 0x10,
	IOAPIC_VER    = 0x01,
	IOAPIC_REDIR  = 0x10,   /* entry n: 0x10 + 2n (low), 0x11 + 2n (high) */
};

/* REGSEL and the window are one shared pair: CPUs routing their own
 * inputs at start-up (each its HPET comparator's) take turns. */
static uint32_t ioapic_lock;

static void ioapic_lock_take(void)
{
	while (__atomic_exchange_n(&ioapic_lock, 1, __ATOMIC_ACQUIRE))
		cpu_relax();
}

static void ioapic_lock_drop(void)
{
	__atomic_store_n(&ioapic_lock, 0, __ATOMIC_RELEASE);
}

static uint32_t ioapic_read(uint64_t base, uint32_t reg)
{
	mmio_write32(base + IOAPIC_REGSEL, reg);
	return mmio_read32(base + IOAPIC_WIN);
}

static void ioapic_write(uint64_t base, uint32_t reg, uint32_t v)
{
	mmio_write32(base + IOAPIC_REGSEL, reg);
	mmio_write32(base + IOAPIC_WIN, v);
}

unsigned ioapic_entries(uint64_t base)
{
	uint32_t ver;

	ioapic_lock_take();
	ver = ioapic_read(base, IOAPIC_VER);
	ioapic_lock_drop();

	if (ver == 0xffffffffu)
		return 0;
	return ((ver >> 16) & 0xff) + 1;
}

void ioapic_route(uint64_t base, unsigned pin, uint8_t vector, uint32_t dest, uint32_t mode)
{
	ioapic_lock_take();
	ioapic_write(base, IOAPIC_REDIR + 2 * pin + 1, dest << 24);
	ioapic_write(base, IOAPIC_REDIR + 2 * pin,
		     vector | (mode & (IOAPIC_REDIR_LEVEL | IOAPIC_REDIR_LOW)));
	ioapic_lock_drop();
}

void ioapic_mask(uint64_t base, unsigned pin)
{
	ioapic_lock_take();
	ioapic_write(base, IOAPIC_REDIR + 2 * pin,
		     ioapic_read(base, IOAPIC_REDIR + 2 * pin) | IOAPIC_REDIR_MASKED);
	ioapic_lock_drop();
}


/* Sets the mask bit of each input whose low dword `match` accepts,
 * keeping the rest of the entry; returns how many were unmasked. */
static unsigned mask_where(uint64_t base, unsigned n, int vector)
{
	unsigned masked = 0;

	ioapic_lock_take();
	for (unsigned pin = 0; pin < n; pin++) {
		uint32_t lo = ioapic_read(base, IOAPIC_REDIR + 2 * pin);

		if (lo & IOAPIC_REDIR_MASKED)
			continue;
		if (vector >= 0 && (lo & 0xffu) != (uint32_t)vector)
			continue;
		ioapic_write(base, IOAPIC_REDIR + 2 * pin, lo | IOAPIC_REDIR_MASKED);
		masked++;
	}
	ioapic_lock_drop();
	return masked;
}

unsigned ioapic_mask_all(uint64_t base, unsigned n)
{
	return mask_where(base, n, -1);
}

unsigned ioapic_mask_vector(uint64_t base, unsigned n, uint8_t vector)
{
	return mask_where(base, n, vector);
}
