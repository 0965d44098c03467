// mono_main's stages (kernel.cc prints the rest of the translation unit): each stage's item
// loop over its groups' work, the grid barrier after it, and layer loops.
//
// Layer loops: a stage's item loop is also read as a shape, its text with every buffer whose
// pointer is an offset into the arena, the constants or the sync area, and every tensor-map
// index, replaced by a placeholder of its kind. Stages of the same shape differ only in where
// their tensors live, so a run of repeated layers (stages first .. first + period - 1, repeated
// `repeats` times) is printed once, as a loop over the layers; the values that differ between
// repeats come from the loop's table in constant memory (`mono_layers<k>`).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/codegen/emit/module.h"

namespace mono::emit {

struct LayerLoop {
  int first = 0, period = 0, repeats = 0;
  int end() const { return first + period * repeats; }
};

// The loops over stages [begin, end) whose shapes are `shape_id` (equal ids: equal shapes): the
// run of repeats that saves the most stages (the shortest period on a tie), then the same on
// either side of it; in stage order.
std::vector<LayerLoop> find_layer_loops(const std::vector<int>& shape_id, int begin, int end);

// The most constant memory the layer loops' tables of one kernel take (bytes), and less where
// the tensor maps' table (kTensorMapBytes each) leaves less of the module's kConstantBytes; loops
// beyond it stay straight stages.
constexpr size_t kLayerTableBytes = 32 * 1024;
constexpr size_t kConstantBytes = 60 * 1024;  // of the 64 KB a module may hold, a margin kept
constexpr size_t kTensorMapBytes = 128;       // ptx.cuh TensorMap

// A stage's item loop as a shape and the values its placeholders replaced.
struct StageShape {
  std::vector<std::string> pieces;  // the text between placeholders (one more than values)
  std::vector<std::string> kinds;   // per placeholder: "map", or the buffer's cast and base (in the key)
  std::vector<std::string> values;  // per placeholder: the buffer's name or the map's index
  std::string key;                  // pieces and kinds joined: equal keys, same shape
};

// A layer loop's table: which placeholders take a column, and each column's value in every repeat.
struct LoopTable {
  std::vector<std::vector<int>> column;          // [stage in the period][placeholder]: -1 if the same in every repeat
  std::vector<std::vector<std::string>> values;  // per column: the value in each repeat
  size_t bytes(const LayerLoop& loop) const { return values.size() * static_cast<size_t>(loop.repeats) * sizeof(long long); }
};

// The kernel body before printing: each stage's comments, item loop and shape (building them
// defines the functions, types and tensor maps the stages need in the module), and the layer loops.
struct Body {
  std::vector<std::string> comments, item_loops;
  std::vector<StageShape> shapes;
  std::vector<LayerLoop> loops;
  std::vector<LoopTable> tables;  // one per loop
  int calls = 0;  // the group-function calls the body's text makes (a loop's stages once)
};

Body build_body(Module& m);

// Prints the stages, in order, the layer loops among them; appends the loops' tables (constant
// memory, to print before the kernel) to `tables`.
void print_body(std::ostream& os, const Module& m, const Body& body, std::string* tables);

}  // namespace mono::emit
