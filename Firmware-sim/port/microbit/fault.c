/*
 * micro:bit fault-report test image (`camctl-microbit-fault.elf`): executes
 * an undefined instruction right after start-up, so scripts/test-microbit
 * can check that the fault handler reports on the UART.
 */
#include "board.h"

int main(void)
{
    board_init();
    __asm__ volatile("udf #0");
    return 0;
}
