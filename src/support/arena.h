// A bump allocator for syntax trees: nodes are trivially destructible and die together
// with their module, so a parse makes few large allocations instead of many small ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

namespace mimic {

class Arena {
public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  Arena(Arena&&) = default;
  Arena& operator=(Arena&&) = default;

  void* allocate(size_t size, size_t align) {
    uintptr_t p = (cursor_ + align - 1) & ~(uintptr_t)(align - 1);
    if (p + size > end_) {
      grow(size + align);
      p = (cursor_ + align - 1) & ~(uintptr_t)(align - 1);
    }
    cursor_ = p + size;
    return reinterpret_cast<void*>(p);
  }

  template <typename T, typename... Args> T* make(Args&&... args) {
    static_assert(std::is_trivially_destructible_v<T>, "arena objects are never destroyed");
    return new (allocate(sizeof(T), alignof(T))) T(std::forward<Args>(args)...);
  }

  // Copies a contiguous sequence into the arena.
  template <typename T> std::span<T> copy(std::span<const T> items) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (items.empty())
      return {};
    T* p = static_cast<T*>(allocate(sizeof(T) * items.size(), alignof(T)));
    std::memcpy(static_cast<void*>(p), items.data(), sizeof(T) * items.size());
    return {p, items.size()};
  }

  size_t bytes_allocated() const { return total_; }

private:
  // Blocks grow by half up to 2 MiB: large enough that allocation is rare, small
  // enough that the unused tail of the last block stays a small part of a big tree.
  void grow(size_t at_least) {
    size_t size = next_block_;
    if (size < at_least)
      size = at_least;
    if (next_block_ < (size_t(2) << 20))
      next_block_ += next_block_ / 2;
    blocks_.emplace_back(new std::byte[size]);
    cursor_ = reinterpret_cast<uintptr_t>(blocks_.back().get());
    end_ = cursor_ + size;
    total_ += size;
  }

  std::vector<std::unique_ptr<std::byte[]>> blocks_;
  uintptr_t cursor_ = 0;
  uintptr_t end_ = 0;
  size_t next_block_ = 64 * 1024;
  size_t total_ = 0;
};

} // namespace mimic
