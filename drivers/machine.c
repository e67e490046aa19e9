// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/fwcfg.h"
#include "drivers/io.h"
#include "drivers/machine.h"
#include "drivers/x86.h"

/* Bochs's port_e9_hack and QEMU's isa-debugcon answer a read of port
 * 0xE9 with 0xE9 (scripts/emu.py enables the hack); an ISA bus with
 * nothing behind the port reads 0xFF. */
#define E9_PORT 0xe9u

const char *machine_emulated(void)
{
	if (fwcfg_present())
		return "QEMU fw_cfg";
	if (inb(E9_PORT) == E9_PORT)
		return "port 0xE9 debug console";
	if (cpuid(1, 0).ecx & CPUID_1_ECX_HV)
		return "CPUID hypervisor bit";
	return NULL;
}
