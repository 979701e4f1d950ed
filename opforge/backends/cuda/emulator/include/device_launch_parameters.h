// opforge CUDA emulator: device_launch_parameters.h is part of the emulator header.
#pragma once
#include "opforge_cuda_emu.h"
