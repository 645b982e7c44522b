# SPDX-License-Identifier: Apache-2.0
# Finds httpd through apxs and APR through pkg-config.
# Defines IMPORTED targets Apache::httpd (httpd + APR headers and APR's -D flags), APR::apr,
# APR::aprutil, and variables APACHE_APXS, APACHE_INCLUDEDIR, APACHE_LIBEXECDIR, APACHE_SBINDIR,
# APACHE_TARGET, APACHE_BIN (the server binary).
include(FindPackageHandleStandardArgs)
find_package(PkgConfig REQUIRED)

find_program(APACHE_APXS NAMES apxs apxs2 PATHS /usr/bin /usr/sbin /usr/local/apache2/bin)

function(_mc_apxs_query var key)
  execute_process(COMMAND ${APACHE_APXS} -q ${key}
                  OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

if(APACHE_APXS)
  _mc_apxs_query(APACHE_INCLUDEDIR INCLUDEDIR)
  _mc_apxs_query(APACHE_LIBEXECDIR LIBEXECDIR)
  _mc_apxs_query(APACHE_SBINDIR SBINDIR)
  _mc_apxs_query(APACHE_TARGET TARGET)
  _mc_apxs_query(APACHE_SYSCONFDIR SYSCONFDIR)
  find_program(APACHE_BIN NAMES ${APACHE_TARGET} httpd apache2
               PATHS ${APACHE_SBINDIR} NO_DEFAULT_PATH)
endif()

pkg_check_modules(APR QUIET apr-1)
pkg_check_modules(APRUTIL QUIET apr-util-1)

find_package_handle_standard_args(Apache
  REQUIRED_VARS APACHE_APXS APACHE_INCLUDEDIR APACHE_LIBEXECDIR APR_FOUND APRUTIL_FOUND)

if(Apache_FOUND AND NOT TARGET Apache::httpd)
  add_library(APR::apr INTERFACE IMPORTED)
  # APR_CFLAGS_OTHER carries APR's -D flags (-DLINUX -D_REENTRANT -D_GNU_SOURCE).
  set_target_properties(APR::apr PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${APR_INCLUDE_DIRS}"
    INTERFACE_COMPILE_OPTIONS "${APR_CFLAGS_OTHER}")
  add_library(APR::aprutil INTERFACE IMPORTED)
  set_target_properties(APR::aprutil PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${APRUTIL_INCLUDE_DIRS}"
    INTERFACE_COMPILE_OPTIONS "${APRUTIL_CFLAGS_OTHER}")
  add_library(Apache::httpd INTERFACE IMPORTED)
  # Symbols of httpd and APR are resolved at load time by the server: never link libhttpd.
  set_target_properties(Apache::httpd PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${APACHE_INCLUDEDIR}"
    INTERFACE_LINK_LIBRARIES "APR::apr;APR::aprutil")
endif()
