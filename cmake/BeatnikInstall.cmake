# `cmake --install`: the programs into bin/, the documentation into share/doc/beatnik.
# (The Python tools under tools/ carry their own install rules.)
include(GNUInstallDirs)
install(TARGETS beatnik RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# rocketrig: the reference's name for the same program, a link next to it.
install(CODE "file(CREATE_LINK beatnik \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/rocketrig\" SYMBOLIC)")
foreach(bench br_kernel_bench br_cutoff_bench beatnik-fft-bench beatnik-commbench)
  if(TARGET ${bench})
    install(TARGETS ${bench} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
