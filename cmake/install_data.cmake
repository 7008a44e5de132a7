# The data gemmtune reads at run time (profiles, ncu section sets, the report script) lives in share/gemmtune: in
# the install (<prefix>/share/gemmtune, beside <prefix>/bin/gemmtune) and in the build tree (build/share/gemmtune,
# beside build/gemmtune, as symbolic links into the source tree so an edited profile needs no rebuild).
# src/common/data_dir.cpp finds it from the executable's own location; no source path is compiled in.
include(GNUInstallDirs)
set(GEMMTUNE_BUILD_DATA_DIR ${PROJECT_BINARY_DIR}/share/gemmtune)

# gemmtune_data(<source> <dest>): the file or directory <source> (relative to the source tree) becomes
# share/gemmtune/<dest>. Another part adds its own data the same way, e.g. gemmtune_data(trace/rules.json trace/rules.json).
function(gemmtune_data source dest)
  set(from ${PROJECT_SOURCE_DIR}/${source})
  if(NOT EXISTS ${from})
    message(FATAL_ERROR "gemmtune_data: ${from} does not exist")
  endif()
  get_filename_component(dest_dir "${dest}" DIRECTORY)
  file(MAKE_DIRECTORY ${GEMMTUNE_BUILD_DATA_DIR}/${dest_dir})
  file(CREATE_LINK ${from} ${GEMMTUNE_BUILD_DATA_DIR}/${dest} SYMBOLIC)
  if(IS_DIRECTORY ${from})
    install(DIRECTORY ${from}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gemmtune/${dest})
  elseif(from MATCHES "\\.(py|sh)$")
    install(PROGRAMS ${from} DESTINATION ${CMAKE_INSTALL_DATADIR}/gemmtune/${dest_dir})
  else()
    install(FILES ${from} DESTINATION ${CMAKE_INSTALL_DATADIR}/gemmtune/${dest_dir})
  endif()
endfunction()

gemmtune_data(profiles profiles)
gemmtune_data(scripts/report.py scripts/report.py)
