// Devices as the driver API numbers them: every device of every available backend, in
// backend order. Created on first use.
#pragma once

#include <cuda.h>
#include <vector>

#include "runtime/backend.h"
#include "support/error.h"

namespace mimic::runtime {

class Device {
public:
  Device(Backend* backend, size_t index_in_backend, int ordinal)
      : backend_(backend), index_(index_in_backend), ordinal_(ordinal) {}

  int ordinal() const { return ordinal_; }
  Backend& backend() const { return *backend_; }
  size_t backend_index() const { return index_; }
  const DeviceProperties& properties() const { return backend_->properties(index_); }

  // An error for attributes Mimic does not know. Takes the raw number: applications may
  // pass values outside the enumeration, which must not be loaded as the enum type.
  Result<int> attribute(int attribute) const;

private:
  Backend* backend_;
  size_t index_;
  int ordinal_;
};

// All devices. The list never changes once built.
const std::vector<Device>& devices();
// nullptr for an ordinal out of range.
const Device* device(int ordinal);

} // namespace mimic::runtime
