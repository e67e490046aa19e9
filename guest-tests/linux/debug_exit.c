// SPDX-License-Identifier: BSD-2-Clause
/* tickvisor-exit STATUS: end the Linux guest with STATUS.
 *
 * Under tickvisor a write to the debug-exit port 0xf4 ends the guest with
 * the written value as its status (vmm/dev/dev_debug_exit.c; QEMU's
 * isa-debug-exit reports (v << 1) | 1 instead). Debian's cloud kernel has
 * no /dev/port (CONFIG_DEVPORT is off), so the port is reached with
 * ioperm(2) and an OUT from user space. On a machine where nothing
 * listens at 0xf4 (the native GRUB baseline in Bochs) the write is lost
 * and the guest powers itself off instead.
 *
 * Freestanding on purpose: no libc, so the initramfs needs nothing more
 * for it and it builds with the project's own gcc (-nostdlib -static). */

#define SYS_write	1
#define SYS_reboot	169
#define SYS_ioperm	173
#define SYS_exit	60

#define DEBUG_EXIT_PORT	0xf4u

#define REBOOT_MAGIC1		0xfee1deadu
#define REBOOT_MAGIC2		0x28121969u
#define REBOOT_CMD_POWER_OFF	0x4321fedcu

static long debug_exit_syscall3(long nr, long a, long b, long c)
{
	long ret;

	asm volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
		     : "rcx", "r11", "memory");
	return ret;
}

static void debug_exit_say(const char *s)
{
	long n = 0;

	while (s[n])
		n++;
	debug_exit_syscall3(SYS_write, 2, (long)s, n);
}

/* A decimal status, 0..2^32-1; anything else is refused. */
static int debug_exit_parse(const char *s, unsigned int *out)
{
	unsigned long v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 0xffffffffu)
			return -1;
	}
	*out = (unsigned int)v;
	return 0;
}

/* Returns the exit status of the program itself when the guest goes on. */
static int debug_exit_main(long argc, char **argv)
{
	unsigned int status = 0;

	if (argc != 2 || debug_exit_parse(argv[1], &status)) {
		debug_exit_say("usage: tickvisor-exit STATUS (decimal)\n");
		return 2;
	}
	if (debug_exit_syscall3(SYS_ioperm, DEBUG_EXIT_PORT, 4, 1) == 0)
		asm volatile("outl %0, %w1" : : "a"(status), "Nd"(DEBUG_EXIT_PORT));
	/* Still here: no debug-exit device. Power off (ACPI S5 natively). */
	debug_exit_say("tickvisor-exit: no debug-exit port answered; powering off\n");
	debug_exit_syscall3(SYS_reboot, REBOOT_MAGIC1, REBOOT_MAGIC2, REBOOT_CMD_POWER_OFF);
	return 1;
}

/* The kernel enters with argc at (%rsp), argv right above it. */
asm(".globl _start\n"
    "_start:\n"
    "	mov (%rsp), %rdi\n"
    "	lea 8(%rsp), %rsi\n"
    "	and $-16, %rsp\n"
    "	call debug_exit_entry\n"
    "	hlt\n");

void debug_exit_entry(long argc, char **argv);
void debug_exit_entry(long argc, char **argv)
{
	long status = debug_exit_main(argc, argv);

	for (;;)
		debug_exit_syscall3(SYS_exit, status, 0, 0);
}
