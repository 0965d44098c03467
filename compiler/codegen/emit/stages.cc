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

StageShape stage_shape(const Module& m, const std::string& text) {
  StageShape sh;
  std::string piece;
  auto is_start = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  auto is_part = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto add = [&](const std::string& kind, const std::string& value) {
    sh.pieces.push_back(piece);
    sh.kinds.push_back(kind);
    sh.values.push_back(value);
    sh.key += piece + "\x01" + kind + "\x02";
    piece.clear();
  };
  static const std::string kMaps = "mono_tmaps[";
  for (size_t i = 0; i < text.size();) {
    if (!is_start(text[i]) || (i > 0 && is_part(text[i - 1]))) {
      piece += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_part(text[j])) ++j;
    const std::string word = text.substr(i, j - i);
    auto ref = m.buffer_refs().find(word);
    if (ref != m.buffer_refs().end() && !ref->second.base.empty()) {
      add(ref->second.cast + "|" + ref->second.base, word);
      i = j;
    } else if (text.compare(i, kMaps.size(), kMaps) == 0) {
      const size_t close = text.find(']', i);
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

// The stages of `loop` as one loop over its repeats; its table of the values that differ
// between repeats is appended to `tables`.
void print_loop(std::ostream& os, const Module& m, const LayerLoop& loop, int index, const std::vector<StageShape>& shapes,
                const std::vector<std::string>& comments, std::string* tables) {
  const KernelPlan& plan = m.plan;
  std::vector<std::vector<std::string>> columns;  // per table column: the value in each repeat
  std::ostringstream body;
  const std::string L = str_cat("mono_layers", index);
  for (int j = 0; j < loop.period; ++j) {
    const StageShape& first = shapes[loop.first + j];
    std::string text = first.pieces[0];
    for (size_t q = 0; q < first.values.size(); ++q) {
      std::vector<std::string> values;
      for (int r = 0; r < loop.repeats; ++r) values.push_back(shapes[loop.first + r * loop.period + j].values[q]);
      if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values[0]; })) {
        text += values[0];
      } else {
        auto col = std::find(columns.begin(), columns.end(), values);  // a buffer the stage names twice: one column
        const std::string cell = str_cat(L, "[layer][", col - columns.begin(), "]");
        if (col == columns.end()) columns.push_back(values);
        if (first.kinds[q] == "map") {
          text += cell;
        } else {
          const std::string& kind = first.kinds[q];
          const size_t bar = kind.find('|');
          const std::string cast = kind.substr(0, bar), base = kind.substr(bar + 1);
          text += cast.empty() ? str_cat("(", base, " + ", cell, ")") : str_cat("((", cast, ")(", base, " + ", cell, "))");
        }
      }
      text += first.pieces[q + 1];
    }
    std::string indented;
    for (size_t i = 0, n; i < text.size(); i = n + 1) {
      n = text.find('\n', i);
      if (n == std::string::npos) n = text.size();
      indented += "  " + text.substr(i, n - i) + "\n";
    }
    std::string notes;
    for (size_t i = 0, n; i < comments[loop.first + j].size(); i = n + 1) {
      n = comments[loop.first + j].find('\n', i);
      notes += "  " + comments[loop.first + j].substr(i, n - i) + "\n";
    }
    print_stage(body, plan, str_cat(loop.first + j, " + ", loop.period, " * layer"), notes, indented, true, "  ");
  }
  os << "\n  // ---- stages " << loop.first << " to " << loop.end() - 1 << ": " << loop.repeats << " repeats of "
     << loop.period << (loop.period > 1 ? " stages" : " stage") << " (a loop over layers; " << L << ": what differs) ----\n";
  os << "#pragma unroll 1\n  for (int layer = 0; layer < " << loop.repeats << "; ++layer) {" << body.str() << "  }\n";
  if (columns.empty()) return;
  *tables += str_cat("// Layer loop ", index, " (stages ", loop.first, " to ", loop.end() - 1,
                     "): per repeat, the offsets of its buffers (bytes; sync words) and its tensor maps\n");
  *tables += str_cat("__constant__ long long ", L, "[", loop.repeats, "][", columns.size(), "] = {\n");
  for (int r = 0; r < loop.repeats; ++r) {
    *tables += "  {";
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string& v = columns[c][r];
      auto ref = m.buffer_refs().find(v);
      *tables += str_cat(c ? ", " : "", ref == m.buffer_refs().end() ? v : std::to_string(ref->second.offset));
    }
    *tables += r + 1 < loop.repeats ? "},\n" : "}\n";
  }
  *tables += "};\n\n";
}

}  // namespace

std::vector<LayerLoop> find_layer_loops(const std::vector<int>& shape_id, int begin, int end) {
  std::vector<LayerLoop> loops;
  find_loops(shape_id, begin, end, &loops);
  return loops;
}

int Body::calls() const {
  int n = 0;
  for (const std::vector<GroupWork>& w : work) n += static_cast<int>(w.size());
  for (const LayerLoop& l : loops)
    for (int s = l.first + l.period; s < l.end(); ++s) n -= static_cast<int>(work[s].size());
  return n;
}

Body build_body(Module& m) {
  const KernelPlan& plan = m.plan;
  const int n_stages = static_cast<int>(plan.stages.size());
  Body b;
  b.work.resize(n_stages);
  b.comments.resize(n_stages);
  std::vector<int> shape_id;
  std::map<std::string, int> ids;
  for (int s = 0; s < n_stages; ++s) {
    for (int gid : plan.stages[s].groups) {
      const Group& g = plan.groups[gid];
      if (g.fused_into >= 0) continue;  // runs inside its attention group or its squeeze consumer
      b.comments[s] += str_cat("  // group ", gid, ": ", comment_text(g.nodes()));
      for (int f : g.fused) b.comments[s] += " + " + comment_text(plan.groups[f].nodes());
      b.comments[s] += "\n";
      b.work[s].push_back(group_work(m, g));
    }
    b.item_loops.push_back(item_loop(plan, s, b.work[s]));
    b.shapes.push_back(stage_shape(m, b.item_loops.back()));
    shape_id.push_back(ids.emplace(b.shapes.back().key, static_cast<int>(ids.size())).first->second);
  }
  b.loops = find_layer_loops(shape_id, 0, n_stages - 1);  // the last stage has no barrier: never in a loop
  // The tables live in constant memory (64 KB a module, the tensor maps' table too): a loop whose
  // table could pass kLayerTableBytes with those before it stays straight stages (a table holds
  // at most one column per placeholder of a repeat).
  std::vector<LayerLoop> kept;
  size_t bytes = 0;
  for (const LayerLoop& l : b.loops) {
    size_t cells = 0;
    for (int s = l.first; s < l.first + l.period; ++s) cells += b.shapes[s].values.size();
    const size_t need = cells * static_cast<size_t>(l.repeats) * sizeof(long long);
    if (bytes + need > kLayerTableBytes) continue;
    bytes += need;
    kept.push_back(l);
  }
  b.loops = kept;
  return b;
}

void print_body(std::ostream& os, const Module& m, const Body& body, std::string* tables) {
  const int n_stages = static_cast<int>(body.work.size());
  size_t next = 0;
  for (int s = 0; s < n_stages;) {
    if (next < body.loops.size() && body.loops[next].first == s) {
      print_loop(os, m, body.loops[next], static_cast<int>(next), body.shapes, body.comments, tables);
      s = body.loops[next++].end();
      continue;
    }
    print_stage(os, m.plan, std::to_string(s), body.comments[s], body.item_loops[s], s + 1 < n_stages);
    ++s;
  }
}

}  // namespace mono::emit
