// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/io.h"
#include "drivers/pci.h"

uint32_t pci_read32(unsigned bus, unsigned dev, unsigned fn, unsigned reg)
{
	outl(PCI_CONFIG_ADDR, BIT(31) | (bus << 16) | (dev << 11) | (fn << 8) | (reg & 0xfc));
	return inl(PCI_CONFIG_DATA);
}
