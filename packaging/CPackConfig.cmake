# Packages: `cpack -G DEB` or `cpack -G TGZ` in a build folder after a build;
# packaging/package.sh does it for a release (the release preset) or for a built tree (CI).
#
# The .deb installs to /usr: bin/kvscope, bin/kvscope-cli, share/kvscope/{presets,catalog}
# (the binaries look for them as ../share/kvscope beside themselves), the desktop file, the
# icon in hicolor, the GGUF MIME type and the AppStream metainfo. Binaries are stripped.
# Depends: what dpkg-shlibdeps finds in the binaries, plus what they load at run time and it
# cannot see (below). CUDA: the backend links the CUDA runtime statically and opens cuBLAS
# with dlopen when a GPU is used (kernels/CMakeLists.txt), so the package needs no CUDA
# package: without the NVIDIA driver and cuBLAS the app runs on the CPU and says why.
set(KVSCOPE_PACKAGE_MAINTAINER "KVScope developers" CACHE STRING
    "Maintainer field of the .deb (\"Name <email>\"; set it for a published release)")

set(CPACK_PACKAGE_NAME "kvscope")
set(CPACK_PACKAGE_VENDOR "KVScope")
set(CPACK_PACKAGE_CONTACT "${KVSCOPE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/kvscope/kvscope")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Run a local LLM and see its KV cache")
# The .deb's long description, wrapped for apt's 80 columns.
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
  "KVScope chats with a local Llama-family model (GGUF or Hugging Face"
  "safetensors) on an NVIDIA GPU (CUDA) or on the CPU, while a live panel charts"
  "the paged KV cache: blocks per layer, fragmentation and memory headroom as the"
  "context grows. Its What fits page answers which model, context, batch and KV"
  "dtype fit in a GPU; demos show paged vs contiguous allocation, prefix sharing,"
  "GQA and KV quantization."
  "kvscope-cli runs, benchmarks, plans and serves models (an OpenAI-compatible"
  "local server) from a terminal.")
set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_STRIP_FILES ON)  # RelWithDebInfo (CI's tree) is ~200 MB of debug info unstripped
set(CPACK_THREADS 0)       # xz on every core

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # kvscope_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_COMPRESSION_TYPE "xz")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Loaded at run time, so dpkg-shlibdeps cannot see them (it appends what it finds):
#   libqt6sql6-sqlite   Qt SQL's SQLite driver (a plugin): the saved chats
#   fonts-dejavu-core   a font for Qt to draw text with
#   hicolor-icon-theme  owns the icon folders the icon goes into
# The X11 platform plugin (libqxcb) is in libqt6gui6, and the SVG icon engine in
# libqt6svg6, both found through the libraries they come with.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libqt6sql6-sqlite, fonts-dejavu-core, hicolor-icon-theme")
# HTTPS model downloads (the Models page, kvscope-cli pull) check certificates against these;
# Wayland sessions use the Wayland platform plugin when present, else XWayland.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ca-certificates, qt6-wayland")

install(FILES ${CMAKE_CURRENT_LIST_DIR}/kvscope.desktop DESTINATION share/applications)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/io.github.kvscope.KVScope.metainfo.xml
        DESTINATION share/metainfo)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/kvscope-mime.xml DESTINATION share/mime/packages
        RENAME kvscope.xml)
install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/kvscope.svg
        DESTINATION share/icons/hicolor/scalable/apps)
foreach(size 16 22 24 32 48 64 128 256)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/hicolor/${size}x${size}/apps/kvscope.png
          DESTINATION share/icons/hicolor/${size}x${size}/apps)
endforeach()
include(CPack)
