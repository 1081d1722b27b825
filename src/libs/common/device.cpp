#include "libs/common/device.h"

namespace mimic::libs {

const char* device_kind_name(DeviceKind kind) {
  return kind == DeviceKind::HostMemory ? "host-memory device" : "separate-memory device";
}

CUresult bind_current_device(DeviceBinding* binding) {
  if (CUresult r = cuInit(0)) return r;
  CUcontext context = nullptr;
  if (CUresult r = cuCtxGetCurrent(&context)) return r;
  if (!context) {
    CUdevice first = 0;
    if (CUresult r = cuDeviceGet(&first, 0)) return r;
    if (CUresult r = cuDevicePrimaryCtxRetain(&context, first)) return r;
    if (CUresult r = cuCtxSetCurrent(context)) return r;
  }
  CUdevice device = 0;
  if (CUresult r = cuCtxGetDevice(&device)) return r;
  int host_page_tables = 0;
  if (CUresult r = cuDeviceGetAttribute(
          &host_page_tables, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
          device))
    return r;
  binding->context = context;
  binding->device = device;
  binding->kind = host_page_tables ? DeviceKind::HostMemory : DeviceKind::Separate;
  return CUDA_SUCCESS;
}

} // namespace mimic::libs
