// Stands for the shared command-line header, which train/ may include.
#pragma once
