# Debian 12 dependency stack; see README.md (Building) for the quirks handled here.
find_package(PkgConfig REQUIRED)

find_package(Kokkos REQUIRED)
if(Kokkos_ENABLE_CUDA OR "CUDA" IN_LIST Kokkos_DEVICES)
  # A GPU build (docs/gpu.md): a Kokkos built with CUDA, found through Kokkos_DIR or
  # CMAKE_PREFIX_PATH. Its Kokkos::kokkos target carries include paths, libraries and flags; the
  # C++ compiler must be the one Kokkos asks for (its nvcc_wrapper). cmake/Cuda.cmake then links
  # the CUDA backend into the layers.
  set(UFNO_KOKKOS_LIBS Kokkos::kokkos)
  set(Kokkos_INCLUDE_DIRS "")
  message(STATUS "Kokkos ${Kokkos_VERSION} with devices ${Kokkos_DEVICES}: a GPU build")
else()
  # Kokkos 3.4 from Trilinos (Debian): the exported Kokkos::kokkos target carries a bogus include
  # path, so use the include directory and the trilinos_kokkos* libraries directly.
  find_library(UFNO_KOKKOSCORE trilinos_kokkoscore REQUIRED)
  find_library(UFNO_KOKKOSCONTAINERS trilinos_kokkoscontainers REQUIRED)
  set(UFNO_KOKKOS_LIBS ${UFNO_KOKKOSCORE} ${UFNO_KOKKOSCONTAINERS} dl)
  if(NOT Kokkos_INCLUDE_DIRS)
    set(Kokkos_INCLUDE_DIRS /usr/include/trilinos)
  endif()
endif()

find_package(MPI REQUIRED COMPONENTS C CXX)

set(HDF5_PREFER_PARALLEL ON)
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(WARNING "HDF5 is not parallel: distributed I/O will not be available")
endif()

pkg_check_modules(FFTW3F REQUIRED IMPORTED_TARGET fftw3f)
# XXH3 for the model files' digest every output carries (core/Fingerprint.cpp).
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
find_library(FFTW3F_THREADS_LIB fftw3f_threads REQUIRED)

# oneDNN 2.x: Debian's dnnl-config.cmake insists on OpenCL (its GPU runtime), which the CPU path
# does not use, so the library is found directly.
find_library(UFNO_DNNL_LIB dnnl REQUIRED)
find_path(UFNO_DNNL_INCLUDE dnnl.hpp REQUIRED)


find_package(CLI11 QUIET)
find_package(Catch2 2 QUIET)

find_package(OpenMP REQUIRED COMPONENTS CXX)

# jemalloc as the executables' allocator (operators/backend/HostMemory.hpp says why). Not in the
# sanitizer build, whose runtime must own malloc.
option(UFNO_JEMALLOC "Link the executables against jemalloc when it is installed" ON)
if(UFNO_JEMALLOC AND NOT UFNO_SANITIZE)
  find_library(UFNO_JEMALLOC_LIB jemalloc)
endif()
# ufno_use_allocator(TARGET): the executable allocates through jemalloc if it was found, with the
# project's jemalloc configuration compiled into it.
function(ufno_use_allocator target)
  if(UFNO_JEMALLOC_LIB)
    target_link_libraries(${target} PRIVATE ${UFNO_JEMALLOC_LIB})
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/operators/backend/JemallocConfig.cpp)
  endif()
endfunction()  # oneDNN's thread pool is OpenMP

# opm-common (ECLIPSE deck parser, restart reader) for ufno_import; its CMake config is broken here.
pkg_check_modules(OPMCOMMON REQUIRED IMPORTED_TARGET opm-common)

# opm-material's CO2 tables (header-only; the Span-Wagner densities OPM Flow uses) for the KPIs.
find_path(UFNO_OPM_MATERIAL_INCLUDE opm/material/components/co2tables.inc)
if(NOT UFNO_OPM_MATERIAL_INCLUDE)
  message(FATAL_ERROR "opm-material's headers are missing: apt-get install libopm-material-dev")
endif()
