// Subcommands of the `mimic` tool; each takes the arguments after its name.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mimic::cli {

using Args = std::vector<std::string>;

int cmd_extract(const Args& args);
int cmd_ptx(const Args& args);
int cmd_info(const Args& args);
int cmd_run(const Args& args);
int cmd_bench(const Args& args);
int cmd_doctor(const Args& args);
int cmd_cache(const Args& args); // only with the code generator (MIMIC_HAVE_CODEGEN)
int cmd_compile(const Args& args); // only with the code generator (MIMIC_HAVE_CODEGEN)

std::optional<std::string> ptx_roundtrip(const std::string& text, const std::string& origin);

} // namespace mimic::cli
