/* SPDX-License-Identifier: BSD-2-Clause */
/* PCI configuration mechanism #1 (ports 0xCF8/0xCFC), host side. */
#ifndef DRIVERS_PCI_H
#define DRIVERS_PCI_H

#include "drivers/base.h"

#define PCI_CONFIG_ADDR 0xcf8u
#define PCI_CONFIG_DATA 0xcfcu

uint32_t pci_read32(unsigned bus, unsigned dev, unsigned fn, unsigned reg);

#endif
