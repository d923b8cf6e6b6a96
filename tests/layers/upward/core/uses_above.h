// A ground-layer header that reaches up into collectives/: check_layers.py must reject it.
#pragma once
#include "collectives/schedule_stub.h"
