// opforge stand-in for lib/matmul_intf.h: the cube unit is not modelled, so Matmul and its types are absent and
// a kernel using them is `unsupported` (naming the API), never a guess.
#pragma once
