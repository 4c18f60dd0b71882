# The firmware for a board: one place for the sources every board image links
# (the core with its generated codec, simlib for the "-sim" images,
# port/common/) and the rules that compile and link them. Each port's Makefile
# sets its own part and then includes this file:
#
#   BOARD       the build folder's name: Firmware-sim/build/$(BOARD)/
#   ARCH        the -mcpu/-mthumb/-mfloat-abi flags (compile and link)
#   LDSCRIPT    the port's linker script
#   BOARD_DEFS  -D sizes for cc_config.h and ccsim_*.h (may be empty)
#   BOARD_SRC   the port's own drivers, linked into every firmware image
#   BOARD_CORE_DEFS  -D switches for the core of the board's own image and its
#               benchmark only: what the board has and lacks (core/include/cc_hal.h:
#               CC_HAL_NO_HAPTIC, CC_HAL_NO_SOUND, CC_HAL_NO_REMOTE,
#               CC_HAL_NO_SHUTTER_SWITCH, CC_HAL_CLOCK_FROM_BOOT, and CC_HAL_WITH_STORE or CC_HAL_NO_STORE),
#               whose code the core then does not link or does not ask for; the
#               "-sim" images keep the core without them (may be empty); the port's
#               own files and the benchmark's HAL are compiled with them too, so
#               that a HAL that disagrees with them does not compile
#
# and has a glue.c (common/port_glue.h: the board's part of the images every
# board shares), which only those images link. It gets FW_OBJ (core +
# port/common + BOARD_OBJ: BOARD_SRC and common/port_start.c), BOARD_FW_OBJ
# (FW_OBJ with the core compiled with BOARD_CORE_DEFS, in
# $(OUT)/objects/board-core/: the board's own image and the benchmark's), SIMLIB_OBJ,
# SIM_OBJ (the "-sim" image's main loop, its snprintf and the glue), BENCH_OBJ
# (the benchmark image's main and the glue), the object of any port file as
# $(OUT)/objects/NAME.o, `%.elf` (linked with a map file next to it) and
# `%.hex`. A source file every board links is added here, never in a port's
# Makefile.
#
# The core carries its own codec, generated from Proto/ by scripts/generate-proto
# (core/cc_pb.c over core/cc_pbw.c and core/cc_pbr.c): no protobuf runtime and
# no heap are linked (common/footprint.py checks the map file).

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
# Link-time optimisation of the core (issue 21: about 1 KB less flash on the micro:bit; docs/FIRMWARE.md).
# Only the core is built with -flto, so the link-time objects in a map file (*.ltrans.o) are the
# core's (common/footprint.py) and every port file keeps its own object. LTO_EXCLUDE: core files
# left out of the link-time unit; by default the sampling poll's two, whose link-time inlining made
# the STM32F4's idle poll 4 instructions slower (55.0 instead of 51.0; 336 bytes less flash); a
# port may take them in (the micro:bit does). `make LTO=` builds without it. The link-time code
# generation gets -ffunction-sections -fdata-sections too (LDFLAGS), so --gc-sections drops a core
# function that only an unused function of a file outside the link-time unit called.
LTO ?= -flto
LTO_EXCLUDE ?= cc_device.c cc_input.c
CORE_LTO = $(if $(filter $(LTO_EXCLUDE),$(notdir $<)),,$(LTO))
LDFLAGS := $(ARCH) -Os $(LTO) -ffunction-sections -fdata-sections -specs=nano.specs -specs=nosys.specs -nostartfiles -T $(LDSCRIPT) \
    -Wl,--gc-sections -Wl,--fatal-warnings -Wl,--print-memory-usage

INCLUDES = -I. -I$(COMMON) -I$(FW)/core/include -I$(FW)/simlib/include

CORE_SRC := $(wildcard $(FW)/core/*.c)
SIMLIB_SRC := $(wildcard $(FW)/simlib/*.c)
# port/common's sources every firmware image links besides port_start.c (which is in
# BOARD_OBJ, as the fault image links it without the core): memcpy and memset as byte
# loops (smaller than newlib's; no longer a fallback allocator or float compares since the
# core's own codec replaced protobuf-c)
COMMON_SRC := port_mem.c
# what a "-sim" image links besides simlib: its main loop, a small snprintf (newlib's brings malloc)
SIM_SRC := main_sim.c mini_snprintf.c
# the benchmark image's main (instructions per poll under QEMU -icount)
BENCH_SRC := bench.c

obj = $(patsubst %.c,$(OUT)/objects/%.o,$(notdir $(1)))
CORE_OBJ := $(call obj,$(CORE_SRC))
SIMLIB_OBJ := $(call obj,$(SIMLIB_SRC))
COMMON_OBJ := $(call obj,$(COMMON_SRC))
GLUE_OBJ := $(OUT)/objects/glue.o
SIM_OBJ := $(call obj,$(SIM_SRC)) $(GLUE_OBJ)
BENCH_OBJ := $(call obj,$(BENCH_SRC)) $(GLUE_OBJ)
# the port's drivers, and the start-up steps every port shares (common/port_start.h)
BOARD_OBJ := $(call obj,$(BOARD_SRC)) $(OUT)/objects/port_start.o
FW_OBJ := $(CORE_OBJ) $(COMMON_OBJ) $(BOARD_OBJ)
BOARD_CORE_OBJ := $(patsubst %.c,$(OUT)/objects/board-core/%.o,$(notdir $(CORE_SRC)))
BOARD_FW_OBJ := $(BOARD_CORE_OBJ) $(COMMON_OBJ) $(BOARD_OBJ)

$(OUT)/%.elf: $(LDSCRIPT)
	$(CC) $(LDFLAGS) -Wl,-Map=$(OUT)/$*.map -o $@ $(filter %.o,$^)

$(OUT)/%.hex: $(OUT)/%.elf
	$(OBJCOPY) -O ihex $< $@

define compile
$(OUT)/objects/%.o: $(1)/%.c Makefile ../firmware.mk
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $(2) $$(INCLUDES) -MMD -MP -c $$< -o $$@
endef
# memcpy and memset themselves: their loops must not become calls of memcpy and memset
$(OUT)/objects/port_mem.o: CFLAGS += -fno-tree-loop-distribute-patterns
$(eval $(call compile,$(FW)/core,$(PEDANTIC) $$(CORE_LTO)))
$(eval $(call compile,$(FW)/simlib,$(PEDANTIC)))
$(eval $(call compile,$(COMMON),$(PEDANTIC)))
# the port's own files with the board core's switches too: its HAL's initialisers (cc_hal.h's
# CC_HAL_STORE, CC_HAL_STORE_NONE, CC_HAL_REMOTE, CC_HAL_SHUTTER_SWITCH) do not compile where the
# HAL and the switches disagree; the switches change nothing else of a port file, so the "-sim"
# image links the same objects (its HAL is simlib's)
$(eval $(call compile,.,$(PEDANTIC) $$(BOARD_CORE_DEFS)))
# and the benchmark's HAL, which runs on the board core
$(call obj,$(BENCH_SRC)): CFLAGS += $(BOARD_CORE_DEFS)
# the core of the board's own image and its benchmark: without the parts the board lacks
$(OUT)/objects/board-core/%.o: $(FW)/core/%.c Makefile ../firmware.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BOARD_CORE_DEFS) $(PEDANTIC) $(CORE_LTO) $(INCLUDES) -MMD -MP -c $< -o $@

-include $(wildcard $(OUT)/objects/*.d $(OUT)/objects/board-core/*.d)
