// opforge host shim: c10/util/Optional.h stands for the part of it that opforge_host/ models.
#pragma once
#include "opforge_host/all.h"
