#include "runtime/link_image.h"

#include <cstring>
#include <cuda.h>

namespace mimic::runtime {

namespace {

constexpr size_t kHeaderBytes = 24, kEntryBytes = 16;
// Far above any real program, far below sizes whose sums could overflow.
constexpr uint64_t kMaxImageBytes = uint64_t(1) << 36;

template <typename T> void put(std::vector<uint8_t>& out, T value) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

template <typename T> T get(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

} // namespace

std::vector<uint8_t> make_linked_image(const std::vector<PtxSource>& modules) {
  std::vector<uint8_t> out(kLinkedImageMagic, kLinkedImageMagic + 8);
  put<uint32_t>(out, kLinkedImageVersion);
  put<uint32_t>(out, uint32_t(modules.size()));
  put<uint64_t>(out, 0); // total, below
  for (const PtxSource& m : modules) {
    put<uint32_t>(out, uint32_t(m.name.size()));
    put<uint32_t>(out, 0);
    put<uint64_t>(out, m.text.size());
    out.insert(out.end(), m.name.begin(), m.name.end());
    out.insert(out.end(), m.text.begin(), m.text.end());
  }
  uint64_t total = out.size();
  std::memcpy(out.data() + 16, &total, 8);
  return out;
}

bool is_linked_image(const void* image) {
  const auto* p = static_cast<const char*>(image);
  for (size_t i = 0; i < sizeof kLinkedImageMagic; ++i)
    if (p[i] != kLinkedImageMagic[i]) return false;
  return true;
}

Result<std::vector<PtxSource>> read_linked_image(const void* image) {
  if (!is_linked_image(image)) return Error("not a linked image", CUDA_ERROR_INVALID_IMAGE);
  const auto* p = static_cast<const uint8_t*>(image);
  uint32_t version = get<uint32_t>(p + 8), count = get<uint32_t>(p + 12);
  uint64_t total = get<uint64_t>(p + 16);
  if (version != kLinkedImageVersion)
    return Error("linked image version " + std::to_string(version) + " (this Mimic reads version " +
                     std::to_string(kLinkedImageVersion) + "): link it again with this library",
                 CUDA_ERROR_INVALID_IMAGE);
  if (total < kHeaderBytes || total > kMaxImageBytes)
    return Error("linked image of " + std::to_string(total) + " bytes: damaged",
                 CUDA_ERROR_INVALID_IMAGE);
  std::vector<PtxSource> modules;
  uint64_t at = kHeaderBytes;
  for (uint32_t i = 0; i < count; ++i) {
    if (total - at < kEntryBytes)
      return Error("linked image: module " + std::to_string(i) + " lies past its end",
                   CUDA_ERROR_INVALID_IMAGE);
    uint64_t name_bytes = get<uint32_t>(p + at), text_bytes = get<uint64_t>(p + at + 8);
    at += kEntryBytes;
    if (name_bytes > total - at || text_bytes > total - at - name_bytes)
      return Error("linked image: module " + std::to_string(i) + " lies past its end",
                   CUDA_ERROR_INVALID_IMAGE);
    PtxSource m;
    m.name.assign(reinterpret_cast<const char*>(p + at), name_bytes);
    at += name_bytes;
    m.text.assign(reinterpret_cast<const char*>(p + at), text_bytes);
    at += text_bytes;
    modules.push_back(std::move(m));
  }
  if (at != total)
    return Error("linked image: " + std::to_string(total - at) + " bytes after its last module",
                 CUDA_ERROR_INVALID_IMAGE);
  return modules;
}

} // namespace mimic::runtime
