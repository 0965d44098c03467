#!/usr/bin/env bash
# runtime-packages.sh BINARY...
# Prints the Debian packages that hold the shared libraries the binaries load (ldd), one a
# line: the runtime stage installs exactly these, so the image follows the build's
# dependencies without a second list to maintain. CUDA packages (NVIDIA's repository) and
# the C library are left out: the worker image installs NVRTC itself, and the driver
# (libcuda) comes from the host through the NVIDIA container runtime.
set -euo pipefail
for bin in "$@"; do
  ldd "$bin" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1} $3 == "not" {print "missing:" $1}'
done | sort -u | while read -r lib; do
  case "$lib" in
    missing:*libcuda.so*|missing:*libnvrtc*|missing:*libnvidia*) continue ;;
    missing:*) echo "runtime-packages: ldd cannot find ${lib#missing:}" >&2; exit 1 ;;
  esac
  real=$(readlink -f "$lib")
  owner=""
  for path in "$lib" "$real" "/usr$lib" "/usr$real"; do
    owner=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1) || true
    [ -n "$owner" ] && break
  done
  if [ -z "$owner" ]; then
    case "$lib" in
      *libcuda.so*|*libnvrtc*|*libnvidia*) continue ;;  # NVIDIA's, handled separately
      *) echo "runtime-packages: no package holds $lib" >&2; exit 1 ;;
    esac
  fi
  echo "$owner"
done | grep -v -E '^(libc6|libgcc-s1|cuda-.*|libcuda.*|libnvidia-.*)$' | sort -u
