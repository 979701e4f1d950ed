// opforge CUDA emulator: cuda_runtime_api.h is part of the emulator header.
#pragma once
#include "opforge_cuda_emu.h"
