// The dashboard's static files (web/), compiled into the server by cmake/embed_assets.cmake.
#pragma once

#include <cstddef>
#include <string_view>

namespace mono::server {

struct WebAsset {
  const char* path;  // "/index.html"
  const char* content_type;
  const unsigned char* data;
  size_t size;
};

// The file served at `path`, or nullptr.
const WebAsset* find_web_asset(std::string_view path);

}  // namespace mono::server
