# kernels.cmake — the CUDA calibration kernels (kernels/*.cu) as the static
# library servesim_gpu, linked into servesim_core together with the
# SERVESIM_HAVE_CUDA define when CUDA is enabled and usable. The CPU
# references (kernels/*.c) are always part of servesim_core (top-level glob).
#
# CUDA is built when SERVESIM_CUDA is ON and nvcc is found, except in the
# sanitizer build: ASan's shadow memory and the CUDA runtime/driver do not
# mix (the driver maps memory ASan reserves), and nvcc-compiled code is not
# instrumented anyway, so SERVESIM_SANITIZE=ON builds CPU-only.
# Architectures: 80;90a;100a unless CMAKE_CUDA_ARCHITECTURES is given
# (scripts/gpu-check.sh passes the present GPU's arch to save compile time).

set(SERVESIM_HAVE_CUDA OFF)
if(SERVESIM_CUDA AND SERVESIM_SANITIZE)
  message(STATUS "servesim: CUDA kernels off in the sanitizer build (ASan and the CUDA runtime do not mix)")
elseif(SERVESIM_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES "80;90a;100a")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cublas)
      set(SERVESIM_HAVE_CUDA ON)
    else()
      message(STATUS "servesim: nvcc found but the CUDA toolkit libraries (cudart, cuBLAS) are not; CUDA kernels off")
    endif()
  else()
    message(STATUS "servesim: nvcc not found; CUDA kernels off (the CPU references and calibrate --backend cpu still build)")
  endif()
endif()

if(SERVESIM_HAVE_CUDA)
  file(GLOB KERNEL_CU_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/*.cu)
  add_library(servesim_gpu STATIC ${KERNEL_CU_SOURCES})
  # The directory-wide GCC warning flags are not nvcc options: replace them
  # with their host-compiler form for the .cu files.
  set_property(TARGET servesim_gpu PROPERTY COMPILE_OPTIONS "")
  target_compile_options(servesim_gpu PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>
    $<$<COMPILE_LANGUAGE:CUDA>:-O3>
    # Launches on "stream 0" go to the per-thread default stream, which CUDA
    # graphs can capture (the legacy default stream cannot).
    $<$<COMPILE_LANGUAGE:CUDA>:--default-stream=per-thread>)
  if(SERVESIM_WERROR)
    target_compile_options(servesim_gpu PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
  endif()
  set_target_properties(servesim_gpu PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                                                POSITION_INDEPENDENT_CODE ON)
  target_include_directories(servesim_gpu PRIVATE ${CMAKE_SOURCE_DIR})
  target_link_libraries(servesim_gpu PUBLIC CUDA::cudart_static CUDA::cublas)
  find_library(SERVESIM_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  find_path(SERVESIM_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(SERVESIM_NCCL_LIBRARY AND SERVESIM_NCCL_INCLUDE)
    target_include_directories(servesim_gpu PRIVATE ${SERVESIM_NCCL_INCLUDE})
    target_link_libraries(servesim_gpu PUBLIC ${SERVESIM_NCCL_LIBRARY})
  else()
    message(STATUS "servesim: NCCL not found; the all-reduce reference reports 'not supported'")
    target_compile_definitions(servesim_gpu PRIVATE KERN_NO_NCCL=1)
  endif()
  target_link_libraries(servesim_core PUBLIC servesim_gpu)
  # servesim_core was created before CUDA was enabled; it now links CUDA code.
  set_target_properties(servesim_core PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
  target_compile_definitions(servesim_core PUBLIC SERVESIM_HAVE_CUDA=1)
  message(STATUS "servesim: CUDA kernels on for architectures ${CMAKE_CUDA_ARCHITECTURES}")
endif()
