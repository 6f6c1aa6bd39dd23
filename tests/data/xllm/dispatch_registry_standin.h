// SPDX-License-Identifier: MIT
// dispatch_registry_standin.h - a stand-in for xLLM's core/kernels/npu/tilelang/dispatch_registry.h,
// written from its contract (the names a generated registry.inc uses), so that the registry-inc
// export can be compiled with g++ -fsyntax-only without xLLM, torch or CANN.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

using aclrtStream = void*;   // acl/acl.h

namespace xllm::kernel::npu::tilelang {

enum class TilelangDType { kBF16, kFP16, kFP32, kFloat16, kFloat32, kInt8, kInt32, kUInt8 };

template <typename Fn>
using function_type_t = std::remove_pointer_t<Fn>;

template <typename Specialization, typename Fn>
struct KernelEntry {
  Specialization spec;
  const char* variant_key;
  Fn fn;
};

template <typename Entry, std::size_t N, typename Specialization>
inline const Entry* find_kernel_entry(const std::array<Entry, N>& registry,
                                      const Specialization& specialization) {
  for (const auto& entry : registry)
    if (entry.spec == specialization) return &entry;
  return nullptr;
}

template <typename Entry, std::size_t N>
inline std::string available_variant_keys(const std::array<Entry, N>& registry) {
  std::string out;
  for (const auto& entry : registry) {
    if (!out.empty()) out += ", ";
    out += entry.variant_key;
  }
  return out;
}

}  // namespace xllm::kernel::npu::tilelang
