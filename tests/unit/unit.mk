# SPDX-License-Identifier: BSD-2-Clause
#
# Host unit tests: each tests/unit/test_NAME.c is one cmocka binary linked
# with the project sources listed in UNIT_SRC_NAME, built with ASan+UBSan.
# `make unit` builds and runs them all (TAP output, parsed by the harness).

UNIT_CC     := gcc
UNIT_CFLAGS := -std=gnu11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter \
               -I. -DTV_HOST_TEST -MMD -MP
UNIT_LIBS   := -lcmocka
UNIT_OUT    := $(BUILD)/unit

UNIT_SRC_config := boot/config.c drivers/fmt.c drivers/string.c
UNIT_SRC_fmt    := drivers/fmt.c
UNIT_SRC_acpi   := drivers/acpi.c drivers/fmt.c drivers/string.c
UNIT_SRC_insn   := vmm/insn.c
UNIT_SRC_gwalk  := vmm/gwalk.c
UNIT_SRC_multiboot := vmm/multiboot.c drivers/fmt.c drivers/string.c
UNIT_SRC_vlapic := lapic/vlapic.c lapic/vlapic_regs.c lapic/vlapic_irq.c lapic/vlapic_icr.c lapic/vlapic_timer.c timer/vtimer.c drivers/string.c
UNIT_SRC_vtimer := timer/vtimer.c
UNIT_SRC_timebase := timer/timebase.c
UNIT_SRC_pool := vmm/pool.c
UNIT_SRC_ept := vmx/ept.c
UNIT_SRC_advance := timer/advance.c
UNIT_SRC_preempt :=

UNIT_TESTS  := $(patsubst tests/unit/test_%.c,%,$(wildcard tests/unit/test_*.c))
UNIT_BINS   := $(UNIT_TESTS:%=$(UNIT_OUT)/test_%)

$(UNIT_OUT)/obj/%.o: %.c
	$(call say,HOSTCC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) -c -o $@ $<

.SECONDEXPANSION:
$(UNIT_OUT)/test_%: $(UNIT_OUT)/obj/tests/unit/test_%.o $$(patsubst %.c,$(UNIT_OUT)/obj/%.o,$$(UNIT_SRC_$$*))
	$(call say,HOSTLD,$@)
	$(Q)$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $^ $(UNIT_LIBS)

unit-build: $(UNIT_BINS)

unit: unit-build
	$(Q)fail=0; for t in $(UNIT_BINS); do \
		CMOCKA_MESSAGE_OUTPUT=TAP $$t || fail=1; done; exit $$fail

-include $(shell find $(UNIT_OUT) -name '*.d' 2>/dev/null)
