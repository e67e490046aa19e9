// SPDX-License-Identifier: BSD-2-Clause
/*
 * Does the firmware's console already write to a serial port? Then a line
 * printed before ExitBootServices must not also go to that UART directly,
 * or it appears twice on it (OVMF's ConOut is the screen and a terminal
 * on the first UART). The answer is in the ConOut variable (UEFI spec,
 * "Globally Defined Variables"): a multi-instance device path, where a
 * serial console is an ACPI node for a COM port (PNP0501) followed by a
 * UART messaging node. The node's UID does not say which I/O port it is
 * (OVMF names a lone COM2 UID 0); boot/efi_main.c takes the first UART
 * that answers for the firmware's.
 */
#include "boot/efi.h"

#define CONOUT_MAX        2048u         /* bytes of device path read */
#define PNP_COM_UART      0x0501u       /* PNP0501: 16550-compatible COM port */

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Walks device path nodes [Type, SubType, Length16, data]; a malformed
 * length ends the walk with "no" (then the UART is written directly:
 * a line twice is better than none). */
static bool path_has_uart(const uint8_t *p, size_t size)
{
	bool after_com = false;
	size_t len;

	for (size_t off = 0; off + 4 <= size; off += len) {
		const uint8_t *n = p + off;

		len = (size_t)n[2] | (size_t)n[3] << 8;
		if (len < 4 || off + len > size)
			return false;
		if (n[0] == MESSAGING_DEVICE_PATH && n[1] == MSG_UART_DP && after_com)
			return true;
		after_com = n[0] == ACPI_DEVICE_PATH && n[1] == ACPI_DP && len >= 12 &&
			    rd32(n + 4) == EISA_PNP_ID(PNP_COM_UART);
	}
	return false;
}

bool efi_conout_has_uart(void)
{
	static EFI_GUID global = EFI_GLOBAL_VARIABLE;
	static uint8_t path[CONOUT_MAX];
	UINTN size = sizeof(path);
	UINT32 attr;

	if (EFI_ERROR(RT->GetVariable(L"ConOut", &global, &attr, &size, path)))
		return false;
	return path_has_uart(path, size);
}
