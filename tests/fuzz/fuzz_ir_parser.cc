// libFuzzer: text -> parse_graph. A graph that parses prints as text that parses again to the
// same text (the printer and parser agree); only UserError may come out.
#include <cstdlib>
#include <sstream>

#include "compiler/ir/printer.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mono::fuzz::expect_clean([&] {
    std::unique_ptr<mono::Graph> g = mono::parse_graph(text);
    std::ostringstream first;
    mono::print_graph(first, *g);
    const std::string printed = first.str();
    std::unique_ptr<mono::Graph> again = mono::parse_graph(printed);
    std::ostringstream second;
    mono::print_graph(second, *again);
    if (second.str() != printed) abort();  // a round trip that changes the graph
  });
  return 0;
}
