// The interface between the backend-neutral runtime and a backend (the CPU now, AMD GPUs
// through HIP later). A backend owns devices, their memory and, with code generation,
// their modules and launches. It never depends on another backend or on the driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda.h>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/error.h"

namespace mimic::runtime {

struct Program;

// A program compiled for one backend, with its module's globals bound.
class CompiledProgram {
public:
  virtual ~CompiledProgram() = default;
  // The device address of a .func whose address a global's initializer takes (a table of
  // function pointers), or 0 when the program has no such function.
  virtual uint64_t function_address(std::string_view name) const {
    (void)name;
    return 0;
  }
  // The largest thread block cluster (in blocks) kernel `kernel` runs correctly in: 1 when
  // its code assumes clusters of one block, 0 when it is not limited.
  virtual unsigned max_cluster_blocks(size_t kernel) const {
    (void)kernel;
    return 0;
  }
};

struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t dynamic_shared_bytes = 0;
  // Whether [address, address + bytes) is memory a kernel may touch (MIMIC_CHECK=memory).
  bool (*accessible)(const void* address, size_t bytes) = nullptr;
};

// What a device is, in the terms the CUDA driver API reports. Every CUDA device
// attribute is derived from these fields (device_attributes.def says how).
struct DeviceProperties {
  std::string name;
  std::string backend;         // "cpu", "amdgpu"
  uint64_t total_memory = 0;   // bytes
  int cc_major = 8, cc_minor = 6;
  int multiprocessor_count = 1;
  int max_threads_per_block = 1024;
  int max_block_dim[3] = {1024, 1024, 64};
  int max_grid_dim[3] = {2147483647, 65535, 65535};
  int shared_memory_per_block = 48 * 1024;
  int shared_memory_per_block_optin = 99 * 1024;
  int shared_memory_per_multiprocessor = 100 * 1024;
  int reserved_shared_memory_per_block = 1024;
  int max_threads_per_multiprocessor = 1536;
  int max_blocks_per_multiprocessor = 16;
  int registers_per_block = 65536;
  int registers_per_multiprocessor = 65536;
  int total_constant_memory = 65536;
  int warp_size = 32;
  int clock_rate_khz = 1000000;
  int memory_clock_rate_khz = 1000000;
  int memory_bus_width = 64;
  int l2_cache_size = 4 << 20;
  int async_engine_count = 1;
  int pci_domain = 0, pci_bus = 0, pci_device = 0;
  uint8_t uuid[16] = {};
  bool integrated = true;            // shares memory with the host
  bool unified_addressing = true;
  bool managed_memory = true;
  bool concurrent_managed_access = true;
  bool pageable_memory_access = true; // the device can use any host pointer (CPU backend)
  bool cooperative_launch = true;
  // Texture resources must start at a multiple of texture_alignment. It must not exceed
  // the backend's allocation alignment (256 bytes for the CPU), so that any pointer from
  // cuMemAlloc can back a texture, as on CUDA.
  int texture_alignment = 256;
  int texture_pitch_alignment = 32;
  int surface_alignment = 256;
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual std::string kind() const = 0;
  virtual size_t device_count() const = 0;
  virtual const DeviceProperties& properties(size_t device) const = 0;

  // Device memory, addressed in the process's unified address space. `bytes` > 0.
  virtual Result<void*> allocate(size_t device, size_t bytes) = 0;
  virtual void release(size_t device, void* pointer) = 0;
  // Host memory the device can use at the same address (cuMemAllocHost), freed with
  // release_host; memory both the host and the device use (cuMemAllocManaged), freed with
  // release. A backend whose device memory is host memory (the CPU) needs neither.
  virtual Result<void*> allocate_host(size_t device, size_t bytes) { return allocate(device, bytes); }
  virtual void release_host(size_t device, void* pointer) { release(device, pointer); }
  virtual Result<void*> allocate_managed(size_t device, size_t bytes) { return allocate(device, bytes); }
  // Makes [pointer, pointer + bytes) of host memory usable by the device at the same address
  // (cuMemHostRegister) until unregister_host.
  virtual Status register_host(size_t device, void* pointer, size_t bytes) {
    (void)device, (void)pointer, (void)bytes;
    return {};
  }
  virtual void unregister_host(size_t device, void* pointer) { (void)device, (void)pointer; }
  // Copies between any two addresses this backend can reach (host or device).
  virtual Status copy(void* dst, const void* src, size_t bytes) = 0;
  // Fills `count` elements of `element_size` (1, 2 or 4) bytes with `value`.
  virtual Status fill(void* dst, uint32_t value, size_t element_size, size_t count) = 0;
  // Waits for all work of the device to finish.
  virtual Status synchronize(size_t device) = 0;

  // Compiles every kernel of `program` (failing as a whole, naming each kernel that cannot
  // be translated; the error code is the CUresult to report). `globals` maps the
  // program's global variables to their device addresses in the module being loaded.
  virtual Result<std::shared_ptr<CompiledProgram>> compile(size_t device, const Program& program,
                                                           const std::map<std::string, void*, std::less<>>& globals) = 0;
  // Runs kernel `kernel` (index in Program::kernels) to completion on the calling thread's
  // behalf. `args` is the packed parameter buffer.
  virtual CUresult launch(size_t device, CompiledProgram& program, size_t kernel, const LaunchShape& shape,
                          const void* args) = 0;
};

// The backends available in this process, created on first use (CPU always; AMD GPU
// when the HIP runtime finds a device and MIMIC_BACKEND does not exclude it).
std::vector<Backend*> available_backends();

} // namespace mimic::runtime
