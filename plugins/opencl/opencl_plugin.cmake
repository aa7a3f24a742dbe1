# tessera_add_opencl_plugin(NAME STORAGE SOURCES file...): an OpenCL plugin on the shared
# lowering (libtessera-opencl). Its op files are ops/*.cpp of the calling folder; its kernels are
# those of its storage, plugins/opencl/kernels/<STORAGE> (buffer: NCHW/NCHW4c buffers, image:
# image2d textures), and the shared ones of kernels/common, embedded at build time
# (embed_kernels.cmake) and looked up by file name. Included by each OpenCL plugin's
# CMakeLists.txt: plugins/opencl itself is configured after mali and adreno (alphabetical).
set(TESSERA_OPENCL_DIR ${CMAKE_CURRENT_LIST_DIR})

function(tessera_add_opencl_plugin name storage)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  file(GLOB kernels CONFIGURE_DEPENDS ${TESSERA_OPENCL_DIR}/kernels/${storage}/*.cl
       ${TESSERA_OPENCL_DIR}/kernels/common/*.cl)
  set(embedded ${CMAKE_CURRENT_BINARY_DIR}/kernel_sources_embedded.cpp)
  set(script ${TESSERA_OPENCL_DIR}/embed_kernels.cmake)
  add_custom_command(
    OUTPUT ${embedded}
    COMMAND ${CMAKE_COMMAND} -DOUT=${embedded} "-DKERNELS=${kernels}"
            -DNAMESPACE=tessera::${name} -P ${script}
    DEPENDS ${kernels} ${script}
    COMMENT "Embedding ${name} OpenCL kernels" VERBATIM)
  file(GLOB ops CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/ops/*.cpp)
  tessera_add_plugin(${name} SOURCES ${ARG_SOURCES} ${ops} ${embedded} LIBS tessera_opencl)
  target_include_directories(tessera-plugin-${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
endfunction()
