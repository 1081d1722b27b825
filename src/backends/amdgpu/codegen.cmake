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

# The texture and surface helpers (texture_device.cpp, over backends/texture_helpers.h) as
# LLVM bitcode for amdgcn, embedded in the library and linked into modules that sample
# textures (texture_library.cpp). Built by a clang of the same LLVM version (bitcode is read
# by the LLVM it came from or a newer one); no ROCm needed (-nogpulib; no C or C++ library headers). Without
# such a clang, textures and surfaces fail to compile for AMD GPUs, saying why.
set(MIMIC_AMDGCN_CLANG "" CACHE FILEPATH "clang ${LLVM_VERSION_MAJOR} that compiles the AMDGPU texture helpers")
if(NOT MIMIC_AMDGCN_CLANG)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL ${LLVM_VERSION_MAJOR}
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS ${LLVM_VERSION_MAJOR}.999)
    set(candidate ${CMAKE_CXX_COMPILER})
  else()
    find_program(candidate NAMES clang-${LLVM_VERSION_MAJOR} clang HINTS ${LLVM_TOOLS_BINARY_DIR} NO_CACHE)
  endif()
  if(candidate)
    execute_process(COMMAND ${candidate} --version OUTPUT_VARIABLE version_text ERROR_QUIET)
    if(version_text MATCHES "clang version ${LLVM_VERSION_MAJOR}\\.")
      set(MIMIC_AMDGCN_CLANG ${candidate} CACHE FILEPATH "" FORCE)
    endif()
  endif()
endif()
target_sources(mimic_amdgpu_codegen PRIVATE ${CMAKE_CURRENT_LIST_DIR}/texture_library.cpp)
if(MIMIC_AMDGCN_CLANG)
  message(STATUS "AMDGPU texture helpers: compiled by ${MIMIC_AMDGCN_CLANG}")
  set(texture_bc ${CMAKE_CURRENT_BINARY_DIR}/amdgpu_texture_device.bc)
  set(texture_inc ${CMAKE_CURRENT_BINARY_DIR}/generated/amdgpu_texture_device.inc)
  add_custom_command(OUTPUT ${texture_bc}
    COMMAND ${MIMIC_AMDGCN_CLANG} -x c++ -std=c++20 -target amdgcn-amd-amdhsa -nogpulib -nostdlibinc
            -nostdinc++ -fno-exceptions -fno-rtti -fno-math-errno -O2 -I${PROJECT_SOURCE_DIR}/src
            -emit-llvm -c ${CMAKE_CURRENT_LIST_DIR}/texture_device.cpp -o ${texture_bc}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/texture_device.cpp ${PROJECT_SOURCE_DIR}/src/backends/texture_helpers.h
            ${PROJECT_SOURCE_DIR}/src/codegen/texture_abi.h ${PROJECT_SOURCE_DIR}/src/runtime/texture_descriptor.h
    COMMENT "Compiling the AMDGPU texture helpers to bitcode")
  add_custom_command(OUTPUT ${texture_inc}
    COMMAND ${CMAKE_COMMAND} -DIN=${texture_bc} -DOUT=${texture_inc} -DNAME=kTextureHelpersBitcode
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake
    DEPENDS ${texture_bc} ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake)
  add_custom_target(mimic_amdgpu_texture_bitcode DEPENDS ${texture_inc})
  add_dependencies(mimic_amdgpu_codegen mimic_amdgpu_texture_bitcode)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/texture_library.cpp PROPERTIES
    OBJECT_DEPENDS ${texture_inc} COMPILE_DEFINITIONS MIMIC_AMDGPU_TEXTURE_HELPERS=1)
  target_include_directories(mimic_amdgpu_codegen PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
else()
  message(STATUS "AMDGPU texture helpers: off (no clang ${LLVM_VERSION_MAJOR} found; set MIMIC_AMDGCN_CLANG): "
                 "textures and surfaces will not compile for AMD GPUs")
endif()
