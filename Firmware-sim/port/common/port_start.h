/*
 * Every board port: the start-up steps and the fault report that do not
 * depend on the chip (each port's startup.c has the vector table and the
 * handlers). The linker scripts name the same symbols: _data_load,
 * _data_start, _data_end, _bss_start, _bss_end, _stack_top.
 */
#ifndef PORT_START_H
#define PORT_START_H

#include <stdint.h>

/* "\nFAULT pc=0x........ lr=0x........ psr=0x........ sp=0x........\n" and its NUL */
#define PORT_FAULT_LINE_BYTES 66u

/* Copies .data's initial values from flash and zeroes .bss (first thing after reset). */
void port_start_memory(void);

/* The fault report's line for the registers the CPU stacked (r0-r3, r12, lr,
 * pc, xpsr) at frame: the faulting pc, lr, psr and the frame's address (sp). */
void port_fault_line(char out[PORT_FAULT_LINE_BYTES], const uint32_t *frame);

#endif /* PORT_START_H */
