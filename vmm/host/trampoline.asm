; SPDX-License-Identifier: BSD-2-Clause
;
; AP start-up trampoline, copied by vmm/host/smp.c to a page below 1 MiB and
; entered by the SIPI in real mode at CS = page >> 4, IP = 0. It climbs to
; long mode on tickvisor's page tables and calls
;     void ap_entry(struct pcpu *p);
; with the stack and pcpu the BSP left in the data block at the end.
; Everything here is addressed relative to trampoline_start (no absolute
; addresses in .text: the image is position independent); the BSP writes
; the absolute ones (GDT base, far-jump targets) and the GDT's descriptors
; (spelled once, in C) into the data block.
default rel

global trampoline_start
global trampoline_end
global trampoline_data

%include "x86.inc"

section .text

%define OFF(x) ((x) - trampoline_start)
%define TR_CLAIMED 0xffffffff           ; vmm/host/smp.c: TRAMP_CLAIMED
%define TR_CLOSED  0xfffffffe           ; vmm/host/smp.c: TRAMP_CLOSED

bits 16
trampoline_start:
	cli
	cld
	mov ax, cs
	mov ds, ax
	xor ebx, ebx
	mov bx, ax
	shl ebx, 4                      ; ebx = physical base of this page
	o32 lgdt [OFF(tr_gdtr)]
	mov eax, cr0
	or eax, X86_CR0_PE
	mov cr0, eax
	o32 jmp far [OFF(tr_pm32_ptr)]

bits 32
tr_pm32:
	mov ax, 0x10
	mov ds, ax
	mov es, ax
	mov ss, ax
	mov eax, cr4
	or eax, X86_CR4_PAE
	mov cr4, eax
	mov eax, [ebx + OFF(tr_cr3)]
	mov cr3, eax
	mov ecx, X86_MSR_EFER
	rdmsr
	or eax, X86_EFER_LME
	wrmsr
	mov eax, cr0
	and eax, ~(X86_CR0_CD | X86_CR0_NW)     ; INIT leaves them set: cache on
	or eax, X86_CR0_PG | X86_CR0_NE | X86_CR0_PE
	mov cr0, eax
	jmp far [ebx + OFF(tr_lm64_ptr)]

bits 64
tr_lm64:
	mov ax, 0x10
	mov ds, ax
	mov es, ax
	mov ss, ax
	; The data block is this AP's only if tr_owner still holds its APIC
	; ID; it takes it by swapping in TR_CLAIMED (the C side:
	; __atomic_compare_exchange_n(&tr_owner, &id, TR_CLAIMED)). An AP
	; that answers after the BSP gave up on it finds TR_CLOSED or the
	; next AP's ID there and stops before using stack or pcpu.
	mov r8, rbx
	cmp byte [r8 + OFF(tr_id_leaf_b)], 0
	je .leaf1
	mov eax, 0xb                    ; CPUID.0BH:EDX = x2APIC ID
	xor ecx, ecx
	cpuid
	mov eax, edx
	jmp .claim
.leaf1:
	mov eax, 1                      ; CPUID.01H:EBX[31:24] = initial APIC ID
	cpuid
	mov eax, ebx
	shr eax, 24
.claim:
	mov rbx, r8
	mov ecx, TR_CLAIMED
	lock cmpxchg [rbx + OFF(tr_owner)], ecx
	jne .stop
	mov rsp, [rbx + OFF(tr_stack)]
	mov rdi, [rbx + OFF(tr_pcpu)]
	mov dword [rbx + OFF(tr_alive)], 1
	call [rbx + OFF(tr_entry)]
.stop:
	cli
	hlt
	jmp .stop

align 16
trampoline_data:
tr_gdt:                                 ; null, 32-bit code, data, 64-bit code
	times 4 dq 0                    ; patched: vmm/host/smp.c tramp_gdt[], from drivers/x86.h
tr_gdtr:
	dw 4 * 8 - 1
	dd 0                            ; patched: page + tr_gdt
tr_pm32_ptr:
	dd 0                            ; patched: page + tr_pm32
	dw 0x08
tr_lm64_ptr:
	dd 0                            ; patched: page + tr_lm64
	dw 0x18
align 8
tr_cr3:   dq 0
tr_stack: dq 0
tr_pcpu:  dq 0
tr_entry: dq 0
tr_alive: dd 0
tr_owner: dd TR_CLOSED                  ; patched last: the AP's APIC ID
tr_id_leaf_b: db 0                      ; patched: 1 if CPUID leaf 0BH gives IDs
trampoline_end:

; Offsets the BSP patches (relative to trampoline_start).
global tramp_off_gdt, tramp_off_gdtr_base, tramp_off_pm32_ptr, tramp_off_lm64_ptr
global tramp_off_pm32, tramp_off_lm64, tramp_off_cr3, tramp_off_stack
global tramp_off_pcpu, tramp_off_entry, tramp_off_alive, tramp_off_owner, tramp_off_id_leaf_b
section .rodata
tramp_off_gdt:       dd OFF(tr_gdt)
tramp_off_gdtr_base: dd OFF(tr_gdtr) + 2
tramp_off_pm32_ptr:  dd OFF(tr_pm32_ptr)
tramp_off_lm64_ptr:  dd OFF(tr_lm64_ptr)
tramp_off_pm32:      dd OFF(tr_pm32)
tramp_off_lm64:      dd OFF(tr_lm64)
tramp_off_cr3:       dd OFF(tr_cr3)
tramp_off_stack:     dd OFF(tr_stack)
tramp_off_pcpu:      dd OFF(tr_pcpu)
tramp_off_entry:     dd OFF(tr_entry)
tramp_off_alive:     dd OFF(tr_alive)
tramp_off_owner:     dd OFF(tr_owner)
tramp_off_id_leaf_b: dd OFF(tr_id_leaf_b)

section .note.GNU-stack noalloc noexec nowrite progbits
