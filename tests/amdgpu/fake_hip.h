// The test hooks of the fake HIP runtime (fake_hip.cpp), found with dlsym by the tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct FakeHipLaunch {
  std::string kernel;
  unsigned grid[3], block[3], shared_bytes;
  bool cooperative;
  std::vector<uint8_t> args;         // the extra buffer's bytes (plain launches)
  std::vector<void*> param_pointers; // kernelParams[0..n) (cooperative launches)
  int device;
  int launches;
  bool grid_workspace_zero; // cooperative launches: Mimic's 128-byte workspace was all zeros
};

using FakeHipLastLaunch = const FakeHipLaunch* (*)();
using FakeHipSetCooperativeParamCount = void (*)(int);
using FakeHipFailNextLaunch = void (*)(int);
using FakeHipLiveAllocations = size_t (*)();
using FakeHipAllocationOfSize = void* (*)(size_t bytes);
// Whether [address, address + bytes) lies in one live hipMalloc/hipMallocManaged block.
using FakeHipIsDeviceMemory = bool (*)(const void* address, size_t bytes);
using FakeHipLogOnNextLaunch = void (*)(const void* record, size_t bytes);
