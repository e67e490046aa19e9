# SPDX-License-Identifier: BSD-2-Clause
#
# Host unit tests: each tests/unit/test_NAME.c is one cmocka binary linked
# with the project sources listed in UNIT_SRC_NAME, built with ASan+UBSan.
# `make unit` builds and runs them all (TAP output, parsed by the harness).

UNIT_CC     := gcc
UNIT_CFLAGS := -std=gnu11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter \
               -I. -I$(BUILD)/gen -DTV_HOST_TEST
UNIT_LIBS   := -lcmocka
UNIT_OUT    := $(BUILD)/unit

UNIT_SRC_config := boot/config.c timer/timer_opts.c vmm/host/options.c drivers/fmt.c drivers/string.c
UNIT_SRC_fmt    := drivers/fmt.c
UNIT_SRC_acpi   := drivers/acpi.c drivers/fmt.c drivers/string.c
UNIT_SRC_insn   := vmm/emul/insn.c
UNIT_SRC_gwalk  := vmm/emul/gwalk.c
UNIT_SRC_multiboot := vmm/loader/multiboot.c drivers/fmt.c drivers/string.c
UNIT_SRC_linux := vmm/loader/linux.c drivers/fmt.c drivers/string.c
UNIT_SRC_acpi_tables := vmm/dev/acpi_tables.c drivers/acpi.c drivers/fmt.c drivers/string.c
UNIT_SRC_vlapic := lapic/vlapic.c lapic/vlapic_regs.c lapic/vlapic_irq.c lapic/vlapic_icr.c lapic/vlapic_timer.c timer/vtimer.c drivers/string.c
UNIT_SRC_vtimer := timer/vtimer.c
UNIT_SRC_timebase := timer/timebase.c
UNIT_SRC_pool := vmm/host/pool.c
UNIT_SRC_ept := vmx/ept.c
UNIT_SRC_advance := timer/advance.c timer/timebase.c
UNIT_SRC_host_route := timer/host_route.c
UNIT_SRC_tqueue := timer/tqueue.c
UNIT_SRC_caps := vmx/caps_cmp.c drivers/fmt.c drivers/string.c
UNIT_SRC_preempt :=
UNIT_SRC_entry_plan :=
UNIT_SRC_rtc := vmm/dev/dev_rtc.c drivers/calendar.c timer/timebase.c
UNIT_SRC_fbcon := drivers/fbcon.c drivers/string.c
UNIT_SRC_mce := drivers/mce.c
UNIT_SRC_tsc := drivers/tsc.c
UNIT_SRC_errata := drivers/errata.c
UNIT_SRC_reset := drivers/reset.c
UNIT_SRC_paging := vmm/host/paging_build.c
UNIT_SRC_cpu_topo := drivers/cpu_topo.c
UNIT_SRC_placement := vmm/host/placement.c
UNIT_SRC_serial := drivers/serial.c drivers/fmt.c drivers/string.c
UNIT_SRC_apic_dest := drivers/apic_dest.c

UNIT_TESTS  := $(patsubst tests/unit/test_%.c,%,$(wildcard tests/unit/test_*.c))
UNIT_BINS   := $(UNIT_TESTS:%=$(UNIT_OUT)/test_%)
# The objects of test_NAME: its own and those of UNIT_SRC_NAME.
unit_objs    = $(UNIT_OUT)/obj/tests/unit/test_$(1).o \
               $(patsubst %.c,$(UNIT_OUT)/obj/%.o,$(UNIT_SRC_$(1)))
UNIT_OBJS   := $(sort $(foreach t,$(UNIT_TESTS),$(call unit_objs,$(t))))

$(UNIT_OUT)/obj/%.o: %.c
	$(call say,HOSTCC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) -MMD -MP -c -o $@ $<

# Kept, not deleted as intermediates (their .d files name them as targets,
# so a later make would rebuild them all once).
.SECONDARY: $(UNIT_OBJS)

# The screen console's font is generated (Makefile, FONT_PSF).
$(UNIT_OUT)/obj/drivers/fbcon.o $(UNIT_OUT)/obj/tests/unit/test_fbcon.o: $(BUILD)/gen/font.h

# In a pattern rule's prerequisites make puts the stem for every % before
# the second expansion, so the % of unit_objs must not be written here.
.SECONDEXPANSION:
$(UNIT_OUT)/test_%: $$(call unit_objs,$$*)
	$(call say,HOSTLD,$@)
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $^ $(UNIT_LIBS)

## unit-build: build the host unit tests without running them
unit-build: $(UNIT_BINS)

## unit: host unit tests only (cmocka, ASan+UBSan)
unit: unit-build
	$(Q)fail=0; for t in $(UNIT_BINS); do \
		CMOCKA_MESSAGE_OUTPUT=TAP $$t || fail=1; done; exit $$fail

-include $(UNIT_OBJS:.o=.d)
