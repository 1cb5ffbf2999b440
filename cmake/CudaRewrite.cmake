# CudaRewrite.cmake: run cuda-rewrite as a build step, before nvcc.
#
#   cuda_rewrite_sources(<target> <source>...
#                        [WARNINGS_AS_ERRORS] [NO_LINE_DIRECTIVES]
#                        [OPTIONS <tool option>...]
#                        [COMPILER_ARGS <compiler arg>...])
#
# For every <source> (a .cu file, relative to the current source directory or
# absolute) this adds a build rule that runs
#
#   cuda-rewrite [--warnings-as-errors] [--line-directives] <OPTIONS>
#                <source> -o <out> -- <includes> <defines> <COMPILER_ARGS>
#
# where <out> is ${CMAKE_CURRENT_BINARY_DIR}/cuda_rewrite/<source relative to
# the current source directory> (a leading "../" becomes "__/", as CMake does
# for object files). The rule depends on the source and on the tool, so
# editing the source or rebuilding the tool re-runs it.
#
# The target then compiles <out> instead of <source>: the original is taken
# out of the target's SOURCES (or <out> is added if <source> was not in it),
# the original's directory is put on <out>'s include path so that its relative
# #include "x.cuh" still resolve, and the target links cuda_rewrite::runtime,
# the header-only runtime that rewritten code includes.
#
# The tool sees the target's include directories and compile definitions
# (including those inherited from linked targets), the source's own
# INCLUDE_DIRECTORIES and COMPILE_DEFINITIONS properties, then COMPILER_ARGS,
# so it parses the file the way nvcc will compile it.
#
#   WARNINGS_AS_ERRORS  pass --warnings-as-errors: an annotated candidate
#                       that the tool refuses fails the build instead of
#                       being left as written with a warning. The variable
#                       CUDA_REWRITE_WARNINGS_AS_ERRORS=ON does the same for
#                       every call (say -DCUDA_REWRITE_WARNINGS_AS_ERRORS=ON
#                       in CI).
#   NO_LINE_DIRECTIVES  do not pass --line-directives. By default the rewrite
#                       carries #line directives, so that nvcc's errors and
#                       warnings, and debuggers, point at <source>, not at
#                       the copy in the build tree. The variable
#                       CUDA_REWRITE_LINE_DIRECTIVES=OFF does the same for
#                       every call.
#   OPTIONS             cuda-rewrite options, e.g. --only=aggregate --remarks
#                       --gpu=sm_90 --gpu-spec=${CMAKE_SOURCE_DIR}/h100.json
#   COMPILER_ARGS       extra clang or nvcc-style arguments for parsing, e.g.
#                       -std=c++17 --cuda-gpu-arch=sm_90
#
# A flag that OPTIONS gives already, in any form (--line-directives=false),
# is not added again.
#
# The tool is, in this order: the CUDA_REWRITE_EXECUTABLE variable (a target
# name or a path; find_package(cuda_rewrite) sets it to the installed tool
# unless it is already set), the imported target cuda_rewrite::cuda-rewrite,
# or the target cuda-rewrite when used inside the cuda-rewrite project itself.
#
# Rewritten code that keeps device-side launches still needs relocatable
# device code, which a library target cannot impose on a consumer:
#   set_target_properties(app PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
#   target_link_libraries(app PRIVATE CUDA::cudadevrt)   # CMake >= 3.26
# (older CMake links cudadevrt with the default static CUDA runtime).
#
# Limits: a source is rewritten once per directory (one output path), so two
# targets of one directory cannot both rewrite the same file; the tool reports
# no header dependencies, so a header edit re-runs nvcc but not the rewrite;
# generator expressions such as $<COMPILE_LANGUAGE:...> cannot appear in the
# target's include directories or definitions, since a custom command cannot
# evaluate them.

include_guard(GLOBAL)

# Sets <out_var> to the command word that runs the tool, and <dep_var> to what
# the rewrite rule must depend on so that a new tool re-runs it.
function(_cuda_rewrite_find_tool out_var dep_var)
  if(CUDA_REWRITE_EXECUTABLE)
    set(tool "${CUDA_REWRITE_EXECUTABLE}")
  elseif(TARGET cuda_rewrite::cuda-rewrite)
    set(tool cuda_rewrite::cuda-rewrite)
  elseif(TARGET cuda-rewrite)
    set(tool cuda-rewrite)
  else()
    message(FATAL_ERROR
      "cuda_rewrite_sources: no cuda-rewrite tool; use "
      "find_package(cuda_rewrite) or set CUDA_REWRITE_EXECUTABLE")
  endif()

  if(TARGET "${tool}")
    # A target name as DEPENDS gives both the ordering (built before the rule
    # runs) and a file-level dependency on the executable it produces.
    set(${out_var} "$<TARGET_FILE:${tool}>" PARENT_SCOPE)
    set(${dep_var} "${tool}" PARENT_SCOPE)
  else()
    get_filename_component(tool "${tool}" ABSOLUTE)
    if(NOT EXISTS "${tool}")
      message(FATAL_ERROR
        "cuda_rewrite_sources: CUDA_REWRITE_EXECUTABLE=${tool} does not exist")
    endif()
    set(${out_var} "${tool}" PARENT_SCOPE)
    set(${dep_var} "${tool}" PARENT_SCOPE)
  endif()
endfunction()

# Sets <out_var> to where the rewrite of <source> (absolute) goes: the path
# relative to the current source directory, under cuda_rewrite/ in the current
# binary directory. "../" becomes "__/" so that the output stays inside.
function(_cuda_rewrite_output_path source out_var)
  file(RELATIVE_PATH rel "${CMAKE_CURRENT_SOURCE_DIR}" "${source}")
  if(IS_ABSOLUTE "${rel}")
    # Another drive (Windows): keep the path without its root.
    string(REGEX REPLACE "^[A-Za-z]:" "" rel "${rel}")
    string(REGEX REPLACE "^/+" "" rel "${rel}")
  endif()
  set(up "")
  while(rel MATCHES "^\\.\\./(.*)$")
    set(rel "${CMAKE_MATCH_1}")
    string(APPEND up "__/")
  endwhile()
  set(rel "${up}${rel}")
  set(${out_var} "${CMAKE_CURRENT_BINARY_DIR}/cuda_rewrite/${rel}" PARENT_SCOPE)
endfunction()

function(cuda_rewrite_sources target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG
    "WARNINGS_AS_ERRORS;NO_LINE_DIRECTIVES" "" "OPTIONS;COMPILER_ARGS")
  if(NOT TARGET "${target}")
    message(FATAL_ERROR "cuda_rewrite_sources: no target named '${target}'")
  endif()
  get_target_property(aliased "${target}" ALIASED_TARGET)
  if(aliased)
    set(target "${aliased}")
  endif()
  if(NOT ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cuda_rewrite_sources(${target}): no sources given")
  endif()

  _cuda_rewrite_find_tool(tool tool_dep)

  # The integration's own flags, then OPTIONS. A flag that OPTIONS names
  # already, in any form (--line-directives=false), is left to OPTIONS rather
  # than given twice with two meanings.
  set(tool_options "")
  if((ARG_WARNINGS_AS_ERRORS OR CUDA_REWRITE_WARNINGS_AS_ERRORS) AND
     NOT ARG_OPTIONS MATCHES "(^|;)--warnings-as-errors(=|;|$)")
    list(APPEND tool_options --warnings-as-errors)
  endif()
  if(NOT DEFINED CUDA_REWRITE_LINE_DIRECTIVES)
    set(CUDA_REWRITE_LINE_DIRECTIVES ON)
  endif()
  if(CUDA_REWRITE_LINE_DIRECTIVES AND NOT ARG_NO_LINE_DIRECTIVES AND
     NOT ARG_OPTIONS MATCHES "(^|;)--line-directives(=|;|$)")
    list(APPEND tool_options --line-directives)
  endif()
  list(APPEND tool_options ${ARG_OPTIONS})

  # What the target compiles with, evaluated at generation time so that
  # include directories and definitions added after this call (and those of
  # linked targets) reach the tool too. The $<BOOL:> guard avoids a lone "-I"
  # when the list is empty. Each expression must stay one quoted argument
  # (its ";" would split it), and COMMAND_EXPAND_LISTS turns the ";" of the
  # result into separate words.
  set(incs "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(defs "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(target_incs "$<$<BOOL:${incs}>:-I$<JOIN:${incs},;-I>>")
  set(target_defs "$<$<BOOL:${defs}>:-D$<JOIN:${defs},;-D>>")

  # The target's sources as absolute paths (relative entries are relative to
  # the directory that created the target, which may not be this one), to
  # find and replace the originals.
  get_target_property(target_dir "${target}" SOURCE_DIR)
  get_target_property(target_bin_dir "${target}" BINARY_DIR)
  get_target_property(target_sources "${target}" SOURCES)
  if(NOT target_sources)
    set(target_sources "")
  endif()
  set(target_sources_abs "")
  foreach(src IN LISTS target_sources)
    if(src MATCHES "\\$<")
      # A generator expression: cannot be resolved now; kept as it is.
      list(APPEND target_sources_abs "${src}")
    else()
      get_filename_component(src "${src}" ABSOLUTE BASE_DIR "${target_dir}")
      list(APPEND target_sources_abs "${src}")
    endif()
  endforeach()

  set(outputs "")
  foreach(src IN LISTS ARG_UNPARSED_ARGUMENTS)
    get_filename_component(src_abs "${src}" ABSOLUTE
                           BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT src_abs MATCHES "\\.cu$")
      message(FATAL_ERROR
        "cuda_rewrite_sources(${target}): ${src} is not a .cu file")
    endif()
    get_filename_component(src_dir "${src_abs}" DIRECTORY)
    _cuda_rewrite_output_path("${src_abs}" out)
    get_filename_component(out_dir "${out}" DIRECTORY)
    # Short paths for the build log.
    file(RELATIVE_PATH src_rel "${CMAKE_SOURCE_DIR}" "${src_abs}")
    file(RELATIVE_PATH out_rel "${CMAKE_BINARY_DIR}" "${out}")

    # One output path per source and directory: a second rule for it would
    # be a CMake error far from the cause.
    get_property(owner DIRECTORY PROPERTY "CUDA_REWRITE_OWNER:${out}")
    if(owner)
      message(FATAL_ERROR
        "cuda_rewrite_sources(${target}): ${src} is already rewritten for "
        "target ${owner} in this directory; rewrite it once (for example in "
        "a library both targets link)")
    endif()
    set_property(DIRECTORY PROPERTY "CUDA_REWRITE_OWNER:${out}" "${target}")

    # The original's own per-source settings, as the tool and nvcc would
    # have seen them for it.
    get_source_file_property(src_incs "${src_abs}" INCLUDE_DIRECTORIES)
    get_source_file_property(src_defs "${src_abs}" COMPILE_DEFINITIONS)
    get_source_file_property(src_opts "${src_abs}" COMPILE_OPTIONS)
    set(src_args "")
    foreach(dir IN LISTS src_incs)
      if(dir)
        list(APPEND src_args "-I${dir}")
      endif()
    endforeach()
    foreach(def IN LISTS src_defs)
      if(def)
        list(APPEND src_args "-D${def}")
      endif()
    endforeach()

    add_custom_command(
      OUTPUT "${out}"
      # The tool writes atomically but does not create directories.
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${out_dir}"
      COMMAND "${tool}" ${tool_options} "${src_abs}" -o "${out}"
              -- "${target_incs}" "${target_defs}" ${src_args}
              ${ARG_COMPILER_ARGS}
      DEPENDS "${src_abs}" "${tool_dep}"
      COMMENT "Rewriting ${src_rel} -> ${out_rel}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    list(APPEND outputs "${out}")

    # nvcc looks for #include "x.cuh" next to the including file first, which
    # is now the build tree; the original's directory comes right after (a
    # source's include directories precede the target's). The properties are
    # set where the target is defined, since that is where they are read.
    set(out_incs "${src_dir}")
    if(src_incs)
      list(APPEND out_incs ${src_incs})
    endif()
    set_property(SOURCE "${out}" TARGET_DIRECTORY "${target}"
                 PROPERTY INCLUDE_DIRECTORIES "${out_incs}")
    if(src_defs)
      set_property(SOURCE "${out}" TARGET_DIRECTORY "${target}"
                   PROPERTY COMPILE_DEFINITIONS "${src_defs}")
    endif()
    if(src_opts)
      set_property(SOURCE "${out}" TARGET_DIRECTORY "${target}"
                   PROPERTY COMPILE_OPTIONS "${src_opts}")
    endif()
    set_property(SOURCE "${out}" TARGET_DIRECTORY "${target}"
                 PROPERTY GENERATED TRUE)

    # The rewritten file takes the original's place, so nvcc compiles only it.
    list(FIND target_sources_abs "${src_abs}" index)
    if(index GREATER_EQUAL 0)
      list(REMOVE_AT target_sources_abs ${index})
      list(INSERT target_sources_abs ${index} "${out}")
    else()
      list(APPEND target_sources_abs "${out}")
    endif()
  endforeach()
  set_property(TARGET "${target}" PROPERTY SOURCES "${target_sources_abs}")

  # A custom command runs only for targets of the directory that created it.
  # When the target lives elsewhere, a helper target here produces the files
  # and the target waits for it.
  if(NOT target_bin_dir STREQUAL CMAKE_CURRENT_BINARY_DIR)
    string(MAKE_C_IDENTIFIER "${target}" target_id)
    set(helper "${target_id}_cuda_rewrite")
    set(n 1)
    while(TARGET "${helper}")
      math(EXPR n "${n} + 1")
      set(helper "${target_id}_cuda_rewrite_${n}")
    endwhile()
    add_custom_target("${helper}" DEPENDS ${outputs})
    add_dependencies("${target}" "${helper}")
  endif()

  # Appending to LINK_LIBRARIES is what target_link_libraries(PRIVATE) does,
  # without clashing with a target that uses the plain (keyword-less)
  # signature. A static library also passes it on to its consumers' link,
  # where an INTERFACE target adds nothing.
  get_target_property(links "${target}" LINK_LIBRARIES)
  if(NOT "cuda_rewrite::runtime" IN_LIST links)
    set_property(TARGET "${target}" APPEND
                 PROPERTY LINK_LIBRARIES cuda_rewrite::runtime)
    get_target_property(type "${target}" TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      set_property(TARGET "${target}" APPEND PROPERTY INTERFACE_LINK_LIBRARIES
                   "$<LINK_ONLY:cuda_rewrite::runtime>")
    endif()
  endif()
endfunction()
