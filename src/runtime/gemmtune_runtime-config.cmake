# find_package(gemmtune_runtime) -> the imported target gemmtune::runtime (libgemmtune_runtime.so + its header).
include(CMakeFindDependencyMacro)
find_dependency(CUDAToolkit)
find_dependency(nlohmann_json 3.10)
include(${CMAKE_CURRENT_LIST_DIR}/gemmtune_runtime-targets.cmake)
