; SPDX-License-Identifier: BSD-2-Clause
;
; Multiboot v1 entry. The loader (tickvisor, QEMU -kernel, GRUB) enters
; _start in 32-bit protected mode with paging off, EAX = 0x2BADB002 and
; EBX = the physical address of the Multiboot information; the stack, GDT
; and IDT it leaves are not ours to use (Multiboot Specification 0.6.96,
; "Machine state"). We load our own GDT, identity-map the first 4 GiB with
; 2 MiB pages, switch to long mode (Intel SDM Vol. 3A, "Initializing
; IA-32e Mode") and call guest_start(apic_id, mbi) on this CPU's stack.
;
; SMP: the real-mode AP trampoline (smp_trampoline.asm, copied below
; 1 MiB and started by INIT/SIPI) loads a copy of gdt_desc, sets CR0.PE
; and jumps through a copy of ap_entry_far to SEL_CODE32:ap_start32. From
; there APs share this path, reusing the page tables the BSP built, pick
; their own CPU area by APIC ID and end in ap_start(apic_id) (smp.c)
; instead of guest_start().

MB_HEADER_MAGIC equ 0x1BADB002
MB_HEADER_FLAGS equ (1 << 0) | (1 << 1) ; page-aligned modules, memory info;
                                        ; no a.out kludge: loaders use the ELF
                                        ; program headers
MB_BOOT_MAGIC   equ 0x2BADB002

SEL_CODE64      equ 0x08                ; = gdt below
SEL_DATA        equ 0x10
SEL_CODE32      equ 0x18

PTE_P           equ 1 << 0
PTE_W           equ 1 << 1
PTE_PWT         equ 1 << 3
PTE_PCD         equ 1 << 4
PTE_PS          equ 1 << 7              ; 2 MiB page in a PD entry
PD_ENTRIES      equ 4 * 512             ; 4 GiB of 2 MiB pages
MMIO_UC_START   equ 0xFEC00000          ; IOAPIC, HPET, local APIC, flash: uncached

CR0_PE          equ 1 << 0
CR0_MP          equ 1 << 1
CR0_EM          equ 1 << 2
CR0_TS          equ 1 << 3
CR0_NE          equ 1 << 5
CR0_PG          equ 1 << 31
CR4_PAE         equ 1 << 5
CR4_OSFXSR      equ 1 << 9
CR4_OSXMMEXCPT  equ 1 << 10
MSR_EFER        equ 0xC0000080
EFER_LME        equ 1 << 8

COM1            equ 0x3F8
DEBUG_EXIT_PORT equ 0xF4

extern guest_start, ap_start
extern cpu_areas, guest_cpu_area_size, guest_max_cpus   ; from percpu.c
extern __bss_start, __bss_end                           ; from guest.ld

; Writes the NUL-terminated string at [e/rsi] to COM1 and ends the guest
; with status 1: the console is not set up yet when boot fails this early.
%macro EARLY_FAIL 0
%%next:
	lodsb
	test al, al
	jz %%done
	mov dx, COM1
	out dx, al
	jmp %%next
%%done:
	mov dx, DEBUG_EXIT_PORT
	mov eax, 1
	out dx, eax
%%halt:
	cli
	hlt
	jmp %%halt
%endmacro

section .multiboot progbits alloc noexec nowrite align=4
	dd MB_HEADER_MAGIC
	dd MB_HEADER_FLAGS
	dd -(MB_HEADER_MAGIC + MB_HEADER_FLAGS)

section .text.boot progbits alloc exec nowrite align=16
bits 32

global _start
_start:
	cli
	cld
	cmp eax, MB_BOOT_MAGIC
	jne .bad_magic
	; .bss holds the page tables and stacks: wipe it before using any.
	; A loader zeroes it too, but a warm restart or a lax loader may not.
	mov edi, __bss_start
	mov ecx, __bss_end
	sub ecx, edi
	shr ecx, 2
	xor eax, eax
	rep stosd
	mov [mbi_phys], ebx
	; PML4[0] -> PDPT, PDPT[0..3] -> the four page directories.
	mov dword [pml4], pdpt + (PTE_P | PTE_W)
	xor ecx, ecx
.pdpt:
	mov eax, ecx
	shl eax, 12
	add eax, pd + (PTE_P | PTE_W)
	mov [pdpt + ecx * 8], eax
	inc ecx
	cmp ecx, 4
	jb .pdpt
	; PD entry i maps [i * 2 MiB, (i + 1) * 2 MiB) onto itself.
	xor ecx, ecx
.pd:
	mov eax, ecx
	shl eax, 21
	or eax, PTE_P | PTE_W | PTE_PS
	cmp ecx, MMIO_UC_START >> 21
	jb .cached
	or eax, PTE_PCD | PTE_PWT
.cached:
	mov [pd + ecx * 8], eax
	inc ecx
	cmp ecx, PD_ENTRIES
	jb .pd
	xor esi, esi                    ; the BSP's way: guest_start()
	jmp enter_long_mode
.bad_magic:
	mov esi, msg_bad_magic
	EARLY_FAIL

; APs arrive here from the real-mode trampoline (see top) with CS from
; our GDT but DS still holding its real-mode base: load a flat DS before
; enter_long_mode reads gdt_desc through it.
global ap_start32
ap_start32:
	cli
	cld
	mov eax, SEL_DATA
	mov ds, ax
	mov esi, 1                      ; the AP's way: ap_start()

; In: ESI = 0 on the BSP, 1 on an AP. Page tables are built.
enter_long_mode:
	lgdt [gdt_desc]
	mov eax, SEL_DATA
	mov ds, ax
	mov es, ax
	mov ss, ax
	jmp dword SEL_CODE32:.flat_cs   ; CS from our GDT, not the loader's
.flat_cs:
	mov eax, cr4
	or eax, CR4_PAE
	mov cr4, eax
	mov eax, pml4
	mov cr3, eax
	mov ecx, MSR_EFER
	rdmsr
	or eax, EFER_LME
	wrmsr
	mov eax, cr0
	or eax, CR0_PG | CR0_PE         ; long mode is active from here (LMA)
	mov cr0, eax
	jmp dword SEL_CODE64:start64

bits 64
start64:
	mov eax, SEL_DATA
	mov ds, ax
	mov es, ax
	mov ss, ax
	mov fs, ax
	mov gs, ax
	mov r12d, esi                   ; CPUID clobbers ESI's neighbours, not R12
	mov eax, 1
	cpuid
	shr ebx, 24                     ; initial APIC ID: our CPU area
	cmp ebx, guest_max_cpus
	jae .too_many
	; RSP = top of cpu_areas[apic_id]: the area's stack grows down from there
	lea rax, [rbx + 1]
	imul rax, rax, guest_cpu_area_size
	add rax, cpu_areas
	mov rsp, rax
	call enable_sse
	xor ebp, ebp                    ; end of frame chain for debuggers
	mov edi, ebx
	test r12d, r12d
	jnz .ap
	mov esi, [rel mbi_phys]
	call guest_start                ; never returns
	jmp .halt
.ap:
	call ap_start                   ; never returns
.halt:
	cli
	hlt
	jmp .halt
.too_many:
	lea rsi, [rel msg_too_many]
	EARLY_FAIL

; Test code may use SSE (the runtime itself is built without it): FPU
; native (NE), no emulation, no lazy-switch trap (TS), FXSAVE and SIMD
; exceptions enabled (Intel SDM Vol. 3A, "Initialization of the SSE
; Extensions").
enable_sse:
	mov rax, cr0
	and rax, ~(CR0_EM | CR0_TS)
	or rax, CR0_MP | CR0_NE
	mov cr0, rax
	mov rax, cr4
	or rax, CR4_OSFXSR | CR4_OSXMMEXCPT
	mov cr4, rax
	fninit
	ret

section .rodata
msg_bad_magic:
	db "FAIL: boot: EAX is not the Multiboot magic 0x2BADB002", 10, 0
msg_too_many:
	db "FAIL: boot: APIC ID above the 16 CPU areas", 10, 0

section .data
align 16
; Flat segments; accessed bits preset so the CPU never writes here.
global gdt, gdt_desc
gdt:
	dq 0                            ; null
	dq 0x00AF9B000000FFFF           ; SEL_CODE64: L=1, DPL 0
	dq 0x00CF93000000FFFF           ; SEL_DATA: 4 GiB, writable
	dq 0x00CF9B000000FFFF           ; SEL_CODE32: 4 GiB, D=1
gdt_end:
gdt_desc:
	dw gdt_end - gdt - 1
	dd gdt                          ; 32-bit base: also loadable in legacy modes
	dd 0
; m16:32 far pointer to ap_start32, which the trampoline jumps through
; (smp.c copies it, like gdt_desc, into the page below 1 MiB).
global ap_entry_far
ap_entry_far:
	dd ap_start32
	dw SEL_CODE32
mbi_phys:
	dd 0

section .bss nobits alloc noexec write align=4096
pml4:
	resb 4096
pdpt:
	resb 4096
pd:
	resb 4096 * 4
