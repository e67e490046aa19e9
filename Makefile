# SPDX-License-Identifier: BSD-2-Clause
#
# tickvisor: one Makefile, everything out of tree in build/.
#
#   make              build/tickvisor.efi and build/esp.img
#   make run          boot esp.img (EMU=kvm|bochs|tcg; default kvm if usable, else bochs;
#                     CFG=smp for the multi-vCPU tests, CPUS=n), or one guest:
#                     KERNEL=path [APPEND= INITRD= SMP= MEM= OPTS=] (see "run" below)
#   make test         host unit tests + emulator integration tests
#   make unit         host unit tests only (cmocka, ASan+UBSan)
#   make fuzz         host libFuzzer targets, FUZZ_SECONDS each (docs/fuzzing.md)
#   make check-layers includes against the layer arrows (scripts/check-layers.py)
#   make bench        benchmarks (docs/benchmarks.md)
#   make deps         check/install the tools
#   V=1               show full commands

BUILD     := build
# One spelling of every build path: the harness passes BUILD as an absolute
# path, a developer types `make`; the .d files name their targets as they
# were spelt, so a mix left objects stale after a header changed.
override BUILD := $(abspath $(BUILD))
OBJ       := $(BUILD)/obj
EMU       ?=
PYTHON    ?= python3

ifeq ($(V),1)
Q :=
say :=
else
Q := @
say = @printf '  %-7s %s\n' $(1) $(2);
endif

CC        := gcc
LD        := ld
NASM      := nasm
OBJCOPY   := objcopy

EFI_INC   := /usr/include/efi
EFI_LIB   := /usr/lib
EFI_CRT0  := $(EFI_LIB)/crt0-efi-x86_64.o

WARN      := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
             -Wmissing-prototypes -Wvla
# Hypervisor code: freestanding, position independent (OVMF loads the image
# anywhere), no red zone (interrupts/exits use the stack), no SSE so guest
# vector state is never touched by tickvisor.
HV_CFLAGS := -std=gnu11 -O2 -g -ffreestanding -fpic -fshort-wchar -fno-stack-protector \
             -fno-strict-aliasing -fno-builtin -mno-red-zone -mgeneral-regs-only \
             -fno-asynchronous-unwind-tables -fvisibility=hidden \
             $(WARN) -I. -I$(BUILD)/gen -MMD -MP
# Only boot/ sees GNU-EFI (STYLE.md: layers point one way).
EFI_CFLAGS := -Wno-strict-prototypes -I$(EFI_INC) -I$(EFI_INC)/x86_64 -DGNU_EFI_USE_MS_ABI -DEFI_FUNCTION_WRAPPER=0

HV_DIRS   := boot vmm vmm/exit vmm/emul vmm/apic vmm/vcpu vmm/host vmm/loader vmm/dev vmx lapic timer drivers
HV_C      := $(sort $(foreach d,$(HV_DIRS),$(wildcard $(d)/*.c)))
HV_C      := $(filter-out vmx/offsets.c drivers/x86_inc.c,$(HV_C))
HV_ASM    := $(sort $(foreach d,$(HV_DIRS),$(wildcard $(d)/*.asm)))
HV_OBJ    := $(HV_C:%.c=$(OBJ)/%.o) $(HV_ASM:%.asm=$(OBJ)/%.o)

GIT_REV   := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

.PHONY: all run test test-linux unit unit-build fuzz fuzz-build fuzz-replay fuzz-coverage fuzz-exit bench bench-budget deps clean check-layers help
## all: build build/tickvisor.efi and build/esp.img (the default)
all: $(BUILD)/tickvisor.efi $(BUILD)/esp.img

# --- generated headers ------------------------------------------------------
$(BUILD)/gen/version.h: FORCE
	@mkdir -p $(dir $@)
	@echo '#define TV_GIT_REV "$(GIT_REV)"' > $@.tmp
	@cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@
FORCE:

# Struct offsets for NASM, generated from C (genassym style): offsets.c is
# compiled to assembly and its "->NAME value" markers become %defines.
$(BUILD)/gen/offsets.inc: vmx/offsets.c
	$(call say,GEN,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(HV_CFLAGS) -MT $@ -MF $(BUILD)/gen/offsets.d -S -o $(BUILD)/gen/offsets.s $<
	$(Q)sed -n 's/.*->\([A-Za-z_0-9]*\) \$$\{0,1\}\([0-9-]*\).*/%define \1 \2/p' \
		$(BUILD)/gen/offsets.s > $@.tmp && mv $@.tmp $@
-include $(BUILD)/gen/offsets.d

# Architectural constants for NASM (CR/EFER bits, MSR numbers) from
# drivers/x86.h, the same way.
$(BUILD)/gen/x86.inc: drivers/x86_inc.c
	$(call say,GEN,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(HV_CFLAGS) -MT $@ -MF $(BUILD)/gen/x86.d -S -o $(BUILD)/gen/x86.s $<
	$(Q)sed -n 's/.*->\([A-Za-z_0-9]*\) \$$\{0,1\}\([0-9-]*\).*/%define \1 \2/p' \
		$(BUILD)/gen/x86.s > $@.tmp && mv $@.tmp $@
-include $(BUILD)/gen/x86.d

# The screen console's 8x16 font (drivers/fbcon.c): Terminus Font from
# Debian's console-setup-linux (SIL OFL 1.1), never copied into the tree.
FONT_PSF  ?= /usr/share/consolefonts/Lat15-Terminus16.psf.gz
$(BUILD)/gen/font.h: $(FONT_PSF) scripts/gen-font.py
	$(call say,GEN,$@)
	@mkdir -p $(dir $@)
	$(Q)$(PYTHON) scripts/gen-font.py $(FONT_PSF) $@
$(OBJ)/drivers/fbcon.o: $(BUILD)/gen/font.h

# --- hypervisor -------------------------------------------------------------
$(OBJ)/boot/%.o: boot/%.c $(BUILD)/gen/version.h
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(HV_CFLAGS) $(EFI_CFLAGS) -c -o $@ $<

$(OBJ)/%.o: %.c
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(HV_CFLAGS) -c -o $@ $<

$(OBJ)/%.o: %.asm $(BUILD)/gen/offsets.inc $(BUILD)/gen/x86.inc
	$(call say,NASM,$<)
	@mkdir -p $(dir $@)
	$(Q)$(NASM) -f elf64 -I$(BUILD)/gen/ -I./ -MD $(@:.o=.d) -MP -o $@ $<

$(BUILD)/tickvisor.so: $(HV_OBJ) linker.ld
	$(call say,LD,$@)
	$(Q)$(LD) -nostdlib -znocombreloc -T linker.ld -shared -Bsymbolic \
		-o $@ $(EFI_CRT0) $(HV_OBJ) $(EFI_LIB)/libgnuefi.a
	@if readelf -d $@ | grep -q TEXTREL; then \
		echo "error: $@ has text relocations (a 'mov reg, label' in .text?)"; rm -f $@; exit 1; fi

$(BUILD)/tickvisor.efi: $(BUILD)/tickvisor.so
	$(call say,OBJCOPY,$@)
	$(Q)$(OBJCOPY) -j .text -j .sdata -j .data -j .dynamic -j .dynsym -j .rel \
		-j .rela -j .reloc --target=efi-app-x86_64 --subsystem=10 $< $@

# --- guest test images ------------------------------------------------------
include guest-tests/guest.mk

# --- ESP image --------------------------------------------------------------
# A bare FAT16 file system (no partition table): boots from Bochs's ATA disk,
# QEMU's -drive and a USB stick alike. 128 cylinders x 16 heads x 63 sectors
# so Bochs detects the geometry from the size; 63 MiB holds the
# bundled guests and the Linux guest's kernel and initramfs (linux-2cpu).
ESP_SECTORS := 129024

# The bundled guest lists, made from the test declarations.
$(BUILD)/tickvisor.cfg: guest-tests/unittests.cfg scripts/guestcfg.py
	$(call say,GEN,$@)
	@mkdir -p $(dir $@)
	$(Q)$(PYTHON) scripts/guestcfg.py bundled $@

$(BUILD)/smp.cfg: guest-tests/unittests.cfg scripts/guestcfg.py
	$(call say,GEN,$@)
	@mkdir -p $(dir $@)
	$(Q)$(PYTHON) scripts/guestcfg.py smp $@

$(BUILD)/esp.img: $(BUILD)/tickvisor.efi $(BUILD)/tickvisor.cfg $(BUILD)/smp.cfg $(GUEST_ELFS) \
		  $(GUEST_BZIMAGES)
	$(call say,ESP,$@)
	$(Q)rm -f $@.tmp && truncate -s $$(( $(ESP_SECTORS) * 512 )) $@.tmp
	$(Q)mformat -i $@.tmp -T $(ESP_SECTORS) -h 16 -s 63 -v TICKVISOR ::
	$(Q)mmd -i $@.tmp ::/EFI ::/EFI/BOOT ::/EFI/tickvisor ::/EFI/tickvisor/guests
	$(Q)mcopy -i $@.tmp $(BUILD)/tickvisor.efi ::/EFI/BOOT/BOOTX64.EFI
	$(Q)mcopy -i $@.tmp $(BUILD)/tickvisor.cfg ::/EFI/tickvisor/tickvisor.cfg
	$(Q)mcopy -i $@.tmp $(BUILD)/smp.cfg ::/EFI/tickvisor/smp.cfg
	$(Q)$(if $(GUEST_ELFS),mcopy -i $@.tmp $(GUEST_ELFS) ::/EFI/tickvisor/guests/)
	$(Q)$(if $(GUEST_BZIMAGES),mcopy -i $@.tmp $(GUEST_BZIMAGES) ::/EFI/tickvisor/guests/)
	$(Q)mv $@.tmp $@

# --- host unit tests (cmocka, ASan + UBSan) ----------------------------------
include tests/unit/unit.mk

# --- host fuzzing (libFuzzer, ASan + UBSan; docs/fuzzing.md) -----------------
include tests/fuzz/fuzz.mk

# --- running ------------------------------------------------------------------
## deps: install the Debian packages and build Bochs 3.0 (scripts/deps.sh)
deps:
	$(Q)scripts/deps.sh

# CFG=smp runs EFI/tickvisor/smp.cfg (the multi-vCPU tests) instead of
# tickvisor.cfg, on 4 CPUs unless CPUS says otherwise.
CPUS ?= $(if $(filter smp,$(CFG)),4,1)
# KERNEL=path boots that one Multiboot kernel instead, QEMU-style
# (scripts/tickvisor-run): APPEND="args", INITRD=a[,b...], SMP=n, MEM=size,
# OPTS="timer=... apicv=...", CPUS=n the machine's CPUs (default SMP, +1 for
# timer=posted), MODEL=Bochs CPU model; the exit status is the
# guest's. DRY_RUN=1 prints the emulator command instead of running it.
# APPEND and OPTS reach the script through the environment, quotes intact.
RUN_FLAGS = $(if $(EMU),--emu $(EMU)) $(if $(MODEL),--model $(MODEL)) $(if $(DRY_RUN),--dry-run)
## run: boot esp.img (EMU=kvm|bochs|tcg, CFG=smp, CPUS=n), or one kernel: KERNEL=path [APPEND= INITRD= SMP= CPUS= MEM= OPTS=]
run: deps all
ifdef KERNEL
	$(Q)scripts/tickvisor-run $(RUN_FLAGS) --efi $(BUILD)/tickvisor.efi --kernel $(KERNEL) \
		--append "$$APPEND" \
		--opts "$$OPTS" $(if $(INITRD),--initrd $(INITRD)) $(if $(SMP),--smp $(SMP)) \
		$(if $(filter command line environment,$(origin CPUS)),--cpus $(CPUS)) \
		$(if $(MEM),-m $(MEM))
else
	$(Q)scripts/run.sh $(RUN_FLAGS) --cpus $(CPUS) $(if $(CFG),--config $(CFG)) \
		$(BUILD)/esp.img
endif

## test: host unit tests and every emulator suite; ends "N passed, N failed" (EMU=kvm: nested KVM)
test: deps all
	$(Q)$(PYTHON) tests/harness.py --build $(BUILD) $(if $(EMU),--emu $(EMU))

# Only the Linux guest boots of make test (docs/testing.md, docs/linux-guest.md).
## test-linux: only the Linux guest boots of make test
test-linux: deps all
	$(Q)$(PYTHON) tests/harness.py --build $(BUILD) --no-unit --only '^linux-2cpu'

## check-layers: includes against the layer arrows (scripts/check-layers.py)
check-layers:
	$(Q)$(PYTHON) scripts/check-layers.py

# The budget runs even when a goal is not met; either fails make bench.
## bench: benchmarks against native, with goals; fails on a goal not met (docs/bench-issue11.md)
bench: deps all
	$(Q)st=0; $(PYTHON) tests/bench.py --build $(BUILD) $(if $(EMU),--emu $(EMU)) || st=1; \
	$(MAKE) --no-print-directory bench-budget || st=1; exit $$st

# make bench's advance=off figures against tests/bench_budget.py's references
# (at most 3 cycles above): one 5-second boot.
## bench-budget: make bench's advance=off figures against tests/bench_budget.py
bench-budget: deps all
	$(Q)$(PYTHON) tests/harness.py --build $(BUILD) --no-unit --only '^bench-budget$$'

## clean: remove build/
clean:
	rm -rf $(BUILD)

## help: this list
# Every target's line is the `## TARGET: TEXT` comment above it (here and in
# tests/unit/unit.mk and tests/fuzz/fuzz.mk); tests/test_scripts.py holds each .PHONY target to one.
help:
	@sed -n 's/^## \([a-z-]*\): \(.*\)/\1\t\2/p' $(MAKEFILE_LIST) | \
		awk -F'\t' '{ printf "  %-13s %s\n", $$1, $$2 }'

-include $(HV_OBJ:.o=.d)
