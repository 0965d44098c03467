#include "compiler/runtime/artifact.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compiler/support/atomic_file.h"
#include "compiler/support/error.h"

namespace mono {

using nlohmann::json;

std::vector<unsigned char> read_binary(const std::string& path) {
  std::vector<unsigned char> bytes;
  if (!read_file_whole(path, &bytes)) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
      user_error("'", path, "' is not a file");
    user_error("cannot open '", path, "'");
  }
  return bytes;
}

static ArtifactIo io_from(const json& j) {
  ArtifactIo io;
  io.name = j.at("name").get<std::string>();
  if (!dtype_from_name(j.at("dtype").get<std::string>(), &io.device_dtype) ||
      !dtype_from_name(j.at("model_dtype").get<std::string>(), &io.model_dtype))
    user_error("manifest: bad dtype for '", io.name, "'");
  io.shape = j.at("shape").get<std::vector<int64_t>>();
  return io;
}

Manifest read_manifest(const std::string& dir) {
  std::ifstream in(dir + "/manifest.json");
  if (!in) user_error("'", dir, "' is not a Mono artifact (no manifest.json)");
  Manifest m;
  try {
    json j = json::parse(in);
    const int format = j.at("format").get<int>();
    if (format != kArtifactFormat && format != 1)
      user_error(dir, "/manifest.json: format ", format, " is not one this runtime reads (1, ", kArtifactFormat, ")");
    m.model = j.at("model").get<std::string>();
    m.precision = j.at("precision").get<std::string>();
    m.sm_arch = j.at("sm_arch").get<int>();
    m.kernel = j.at("kernel").get<std::string>();
    const json& c = j.at("context");
    m.threads = c.at("threads").get<int>();
    m.blocks_per_sm = c.at("blocks_per_sm").get<int>();
    m.smem_bytes = c.at("smem_bytes").get<int>();
    const json& mem = j.at("memory");
    m.arena_bytes = mem.at("arena_bytes").get<size_t>();
    m.sync_words = mem.at("sync_words").get<size_t>();
    m.weights_bytes = mem.at("weights_bytes").get<size_t>();
    m.stages = j.at("stages").get<int>();
    m.groups = j.at("groups").get<int>();
    m.profile = j.value("profile", false);
    for (const json& io : j.at("inputs")) m.inputs.push_back(io_from(io));
    for (const json& io : j.at("outputs")) m.outputs.push_back(io_from(io));
    for (const json& t : j.value("tensor_maps", json::array())) {
      TensorMapSpec s;
      if (t.at("arena_offset").get<int64_t>() < 0) user_error(dir, "/manifest.json: tensor map ", m.tensor_maps.size(), ": negative arena offset");
      s.arena_offset = t.at("arena_offset").get<uint64_t>();
      s.rows = t.at("rows").get<int64_t>();
      s.cols = t.at("cols").get<int64_t>();
      s.row_stride = t.at("row_stride").get<int64_t>();
      s.box_rows = t.at("box_rows").get<int>();
      s.box_cols = t.at("box_cols").get<int>();
      const std::string problem = tensor_map_problem(s);
      if (!problem.empty())
        user_error(dir, "/manifest.json: tensor map ", m.tensor_maps.size(), ": ", problem);
      // (no overflow: rows < 2^31 and row_stride < 2^40 by tensor_map_problem)
      const unsigned __int128 end = static_cast<unsigned __int128>(s.arena_offset) +
                                    static_cast<unsigned __int128>(s.row_stride) * static_cast<uint64_t>(s.rows - 1) +
                                    static_cast<uint64_t>(s.cols) * 2;
      if (end > m.arena_bytes)
        user_error(dir, "/manifest.json: tensor map ", m.tensor_maps.size(), " reaches beyond the arena (",
                   m.arena_bytes, " B)");
      m.tensor_maps.push_back(s);
    }
    if (j.contains("verification")) {
      const json& v = j.at("verification");
      if (v.at("verified").get<bool>()) {
        m.verification_failed = !v.at("ok").get<bool>();
        const json& worst = v.at("worst_relative_error");
        auto g3 = [](double x) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.3g", x);
          return std::string(buf);
        };
        m.verification = str_cat("verified ", m.verification_failed ? "FAILED" : "PASS", " against ",
                                 v.at("against").get<std::string>(), " on ", v.at("gpu").get<std::string>(),
                                 ", worst relative error ", worst.is_number() ? g3(worst.get<double>()) : worst.get<std::string>(),
                                 v.contains("tolerance") ? str_cat(" (tolerance ", g3(v.at("tolerance").get<double>()), ")") : "");
      } else {
        m.verification = "not verified: " + v.at("reason").get<std::string>();
      }
    }
  } catch (const json::exception& e) {
    user_error(dir, "/manifest.json: ", e.what());
  }
  return m;
}

}  // namespace mono
