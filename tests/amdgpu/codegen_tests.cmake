# AMDGPU code generation (label amdgpu): one FileCheck-style test per lowering feature
# (each .ptx here with `// RUN:` lines, run by run_check.sh), and every tests/ptx kernel file
# and tests/cuda program compiled into checked code objects (code_objects.sh), and the mma.sync
# lowering checked numerically against the CPU backend on an emulated wave (numeric/).
# Included from tests/CMakeLists.txt when mimic_amdgpu_codegen is built.
set(amdgpu_tests ${CMAKE_CURRENT_SOURCE_DIR}/amdgpu)
set(llvm_bin ${LLVM_TOOLS_BINARY_DIR})
file(GLOB amdgpu_check_files ${amdgpu_tests}/*.ptx)
foreach(file ${amdgpu_check_files})
  get_filename_component(name ${file} NAME_WE)
  add_test(NAME amdgpu_codegen_${name} COMMAND ${amdgpu_tests}/run_check.sh $<TARGET_FILE:mimic> ${llvm_bin} ${file})
  set_tests_properties(amdgpu_codegen_${name} PROPERTIES LABELS amdgpu TIMEOUT 120)
endforeach()
if(EXISTS ${MIMIC_CUDA_ROOT}/bin/nvcc)
  set(amdgpu_nvcc ${MIMIC_CUDA_ROOT}/bin/nvcc)
else()
  set(amdgpu_nvcc none)
endif()
add_test(NAME amdgpu_code_objects
  COMMAND ${amdgpu_tests}/code_objects.sh $<TARGET_FILE:mimic> ${amdgpu_nvcc} ${CMAKE_CURRENT_BINARY_DIR}/amdgpu_code_objects)
set_tests_properties(amdgpu_code_objects PROPERTIES LABELS amdgpu TIMEOUT 3600)
add_executable(mimic_amdgpu_compile_tests ${amdgpu_tests}/test_compile.cpp)
target_link_libraries(mimic_amdgpu_compile_tests PRIVATE mimic_amdgpu_codegen GTest::gtest_main
  PkgConfig::LZ4 PkgConfig::ZSTD)
gtest_discover_tests(mimic_amdgpu_compile_tests DISCOVERY_MODE PRE_TEST PROPERTIES LABELS amdgpu
  ENVIRONMENT MIMIC_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/amdgpu_code_cache)
if(TARGET mimic_cuda)
  add_test(NAME amdgpu_mma_numeric
    COMMAND ${amdgpu_tests}/numeric/mma_numeric.sh $<TARGET_FILE:mimic> ${CMAKE_CXX_COMPILER}
      ${MIMIC_CUDA_ROOT}/include $<TARGET_FILE_DIR:mimic_cuda> ${CMAKE_CURRENT_BINARY_DIR}/amdgpu_mma_numeric)
  set_tests_properties(amdgpu_mma_numeric PROPERTIES LABELS amdgpu TIMEOUT 600)
endif()
