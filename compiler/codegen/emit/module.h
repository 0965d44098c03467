// The emitter's shared state for one kernel (a translation unit being built): the plan, the
// device functions and types defined so far (deduplicated by their text, so that repeated
// layers share one function), and the tensor maps the kernel needs. Each construct's emitter
// (pointwise.cc, rows.cc, gemm.cc, attention.cc) adds its definitions here and returns the
// work of its group as a typed value; kernel.cc prints the translation unit.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/plan.h"
#include "compiler/codegen/tensor_map_spec.h"

namespace mono::emit {

// A call of a group function: `function(ITEM, args...)`, the work item first.
struct Call {
  std::string function;
  std::vector<std::string> args;
  std::string str(const std::string& item) const;
};

// What a stage runs for one group: its number of work items, and the statement that runs work
// item `item` (a C expression of the stage's item counter).
struct GroupWork {
  int64_t items = 0;
  std::function<std::string(const std::string& item)> statement;
};

class Module {
 public:
  Module(const Graph& graph, const KernelPlan& plan) : graph(graph), plan(plan) {}

  const Graph& graph;
  const KernelPlan& plan;

  // Defines the device function of group `g` (or of the groups whose code is the same:
  // `void NAME(params) { body }`) unless one with the same code
  // (comments aside) exists; returns its name, after the first group that defined it ("g12_mat_mul").
  std::string function(const Group& g, const std::string& params, const std::string& body);
  // Defines the epilogue functor of GEMM group `g` unless one with the same body (comments
  // aside) exists;
  // returns its name ("G12Epilogue").
  std::string epilogue_struct(const Group& g, const std::string& body);
  // Defines a named type (a functor struct) once: `text` is its whole definition.
  void type(const std::string& name, const std::string& text);
  // The index in the kernel's tensor-map table of a map equal to `spec`, added if new;
  // `tensor` names what it views (the table's comment).
  int tensor_map(const TensorMapSpec& spec, const Value* tensor);

  // The name of a buffer in mono_main: a tensor of the arena, a packed constant, or one of
  // the caller's inputs and outputs (`root`, a value that owns its bytes), named after it
  // ("t_" arena, "w_" weights, "in_" / "out_"), declared at the top of the kernel.
  std::string buffer(const Value* root, const Packing& packing = {});
  // Graph output `index` (value `v`), written by the kernel's output copies.
  std::string output_buffer(int index, const Value* v);
  // Group g's split-K partial tiles (arena) and tile counters (sync area).
  std::string split_k_workspace(const Group& g);
  std::string split_k_counters(const Group& g);

  // How mono_main forms a buffer name's pointer: `(cast)(base + offset)` over the arena, the
  // packed constants or the sync area; for the caller's inputs and outputs `base` is empty and
  // `cast` is the whole fixed pointer expression (stages.h's layer loops take the others' offsets
  // from a table).
  struct BufferRef {
    std::string cast, base;
    int64_t offset = 0;
  };
  const std::map<std::string, BufferRef>& buffer_refs() const { return buffer_refs_; }

  // Whether `name` is a group function defined here.
  bool is_function(const std::string& name) const { return users_.count(name) > 0; }

  // What the translation unit prints, in order of first use; the functions inlined or not.
  std::string definitions(bool inline_functions) const;
  const std::string& buffer_declarations() const { return buffer_declarations_; }
  const std::vector<TensorMapSpec>& tensor_maps() const { return tensor_maps_; }
  const std::vector<std::string>& tensor_map_names() const { return tensor_map_names_; }

 private:
  std::string unique(const std::string& name);  // `name`, or name_2, name_3... if taken

  struct Definition {
    std::string function;      // a function's name ("" for a type)
    std::string text;
  };
  std::vector<Definition> definitions_;
  std::map<std::string, std::string> functions_;        // text without name and comments -> name
  std::map<std::string, std::vector<int>> users_;       // function name -> the groups it runs
  std::map<std::string, std::string> epilogues_;        // body without comments -> name
  std::set<std::string> types_;
  std::vector<TensorMapSpec> tensor_maps_;              // mono_tmaps, in index order
  std::vector<std::string> tensor_map_names_;
  std::map<std::pair<const Value*, Packing>, std::string> buffers_;
  std::set<std::string> names_;                         // every buffer name in use
  std::string buffer_declarations_;
  std::map<std::string, BufferRef> buffer_refs_;        // buffer name -> how its pointer is formed
  void declare(const std::string& name, const BufferRef& ref, const std::string& comment);
};

// The constructs, one file each: a group's work (and the definitions it needs).
GroupWork emit_pointwise(Module& m, const Group& g);  // pointwise.cc
GroupWork emit_rows(Module& m, const Group& g);       // rows.cc
GroupWork emit_gemm(Module& m, const Group& g);       // gemm.cc (also convolutions)
GroupWork emit_attention(Module& m, const Group& g);  // attention.cc
// The row function of a rows group (rows.cc). An item is a warp per row over a block of rows
// (kWarps), the row itself for the calling warp (kWarpItem: attention's softmax), or the row
// itself for the whole block (kBlock: rows longer than a warp caches, support.h block_per_row).
enum class RowMode { kWarps, kWarpItem, kBlock };
Call rows_call(Module& m, const Group& g, RowMode mode);
// The tile function of a GEMM group (gemm.cc): one item is one output tile (and split); the
// split is the item's slowest part, then the batch, then the tile: its row tile fastest
// (`m_fastest`: the items that run at once share weight tiles, so weights that do not fit the L2
// are read once), else its column tile.
Call gemm_call(Module& m, const Group& g, bool m_fastest);

}  // namespace mono::emit
