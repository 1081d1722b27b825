# The AMD GPU backend's HIP binding (label amdgpu), tested over a fake HIP runtime built here
# in the three shapes real ones come in (fake_hip.cpp); no ROCm or GPU needed.
# Included from tests/CMakeLists.txt.
set(amdgpu_tests ${CMAKE_CURRENT_SOURCE_DIR}/amdgpu)
foreach(flavour hip6 hip5 incomplete)
  add_library(mimic_fake_${flavour} SHARED ${amdgpu_tests}/fake_hip.cpp)
  set_target_properties(mimic_fake_${flavour} PROPERTIES CXX_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/amdgpu)
endforeach()
target_compile_definitions(mimic_fake_hip6 PRIVATE FAKE_HIP_VERSION=6)
target_compile_definitions(mimic_fake_hip5 PRIVATE FAKE_HIP_VERSION=5)
target_compile_definitions(mimic_fake_incomplete PRIVATE FAKE_HIP_VERSION=6 FAKE_HIP_INCOMPLETE=1)
set(fake_hip6 $<TARGET_FILE:mimic_fake_hip6>)

add_executable(mimic_hip_binding_tests ${amdgpu_tests}/test_hip_binding.cpp)
target_link_libraries(mimic_hip_binding_tests PRIVATE mimic_backends GTest::gtest_main ${CMAKE_DL_LIBS}
  PkgConfig::LZ4 PkgConfig::ZSTD)
target_compile_definitions(mimic_hip_binding_tests PRIVATE
  "FAKE_HIP6=\"${fake_hip6}\"" "FAKE_HIP5=\"$<TARGET_FILE:mimic_fake_hip5>\""
  "FAKE_HIP_INCOMPLETE=\"$<TARGET_FILE:mimic_fake_incomplete>\"")
add_dependencies(mimic_hip_binding_tests mimic_fake_hip6 mimic_fake_hip5 mimic_fake_incomplete)
gtest_discover_tests(mimic_hip_binding_tests DISCOVERY_MODE PRE_TEST PROPERTIES LABELS amdgpu)

if(TARGET mimic_cuda)
  # Device order through libcuda.so.1, one process per environment.
  add_executable(mimic_hip_registry_tests ${amdgpu_tests}/test_registry.cpp)
  target_include_directories(mimic_hip_registry_tests PRIVATE ${MIMIC_CUDA_ROOT}/include)
  target_compile_definitions(mimic_hip_registry_tests PRIVATE "MIMIC_LIBCUDA=\"$<TARGET_FILE:mimic_cuda>\"")
  target_link_libraries(mimic_hip_registry_tests PRIVATE GTest::gtest_main ${CMAKE_DL_LIBS})
  add_dependencies(mimic_hip_registry_tests mimic_cuda mimic_fake_hip6)
  if(TARGET mimic_amdgpu_compiler)
    target_compile_definitions(mimic_hip_registry_tests PRIVATE MIMIC_TEST_AMDGPU_CODEGEN=1)
  endif()
  set(no_hip /nonexistent/libamdhip64.so.6)
  foreach(case "AmdGpuFirstThenCpu|MIMIC_HIP_LIBRARY=${fake_hip6}"
               "TextureObjectsInDeviceMemory|MIMIC_HIP_LIBRARY=${fake_hip6}"
               "CpuForced|MIMIC_HIP_LIBRARY=${fake_hip6};MIMIC_BACKEND=cpu"
               "CpuWithoutHip|MIMIC_HIP_LIBRARY=${no_hip}"
               "AmdgpuForcedWithoutGpu|MIMIC_HIP_LIBRARY=${no_hip};MIMIC_BACKEND=amdgpu")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(SUBLIST parts 1 -1 environment)
    add_test(NAME amdgpu_registry_${name} COMMAND mimic_hip_registry_tests --gtest_filter=Registry.${name})
    set_tests_properties(amdgpu_registry_${name} PROPERTIES LABELS amdgpu
      ENVIRONMENT "${environment};FAKE_HIP_DEVICES=gfx1100;MIMIC_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/amdgpu/cache")
  endforeach()

  # `mimic run --backend amdgpu` without a usable AMD GPU: a clear message and a failure.
  add_test(NAME amdgpu_cli_backend
    COMMAND ${amdgpu_tests}/cli_backend.sh $<TARGET_FILE:mimic> ${fake_hip6})
  set_tests_properties(amdgpu_cli_backend PROPERTIES LABELS amdgpu)

  # The same with a real HIP runtime installed and no GPU (Debian's libamdhip64-5, say), and
  # the program then running on the CPU (which needs the code generator); skipped where no HIP
  # runtime is installed.
  if(EXISTS ${MIMIC_CUDA_ROOT}/bin/nvcc AND TARGET mimic_codegen)
    add_test(NAME amdgpu_installed_hip_no_gpu
      COMMAND ${amdgpu_tests}/installed_hip_no_gpu.sh $<TARGET_FILE:mimic> $<TARGET_FILE:mimic_cuda>
              ${MIMIC_CUDA_ROOT}/bin/nvcc ${CMAKE_CURRENT_BINARY_DIR}/amdgpu)
    set_tests_properties(amdgpu_installed_hip_no_gpu PROPERTIES LABELS amdgpu SKIP_RETURN_CODE 77 TIMEOUT 300)
  endif()
endif()
