# Project-wide warning flags, applied to targets through warpsearch_warnings().
add_library(warpsearch_warnings INTERFACE)
target_compile_options(warpsearch_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
                            -Wimplicit-fallthrough -Wformat=2>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${WARPSEARCH_WERROR}>>:-Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${WARPSEARCH_WERROR}>>:-Werror=all-warnings>)
