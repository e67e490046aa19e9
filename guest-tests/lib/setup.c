// SPDX-License-Identifier: BSD-2-Clause
/* From boot.asm to main() and back out through exit(). */
#include "lib/setup.h"
#include "lib/apic.h"
#include "lib/desc.h"
#include "lib/io.h"
#include "lib/multiboot.h"
#include "lib/percpu.h"
#include "lib/processor.h"
#include "lib/serial.h"

/* Order matters: this_cpu() (console lock, exception fixups) needs the
 * per-CPU area; exception reports need the console and the IDT. */
/* A BIOS leaves the 8259s unmasked with IRQ0 on vector 8 (#DF's): mask
 * them before anything enables interrupts; guests use the local APIC. */
static void pic_mask_all(void)
{
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

void guest_start(unsigned apic_id, uint32_t mbi_phys)
{
	percpu_init(apic_id);
	pic_mask_all();
	serial_init();
	idt_init();
	apic_cpu_init();
	multiboot_parse(mbi_phys);
	args_init(boot_info.cmdline);
	exit(main(guest_argc, guest_argv));
}
