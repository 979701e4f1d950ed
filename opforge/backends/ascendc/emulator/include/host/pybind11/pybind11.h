// opforge host shim: pybind11/pybind11.h stands for the part of it that opforge_host/ models.
#pragma once
#include "opforge_host/all.h"
