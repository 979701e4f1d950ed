// opforge CUDA emulator: device_functions.h is part of the emulator header.
#pragma once
#include "opforge_cuda_emu.h"
