// ArgMax: the index of the first (or, with select_last_index, the last) maximum of x
// along axis (arg_extremum.h).
#include "compiler/ops/arg_extremum.h"

namespace mono {

const OpDef& op_def_ArgMax() {
  static const OpDef def = arg_extremum_def<true>("ArgMax");
  return def;
}

}  // namespace mono
