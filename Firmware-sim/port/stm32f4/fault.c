/*
 * STM32F4 fault-report test image (`camctl-stm32-fault.elf`): executes an
 * undefined instruction right after start-up, so scripts/test-stm32 can
 * check that the fault handler reports on the UART.
 */
#include "board.h"

int main(void)
{
    board_init();
    __asm__ volatile("udf #0");
    return 0;
}
