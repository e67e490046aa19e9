# SPDX-License-Identifier: BSD-2-Clause
#
# Host libFuzzer targets (docs/fuzzing.md): each tests/fuzz/fuzz_NAME.c is
# one binary linked with the same pure sources as a unit test (UNIT_SRC_*
# of tests/unit/unit.mk), built by clang with libFuzzer, ASan and UBSan.
# Seeds and regression inputs are in tests/fuzz/corpus/NAME/.
#
#   make fuzz          every target FUZZ_SECONDS (default 60) on FUZZ_JOBS
#                      processes (default 2), then executions, coverage and
#                      crashes per target; a crash's input is copied to
#                      tests/fuzz/corpus/NAME/ (FUZZ=insn,acpi: only those)
#   make fuzz-replay   every corpus file through its target once (make test)
#   make fuzz-coverage line and branch coverage of each target's parser by
#                      its corpora (seeds and make fuzz's work corpus)

FUZZ_CC      := clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS  := -std=gnu11 -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
                -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter \
                -I. -I$(BUILD)/gen -DTV_HOST_TEST
FUZZ_OUT     := $(BUILD)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 2

# One target per input tickvisor does not control (issue 25).
FUZZ_SRC_insn      := $(UNIT_SRC_insn)
FUZZ_SRC_gwalk     := $(UNIT_SRC_gwalk)
FUZZ_SRC_config    := $(UNIT_SRC_config)
FUZZ_SRC_multiboot := $(UNIT_SRC_multiboot)
FUZZ_SRC_linux     := $(UNIT_SRC_linux)
FUZZ_SRC_acpi      := $(UNIT_SRC_acpi)
FUZZ_SRC_vlapic    := $(UNIT_SRC_vlapic)
FUZZ_SRC_icr       := $(UNIT_SRC_vlapic)

FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_OUT)/fuzz_%)
fuzz_objs     = $(FUZZ_OUT)/obj/tests/fuzz/fuzz_$(1).o \
                $(patsubst %.c,$(FUZZ_OUT)/obj/%.o,$(FUZZ_SRC_$(1)))
FUZZ_OBJS    := $(sort $(foreach t,$(FUZZ_TARGETS),$(call fuzz_objs,$(t))))

$(FUZZ_OUT)/obj/%.o: %.c
	$(call say,FUZZCC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

.SECONDARY: $(FUZZ_OBJS)

# Second expansion is on (tests/unit/unit.mk): the same trick as test_%.
$(FUZZ_OUT)/fuzz_%: $$(call fuzz_objs,$$*)
	$(call say,FUZZLD,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^

## fuzz-build: build the libFuzzer targets of tests/fuzz/ without running them
fuzz-build: $(FUZZ_BINS)

## fuzz: every libFuzzer target FUZZ_SECONDS (60) on FUZZ_JOBS (2) processes; executions, coverage, crashes
fuzz: fuzz-build $(FUZZ_COV_BINS)
	$(Q)$(PYTHON) tests/fuzz/fuzzing.py --build $(BUILD) --seconds $(FUZZ_SECONDS) \
		--jobs $(FUZZ_JOBS) $(if $(FUZZ),--only $(FUZZ))
	$(Q)$(MAKE) --no-print-directory fuzz-exit

## fuzz-exit: the exit fuzzer guest, FUZZ_EXIT_OPS (10^7) operations of seed FUZZ_EXIT_SEED under tickvisor in Bochs
FUZZ_EXIT_OPS  ?= 10000000
FUZZ_EXIT_SEED ?= 1
fuzz-exit: deps all
	$(Q)scripts/tickvisor-run --efi $(BUILD)/tickvisor.efi --kernel $(BUILD)/guests/exit_fuzz.elf \
		--append "seed=$(FUZZ_EXIT_SEED) ops=$(FUZZ_EXIT_OPS)" --emu-timeout 3600 \
		--workdir $(BUILD)/run/fuzz-exit

## fuzz-replay: every file of tests/fuzz/corpus/ through its target once (part of make test)
fuzz-replay: fuzz-build
	$(Q)$(PYTHON) tests/fuzz/fuzzing.py --build $(BUILD) --replay $(if $(FUZZ),--only $(FUZZ))

# The same targets with source-based coverage (llvm-cov), no sanitizers:
# what make fuzz's corpora reach of each parser.
FUZZ_COV_OUT    := $(BUILD)/fuzz-cov
FUZZ_COV_FLAGS  := -fprofile-instr-generate -fcoverage-mapping
FUZZ_COV_CFLAGS := $(filter-out $(FUZZ_SAN) -O1,$(FUZZ_CFLAGS)) -O0 $(FUZZ_COV_FLAGS)
FUZZ_COV_BINS   := $(FUZZ_TARGETS:%=$(FUZZ_COV_OUT)/fuzz_%)
fuzz_cov_objs    = $(patsubst $(FUZZ_OUT)/%,$(FUZZ_COV_OUT)/%,$(call fuzz_objs,$(1)))
FUZZ_COV_OBJS   := $(sort $(foreach t,$(FUZZ_TARGETS),$(call fuzz_cov_objs,$(t))))

$(FUZZ_COV_OUT)/obj/%.o: %.c
	$(call say,COVCC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_COV_CFLAGS) -MMD -MP -c -o $@ $<

.SECONDARY: $(FUZZ_COV_OBJS)

$(FUZZ_COV_OUT)/fuzz_%: $$(call fuzz_cov_objs,$$*)
	$(call say,COVLD,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_COV_FLAGS) -fsanitize=fuzzer -o $@ $^

## fuzz-coverage: line and branch coverage of each fuzz target's parser by its corpora (llvm-cov)
fuzz-coverage: $(FUZZ_COV_BINS)
	$(Q)$(PYTHON) tests/fuzz/fuzzing.py --build $(BUILD) --coverage $(if $(FUZZ),--only $(FUZZ))

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_COV_OBJS:.o=.d)
