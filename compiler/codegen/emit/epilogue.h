// A group's epilogue steps (plan.h Group::epilogue) as statements on `v`, the anchor's element
// at a flat index of the anchor's output: elementwise ops, Transposes (they permute the store
// index), the NaN guard, and the swapped store of KernelPlan::swapped_last2.
#pragma once

#include <string>

#include "compiler/codegen/emit/expressions.h"

namespace mono::emit {

struct EpilogueSteps {
  std::string code;         // the statements
  std::string store_index;  // the flat index of the output to store `v` at
  std::string index_code;   // the index decompositions of `code` alone
  // Eight consecutive n (n % 8 == 0, N % 8 == 0) are eight consecutive addresses: the store
  // index is the flat index itself, or its innermost index is the anchor output's innermost
  // digit (stride 1) with an extent that is a multiple of 8 (the chunk stays inside one run).
  bool vec8 = false;
};

EpilogueSteps epilogue_steps(Expressions& ex, const KernelPlan& plan, const Group& g, const std::string& flat);

}  // namespace mono::emit
