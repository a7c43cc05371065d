# Picks the compiler and linker before project() runs. Included from the top
# CMakeLists.txt so a plain `cmake -G Ninja -S . -B build` gets the default.
option(LOOM_USE_GCC "Build with the system g++ instead of clang-22" OFF)

if(NOT CMAKE_CXX_COMPILER AND NOT DEFINED ENV{CXX})
  if(LOOM_USE_GCC)
    set(CMAKE_C_COMPILER gcc)
    set(CMAKE_CXX_COMPILER g++)
  else()
    find_program(LOOM_CLANGXX clang++-22)
    find_program(LOOM_CLANG clang-22)
    if(LOOM_CLANGXX AND LOOM_CLANG)
      set(CMAKE_C_COMPILER ${LOOM_CLANG})
      set(CMAKE_CXX_COMPILER ${LOOM_CLANGXX})
    endif()
  endif()
endif()

# lld-22 links 6-10x faster than GNU ld; /usr/bin/ld.lld is lld-14, so name
# lld-22 explicitly. It works with both clang and g++ (-fuse-ld=<path>).
find_program(LOOM_LLD ld.lld-22)
if(LOOM_LLD AND NOT LOOM_USE_GCC)
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld-22")
  set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld-22")
  set(CMAKE_MODULE_LINKER_FLAGS_INIT "-fuse-ld=lld-22")
endif()
