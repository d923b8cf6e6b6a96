// The higher-layer header the fixture's core/ file includes.
#pragma once
