# kernels.cmake — the GPU calibration backend as the plugin
# libservesim_gpu.so (CMake target servesim_gpu): the CUDA kernels
# (kernels/*.cu), the GPU backend (calib/calib_backend_gpu_impl.c) and the
# few plain-C modules it uses (CPU references, sim_err, calib_op), linked
# against the CUDA runtime (static), cuBLAS and NCCL. `servesim calibrate
# --backend gpu` loads it with dlopen (calib/calib_backend_gpu.c), so the
# servesim binary, the tests and the benchmarks link no CUDA library. The
# CPU references (kernels/*.c) are also part of servesim_core (top-level
# glob).
#
# Built only when asked: -DSERVESIM_CUDA=ON (scripts/setup.sh with
# SERVESIM_CUDA=1; scripts/gpu-check.sh and CI's CUDA step do this) and nvcc
# and the toolkit libraries are found. Never in the sanitizer build: ASan's
# shadow memory and the CUDA runtime/driver do not mix (the driver maps
# memory ASan reserves), and nvcc-compiled code is not instrumented anyway.
# Architectures: SERVESIM_CUDA_ARCHS_DEFAULT (top-level CMakeLists.txt)
# unless CMAKE_CUDA_ARCHITECTURES is given (scripts/gpu-check.sh passes the
# present GPU's arch to save compile time).

set(SERVESIM_HAVE_CUDA OFF)
if(SERVESIM_CUDA AND SERVESIM_SANITIZE)
  message(STATUS "servesim: GPU backend off in the sanitizer build (ASan and the CUDA runtime do not mix)")
elseif(SERVESIM_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES "${SERVESIM_CUDA_ARCHS_DEFAULT}")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cublas)
      set(SERVESIM_HAVE_CUDA ON)
    else()
      message(WARNING "servesim: nvcc found but the CUDA toolkit libraries (cudart, cuBLAS) are not; GPU backend not built")
    endif()
  else()
    message(WARNING "servesim: -DSERVESIM_CUDA=ON but nvcc was not found; GPU backend not built "
                    "(calibrate --backend cpu still works)")
  endif()
endif()

if(SERVESIM_HAVE_CUDA)
  file(GLOB KERNEL_CU_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/*.cu)
  add_library(servesim_gpu MODULE ${KERNEL_CU_SOURCES} ${CMAKE_SOURCE_DIR}/calib/calib_backend_gpu_impl.c
                                  ${SERVESIM_GPU_C_SOURCES})
  set_target_properties(servesim_gpu PROPERTIES OUTPUT_NAME servesim_gpu PREFIX "lib" SUFFIX ".so"
                                                CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                                                POSITION_INDEPENDENT_CODE ON
                                                C_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden
                                                CXX_VISIBILITY_PRESET hidden)
  # The directory-wide GCC warning flags are not nvcc options: replace them,
  # keeping them for the C files and giving the .cu files their
  # host-compiler form.
  set_property(TARGET servesim_gpu PROPERTY COMPILE_OPTIONS "")
  target_compile_options(servesim_gpu PRIVATE
    $<$<COMPILE_LANGUAGE:C>:${SERVESIM_C_WARNINGS}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>
    $<$<COMPILE_LANGUAGE:CUDA>:-O3>
    # Launches on "stream 0" go to the per-thread default stream, which CUDA
    # graphs can capture (the legacy default stream cannot).
    $<$<COMPILE_LANGUAGE:CUDA>:--default-stream=per-thread>)
  if(SERVESIM_WERROR)
    target_compile_options(servesim_gpu PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>
                                                $<$<COMPILE_LANGUAGE:C>:-Werror>)
  endif()
  string(REPLACE ";" "," servesim_gpu_archs "${CMAKE_CUDA_ARCHITECTURES}")
  target_compile_definitions(servesim_gpu PRIVATE SERVESIM_CUDA_ARCHS="${servesim_gpu_archs}")
  target_include_directories(servesim_gpu PRIVATE ${CMAKE_SOURCE_DIR})
  # One exported symbol: the entry point (and nothing of the static runtime).
  target_link_options(servesim_gpu PRIVATE
    "-Wl,--version-script=${CMAKE_SOURCE_DIR}/kernels/kern_plugin.map" "-Wl,--no-undefined")
  set_property(TARGET servesim_gpu APPEND PROPERTY LINK_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/kern_plugin.map)
  target_link_libraries(servesim_gpu PRIVATE CUDA::cudart_static CUDA::cublas m ${CMAKE_DL_LIBS})
  find_library(SERVESIM_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  find_path(SERVESIM_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(SERVESIM_NCCL_LIBRARY AND SERVESIM_NCCL_INCLUDE)
    target_include_directories(servesim_gpu PRIVATE ${SERVESIM_NCCL_INCLUDE})
    target_link_libraries(servesim_gpu PRIVATE ${SERVESIM_NCCL_LIBRARY})
  else()
    message(STATUS "servesim: NCCL not found; the all-reduce reference reports 'not supported'")
    target_compile_definitions(servesim_gpu PRIVATE KERN_NO_NCCL=1)
  endif()
  # `servesim calibrate` finds the plugin beside itself: build it with servesim.
  add_dependencies(servesim servesim_gpu)
  message(STATUS "servesim: GPU backend plugin libservesim_gpu.so for architectures ${CMAKE_CUDA_ARCHITECTURES}")
endif()
