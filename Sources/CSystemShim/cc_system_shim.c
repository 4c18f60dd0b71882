#include "cc_system_shim.h"
int cc_shim_placeholder(void) { return 0; }
