#include "cc_input.h"
