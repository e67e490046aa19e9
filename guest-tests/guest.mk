# SPDX-License-Identifier: BSD-2-Clause
#
# Guest test images, included by the top-level Makefile. Each
# guest-tests/NAME.c is one test, linked with the runtime in
# guest-tests/lib/ into $(BUILD)/guests/NAME.elf: a Multiboot v1 ELF64
# image loaded at 1 MiB, copied to the ESP (GUEST_ELFS). NAME.elf32 is the
# same image relabelled ELF32 for QEMU's -kernel, which refuses ELF64;
# the code inside stays 64-bit (kvm-unit-tests does the same).
#
#   make guests         every NAME.elf and NAME.elf32, and NAME.bzimage

GUEST_SRC     := guest-tests
GUEST_OUT     := $(BUILD)/guests
GUEST_OBJ     := $(GUEST_OUT)/obj
GUEST_LDS     := $(GUEST_SRC)/lib/guest.ld

# Static, non-PIC code at a fixed address; no red zone and no SSE in the
# runtime, because interrupt handlers run on the interrupted stack and
# do not save vector registers.
GUEST_CFLAGS  := -std=gnu11 -O2 -g -m64 -ffreestanding -fno-pic -fno-pie -no-pie \
                 -mno-red-zone -mgeneral-regs-only -fno-stack-protector \
                 -fno-asynchronous-unwind-tables -mcmodel=small \
                 -Wall -Wextra -Werror -MMD -MP -I$(GUEST_SRC)
GUEST_LDFLAGS := -nostdlib -static -z max-page-size=0x1000 -z noexecstack -T $(GUEST_LDS)

GUEST_NAMES   := $(sort $(basename $(notdir $(wildcard $(GUEST_SRC)/*.c))))
GUEST_LIB_C   := $(sort $(wildcard $(GUEST_SRC)/lib/*.c))
GUEST_LIB_ASM := $(sort $(wildcard $(GUEST_SRC)/lib/*.asm))
GUEST_C_OBJ   := $(GUEST_LIB_C:$(GUEST_SRC)/%.c=$(GUEST_OBJ)/%.o) \
                 $(GUEST_NAMES:%=$(GUEST_OBJ)/%.o)
GUEST_ASM_OBJ := $(GUEST_LIB_ASM:$(GUEST_SRC)/%.asm=$(GUEST_OBJ)/%.o)
GUEST_LIB_OBJ := $(GUEST_LIB_C:$(GUEST_SRC)/%.c=$(GUEST_OBJ)/%.o) $(GUEST_ASM_OBJ)
GUEST_ELFS    := $(GUEST_NAMES:%=$(GUEST_OUT)/%.elf)
GUEST_ELF32S  := $(GUEST_NAMES:%=$(GUEST_OUT)/%.elf32)

.PHONY: guests
guests: $(GUEST_ELFS) $(GUEST_ELF32S)

# Static pattern rules: the objects are explicit targets, so make keeps them.
$(GUEST_C_OBJ): $(GUEST_OBJ)/%.o: $(GUEST_SRC)/%.c
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(GUEST_CFLAGS) -c -o $@ $<

$(GUEST_ASM_OBJ): $(GUEST_OBJ)/%.o: $(GUEST_SRC)/%.asm
	$(call say,NASM,$<)
	@mkdir -p $(dir $@)
	$(Q)$(NASM) -f elf64 -MD $(@:.o=.d) -MP -o $@ $<

$(GUEST_ELFS): $(GUEST_OUT)/%.elf: $(GUEST_OBJ)/%.o $(GUEST_LIB_OBJ) $(GUEST_LDS)
	$(call say,LD,$@)
	$(Q)$(LD) $(GUEST_LDFLAGS) -o $@ $(GUEST_LIB_OBJ) $<

$(GUEST_ELF32S): $(GUEST_OUT)/%.elf32: $(GUEST_OUT)/%.elf
	$(call say,OBJCOPY,$@)
	$(Q)$(OBJCOPY) -O elf32-i386 $< $@

# Linux boot protocol witnesses: guest-tests/NAME.asm (top level; lib/
# has the runtime's) assembled flat into $(BUILD)/guests/NAME.bzimage, a
# setup header and 32-bit code, copied to the ESP beside the ELFs.
GUEST_BZIMAGES := $(patsubst $(GUEST_SRC)/%.asm,$(GUEST_OUT)/%.bzimage,\
                    $(wildcard $(GUEST_SRC)/*.asm))
guests: $(GUEST_BZIMAGES)

$(GUEST_BZIMAGES): $(GUEST_OUT)/%.bzimage: $(GUEST_SRC)/%.asm
	$(call say,NASM,$<)
	@mkdir -p $(dir $@)
	$(Q)$(NASM) -f bin -I$(GUEST_SRC)/ -MD $(@:.bzimage=.d) -MP -o $@ $<

-include $(GUEST_C_OBJ:.o=.d) $(GUEST_ASM_OBJ:.o=.d) $(GUEST_BZIMAGES:.bzimage=.d)
