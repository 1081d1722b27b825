// Devices and primary contexts.
#include <cstdio>
#include <cstring>

#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "driver/private_tables.h"

namespace mimic::driver {

namespace {
std::atomic<bool> g_initialized{false};
} // namespace

bool initialized() { return g_initialized.load(std::memory_order_acquire); }
void mark_initialized() { g_initialized.store(true, std::memory_order_release); }

CUresult device_of(CUdevice ordinal, const runtime::Device*& out) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  out = runtime::device(ordinal);
  return out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult current_context(runtime::Context*& out) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  out = runtime::current_context();
  if (!out)
    return CUDA_ERROR_INVALID_CONTEXT;
  CUresult sticky = out->sticky_error.load();
  return sticky;
}

CUresult context_or_current(CUcontext handle, runtime::Context*& out) {
  if (!handle)
    return current_context(out);
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  out = runtime::find_context(handle);
  return out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

namespace impl {

CUresult cuInit_v2000(unsigned int Flags) {
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  // Discovers the backends once. No device at all (MIMIC_BACKEND=amdgpu without a usable
  // AMD GPU) is CUDA's "no CUDA-capable device".
  if (runtime::devices().empty())
    return CUDA_ERROR_NO_DEVICE;
  mark_initialized();
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion_v2020(int* driverVersion) {
  if (!driverVersion)
    return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = kDriverVersion;
  return CUDA_SUCCESS;
}

CUresult cuGetExportTable_v3000(const void** ppExportTable, const CUuuid* pExportTableId) {
  return get_export_table(ppExportTable, pExportTableId);
}

CUresult cuDeviceGet_v2000(CUdevice_v1* device, int ordinal) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  if (!runtime::device(ordinal))
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount_v2000(int* count) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  *count = int(runtime::devices().size());
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName_v2000(char* name, int len, CUdevice_v1 dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!name || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  snprintf(name, size_t(len), "%s", d->properties().name.c_str());
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v3020(size_t* bytes, CUdevice_v1 dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!bytes)
    return CUDA_ERROR_INVALID_VALUE;
  *bytes = d->properties().total_memory;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute_v2000(int* pi, CUdevice_attribute attrib, CUdevice_v1 dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!pi)
    return CUDA_ERROR_INVALID_VALUE;
  auto v = d->attribute(int(attrib));
  if (!v)
    return CUDA_ERROR_INVALID_VALUE;
  *pi = v.value();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v9020(CUuuid* uuid, CUdevice_v1 dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!uuid)
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(uuid->bytes, d->properties().uuid, 16);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v11040(CUuuid* uuid, CUdevice_v1 dev) { return cuDeviceGetUuid_v9020(uuid, dev); }

CUresult cuDeviceGetPCIBusId_v4010(char* pciBusId, int len, CUdevice_v1 dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!pciBusId || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  const auto& p = d->properties();
  snprintf(pciBusId, size_t(len), "%08X:%02X:%02X.0", p.pci_domain, p.pci_bus, p.pci_device);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetByPCIBusId_v4010(CUdevice_v1* dev, const char* pciBusId) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!dev || !pciBusId)
    return CUDA_ERROR_INVALID_VALUE;
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  // "domain:bus:device.function" or "bus:device.function"
  if (sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) {
    domain = 0;
    if (sscanf(pciBusId, "%x:%x.%x", &bus, &device, &function) != 3)
      return CUDA_ERROR_INVALID_VALUE;
  }
  for (const runtime::Device& d : runtime::devices()) {
    const auto& p = d.properties();
    if (unsigned(p.pci_domain) == domain && unsigned(p.pci_bus) == bus && unsigned(p.pci_device) == device) {
      *dev = d.ordinal();
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceComputeCapability_v2000(int* major, int* minor, CUdevice_v1 dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!major || !minor)
    return CUDA_ERROR_INVALID_VALUE;
  *major = d->properties().cc_major;
  *minor = d->properties().cc_minor;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetProperties_v2000(CUdevprop_v1* prop, CUdevice_v1 dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!prop)
    return CUDA_ERROR_INVALID_VALUE;
  const auto& p = d->properties();
  prop->maxThreadsPerBlock = p.max_threads_per_block;
  for (int i = 0; i < 3; ++i) {
    prop->maxThreadsDim[i] = p.max_block_dim[i];
    prop->maxGridSize[i] = p.max_grid_dim[i];
  }
  prop->sharedMemPerBlock = p.shared_memory_per_block;
  prop->totalConstantMemory = p.total_constant_memory;
  prop->SIMDWidth = p.warp_size;
  prop->memPitch = 2147483647;
  prop->regsPerBlock = p.registers_per_block;
  prop->clockRate = p.clock_rate_khz;
  prop->textureAlign = p.texture_alignment;
  return CUDA_SUCCESS;
}

CUresult cuDeviceCanAccessPeer_v4000(int* canAccessPeer, CUdevice_v1 dev, CUdevice_v1 peerDev) {
  const runtime::Device *a, *b;
  if (CUresult r = device_of(dev, a))
    return r;
  if (CUresult r = device_of(peerDev, b))
    return r;
  if (!canAccessPeer)
    return CUDA_ERROR_INVALID_VALUE;
  // Devices of one backend that shares the host's address space reach each other.
  *canAccessPeer = a != b && &a->backend() == &b->backend() && a->properties().integrated;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain_v7000(CUcontext* pctx, CUdevice_v1 dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  runtime::Context* c = nullptr;
  CUresult r = runtime::retain_primary(*d, &c);
  if (r == CUDA_SUCCESS)
    *pctx = runtime::to_handle(c);
  return r;
}

CUresult cuDevicePrimaryCtxRelease_v11000(CUdevice_v1 dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  return runtime::release_primary(*d);
}
CUresult cuDevicePrimaryCtxRelease_v7000(CUdevice_v1 dev) { return cuDevicePrimaryCtxRelease_v11000(dev); }

CUresult cuDevicePrimaryCtxSetFlags_v11000(CUdevice_v1 dev, unsigned int flags) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  constexpr unsigned kKnown = CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_COREDUMP_ENABLE |
                              CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS;
  if (flags & ~kKnown)
    return CUDA_ERROR_INVALID_VALUE;
  runtime::Context* c = runtime::primary_context(*d);
  std::lock_guard lock(c->mutex);
  c->flags = flags;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxSetFlags_v7000(CUdevice_v1 dev, unsigned int flags) {
  return cuDevicePrimaryCtxSetFlags_v11000(dev, flags);
}

CUresult cuDevicePrimaryCtxGetState_v7000(CUdevice_v1 dev, unsigned int* flags, int* active) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!flags || !active)
    return CUDA_ERROR_INVALID_VALUE;
  runtime::Context* c = runtime::primary_context(*d);
  {
    std::lock_guard lock(c->mutex);
    *flags = c->flags;
  }
  *active = runtime::primary_active(*d);
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset_v11000(CUdevice_v1 dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  return runtime::reset_primary(*d);
}
CUresult cuDevicePrimaryCtxReset_v7000(CUdevice_v1 dev) { return cuDevicePrimaryCtxReset_v11000(dev); }

} // namespace impl
} // namespace mimic::driver
