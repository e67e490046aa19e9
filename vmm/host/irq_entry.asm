; SPDX-License-Identifier: BSD-2-Clause
;
; Host interrupt and exception entry: 256 stubs of 16 bytes each (so C
; finds stub n at irq_stubs + 16*n without a relocated table), each
; pushing an error code (0 where the CPU pushes none) and the vector,
; then a common path that saves the GPRs as struct irq_frame and calls
;     void irq_dispatch(struct irq_frame *f);
default rel
bits 64

extern irq_dispatch
global irq_stubs

section .text

; Exceptions for which the CPU pushes an error code (SDM Vol. 3A,
; "Exception and Interrupt Reference").
%define HAS_ERR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

align 16
irq_stubs:
%assign v 0
%rep 256
	align 16
%if HAS_ERR(v) == 0
	push qword 0
%endif
	push qword v
	jmp irq_common
%assign v v + 1
%endrep

irq_common:
	push r15
	push r14
	push r13
	push r12
	push r11
	push r10
	push r9
	push r8
	push rbp
	push rdi
	push rsi
	push rdx
	push rcx
	push rbx
	push rax
	mov rdi, rsp
	cld
	call irq_dispatch
	pop rax
	pop rbx
	pop rcx
	pop rdx
	pop rsi
	pop rdi
	pop rbp
	pop r8
	pop r9
	pop r10
	pop r11
	pop r12
	pop r13
	pop r14
	pop r15
	add rsp, 16             ; vector and error code
	iretq

section .note.GNU-stack noalloc noexec nowrite progbits
