# Builds the table of CUDA runtime and driver API names by callback id from CUPTI's own headers
# (cupti_runtime_cbid.h, cupti_driver_cbid.h), so names are right without CUPTI at run time.
# Usage: cmake -DINCLUDE=<cuda include dir> -DOUT=api_names.c -P gen_api_names.cmake
function(cbid_table header prefix var)
  file(STRINGS "${INCLUDE}/${header}" lines REGEX "${prefix}[A-Za-z0-9_]+ *= *[0-9]+")
  set(body "")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "${prefix}([A-Za-z0-9_]+) *= *([0-9]+)" _ "${line}")
    set(name "${CMAKE_MATCH_1}")
    set(id "${CMAKE_MATCH_2}")
    if(name MATCHES "^(INVALID|SIZE|FORCE_INT)$")
      continue()
    endif()
    string(REGEX REPLACE "_v[0-9]+$" "" name "${name}")
    string(APPEND body "    [${id}] = \"${name}\",\n")
  endforeach()
  set(${var} "${body}" PARENT_SCOPE)
endfunction()
cbid_table(cupti_runtime_cbid.h "CUPTI_RUNTIME_TRACE_CBID_" runtime)
cbid_table(cupti_driver_cbid.h "CUPTI_DRIVER_TRACE_CBID_" driver)
file(WRITE "${OUT}" "/* Generated from CUPTI's cbid headers by cmake/gen_api_names.cmake. */
#include <stddef.h>
#include <stdint.h>

static const char *const runtime_names[] = {
${runtime}};
static const char *const driver_names[] = {
${driver}};

const char *ip_cupti_api_name(int domain, uint32_t cbid);
const char *ip_cupti_api_name(int domain, uint32_t cbid)
{
    const char *const *t = domain == 1 ? runtime_names : driver_names;
    size_t n = domain == 1 ? sizeof runtime_names / sizeof *runtime_names
                           : sizeof driver_names / sizeof *driver_names;
    if (cbid < n && t[cbid]) return t[cbid];
    return domain == 1 ? \"cuda runtime (unknown call)\" : \"cuda driver (unknown call)\";
}
")
