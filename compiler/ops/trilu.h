// Trilu's diagonal offset, shared by its shape rule, reference and lowering.
#pragma once

#include "compiler/ops/op.h"

namespace mono {

// k from the optional scalar input 1 (0 when absent).
int64_t trilu_k(const AttrReader& ctx, const Tensor* k);

}  // namespace mono
