/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The smallest useful Multiboot kernel, for tests/unit/test_multiboot.c:
 * a header, an entry point that reports EAX through the debug-exit port,
 * a data marker and a bss. Built as ELF32 and ELF64 (the code is 32-bit
 * either way: "Machine state" starts the kernel in protected mode):
 *
 *   gcc -m32 -nostdlib -static -no-pie -Wl,-Ttext=0x100000 -Wl,-n \
 *       -Wl,--build-id=none -Wl,--no-warn-rwx-segments -s -o kernel32.elf kernel.S
 *   gcc -m64 -nostdlib -static -no-pie -Wl,-Ttext=0x100000 -Wl,-n \
 *       -Wl,--build-id=none -Wl,--no-warn-rwx-segments -s -o kernel64.elf kernel.S
 */
#define MB_HEADER_MAGIC         0x1BADB002
#define MB_FLAGS                0x00000003      /* page-aligned modules, memory info */
#define MB_BOOTLOADER_MAGIC     0x2BADB002
#define DEBUG_EXIT_PORT         0xf4

	.text
	.code32
	.align 4
mb_header:                              /* first in .text: at 0x100000 */
	.long MB_HEADER_MAGIC
	.long MB_FLAGS
	.long -(MB_HEADER_MAGIC + MB_FLAGS)

	.globl _start
_start:                                 /* 0x10000c */
	mov $stack_top, %esp
	cmp $MB_BOOTLOADER_MAGIC, %eax
	sete %al
	movzbl %al, %eax                /* 1: booted by a Multiboot loader */
	out %eax, $DEBUG_EXIT_PORT
1:	hlt
	jmp 1b

	.data
	.globl marker
marker:
	.asciz "tickvisor multiboot test kernel"

	.bss
	.align 16
stack:
	.space 4096
stack_top:
