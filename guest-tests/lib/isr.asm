; SPDX-License-Identifier: BSD-2-Clause
;
; Interrupt entry stubs for all 256 vectors. Each stub makes the frame
; uniform (a dummy error code where the CPU pushes none, then the vector)
; and joins isr_common, which saves the general-purpose registers as a
; struct ex_regs (desc.h) and calls idt_dispatch(regs). The handler may
; change any field, RIP included: that is how exception fixups resume.
;
; Stack on entry to idt_dispatch, lowest address first: r15..r8, rbp, rdi,
; rsi, rdx, rcx, rbx, rax, vector, error code, then the CPU's rip, cs,
; rflags, rsp, ss. desc.c asserts this order with offsetof().

extern idt_dispatch

; Vectors for which the CPU pushes an error code (Intel SDM Vol. 3A,
; "Exception and Interrupt Reference"): #DF #TS #NP #SS #GP #PF #AC #CP
; #VC #SX.
%define HAS_ERROR_CODE(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || \
			   (v) == 21 || (v) == 29 || (v) == 30)

section .text

%macro ISR_STUB 1
isr_stub_%1:
%if HAS_ERROR_CODE(%1) == 0
	push 0
%endif
	push %1
	jmp isr_common
%endmacro

%assign vec 0
%rep 256
ISR_STUB vec
%assign vec vec + 1
%endrep

; The CPU aligned RSP to 16 before pushing its 5-word frame (64-bit mode
; always does); with error code, vector and 15 registers that is 22 words,
; so RSP is 16-byte aligned again at the call, as the ABI wants.
isr_common:
	push rax
	push rbx
	push rcx
	push rdx
	push rsi
	push rdi
	push rbp
	push r8
	push r9
	push r10
	push r11
	push r12
	push r13
	push r14
	push r15
	mov rdi, rsp
	cld
	call idt_dispatch
	pop r15
	pop r14
	pop r13
	pop r12
	pop r11
	pop r10
	pop r9
	pop r8
	pop rbp
	pop rdi
	pop rsi
	pop rdx
	pop rcx
	pop rbx
	pop rax
	add rsp, 16                     ; vector and error code
	iretq

section .rodata
align 8
; isr_stubs[v] = entry of vector v, for the IDT gates.
global isr_stubs
isr_stubs:
%assign vec 0
%rep 256
	dq isr_stub_ %+ vec
%assign vec vec + 1
%endrep
