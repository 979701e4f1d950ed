// opforge host shim: pytorch_npu_helper.hpp stands for the part of it that opforge_host/ models.
#pragma once
#include "opforge_host/all.h"
