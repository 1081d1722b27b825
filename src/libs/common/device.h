// Which device a library handle works on, and what kind it is: the seam where a backend
// per kind of device plugs in (the CPU backend now; rocBLAS and friends through HIP for
// AMD GPUs later, issue 8).
#pragma once

#include <cuda.h>

namespace mimic::libs {

enum class DeviceKind {
  // Device memory is host memory and device pointers are host pointers (Mimic's CPU
  // backend): library work runs on the host.
  HostMemory,
  // Memory the host cannot use directly (a GPU): needs a backend of its own.
  Separate,
};

const char* device_kind_name(DeviceKind kind);

struct DeviceBinding {
  CUcontext context = nullptr;
  CUdevice device = 0;
  DeviceKind kind = DeviceKind::HostMemory;
};

// The current context, its device and the device's kind. With no context current, the
// primary context of device 0 is retained and made current, as the CUDA runtime (which
// NVIDIA's libraries initialise) does on its first call.
CUresult bind_current_device(DeviceBinding* binding);

} // namespace mimic::libs
