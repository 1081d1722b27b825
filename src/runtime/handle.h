// Handles given to applications (CUcontext, CUstream, CUevent, ...) are pointers to
// runtime objects. Before an object is used, its pointer is looked up in the registry of
// its type: a stale, foreign or wrongly-typed handle is an error, never a dereference.
// Objects are not freed when destroyed, only marked dead, so a stale handle cannot alias
// a newer object of another type.
//
// Every API call looks handles up, a kernel launch a dozen times, so lookups take no lock:
// the live set is an open-addressing table of atomic slots that only writers (serialised
// by a mutex) change. A slot goes from empty to an object, from an object to a tombstone
// and from a tombstone to an object, never back to empty, so a reader's probe always ends
// at the object or at an empty slot. A full table is replaced by a larger (or cleaner)
// copy; the old one stays allocated for readers still probing it, like retired objects.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace mimic::runtime {

template <typename T> class HandleRegistry {
public:
  void add(T* object) {
    std::lock_guard lock(mutex_);
    if (find(object)) return;
    if (!table_ || (used_ + 1) * 2 > table_->size()) rehash();
    Table& t = *table_;
    for (size_t i = slot_of(object, t);; i = (i + 1) & t.mask) {
      T* s = t.slots[i].load(std::memory_order_relaxed);
      if (s == nullptr || s == tombstone()) {
        if (s == nullptr) ++used_;
        t.slots[i].store(object, std::memory_order_release);
        ++live_;
        return;
      }
    }
  }
  // Returns true when the object was live. The object is kept (reachable, so leak
  // checkers stay quiet) but no longer found: its handle is stale from now on.
  bool remove(T* object) {
    std::lock_guard lock(mutex_);
    std::atomic<T*>* slot = find_slot(object);
    if (!slot) return false;
    slot->store(tombstone(), std::memory_order_release);
    --live_;
    retired_.push_back(object);
    return true;
  }
  // nullptr unless `handle` is a live object of this type.
  T* find(const void* handle) const {
    std::atomic<T*>* slot = find_slot(handle);
    return slot ? static_cast<T*>(const_cast<void*>(handle)) : nullptr;
  }
  // Calls f on every live object; f must not add or remove objects of this registry.
  template <typename F> void for_each(F&& f) const {
    std::lock_guard lock(mutex_);
    if (!table_) return;
    for (size_t i = 0; i < table_->size(); ++i) {
      T* s = table_->slots[i].load(std::memory_order_relaxed);
      if (s && s != tombstone()) f(s);
    }
  }

private:
  struct Table {
    size_t mask;
    std::unique_ptr<std::atomic<T*>[]> slots;
    size_t size() const { return mask + 1; }
  };

  static T* tombstone() { return reinterpret_cast<T*>(uintptr_t(1)); }

  static size_t slot_of(const void* p, const Table& t) {
    uint64_t h = uint64_t(reinterpret_cast<uintptr_t>(p)) * 0x9e3779b97f4a7c15ull;
    return size_t(h >> 32) & t.mask;
  }

  std::atomic<T*>* find_slot(const void* handle) const {
    if (handle == nullptr || handle == tombstone()) return nullptr;
    Table* t = current_.load(std::memory_order_acquire);
    if (!t) return nullptr;
    for (size_t i = slot_of(handle, *t);; i = (i + 1) & t->mask) {
      T* s = t->slots[i].load(std::memory_order_acquire);
      if (s == handle) return &t->slots[i];
      if (s == nullptr) return nullptr;
    }
  }

  // A new table holding the live objects, at most a quarter full. Called with the mutex.
  void rehash() {
    size_t size = 16;
    while (size < (live_ + 1) * 4)
      size *= 2;
    auto t = std::make_unique<Table>();
    t->mask = size - 1;
    t->slots = std::make_unique<std::atomic<T*>[]>(size);
    for (size_t i = 0; i < size; ++i)
      t->slots[i].store(nullptr, std::memory_order_relaxed);
    if (table_)
      for (size_t i = 0; i < table_->size(); ++i) {
        T* s = table_->slots[i].load(std::memory_order_relaxed);
        if (!s || s == tombstone()) continue;
        size_t j = slot_of(s, *t);
        while (t->slots[j].load(std::memory_order_relaxed))
          j = (j + 1) & t->mask;
        t->slots[j].store(s, std::memory_order_relaxed);
      }
    used_ = live_;
    current_.store(t.get(), std::memory_order_release);
    if (table_) old_tables_.push_back(std::move(table_));
    table_ = std::move(t);
  }

  mutable std::mutex mutex_;
  std::atomic<Table*> current_{nullptr}; // what readers probe: table_, published
  std::unique_ptr<Table> table_;
  size_t used_ = 0; // slots not empty (live objects and tombstones)
  size_t live_ = 0;
  std::vector<std::unique_ptr<Table>> old_tables_; // readers may still be probing them
  std::vector<T*> retired_;
};

} // namespace mimic::runtime
