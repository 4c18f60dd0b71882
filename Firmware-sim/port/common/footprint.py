#!/usr/bin/env python3
"""Flash and RAM of a linked board image (micro:bit, STM32F4) by component, from its GNU ld map file.

    footprint.py IMAGE.map [--markdown]

Every input section the linker placed in .text, .ARM.exidx, .data or .bss is
attributed to a component by the object (or archive member) it came from:
core (Firmware-sim/core, its generated codec core/cc_pb.c included: the
firmware links no protobuf runtime; the link-time optimised objects,
*.ltrans.o, are the core's, as port/firmware.mk builds only the core with
-flto), board port (port/BOARD and port/common),
simulator (simlib and the simulator image's glue), libc (newlib-nano), libgcc
(compiler helpers). Linker padding between
sections (*fill*) is attributed to the section before it. Flash is
text + rodata + exidx + .data's initial values; RAM is .data + .bss (the
stack, reserved by the linker script, is listed apart).
Also prints the archive members the image pulled from libc and libgcc, and
fails (exit 1) when any of them is the heap (malloc, free, sbrk): no heap.
"""
import re
import sys

COMPONENTS = ["core", "board port", "simulator", "libc", "libgcc"]
HEAP_MEMBERS = re.compile(r"(malloc|free|sbrk|mallocr|freer|callocr|reallocr|nano-mallocr)", re.I)


def component(path):
    name = path.rsplit("/", 1)[-1]
    if "libgcc.a(" in path:
        return "libgcc"
    if re.search(r"lib(c|g|c_nano|g_nano|nosys|m)\.a\(", path):
        return "libc"
    if name.startswith("cc_") and name.endswith(".o"):
        return "core"
    if name.endswith(".ltrans.o"):
        # link-time optimised code: port/firmware.mk builds only the core with -flto
        return "core"
    if name.startswith("ccsim_") or name in ("main_sim.o", "mini_snprintf.o", "glue.o"):
        return "simulator"
    if name.endswith(".o"):
        return "board port"
    return None


def parse(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    members = []
    head, _, body = text.partition("Linker script and memory map")
    for m in re.finditer(r"^(\S+\.a)\((\S+)\)\s*$", head, re.M):
        members.append((m.group(1).rsplit("/", 1)[-1], m.group(2)))
    sizes = {}        # (component, kind) -> bytes
    out_section = None
    last = None
    pending = None
    stack = 0
    for line in body.splitlines():
        m = re.match(r"^(\.\S+)\s", line)
        if m:
            out_section = m.group(1)
            last = None
            continue
        m = re.match(r"^\s+0x([0-9a-f]+)\s+_stack_limit = ", line)
        ms = re.match(r"^\s+0x([0-9a-f]+)\s+STACK_BYTES = ", line)
        if ms:
            stack = int(ms.group(1), 16)
        if out_section not in (".text", ".ARM.exidx", ".data", ".bss"):
            continue
        m = re.match(r"^ \*fill\*\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", line)
        if m:
            if last:
                sizes[last] = sizes.get(last, 0) + int(m.group(1), 16)
            continue
        m = re.match(r"^ (\.\S+|COMMON)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.\S+|COMMON)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if m and (m.group(1) or pending):
            name = m.group(1) or pending
            pending = None
            size = int(m.group(3), 16)
            comp = component(m.group(4).strip())
            if comp is None or size == 0:
                continue
            if out_section == ".text":
                kind = "rodata" if name.startswith(".rodata") else "text"
            elif out_section == ".ARM.exidx":
                kind = "text"
            else:
                kind = out_section[1:]
            last = (comp, kind)
            sizes[last] = sizes.get(last, 0) + size
        else:
            pending = None
    return sizes, members, stack


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sizes, members, stack = parse(argv[1])
    markdown = "--markdown" in argv
    rows = []
    total = {"flash": 0, "ram": 0}
    for comp in COMPONENTS:
        text = sizes.get((comp, "text"), 0)
        rodata = sizes.get((comp, "rodata"), 0)
        data = sizes.get((comp, "data"), 0)
        bss = sizes.get((comp, "bss"), 0)
        flash, ram = text + rodata + data, data + bss
        if flash == 0 and ram == 0:
            continue
        total["flash"] += flash
        total["ram"] += ram
        rows.append((comp, text, rodata, data, bss, flash, ram))
    name = argv[1].rsplit("/", 1)[-1]
    if markdown:
        print(f"| {name} | text | rodata | data | bss | flash | RAM |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            print("| %s | %d | %d | %d | %d | **%d** | **%d** |" % r)
        print(f"| total | | | | | **{total['flash']}** | **{total['ram']}** (+ {stack} stack) |")
    else:
        print(f"{name}: flash and RAM by component (bytes)")
        print("  %-20s %7s %7s %6s %6s %7s %7s" % ("component", "text", "rodata", "data", "bss", "flash", "RAM"))
        for r in rows:
            print("  %-20s %7d %7d %6d %6d %7d %7d" % r)
        print("  %-20s %7s %7s %6s %6s %7d %7d   (+ %d stack reserved)" % ("total", "", "", "", "", total["flash"], total["ram"], stack))
        print("  from libc/libgcc: " + " ".join(sorted({m for _, m in members})))
    heap = sorted({m for _, m in members if HEAP_MEMBERS.search(m)})
    if heap:
        print(f"{name}: the heap is linked: {' '.join(heap)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
