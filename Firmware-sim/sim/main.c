#include <stdio.h>
int main(void) { puts("camctl-sim: not yet"); return 0; }
