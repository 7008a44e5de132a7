# `cpack -G DEB` (scripts/package.sh): gemmtune_<version>_amd64.deb installing under /usr what `cmake --install`
# installs. The CUDA libraries are not Debian packages on most machines (they come with NVIDIA's toolkit), so they
# are named in the description and found through the binary's RPATH (the toolkit's lib directory at build time).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gemmtune)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "gemmtune maintainers <gemmtune@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GEMM autotuner for NVIDIA GPUs: CLI, runtime library, profiles")
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "The gemmtune CLI, the gemmtune_runtime library and header, the Python package gemmtune (where it was built), "
  "sweep profiles, ncu section sets and the report script. Needs the NVIDIA driver and the CUDA "
  "${CUDAToolkit_VERSION_MAJOR} libraries "
  "libcudart.so.${CUDAToolkit_VERSION_MAJOR}, libcublasLt.so.${CUDAToolkit_VERSION_MAJOR} and libcupti, which come "
  "with the CUDA toolkit (looked up in ${CUDAToolkit_LIBRARY_DIR}, then the loader's path).")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, libgcc-s1, libsqlite3-0, python3, python3-matplotlib")
include(CPack)
