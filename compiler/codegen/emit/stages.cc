// mono_main's stages and layer loops (stages.h).
#include "compiler/codegen/emit/stages.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "compiler/codegen/emit/names.h"
#include "compiler/support/error.h"

namespace mono::emit {
namespace {

GroupWork group_work(Module& m, const Group& g) {
  if (!g.fused.empty()) return emit_attention(m, g);
  switch (g.kind) {
    case GroupKind::kGemm:
    case GroupKind::kConvGemm: return emit_gemm(m, g);
    case GroupKind::kRows: return emit_rows(m, g);
    case GroupKind::kPointwise: return emit_pointwise(m, g);
  }
  MONO_CHECK(false, "unknown group kind");
}

// A stage's loop over its work items (all its groups' items, one after another).
std::string item_loop(const KernelPlan& plan, int s, const std::vector<GroupWork>& work) {
  std::ostringstream os;
  os << "  for (int item = blockIdx.x; item < " << plan.stage_items(s) << "; item += gridDim.x) {\n";
  int64_t start = 0;
  for (size_t i = 0; i < work.size(); ++i) {
    const int64_t end = start + work[i].items;
    const std::string statement = work[i].statement(start ? str_cat("item - ", start) : std::string("item"));
    if (work.size() == 1)
      os << "    " << statement << ";\n";
    else
      os << "    " << (i ? "else " : "") << (i + 1 < work.size() ? str_cat("if (item < ", end, ") ") : "") << statement << ";\n";
    start = end;
  }
  os << "    __syncthreads();\n  }\n";
  return os.str();
}

// One stage: what its groups implement (comments), its item loop, then the grid barrier
// (`barrier`: not after the last stage) and, in profiling builds, the stamps (`s`: the stage's
// number, a C expression in layer loops).
void print_stage(std::ostream& os, const KernelPlan& plan, const std::string& s, const std::string& comments,
                 const std::string& loop, bool barrier, const std::string& indent = "") {
  os << "\n" << indent << "  // ---- stage " << s << " ----\n" << comments << loop;
  if (plan.settings.profile) os << indent << "  MONO_STAMP(" << s << ", 0);  // work done\n";
  if (barrier) os << indent << "  grid_barrier(p.sync);\n";
  if (plan.settings.profile) os << indent << "  MONO_STAMP(" << s << ", 1);  // left the barrier\n";
}

bool is_word_part(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
// Whether an identifier starts at text[i] (not in the middle of a word or number: 1024LL).
bool is_word_start(const std::string& text, size_t i) {
  const char c = text[i];
  return (std::isalpha(static_cast<unsigned char>(c)) || c == '_') && !(i > 0 && is_word_part(text[i - 1]));
}

StageShape stage_shape(const Module& m, const std::string& text) {
  StageShape sh;
  std::string piece;
  auto add = [&](const std::string& kind, const std::string& value) {
    sh.pieces.push_back(piece);
    sh.kinds.push_back(kind);
    sh.values.push_back(value);
    sh.key += piece + "\x01" + kind + "\x02";
    piece.clear();
  };
  static const std::string kMaps = "mono_tmaps[";
  for (size_t i = 0; i < text.size();) {
    if (!is_word_start(text, i)) {
      piece += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_word_part(text[j])) ++j;
    const std::string word = text.substr(i, j - i);
    auto ref = m.buffer_refs().find(word);
    if (ref != m.buffer_refs().end() && !ref->second.base.empty()) {
      add(ref->second.cast + "|" + ref->second.base, word);
      i = j;
    } else if (text.compare(i, kMaps.size(), kMaps) == 0) {
      const size_t close = text.find(']', i);
      MONO_CHECK(close != std::string::npos, "a tensor-map index without its ']' in a stage's text");
      piece += kMaps;
      add("map", text.substr(i + kMaps.size(), close - i - kMaps.size()));
      i = close;
    } else {
      piece += word;
      i = j;
    }
  }
  sh.pieces.push_back(piece);
  sh.key += piece;
  return sh;
}

// find_layer_loops, appending to `loops`.
void find_loops(const std::vector<int>& shape_id, int begin, int end, std::vector<LayerLoop>* loops) {
  LayerLoop best;
  for (int period = 1; 2 * period <= end - begin; ++period) {
    int run = 0;  // stages i - run .. i - 1 each have the shape of the stage a period later
    for (int i = begin; i + period <= end; ++i) {
      const bool same = i + period < end && shape_id[i] == shape_id[i + period];
      if (same) {
        ++run;
        continue;
      }
      const int repeats = run / period + 1, first = i - run;
      if (repeats >= 2 && period * (repeats - 1) > best.period * (best.repeats - 1)) best = {first, period, repeats};
      run = 0;
    }
  }
  if (best.repeats < 2) return;
  find_loops(shape_id, begin, best.first, loops);
  loops->push_back(best);
  find_loops(shape_id, best.end(), end, loops);
}

// `text`, each line indented two more spaces.
std::string indented(const std::string& text) {
  std::string out;
  for (size_t i = 0, n; i < text.size(); i = n + 1) {
    n = text.find('\n', i);
    if (n == std::string::npos) n = text.size();
    out += "  " + text.substr(i, n - i) + "\n";
  }
  return out;
}

LoopTable loop_table(const LayerLoop& loop, const std::vector<StageShape>& shapes) {
  LoopTable t;
  for (int j = 0; j < loop.period; ++j) {
    t.column.emplace_back();
    for (size_t q = 0; q < shapes[loop.first + j].values.size(); ++q) {
      std::vector<std::string> values;
      for (int r = 0; r < loop.repeats; ++r) values.push_back(shapes[loop.first + r * loop.period + j].values[q]);
      if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values[0]; })) {
        t.column.back().push_back(-1);
        continue;
      }
      auto col = std::find(t.values.begin(), t.values.end(), values);  // a buffer the stage names twice: one column
      t.column.back().push_back(static_cast<int>(col - t.values.begin()));
      if (col == t.values.end()) t.values.push_back(values);
    }
  }
  return t;
}

// The stages of `loop` as one loop over its repeats; its table (`table`, printed) is appended to
// `tables`.
void print_loop(std::ostream& os, const Module& m, const LayerLoop& loop, const LoopTable& table, int index,
                const std::vector<StageShape>& shapes, const std::vector<std::string>& comments, std::string* tables) {
  const KernelPlan& plan = m.plan;
  std::ostringstream body;
  const std::string L = str_cat("mono_layers", index);
  for (int j = 0; j < loop.period; ++j) {
    const StageShape& first = shapes[loop.first + j];
    std::string text = first.pieces[0];
    for (size_t q = 0; q < first.values.size(); ++q) {
      const int c = table.column[j][q];
      const std::string cell = str_cat(L, "[layer][", c, "]");
      if (c < 0) {
        text += first.values[q];
      } else if (first.kinds[q] == "map") {
        text += cell;
      } else {  // every repeat's buffer has this one's cast and base (the shapes' keys hold them)
        const Module::BufferRef& ref = m.buffer_refs().at(first.values[q]);
        text += ref.cast.empty() ? str_cat("(", ref.base, " + ", cell, ")")
                                 : str_cat("((", ref.cast, ")(", ref.base, " + ", cell, "))");
      }
      text += first.pieces[q + 1];
    }
    print_stage(body, plan, str_cat(loop.first + j, " + ", loop.period, " * layer"), indented(comments[loop.first + j]),
                indented(text), true, "  ");
  }
  os << "\n  // ---- stages " << loop.first << " to " << loop.end() - 1 << ": " << loop.repeats << " repeats of "
     << loop.period << (loop.period > 1 ? " stages" : " stage") << " (a loop over layers; " << L
     << ": what differs; the comments name the first repeat's groups) ----\n";
  os << "#pragma unroll 1\n  for (int layer = 0; layer < " << loop.repeats << "; ++layer) {" << body.str() << "  }\n";
  if (table.values.empty()) return;
  *tables += str_cat("// Layer loop ", index, " (stages ", loop.first, " to ", loop.end() - 1,
                     "): per repeat, the offsets of its buffers (bytes; sync words) and its tensor maps\n");
  *tables += str_cat("__constant__ long long ", L, "[", loop.repeats, "][", table.values.size(), "] = {\n");
  for (int r = 0; r < loop.repeats; ++r) {
    *tables += "  {";
    for (size_t c = 0; c < table.values.size(); ++c) {
      const std::string& v = table.values[c][r];
      auto ref = m.buffer_refs().find(v);
      *tables += str_cat(c ? ", " : "", ref == m.buffer_refs().end() ? v : std::to_string(ref->second.offset));
    }
    *tables += r + 1 < loop.repeats ? "},\n" : "}\n";
  }
  *tables += "};\n\n";
}

// The group-function calls in `text`: each word that names a function of the module, followed by
// its arguments.
int count_calls(const Module& m, const std::string& text) {
  int n = 0;
  for (size_t i = 0; i < text.size();) {
    if (!is_word_start(text, i)) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_word_part(text[j])) ++j;
    n += j < text.size() && text[j] == '(' && m.is_function(text.substr(i, j - i));
    i = j;
  }
  return n;
}

}  // namespace

std::vector<LayerLoop> find_layer_loops(const std::vector<int>& shape_id, int begin, int end) {
  std::vector<LayerLoop> loops;
  find_loops(shape_id, begin, end, &loops);
  return loops;
}

Body build_body(Module& m) {
  const KernelPlan& plan = m.plan;
  const int n_stages = static_cast<int>(plan.stages.size());
  Body b;
  b.comments.resize(n_stages);
  std::vector<int> calls;  // per stage
  std::vector<int> shape_id;
  std::map<std::string, int> ids;
  for (int s = 0; s < n_stages; ++s) {
    std::vector<GroupWork> work;
    for (int gid : plan.stages[s].groups) {
      const Group& g = plan.groups[gid];
      if (g.fused_into >= 0) continue;  // runs inside its attention group or its squeeze consumer
      b.comments[s] += str_cat("  // group ", gid, ": ", comment_text(g.nodes()));
      for (int f : g.fused) b.comments[s] += " + " + comment_text(plan.groups[f].nodes());
      b.comments[s] += "\n";
      work.push_back(group_work(m, g));
    }
    b.item_loops.push_back(item_loop(plan, s, work));
    calls.push_back(count_calls(m, b.item_loops.back()));
    b.shapes.push_back(stage_shape(m, b.item_loops.back()));
    shape_id.push_back(ids.emplace(b.shapes.back().key, static_cast<int>(ids.size())).first->second);
  }
  // The tables live in constant memory (64 KB a module), beside the tensor maps' table: a loop
  // whose table would take the tables past their budget stays straight stages.
  const size_t maps = m.tensor_maps().size() * kTensorMapBytes;
  const size_t budget = std::min(kLayerTableBytes, maps < kConstantBytes ? kConstantBytes - maps : 0);
  size_t bytes = 0;
  for (const LayerLoop& l : find_layer_loops(shape_id, 0, n_stages - 1)) {  // the last stage has no barrier
    LoopTable table = loop_table(l, b.shapes);
    const size_t need = table.bytes(l);
    if (bytes + need > budget) continue;
    bytes += need;
    b.loops.push_back(l);
    b.tables.push_back(std::move(table));
  }
  // The calls the text makes: every stage's, less those of a loop's repeats after its first.
  for (int c : calls) b.calls += c;
  for (const LayerLoop& l : b.loops)
    for (int s = l.first + l.period; s < l.end(); ++s) b.calls -= calls[s];
  return b;
}

void print_body(std::ostream& os, const Module& m, const Body& body, std::string* tables) {
  const int n_stages = static_cast<int>(body.item_loops.size());
  size_t next = 0;
  for (int s = 0; s < n_stages;) {
    if (next < body.loops.size() && body.loops[next].first == s) {
      print_loop(os, m, body.loops[next], body.tables[next], static_cast<int>(next), body.shapes, body.comments, tables);
      s = body.loops[next++].end();
      continue;
    }
    print_stage(os, m.plan, std::to_string(s), body.comments[s], body.item_loops[s], s + 1 < n_stages);
    ++s;
  }
}

}  // namespace mono::emit
