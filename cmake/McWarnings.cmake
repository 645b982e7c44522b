# SPDX-License-Identifier: Apache-2.0
# mc_warnings(target): the project's warning set; -Werror when MC_WERROR is on (CI).
function(mc_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion)
  if(MC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
