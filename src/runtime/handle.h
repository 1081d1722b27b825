// Handles given to applications (CUcontext, CUstream, CUevent, ...) are pointers to
// runtime objects. Before an object is used, its pointer is looked up in the registry of
// its type: a stale, foreign or wrongly-typed handle is an error, never a dereference.
// Objects are not freed when destroyed, only marked dead, so a stale handle cannot alias
// a newer object of another type.
#pragma once

#include <mutex>
#include <unordered_set>
#include <vector>

namespace mimic::runtime {

template <typename T> class HandleRegistry {
public:
  void add(T* object) {
    std::lock_guard lock(mutex_);
    live_.insert(object);
  }
  // Returns true when the object was live. The object is kept (reachable, so leak
  // checkers stay quiet) but no longer found: its handle is stale from now on.
  bool remove(T* object) {
    std::lock_guard lock(mutex_);
    if (live_.erase(object) != 1)
      return false;
    retired_.push_back(object);
    return true;
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
  std::vector<T*> retired_;
};

} // namespace mimic::runtime
