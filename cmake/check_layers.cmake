# Fails the build when a file includes a header of a layer it may not see.
# The layers, lowest first (README, Layout): common (csrc/*.h), ir,
# ops, analysis, scheduler, then segmenter and codegen (siblings: neither
# sees the other), compiler, runtime, python (python/csrc). A layer sees
# itself and the layers below it. Calls are checked by the linker (one
# static library per layer, each linking only the ones below, and
# scripts/check_layer_symbols.py, a test, reads each library's undefined
# symbols); this checks what neither sees: headers, inline functions and
# templates.
#
#   cmake -DSOURCE_DIR=<repo> -DSTAMP=<file> -P cmake/check_layers.cmake

set(sees_common common)
set(sees_ir ${sees_common} ir)
set(sees_ops ${sees_ir} ops)
set(sees_analysis ${sees_ops} analysis)
set(sees_scheduler ${sees_analysis} scheduler)
set(sees_segmenter ${sees_scheduler} segmenter)
set(sees_codegen ${sees_scheduler} codegen)
set(sees_compiler ${sees_scheduler} segmenter codegen compiler)
set(sees_runtime ${sees_compiler} runtime)
set(sees_python ${sees_runtime} python)
set(layers common ir ops analysis scheduler segmenter codegen compiler runtime
    python)

set(violations "")
foreach(layer ${layers})
  if(layer STREQUAL "common")
    file(GLOB files ${SOURCE_DIR}/csrc/*.h ${SOURCE_DIR}/csrc/*.cpp)
  elseif(layer STREQUAL "python")
    file(GLOB files ${SOURCE_DIR}/python/csrc/*.h ${SOURCE_DIR}/python/csrc/*.cpp)
  else()
    file(GLOB_RECURSE files ${SOURCE_DIR}/csrc/${layer}/*.h
         ${SOURCE_DIR}/csrc/${layer}/*.cpp)
  endif()
  foreach(f ${files})
    file(STRINGS ${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line ${includes})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1"
                           header "${line}")
      # A path up and back down names the same layer as one from csrc/.
      string(REGEX REPLACE "^(\\.\\./)+" "" header "${header}")
      if(header MATCHES "^([a-z_]+)/")
        set(target ${CMAKE_MATCH_1})
      else()
        set(target common)
      endif()
      list(FIND layers ${target} known)
      list(FIND sees_${layer} ${target} allowed)
      if(known GREATER -1 AND allowed EQUAL -1)
        file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
        string(APPEND violations
               "\n  ${rel} (${layer}) includes ${header} (${target})")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "layering: a layer includes one it may not see:"
                      "${violations}")
endif()
file(WRITE ${STAMP} "layers checked\n")
