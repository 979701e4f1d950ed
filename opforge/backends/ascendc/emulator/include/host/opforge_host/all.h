// Everything of opforge's host shims: what each CANN / PyTorch header name below include/host/ stands for.
#pragma once
#include "opforge_host/tensor.h"
#include "opforge_host/bind.h"
#include "opforge_host/op.h"
#include "opforge_host/exec.h"
#include "opforge_host/npu.h"
