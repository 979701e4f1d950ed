// opforge host shim: ATen/Functions.h stands for the part of it that opforge_host/ models.
#pragma once
#include "opforge_host/all.h"
