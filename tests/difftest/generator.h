// Random graphs for the differential tester (issue 18): small chains and DAGs over the ops the
// CUDA backend compiles, with random shapes, broadcasts, axes, permutations, channels-first and
// channels-last layouts, views and transposes around reductions, convolutions and GEMMs, graph
// inputs and constants, integer and boolean intermediates. Every graph is valid by
// construction (the generator tracks shapes); float constants are elided and made up by the
// parser from the seed, so a graph is its text and its seed.
#pragma once

#include <cstdint>
#include <string>

namespace mono::difftest {

struct GeneratorOptions {
  int min_nodes = 2, max_nodes = 10;
  int max_inputs = 3;
};

// The graph of `seed`, in the textual IR (compiler/ir/printer.h), shapes left to inference.
std::string generate_graph(uint64_t seed, const GeneratorOptions& options = {});

}  // namespace mono::difftest
