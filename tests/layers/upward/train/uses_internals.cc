// A program on the public API that includes a library internal: check_layers.py must reject it.
#include "core/uses_above.h"
