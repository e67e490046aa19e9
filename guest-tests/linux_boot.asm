; SPDX-License-Identifier: BSD-2-Clause
;
; linux_boot: a bzImage that is no kernel, only a witness of how it was
; started. tickvisor loads it by the Linux boot protocol
; (vmm/loader/linux.c) because of its setup header; its 32-bit entry then
; checks the machine state and the zero page the protocol promises
; (Documentation/arch/x86/boot.rst, "32-bit Boot Protocol";
; zero-page.rst), prints one PASS/FAIL line per check on COM1 in the
; guest-tests format and ends through the debug-exit port with 0 when all
; held, 1 otherwise. The guest line gives it `cmdline="linux_boot ..."`
; and one module (its initrd): the harness config names guests/basic.elf,
; an ELF, so the initrd must start with 0x7F "ELF".
;
; Built with `nasm -f bin` (guest-tests/guest.mk): offsets 0-0x3ff are the
; boot sector and setup header (setup_sects = 1), the protected-mode code
; follows and runs where the header asks, at pref_address.

; linux_bad_*.asm include this file with one of these changed, to make
; headers tickvisor must refuse (tests/suites.py, "linux-load-errors").
%ifndef PROTOCOL
%define PROTOCOL 0x020f               ; 2.15
%endif
%ifndef INIT_SIZE
%define INIT_SIZE 0x100000             ; code, data and stack
%endif
%ifndef LOADFLAGS
%define LOADFLAGS 0x01                 ; LOADED_HIGH
%endif
PREF_ADDRESS    equ 0x1000000           ; 16 MiB, as a 64-bit kernel's
KERNEL_ALIGN    equ 0x200000
STACK_TOP       equ PREF_ADDRESS + 0x100000
BOOT_CS         equ 0x10
BOOT_DS         equ 0x18
COM1            equ 0x3f8
COM1_LSR        equ COM1 + 5
LSR_THRE        equ 1 << 5
DEBUG_EXIT      equ 0xf4
CR0_PE          equ 1 << 0
CR0_PG          equ 1 << 31
EFLAGS_IF       equ 1 << 9

; zero page offsets (zero-page.rst, boot.rst)
BP_ACPI_RSDP    equ 0x070
BP_E820_ENTRIES equ 0x1e8
BP_HEADER       equ 0x202
BP_TYPE_LOADER  equ 0x210
BP_CODE32_START equ 0x214
BP_RAMDISK      equ 0x218
BP_RAMDISK_SIZE equ 0x21c
BP_CMD_LINE_PTR equ 0x228
BP_E820_TABLE   equ 0x2d0
E820_LEN        equ 20

; --- boot sector and setup header ---------------------------------------------
section .setup start=0
	times 0x1f1 db 0
	db 1                            ; 0x1f1 setup_sects: the code is at 0x400
	dw 0                            ; 0x1f2 root_flags
	dd (pm_end - pm_start + 15) / 16 ; 0x1f4 syssize
	dw 0                            ; 0x1f8 ram_size
	dw 0xffff                       ; 0x1fa vid_mode: normal
	dw 0                            ; 0x1fc root_dev
	dw 0xaa55                       ; 0x1fe boot_flag
	db 0xeb, hdr_end - 0x202        ; 0x200 jump: its offset sizes the header
	db "HdrS"                       ; 0x202
	dw PROTOCOL                     ; 0x206 version
	dd 0                            ; 0x208 realmode_swtch
	dw 0                            ; 0x20c start_sys_seg
	dw 0                            ; 0x20e kernel_version
	db 0                            ; 0x210 type_of_loader (the loader's)
	db LOADFLAGS                    ; 0x211 loadflags
	dw 0                            ; 0x212 setup_move_size
	dd 0x100000                     ; 0x214 code32_start
	dd 0, 0                         ; 0x218 ramdisk_image, ramdisk_size
	dd 0                            ; 0x220 bootsect_kludge
	dw 0                            ; 0x224 heap_end_ptr
	db 0, 0                         ; 0x226 ext_loader_ver, ext_loader_type
	dd 0                            ; 0x228 cmd_line_ptr
	dd 0x7fffffff                   ; 0x22c initrd_addr_max
	dd KERNEL_ALIGN                 ; 0x230 kernel_alignment
	db 1                            ; 0x234 relocatable_kernel
	db 21                           ; 0x235 min_alignment
	dw 0                            ; 0x236 xloadflags: no 64-bit entry
	dd 255                          ; 0x238 cmdline_size
	dd 0                            ; 0x23c hardware_subarch
	dq 0                            ; 0x240 hardware_subarch_data
	dd 0, 0                         ; 0x248 payload_offset, payload_length
	dq 0                            ; 0x250 setup_data
	dq PREF_ADDRESS                 ; 0x258 pref_address
	dd INIT_SIZE                    ; 0x260 init_size
	dd 0                            ; 0x264 handover_offset
	dd 0                            ; 0x268 kernel_info_offset
hdr_end:
	times 0x400 - ($ - $$) db 0

; --- the protected-mode "kernel" ----------------------------------------------
section .text start=0x400 vstart=PREF_ADDRESS
bits 32
pm_start:
	; Everything the protocol fixes is read before anything changes it;
	; the protocol gives no stack, so ours comes first (MOV keeps flags).
	mov [entry_ebx], ebx
	mov [entry_ebp], ebp
	mov [entry_edi], edi
	mov [entry_esi], esi
	mov esp, STACK_TOP
	pushfd
	pop dword [entry_eflags]
	call .here
.here:
	pop eax
	sub eax, .here - pm_start
	mov [entry_eip], eax
	mov ax, cs
	mov [entry_cs], ax
	mov ax, ds
	mov [entry_ds], ax
	mov ax, es
	mov [entry_es], ax
	mov ax, ss
	mov [entry_ss], ax
	mov eax, cr0
	mov [entry_cr0], eax
	sgdt [entry_gdtr]
	call checks
	call summary
	mov eax, [failures]
	test eax, eax
	setnz al
	movzx eax, al
	out DEBUG_EXIT, eax
.halt:
	cli
	hlt
	jmp .halt

; CHECK cond, "text": one PASS/FAIL line; cond is a jcc suffix true on PASS.
; The text sits in the code, jumped over: one section keeps syssize a
; plain difference of labels.
%macro CHECK 2
	j%-1 %%fail
	mov al, 1
	jmp %%go
%%fail:
	xor al, al
%%go:
	mov esi, %%msg
	call report
	jmp %%next
%%msg:	db %2, 0
%%next:
%endmacro

checks:
	cmp dword [entry_eip], PREF_ADDRESS
	CHECK e, "entered at pref_address 0x1000000 (startup_32)"
	cmp word [entry_cs], BOOT_CS
	CHECK e, "CS = __BOOT_CS (0x10)"
	mov ax, [entry_ds]
	cmp ax, BOOT_DS
	jne .seg_bad
	cmp ax, [entry_es]
	jne .seg_bad
	cmp ax, [entry_ss]
.seg_bad:
	CHECK e, "DS = ES = SS = __BOOT_DS (0x18)"
	mov eax, [entry_cr0]
	and eax, CR0_PE | CR0_PG
	cmp eax, CR0_PE
	CHECK e, "protected mode, paging off"
	test dword [entry_eflags], EFLAGS_IF
	CHECK z, "interrupts disabled"
	mov eax, [entry_ebx]
	or eax, [entry_ebp]
	or eax, [entry_edi]
	CHECK z, "EBX, EBP and EDI are zero"
	call check_gdt
	call check_zero_page
	ret

; The GDT loaded: __BOOT_CS execute/read and __BOOT_DS read/write, 4 GiB
; flat (SDM Vol. 3A, "Segment Descriptors"; the accessed bit may be set).
check_gdt:
	mov ebx, [entry_gdtr + 2]
	cmp word [entry_gdtr], BOOT_DS + 7
	CHECK ae, "GDTR limit covers __BOOT_DS"
	mov eax, [ebx + BOOT_CS]
	mov edx, [ebx + BOOT_CS + 4]
	and edx, ~0x100                 ; accessed
	cmp eax, 0x0000ffff
	jne .cs_bad
	cmp edx, 0x00cf9a00
.cs_bad:
	CHECK e, "GDT[0x10]: flat 4 GiB 32-bit code, execute/read"
	mov eax, [ebx + BOOT_DS]
	mov edx, [ebx + BOOT_DS + 4]
	and edx, ~0x100
	cmp eax, 0x0000ffff
	jne .ds_bad
	cmp edx, 0x00cf9200
.ds_bad:
	CHECK e, "GDT[0x18]: flat 4 GiB data, read/write"
	ret

check_zero_page:
	mov ebx, [entry_esi]
	cmp dword [ebx + BP_HEADER], "HdrS"
	CHECK e, "ESI = boot_params with the setup header copied in"
	cmp byte [ebx + BP_TYPE_LOADER], 0xff
	CHECK e, "type_of_loader 0xff (no assigned ID)"
	cmp dword [ebx + BP_CODE32_START], PREF_ADDRESS
	CHECK e, "code32_start = the load address"
	mov esi, [ebx + BP_CMD_LINE_PTR]
	mov edi, want_cmdline
	mov ecx, want_cmdline_len
	repe cmpsb
	CHECK e, "cmd_line_ptr: the guest line's cmdline"
	mov eax, [ebx + BP_ACPI_RSDP]
	test eax, eax
	jz .rsdp_bad
	cmp dword [eax], "RSD "
	jne .rsdp_bad
	cmp dword [eax + 4], "PTR "
.rsdp_bad:
	CHECK e, "acpi_rsdp_addr: an RSDP"
	mov eax, [ebx + BP_RAMDISK]
	test eax, 0xfff
	jnz .rd_bad
	cmp dword [ebx + BP_RAMDISK_SIZE], 4
	jb .rd_bad
	cmp dword [eax], 0x464c457f     ; 0x7f "ELF": guests/basic.elf
.rd_bad:
	CHECK e, "ramdisk_image/size: the module, page aligned"
	call check_e820
	ret

; RAM below the EBDA and from 1 MiB, the EBDA and the BIOS area reserved.
check_e820:
	cmp byte [ebx + BP_E820_ENTRIES], 4
	CHECK e, "e820: 4 entries"
	lea esi, [ebx + BP_E820_TABLE]
	cmp dword [esi + 2 * E820_LEN], 0xf0000
	jne .bios_bad
	cmp dword [esi + 2 * E820_LEN + 16], 2
.bios_bad:
	CHECK e, "e820: 0xf0000 (ACPI tables) reserved"
	cmp dword [esi + 3 * E820_LEN], 0x100000
	jne .ram_bad
	cmp dword [esi + 3 * E820_LEN + 16], 1
	jne .ram_bad
	mov eax, [esi + 3 * E820_LEN + 8]
	cmp eax, STACK_TOP - 0x100000
.ram_bad:
	CHECK ae, "e820: RAM from 1 MiB past the kernel"
	ret

; AL = 1 for PASS; ESI = the text. Counts failures.
report:
	push esi
	mov esi, pass
	test al, al
	jnz .prefix
	inc dword [failures]
	mov esi, fail
.prefix:
	call puts
	pop esi
	call puts
	mov al, 10
	call putc
	inc dword [tests]
	ret

; "SUMMARY: N tests, M unexpected failures", as guest-tests/lib/report.c.
summary:
	mov esi, sum_head
	call puts
	mov eax, [tests]
	call putdec
	mov esi, sum_mid
	call puts
	mov eax, [failures]
	call putdec
	mov esi, sum_tail
	call puts
	ret

; EAX in decimal (below 100 here: the checks are counted).
putdec:
	xor edx, edx
	mov ecx, 10
	div ecx
	test eax, eax
	jz .units
	push edx
	add al, '0'
	call putc
	pop edx
.units:
	mov al, dl
	add al, '0'
	call putc
	ret

puts:
	lodsb
	test al, al
	jz .done
	call putc
	jmp puts
.done:
	ret

putc:
	mov ah, al
	mov dx, COM1_LSR
.wait:
	in al, dx
	test al, LSR_THRE
	jz .wait
	mov al, ah
	mov dx, COM1
	out dx, al
	ret

pass:	db "PASS: linux_boot: ", 0
fail:	db "FAIL: linux_boot: ", 0
sum_head:	db "SUMMARY: ", 0
sum_mid:	db " tests, ", 0
sum_tail:	db " unexpected failures", 10, 0
want_cmdline:	db "linux_boot", 0
want_cmdline_len equ $ - want_cmdline

	align 4
failures:	dd 0
tests:		dd 0
entry_eip:	dd 0
entry_esi:	dd 0
entry_ebx:	dd 0
entry_ebp:	dd 0
entry_edi:	dd 0
entry_eflags:	dd 0
entry_cr0:	dd 0
entry_cs:	dw 0
entry_ds:	dw 0
entry_es:	dw 0
entry_ss:	dw 0
entry_gdtr:	dw 0
		dd 0
	align 16
pm_end:
