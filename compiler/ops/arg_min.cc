// ArgMin: the index of the first (or, with select_last_index, the last) minimum of x
// along axis (arg_extremum.h).
#include "compiler/ops/arg_extremum.h"

namespace mono {

const OpDef& op_def_ArgMin() {
  static const OpDef def = arg_extremum_def<false>("ArgMin");
  return def;
}

}  // namespace mono
