// Handles given to applications (CUcontext, CUstream, CUevent, ...) are pointers to
// runtime objects. Before an object is used, its pointer is looked up in the registry of
// its type: a stale, foreign or wrongly-typed handle is an error, never a dereference.
// Objects are not freed when destroyed, only marked dead, so a stale handle cannot alias
// a newer object of another type.
#pragma once

#include <mutex>
#include <unordered_set>

namespace mimic::runtime {

template <typename T> class HandleRegistry {
public:
  void add(T* object) {
    std::lock_guard lock(mutex_);
    live_.insert(object);
  }
  // Returns true when the object was live.
  bool remove(T* object) {
    std::lock_guard lock(mutex_);
    return live_.erase(object) == 1;
  }
  // nullptr unless `handle` is a live object of this type.
  T* find(const void* handle) const {
    std::lock_guard lock(mutex_);
    auto it = live_.find(static_cast<T*>(const_cast<void*>(handle)));
    return it == live_.end() ? nullptr : *it;
  }
  template <typename F> void for_each(F&& f) const {
    std::lock_guard lock(mutex_);
    for (T* t : live_)
      f(t);
  }

private:
  mutable std::mutex mutex_;
  std::unordered_set<T*> live_;
};

} // namespace mimic::runtime
