# Writes OUT, a C++ fragment defining `static const unsigned char NAME[]` with the bytes of
# IN (for data compiled into a library: the AMDGPU texture helpers' bitcode).
#   cmake -DIN=<file> -DOUT=<fragment> -DNAME=<identifier> -P embed_file.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT}.tmp "// Generated from ${IN} by cmake/embed_file.cmake; do not edit.\n"
  "static const unsigned char ${NAME}[${bytes}] = {\n${body}\n};\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)
