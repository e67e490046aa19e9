; SPDX-License-Identifier: BSD-2-Clause
;
; Real-mode AP entry. A SIPI with vector V starts an AP in real mode at
; CS:IP = (V << 8):0000, physical address V * 4096, in the state after
; INIT with EDX = the processor signature (Intel SDM Vol. 3A, "MP
; Initialization Protocol Algorithm for MP Systems" and "Processor State
; After Reset", INIT column). smp.c copies smp_tramp_start..smp_tramp_end
; to a free page below 1 MiB and fills the two slots below from
; boot.asm's gdt_desc and ap_entry_far; their 32-bit bases and offsets
; are out of reach of real-mode addressing, the copies are not.
;
; A broadcast SIPI starts every AP here at once: the code uses no stack
; and writes only the AP's own log entry (struct smp_tramp_log in smp.h,
; one per initial APIC ID, right after the blob in the page): what the AP
; was started with, and how often it came through here.
;
; Then: load the GDT, clear CR0.CD/NW (INIT sets both), set CR0.PE and
; jump far to SEL_CODE32:ap_start32 (boot.asm), which goes on to long
; mode on the BSP's page tables.

extern guest_max_cpus                   ; from percpu.c

CR0_PE          equ 1 << 0
CR0_NW          equ 1 << 29
CR0_CD          equ 1 << 30
LOG_SHIFT       equ 4                   ; 16-byte log entries

; Offsets in the page: DS = CS = page >> 4.
%define OFF(label) ((label) - smp_tramp_start)

; struct smp_tramp_log, in the order smp.h asserts.
LOG_EDX         equ 0
LOG_CR0         equ 4
LOG_CS          equ 8
LOG_ENTRIES     equ 12

section .rodata
bits 16
align 16
global smp_tramp_start, smp_tramp_end, smp_tramp_gdtr, smp_tramp_far
smp_tramp_start:
	cli
	cld
	mov esi, edx                    ; the processor signature, CPUID.1:EAX
	mov edi, cr0
	mov bp, cs
	mov ds, bp
	mov eax, 1
	cpuid
	shr ebx, 24                     ; initial APIC ID
	cmp ebx, guest_max_cpus
	jae .no_log                     ; boot.asm reports it from long mode
	shl bx, LOG_SHIFT
	mov [bx + OFF(smp_tramp_end) + LOG_EDX], esi
	mov [bx + OFF(smp_tramp_end) + LOG_CR0], edi
	mov [bx + OFF(smp_tramp_end) + LOG_CS], bp
	lock inc dword [bx + OFF(smp_tramp_end) + LOG_ENTRIES]
.no_log:
	o32 lgdt [OFF(smp_tramp_gdtr)]
	mov eax, cr0
	and eax, ~(CR0_CD | CR0_NW)
	or eax, CR0_PE
	mov cr0, eax
	; DS keeps its real-mode base until reloaded: the slot is still ours.
	jmp far dword [OFF(smp_tramp_far)]

align 8
smp_tramp_gdtr:                         ; = gdt_desc: limit, 32-bit base
	times 6 db 0
align 8
smp_tramp_far:                          ; = ap_entry_far: offset32, selector
	times 6 db 0
align 16
smp_tramp_end:                          ; the log follows in the page
