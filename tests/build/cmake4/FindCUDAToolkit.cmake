# FindCUDAToolkit as CMake 4 behaves, for CI's CMake 3.25 (tests/build/test_cmake4_world.py):
# CMake's own module, then CUDAToolkit_INCLUDE_DIRS made a list of two folders (include and
# include/cccl), as CMake 4 sets it. A list spliced into a custom command's shell line breaks the
# build there; configuring with this module makes that break on CI too.
include(${CMAKE_ROOT}/Modules/FindCUDAToolkit.cmake)
if(CUDAToolkit_FOUND)
  list(APPEND CUDAToolkit_INCLUDE_DIRS "${CUDAToolkit_INCLUDE_DIR}/cccl")
endif()
