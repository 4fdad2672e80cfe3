# Packages: `cpack -G DEB` or `cpack -G TGZ` in the build folder after a build.
set(CPACK_PACKAGE_NAME "kvscope")
set(CPACK_PACKAGE_VENDOR "KVScope")
set(CPACK_PACKAGE_CONTACT "KVScope developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Run a local LLM and see its KV cache")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
install(FILES ${CMAKE_CURRENT_LIST_DIR}/kvscope.desktop DESTINATION share/applications)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/io.github.kvscope.KVScope.metainfo.xml
        DESTINATION share/metainfo)
include(CPack)
