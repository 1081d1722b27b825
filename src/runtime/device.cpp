#include "runtime/device.h"

#include <string>

namespace mimic::runtime {

Result<int> Device::attribute(int attribute) const {
  const DeviceProperties& p = properties();
  switch (attribute) {
#define DEVICE_ATTRIBUTE(id, value)                                                                \
  case id:                                                                                         \
    return int(value);
#include "runtime/device_attributes.def"
#undef DEVICE_ATTRIBUTE
  default:
    return Error("device attribute " + std::to_string(attribute) + " is not known to Mimic");
  }
}

const std::vector<Device>& devices() {
  // Never destroyed: the CUDA runtime releases contexts from its exit handlers, which
  // may run after this library's static destructors.
  static const std::vector<Device>* all = [] {
    auto* out = new std::vector<Device>;
    for (Backend* b : available_backends())
      for (size_t i = 0; i < b->device_count(); ++i)
        out->emplace_back(b, i, int(out->size()));
    return out;
  }();
  return *all;
}

const Device* device(int ordinal) {
  const auto& all = devices();
  if (ordinal < 0 || size_t(ordinal) >= all.size())
    return nullptr;
  return &all[size_t(ordinal)];
}

} // namespace mimic::runtime
