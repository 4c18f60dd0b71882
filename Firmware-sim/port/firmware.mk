# The firmware for a board: one place for the sources every board image links
# (the core, the generated code, protobuf-c's runtime, simlib for the "-sim"
# images, port/common/) and the rules that compile and link them. Each port's
# Makefile sets its own part and then includes this file:
#
#   BOARD       the build folder's name: Firmware-sim/build/$(BOARD)/
#   ARCH        the -mcpu/-mthumb/-mfloat-abi flags (compile and link)
#   LDSCRIPT    the port's linker script
#   BOARD_DEFS  -D sizes for cc_config.h and ccsim_*.h (may be empty)
#   BOARD_SRC   the port's own drivers, linked into every firmware image
#
# and has a glue.c (common/port_glue.h: the board's part of the images every
# board shares), which only those images link. It gets FW_OBJ (core +
# generated + protobuf-c + port/common + BOARD_OBJ: BOARD_SRC and
# common/port_start.c), SIMLIB_OBJ, SIM_OBJ (the
# "-sim" image's main loop, its snprintf and the glue), BENCH_OBJ (the
# benchmark image's main and the glue), the object of any port file as
# $(OUT)/objects/NAME.o, `%.elf` (linked with a map file next to it) and
# `%.hex`. A source file every board links is added here, never in a port's
# Makefile.
#
# protobuf-c's runtime comes from Debian's source package, fetched and checked
# by ../../scripts/fetch-protobuf-c into .deps/ (never committed); its header
# is used for every file, not the host's.
#
# The protoc-c code is generated again here from Proto/ with
# `option optimize_for = CODE_SIZE` (protoc-c then leaves the names out of the
# descriptors: ~6 KB less flash; same API, same wire bytes), into
# build/$(BOARD)/gen/. Firmware-sim/generated/ (host builds) is untouched.

.DEFAULT_GOAL := all
FW := ../..
REPO := $(FW)/..
COMMON := ../common
OUT := $(FW)/build/$(BOARD)
CC := arm-none-eabi-gcc
OBJCOPY := arm-none-eabi-objcopy
SIZE := arm-none-eabi-size

CFLAGS := $(ARCH) -std=c99 -Os -g -ffunction-sections -fdata-sections -Wall -Wextra -Werror \
    -DNDEBUG $(BOARD_DEFS)
PEDANTIC := -pedantic
LDFLAGS := $(ARCH) -specs=nano.specs -specs=nosys.specs -nostartfiles -T $(LDSCRIPT) \
    -Wl,--gc-sections -Wl,--fatal-warnings -Wl,--print-memory-usage

PBC_STAMP := $(OUT)/protobuf-c.dir
PBC = $(shell cat $(PBC_STAMP))
GEN := $(OUT)/gen
GEN_STAMP := $(GEN)/.stamp
INCLUDES = -I. -I$(COMMON) -I$(FW)/core/include -I$(GEN) -I$(FW)/generated/include -I$(FW)/simlib/include -I$(PBC)

CORE_SRC := $(wildcard $(FW)/core/*.c)
PROTOS := $(sort $(wildcard $(REPO)/Proto/cameracontrol/v1/*.proto))
GEN_SRC := $(patsubst $(REPO)/Proto/%.proto,$(GEN)/%.pb-c.c,$(PROTOS))
SIMLIB_SRC := $(wildcard $(FW)/simlib/*.c)
# port/common: protobuf-c's fallback allocator without a heap, integer float compares
COMMON_SRC := no_heap.c float_compare.c
# what a "-sim" image links besides simlib: its main loop, a small snprintf (newlib's brings malloc)
SIM_SRC := main_sim.c mini_snprintf.c
# the benchmark image's main (instructions per poll under QEMU -icount)
BENCH_SRC := bench.c

obj = $(patsubst %.c,$(OUT)/objects/%.o,$(notdir $(1)))
CORE_OBJ := $(call obj,$(CORE_SRC))
GEN_OBJ := $(call obj,$(GEN_SRC))
SIMLIB_OBJ := $(call obj,$(SIMLIB_SRC))
COMMON_OBJ := $(call obj,$(COMMON_SRC))
GLUE_OBJ := $(OUT)/objects/glue.o
SIM_OBJ := $(call obj,$(SIM_SRC)) $(GLUE_OBJ)
BENCH_OBJ := $(call obj,$(BENCH_SRC)) $(GLUE_OBJ)
# the port's drivers, and the start-up steps every port shares (common/port_start.h)
BOARD_OBJ := $(call obj,$(BOARD_SRC)) $(OUT)/objects/port_start.o
PBC_OBJ := $(OUT)/objects/protobuf-c.o
FW_OBJ := $(CORE_OBJ) $(GEN_OBJ) $(PBC_OBJ) $(COMMON_OBJ) $(BOARD_OBJ)

$(PBC_STAMP): $(REPO)/scripts/fetch-protobuf-c
	@mkdir -p $(OUT)
	$(REPO)/scripts/fetch-protobuf-c > $@.tmp && mv $@.tmp $@

$(OUT)/%.elf: $(LDSCRIPT)
	$(CC) $(LDFLAGS) -Wl,-Map=$(OUT)/$*.map -o $@ $(filter %.o,$^)

$(OUT)/%.hex: $(OUT)/%.elf
	$(OBJCOPY) -O ihex $< $@

# protoc-c with CODE_SIZE: the option goes in after each file's package line.
# Enum fields then point at no enum descriptor (NULL): protobuf-c's pack and
# unpack never read it for an enum (only for embedded messages), and nothing in
# the firmware names an enum's values, so the enum descriptors and their value
# tables (~0.8 KB) are left out by --gc-sections.
$(GEN_STAMP): $(PROTOS) ../firmware.mk
	@rm -rf $(GEN) && mkdir -p $(GEN)/proto/cameracontrol/v1
	@for p in $(PROTOS); do \
	    sed '/^package /a option optimize_for = CODE_SIZE;' $$p > $(GEN)/proto/cameracontrol/v1/$$(basename $$p); \
	done
	cd $(GEN)/proto && protoc-c -I. --c_out=.. $(patsubst $(REPO)/Proto/%,%,$(PROTOS))
	@for c in $(GEN)/cameracontrol/v1/*.pb-c.c; do \
	    sed -i '/PROTOBUF_C_TYPE_ENUM,/{n;n;n;s|^\( *\)&[a-z0-9_]*__descriptor,|\1NULL, /* enum descriptor: not linked on the board */|}' $$c; \
	done
	@! grep -A3 'PROTOBUF_C_TYPE_ENUM,' $(GEN)/cameracontrol/v1/*.pb-c.c | grep -q '__descriptor,' || \
	    { echo "an enum field still points at its descriptor (protoc-c's layout changed?)" >&2; exit 1; }
	@touch $@
$(GEN_SRC): $(GEN_STAMP)

# protobuf-c's runtime: its fallback allocator gets no heap (common/no_heap.c). With
# NDEBUG one of its assert-only variables is set but unused: that warning alone is off.
$(PBC_OBJ): $(PBC_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-unused-but-set-variable \
	    -Dmalloc=port_no_malloc -Dfree=port_no_free $(INCLUDES) \
	    -c $(PBC)/protobuf-c/protobuf-c.c -o $@

define compile
$(OUT)/objects/%.o: $(1)/%.c $(PBC_STAMP) $(GEN_STAMP) Makefile ../firmware.mk
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $(2) $$(INCLUDES) -MMD -MP -c $$< -o $$@
endef
$(eval $(call compile,$(FW)/core,$(PEDANTIC)))
$(eval $(call compile,$(GEN)/cameracontrol/v1,$(PEDANTIC)))
$(eval $(call compile,$(FW)/simlib,$(PEDANTIC)))
$(eval $(call compile,$(COMMON),$(PEDANTIC)))
$(eval $(call compile,.,$(PEDANTIC)))

-include $(wildcard $(OUT)/objects/*.d)
