// opforge's CUDA emulator: CUDA C++ compiled for the host. One fiber per CUDA thread, blocks run one
// at a time, strict barriers and warp collectives. Every candidate TU includes this header first
// (the translator adds it); the cuda_*.h names next to it include it too.
#pragma once
#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "emu_types.h"
#include "emu_half.h"
#include "emu_math.h"
#include "emu_sched.h"
#include "emu_warp.h"
#include "emu_mem.h"
#include "emu_report.h"
#include "emu_watch.h"
#include "emu_launch.h"
#include "emu_host.h"
#include "emu_globals.h"
#include "emu_limits.h"
