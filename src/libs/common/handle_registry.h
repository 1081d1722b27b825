// Library handles (cublasHandle_t and the like) are pointers to objects of the library,
// checked against the live set before every use: a stale, foreign or NULL handle is an
// error status, never a crash.
#pragma once

#include <mutex>
#include <unordered_set>

namespace mimic::libs {

template <typename Object> class HandleRegistry {
public:
  void add(Object* object) {
    std::lock_guard lock(mutex_);
    live_.insert(object);
  }
  // Takes `handle` out of the live set; returns the object, or nullptr when not live.
  Object* remove(const void* handle) {
    std::lock_guard lock(mutex_);
    auto it = live_.find(static_cast<Object*>(const_cast<void*>(handle)));
    if (it == live_.end()) return nullptr;
    Object* object = *it;
    live_.erase(it);
    return object;
  }
  Object* find(const void* handle) {
    std::lock_guard lock(mutex_);
    auto it = live_.find(static_cast<Object*>(const_cast<void*>(handle)));
    return it == live_.end() ? nullptr : *it;
  }

private:
  std::mutex mutex_;
  std::unordered_set<Object*> live_;
};

} // namespace mimic::libs
