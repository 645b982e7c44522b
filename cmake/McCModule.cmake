# SPDX-License-Identifier: Apache-2.0
# mc_c_module(target source...): an httpd module in C that is not the product (the test and
# bench fixtures). httpd's and APR's headers and flags only: httpd resolves their symbols when it
# loads the module. No "lib" prefix, default visibility, C11, the C warning set (-Werror when
# MC_WERROR is on).
function(mc_c_module target)
  add_library(${target} MODULE ${ARGN})
  set_target_properties(${target} PROPERTIES PREFIX "" C_STANDARD 11 C_VISIBILITY_PRESET default)
  target_link_libraries(${target} PRIVATE Apache::httpd)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes)
  if(MC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
