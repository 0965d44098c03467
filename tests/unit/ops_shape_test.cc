#include "tests/unit/op_test_util.h"
