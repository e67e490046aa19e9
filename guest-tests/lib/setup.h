/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The guest's life: boot.asm → guest_start() → main(argc, argv) → exit().
 *
 * argv comes from the Multiboot command line, split at blanks; argv[0] is
 * its first word (QEMU and GRUB put the image path there, tickvisor what
 * its config says). Words of the form key=value are options: arg_get().
 */
#ifndef GUEST_SETUP_H
#define GUEST_SETUP_H

#include "lib/bits.h"

#define DEBUG_EXIT_PORT         0xf4    /* outl(status): tickvisor, QEMU isa-debug-exit */
/* ACPI PM1a control: SLP_EN with SLP_TYP 0, the S5 (soft-off) type in the
 * QEMU and Bochs DSDTs. */
#define ACPI_PM1A_CNT_Q35       0x604
#define ACPI_PM1A_CNT_PIIX4     0xb004  /* Bochs */
#define ACPI_PM1_SLP_EN         0x2000

#define ARGS_MAX                32u
#define CMDLINE_MAX             1024u

/* Each test image defines this. */
int main(int argc, char **argv);

extern int guest_argc;
extern char **guest_argv;

/* The value of the last "key=value" word, or NULL. */
const char *arg_get(const char *key);
/* arg_get() as a number (strtoul base 0), or def if absent. */
unsigned long arg_get_ulong(const char *key, unsigned long def);

/* Prints "EXIT: status N" and ends the guest with that status: the
 * debug-exit port, else ACPI power-off, else halt forever. */
void __noreturn exit(int status);

/* Entry points from boot.asm, on the CPU's own stack. */
void __noreturn guest_start(unsigned apic_id, uint32_t mbi_phys);
/* Where APs arrive (see boot.asm): smp.c. */
void __noreturn ap_start(unsigned apic_id);

/* For the runtime: splits the command line into guest_argc/guest_argv. */
void args_init(const char *cmdline);

#endif
