# Writes OUT, a header defining MIMIC_CODE_ID: the SHA-256 of the sources that decide the
# machine code Mimic generates for a kernel (the PTX front end, the code generator, the
# backends). The JIT cache keys entries with it, so a rebuilt Mimic never runs code an
# older one cached. The header is rewritten only when the sources change.
#   cmake -DSRC=<src dir> -DOUT=<header> -P code_id.cmake
file(GLOB_RECURSE files ${SRC}/ptx/* ${SRC}/codegen/* ${SRC}/backends/* ${SRC}/runtime/program.*)
list(SORT files)
set(all "")
foreach(f IN LISTS files)
  file(SHA256 ${f} h)
  string(APPEND all "${h}")
endforeach()
string(SHA256 id "${all}")
file(WRITE ${OUT}.tmp "#pragma once\n#define MIMIC_CODE_ID \"${id}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)
