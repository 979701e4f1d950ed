// opforge host shim: graph/utils/type_utils.h stands for the part of it that opforge_host/ models.
#pragma once
#include "opforge_host/all.h"
