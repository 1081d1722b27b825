// PTX programs compiled into AMDGPU code objects (issue 8). The seam between code
// generation for AMD GPUs (compile.cpp, built on src/codegen) and the HIP runtime binding
// (hip_*.cpp, amdgpu_backend.cpp), which loads the code object with hipModuleLoadData and
// launches its kernels with hipModuleLaunchKernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace mimic::runtime {
struct Program;
}

namespace mimic::amdgpu {

// The RDNA targets Mimic generates code for ("gfx1030", ..., "gfx1201"), in LLVM's names.
// Defined in targets.cpp (no LLVM), so the HIP binding and `mimic doctor` have them in
// builds without code generation.
const std::vector<std::string>& supported_targets();
bool is_supported_target(std::string_view gfx);

struct KernelObject {
  std::string name;               // the kernel's PTX name, its symbol in the code object
  size_t kernarg_bytes = 0;       // argument segment the launch passes (PTX parameters first,
                                  // laid out as runtime::KernelInfo::params, then the hidden
                                  // ones the kernel reads: none, or code object v5's 256 bytes)
  size_t static_lds_bytes = 0;    // static shared memory; dynamic shared memory follows it
  unsigned max_threads_per_block = 1024;
  bool grid_sync = false;         // needs a cooperative launch
};

// Device-side printf, assert and texture traps write records into the device log, a buffer in
// device memory that the runtime allocates, binds like a global (globals[kDeviceLogSymbol] = its
// address, when CodeObject::uses_device_log) and drains after launches: it prints printf
// records in order, and assert records as CUDA does (then the launch has failed: the wave
// trapped). Without `globals` (mimic compile) the code object defines a log of capacity 0.
//   DeviceLogHeader, then records from offset 16, each 8-byte aligned:
//   Printf: DeviceLogRecord, uint64 format (device address of the string), then vprintf's
//           argument buffer as CUDA packs it (each argument aligned to its size; %s and %p
//           arguments are device addresses).
//   Assert: DeviceLogRecord, uint64 message, file, function (device addresses of the
//           strings), uint32 line, uint32 block[3], uint32 thread[3], uint32 0.
//   Trap:   DeviceLogRecord, uint32 reason (codegen/texture_abi.h: kTexBadHandle,
//           kTexOutOfRange), uint32 instruction (TextureInstruction), uint64 handle,
//           uint32 PTX line, uint32 0, uint32 0, uint32 block[3], uint32 thread[3], uint32 0:
//           a texture or surface helper refused and the wave traps; the launch fails with
//           CUDA_ERROR_LAUNCH_FAILED, as on the CPU.
// Writers reserve space with an atomic add on `used`; a record that does not fit is
// dropped (used > capacity then tells the runtime that output was lost).
inline constexpr const char* kDeviceLogSymbol = "mimic_device_log";
// Kernels that wait for the whole grid (KernelObject::grid_sync: cooperative groups'
// grid.sync) count arrivals in the grid workspace: kGridWorkspaceBytes of device memory the
// runtime binds like a global (globals[kGridWorkspaceSymbol]) and zeroes before each launch
// of such a kernel, which must be a cooperative one. Without `globals` the code object
// defines one.
inline constexpr const char* kGridWorkspaceSymbol = "mimic_grid_workspace";
constexpr size_t kGridWorkspaceBytes = 128;

// Device-side malloc takes memory from the device heap: a DeviceHeapHeader followed by
// `capacity` bytes, which the runtime allocates (CUDA's default heap is 8 MiB), initialises
// and binds like a global (globals[kDeviceHeapSymbol]) when CodeObject::uses_device_heap.
// Allocations are 16-byte aligned and taken in order with an atomic add on `used`; one that
// does not fit returns NULL, as CUDA's malloc does. free does not return memory to the heap
// yet: it lasts until the runtime resets `used` (when no kernel that uses it is running).
inline constexpr const char* kDeviceHeapSymbol = "mimic_device_heap";
struct DeviceHeapHeader {
  uint64_t capacity; // bytes after the header
  uint64_t used;     // bytes handed out so far
};

struct DeviceLogHeader {
  uint64_t capacity; // bytes of records after the header
  uint64_t used;     // bytes reserved so far
};
enum class DeviceLogKind : uint32_t { Printf = 1, Assert = 2, Trap = 3 };
struct DeviceLogRecord {
  uint32_t kind;  // DeviceLogKind
  uint32_t bytes; // the whole record, this header included
};

struct CodeObject {
  std::string target;                  // e.g. "gfx1100"
  std::vector<uint8_t> elf;            // a complete, linked AMDGPU code object (ET_DYN)
  std::vector<KernelObject> kernels;   // in runtime::Program::kernels order
  bool uses_device_log = false;        // printf, assert, textures: bind and drain kDeviceLogSymbol
  bool uses_device_heap = false;       // malloc or free: bind kDeviceHeapSymbol
};

// Lowers, optimises and links `program` for `gfx` in-process (LLVM + lld; no external tool).
// Fails naming each kernel that cannot be translated.
//
// Module-level PTX variables (.global/.const) are, as for the CPU, memory the runtime
// allocates (Backend::allocate, i.e. hipMalloc) and initialises: `globals` maps each PTX name
// to its device address, and the link resolves the code's references to them (the
// optimised relocatable object can be cached; only the link, with the addresses, is per
// load). With `globals` == nullptr (`mimic compile`), the code object defines the variables
// itself, with their initial values, as a HIP code object would.
Result<CodeObject> compile_code_object(const runtime::Program& program, std::string_view gfx,
                                       const std::map<std::string, void*, std::less<>>* globals);

// The same compilation as text, for `mimic compile --emit` and the tests: the optimised
// LLVM IR, or the AMDGPU assembly (with the variables defined, as globals == nullptr).
enum class TextForm { LlvmIr, Assembly };
Result<std::string> compile_to_text(const runtime::Program& program, std::string_view gfx, TextForm form);

} // namespace mimic::amdgpu
