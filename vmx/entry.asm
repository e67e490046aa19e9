; SPDX-License-Identifier: BSD-2-Clause
;
; VM entry and exit. The C run loop calls
;     long vmx_run(struct guest_regs *regs);
; which saves the host's callee-saved registers, loads the guest's GPRs
; and enters with VMLAUNCH or VMRESUME. A VM exit lands on vmx_exit
; (VMCS HOST_RIP) with RSP = VMCS HOST_RSP, which points at the saved
; regs pointer; the guest GPRs are stored and vmx_run returns the exit
; reason - except that CPUID, WRMSR and APIC-write exits are first given
; to regs->cpuid_exit, ->wrmsr_exit and ->apic_write_exit, which handle
; them and may send the guest straight back in. Offsets and values come from vmx/offsets.c.
default rel
bits 64

%include "offsets.inc"

; The GPRs the C ABI keeps across calls, stored in regs (rdi) only
; where an exit goes on to the run loop, as the hooks of CPUID, WRMSR and
; APIC-write exits neither read nor write them (vmx/regs.h,
; guest_regs.cpuid_exit).
%macro SAVE_CALLEE_SAVED_BUT_RBX 0
	mov [rdi + REGS_RBP], rbp
	mov [rdi + REGS_R12], r12
	mov [rdi + REGS_R13], r13
	mov [rdi + REGS_R14], r14
	mov [rdi + REGS_R15], r15
%endmacro
%macro SAVE_CALLEE_SAVED 0
	mov [rdi + REGS_RBX], rbx
	SAVE_CALLEE_SAVED_BUT_RBX
%endmacro

global vmx_run
global vmx_exit
global vmx_insn_fail_thunk:function hidden
extern vmx_insn_failed

section .text

vmx_run:
	push rbp
	push rbx
	push r12
	push r13
	push r14
	push r15
	push rdi                                ; regs, found again at exit
	; if (regs->host_rsp != rsp) vmwrite(HOST_RSP, regs->host_rsp = rsp)
	cmp rsp, [rdi + REGS_HOST_RSP]
	je .rsp_ok
	mov [rdi + REGS_HOST_RSP], rsp
	mov rax, VMCS_FIELD_HOST_RSP
	vmwrite rax, rsp
.rsp_ok:
	; Timer advance: wait for the exact expiry here, as late as possible.
	mov rcx, [rdi + REGS_SPIN_UNTIL]
	test rcx, rcx
	jz .tail
	mov qword [rdi + REGS_SPIN_UNTIL], 0
	; regs->spin_observe(regs), once, in the wait's slack (the stack is
	; 16-byte aligned here: the return address and 7 pushes, and 2 more)
	mov rax, [rdi + REGS_SPIN_OBSERVE]
	test rax, rax
	jz .spin_read
	mov qword [rdi + REGS_SPIN_OBSERVE], 0
	push rdi
	push rcx
	call rax
	pop rcx
	pop rdi
.spin_read:
	rdtsc
	shl rdx, 32
	or rax, rdx
	mov [rdi + REGS_SPIN_ARRIVAL], rax
.spin:
	cmp rax, rcx
	jae .spun
	rdtsc
	shl rdx, 32
	or rax, rdx
	jmp .spin
.spun:
	; rax = now: the preemption-timer count for preempt_at from here,
	; preempt_value() of timer/preempt.h: 0 if due, else
	; ceil(deadline >> rate) - (now >> rate), at most PREEMPT_COUNT_MAX
	cmp byte [rdi + REGS_PREEMPT_LOAD], 0
	je .tail
	mov r8, [rdi + REGS_PREEMPT_AT]
	xor edx, edx
	cmp r8, rax
	jbe .preempt_write
	lea rdx, [r8 - 1]
	movzx ecx, byte [rdi + REGS_PREEMPT_RATE]
	shr rdx, cl
	inc rdx
	shr rax, cl
	sub rdx, rax
	mov eax, PREEMPT_COUNT_MAX
	cmp rdx, rax
	cmova rdx, rax
.preempt_write:
	mov eax, VMCS_FIELD_PREEMPT_TIMER_VALUE
	vmwrite rax, rdx
.tail:
	; guest CR2 (the host never page-faults, so only the guest changes
	; it; writing CR2 is slow, so only when it differs)
	mov rax, cr2
	cmp rax, [rdi + REGS_CR2]
	je .cr2_ok
	mov rax, [rdi + REGS_CR2]
	mov cr2, rax
.cr2_ok:
	mov rax, [rdi + REGS_RAX]
	mov rcx, [rdi + REGS_RCX]
	mov rdx, [rdi + REGS_RDX]
	mov rbx, [rdi + REGS_RBX]
	mov rbp, [rdi + REGS_RBP]
	mov rsi, [rdi + REGS_RSI]
	mov r8,  [rdi + REGS_R8]
	mov r9,  [rdi + REGS_R9]
	mov r10, [rdi + REGS_R10]
	mov r11, [rdi + REGS_R11]
	mov r12, [rdi + REGS_R12]
	mov r13, [rdi + REGS_R13]
	mov r14, [rdi + REGS_R14]
	mov r15, [rdi + REGS_R15]
	cmp byte [rdi + REGS_LAUNCHED], 0
	mov rdi, [rdi + REGS_RDI]               ; mov leaves the flags alone
	jne .resume
	vmlaunch
	jmp .fail
.resume:
	vmresume
.fail:
	; VMfailInvalid (CF=1) -> RUN_FAIL_INVALID, VMfailValid (ZF=1) -> RUN_FAIL_VALID
	mov rax, RUN_FAIL_VALID
	mov rcx, RUN_FAIL_INVALID
	cmovc rax, rcx
	jmp vmx_return

; CPUID, WRMSR and APIC write: if (regs->X_exit && regs->X_exit(regs)) enter again;
; else return RUN_HANDLED (or the reason, without a hook). HOST_RSP is
; 16-byte aligned: vmx_run's return address and seven pushes lie above
; it, so the call keeps the C ABI's alignment. The entry is vmx_run's
; without its first steps (RSP is HOST_RSP here): a hook resumes only
; without an entry wait, CR2 is still the guest's, as root mode never
; changes it, and the callee-saved GPRs still hold the guest's values.
; These exits save CR2 only when they go back to the caller, and CPUID
; never the exit TSC; they save what their hooks read (CPUID rax and
; rcx, WRMSR rax, rcx and rdx, APIC write none; exit_cpuid() writes rbx
; and rdx) and the C ABI's scratch registers, and the callee-saved ones
; only when they go back. Each reason has its own call: WRMSR's is reached
; without a taken branch and the APIC write's after one. In an SMP
; machine Bochs runs each CPU a trace (up to a taken branch) at a time,
; and an IPI's notification leaves from the hook, so each branch before
; it costs the round trip a part of the other CPU's turn.
vmx_exit:
	push rdi                                ; guest rdi
	mov rdi, [rsp + 8]                      ; regs
	pop qword [rdi + REGS_RDI]
	mov [rdi + REGS_RAX], rax
	mov [rdi + REGS_RCX], rcx
	mov [rdi + REGS_RSI], rsi
	mov [rdi + REGS_R8], r8
	mov [rdi + REGS_R9], r9
	mov [rdi + REGS_R10], r10
	mov [rdi + REGS_R11], r11
	mov ecx, VMCS_FIELD_EXIT_REASON         ; rcx = vmread(EXIT_REASON)
	vmread rcx, rcx
	jbe vmx_exit_reason_failed
.reason_read:
	cmp ecx, EXIT_REASON_CPUID              ; the full reason: no entry failure
	je vmx_exit_cpuid                       ; needs no CR2, no exit TSC, no more GPRs
.rest:
	mov [rdi + REGS_RDX], rdx
	rdtsc                                   ; when the guest left, for its APIC
	shl rdx, 32
	or rax, rdx
	mov [rdi + REGS_EXIT_TSC], rax
	cmp ecx, EXIT_REASON_WRMSR
	jne .not_wrmsr
	mov rax, [rdi + REGS_WRMSR_EXIT]        ; no CR2 either, unless it returns
	test rax, rax
	jz .no_hook
	call rax
.hooked:                                    ; WRMSR, APIC write
	mov rdi, [rsp]                          ; regs
	test eax, eax
	jnz vmx_exit_hooked.resume_rbx_kept     ; rbx: not saved, still the guest's
	SAVE_CALLEE_SAVED
	jmp vmx_exit_hooked.handled
.not_wrmsr:
	cmp ecx, EXIT_REASON_APIC_WRITE
	jne .no_hook
	mov rax, [rdi + REGS_APIC_WRITE_EXIT]
	test rax, rax
	jz .no_hook
	call rax
	jmp .hooked
.no_hook:                                   ; as any other exit
	SAVE_CALLEE_SAVED
	jmp vmx_exit_other

vmx_exit_hooked:
.resume:
	; Back in at once: only what the C ABI lets the hook change is
	; loaded again (rax-rdx hold CPUID's results, rsi, rdi, r8-r11 the
	; hook's scratch); rbp and r12-r15 still hold the guest's values, as
	; the hook kept them and no resumable handler writes them in regs.
	; CR2 is still the guest's and the VMCS is launched (this was an exit).
	mov rbx, [rdi + REGS_RBX]
.resume_rbx_kept:                           ; WRMSR, APIC write: rbx never stored
	mov rax, [rdi + REGS_RAX]
	mov rcx, [rdi + REGS_RCX]
	mov rdx, [rdi + REGS_RDX]
	mov rsi, [rdi + REGS_RSI]
	mov r8,  [rdi + REGS_R8]
	mov r9,  [rdi + REGS_R9]
	mov r10, [rdi + REGS_R10]
	mov r11, [rdi + REGS_R11]
	mov rdi, [rdi + REGS_RDI]
	vmresume
	jmp vmx_run.fail
.handled:
	mov rax, cr2
	mov [rdi + REGS_CR2], rax
	mov rax, RUN_HANDLED
	jmp vmx_return

vmx_exit_cpuid:
	mov rax, [rdi + REGS_CPUID_EXIT]
	test rax, rax
	jz vmx_exit.rest                        ; no hook: as any other exit
	call rax
	mov rdi, [rsp]                          ; regs
	test eax, eax
	jnz vmx_exit_hooked.resume
	; The hook (exit_cpuid()) wrote rax-rdx in regs: the others C kept.
	SAVE_CALLEE_SAVED_BUT_RBX
	jmp vmx_exit_hooked.handled

; Every other exit, and a hooked reason without its hook: CR2 saved, the
; reason returned.
vmx_exit_other:
	mov rax, cr2                            ; the guest's, for the next entry
	mov [rdi + REGS_CR2], rax
	mov eax, ecx                            ; return the reason
vmx_return:
	pop rdi
	pop r15
	pop r14
	pop r13
	pop r12
	pop rbx
	pop rbp
	ret

; VMREAD of the exit reason failed (a broken host invariant): what
; VMX_INSN_CHECK in vmx/insn.h does for C, with the field still in rcx.
vmx_exit_reason_failed:
	push rcx                                ; the field
	push qword INSN_KIND_VMREAD
	push rax
	lea rax, [rel vmx_exit.reason_read]
	xchg rax, [rsp]                         ; where to resume; rax kept
	call vmx_insn_fail_thunk
	lea rsp, [rsp + 24]
	xor ecx, ecx
	jmp vmx_exit.reason_read

;
; A VMX instruction's failure stub (vmx/vmx_insn.h, VMX_INSN_CHECK) calls here
; with [rsp+8] = the address to resume at, [rsp+16] = which instruction,
; [rsp+24] = its field or type. The stub sits in the middle of compiled
; code that expects no call there, so every register the C ABI lets a
; callee change is kept; the stub pops the three arguments itself.
vmx_insn_fail_thunk:
	push rax
	push rcx
	push rdx
	push rsi
	push rdi
	push r8
	push r9
	push r10
	push r11
	push rbp                                ; 10 pushes: arguments from rbp + 88
	mov rbp, rsp
	and rsp, -16                            ; the C ABI's alignment at the call
	mov rdx, [rbp + 88]                     ; at
	mov rdi, [rbp + 96]                     ; kind
	mov rsi, [rbp + 104]                    ; operand
	call vmx_insn_failed
	mov rsp, rbp
	pop rbp
	pop r11
	pop r10
	pop r9
	pop r8
	pop rdi
	pop rsi
	pop rdx
	pop rcx
	pop rax
	ret

section .note.GNU-stack noalloc noexec nowrite progbits
