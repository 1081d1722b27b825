# AMDGPU code generation (compile.cpp): LLVM's AMDGPU target and lld's ELF linker as
# libraries. Included from src/codegen (so the target exists before src/backends looks for
# it); built only when the LLVM found has the AMDGPU target and lld's libraries.
if(NOT "AMDGPU" IN_LIST LLVM_TARGETS_TO_BUILD)
  message(STATUS "AMDGPU code generation: off (LLVM ${LLVM_PACKAGE_VERSION} has no AMDGPU target)")
  return()
endif()
find_library(MIMIC_LLD_ELF lldELF HINTS ${LLVM_LIBRARY_DIR} NO_DEFAULT_PATH)
find_library(MIMIC_LLD_COMMON lldCommon HINTS ${LLVM_LIBRARY_DIR} NO_DEFAULT_PATH)
find_path(MIMIC_LLD_INCLUDE lld/Common/Driver.h HINTS ${LLVM_INCLUDE_DIRS} NO_DEFAULT_PATH)
if(NOT MIMIC_LLD_ELF OR NOT MIMIC_LLD_COMMON OR NOT MIMIC_LLD_INCLUDE)
  message(STATUS "AMDGPU code generation: off (lld's libraries not found: apt-get install liblld-22-dev)")
  return()
endif()
find_package(ZLIB REQUIRED)
message(STATUS "AMDGPU code generation: on (lld at ${MIMIC_LLD_ELF})")
add_library(mimic_amdgpu_codegen STATIC ${CMAKE_CURRENT_LIST_DIR}/compile.cpp ${CMAKE_CURRENT_LIST_DIR}/object_cache.cpp)
# The code cache's key includes MIMIC_CODE_ID (cmake/code_id.cmake, made in src/backends).
add_dependencies(mimic_amdgpu_codegen mimic_code_id)
target_include_directories(mimic_amdgpu_codegen PRIVATE ${CMAKE_BINARY_DIR}/src/backends/generated)
target_include_directories(mimic_amdgpu_codegen PUBLIC ${PROJECT_SOURCE_DIR}/src ${MIMIC_CUDA_ROOT}/include
  PRIVATE ${MIMIC_LLD_INCLUDE})
# supported_targets() is in the HIP binding's library (targets.cpp, no LLVM in it).
target_link_libraries(mimic_amdgpu_codegen PUBLIC mimic_codegen $<TARGET_NAME_IF_EXISTS:mimic_amdgpu_hip>
  PRIVATE ${MIMIC_LLD_ELF} ${MIMIC_LLD_COMMON} ZLIB::ZLIB PkgConfig::ZSTD)
