// SPDX-License-Identifier: BSD-2-Clause
/* Ending the guest, wherever it runs. */
#include "lib/setup.h"
#include "lib/io.h"
#include "lib/printf.h"
#include "lib/processor.h"
#include "lib/serial.h"

void exit(int status)
{
	printf("EXIT: status %d\n", status);
	/* Real UARTs still shift the last bytes out: let them finish. */
	serial_flush();
	/* tickvisor ends the guest with this status; QEMU's isa-debug-exit
	 * exits with (status << 1) | 1. */
	outl(DEBUG_EXIT_PORT, (uint32_t)status);
	/* Still running: no debug-exit device (bare hardware, Bochs). The
	 * status is lost; the serial log has it. */
	outw(ACPI_PM1A_CNT_Q35, ACPI_PM1_SLP_EN);
	outw(ACPI_PM1A_CNT_PIIX4, ACPI_PM1_SLP_EN);
	for (;;) {
		cli();
		hlt();
	}
}
