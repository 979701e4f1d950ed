// opforge CUDA emulator: cuda_bf16.h is part of the emulator header.
#pragma once
#include "opforge_cuda_emu.h"
