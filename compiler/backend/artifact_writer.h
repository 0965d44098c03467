// Writes a built kernel as an artifact folder: model.cu with mono_dev/*.cuh, kernel.cubin
// (when compiled) with build.log, weights.bin and manifest.json. The runtime reads it back
// (compiler/runtime/artifact.h: the format, read_manifest).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "compiler/backend/build.h"

namespace mono {

// Writes the artifact folder (created if needed) with `verification`, the manifest's record
// of how the kernel was verified or why it was not (verify.h). Throws UserError on I/O errors.
void write_artifact(const std::string& dir, const Graph& graph, const BuiltKernel& built,
                    const nlohmann::json& verification);

}  // namespace mono
