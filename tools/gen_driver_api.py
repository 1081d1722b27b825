#!/usr/bin/env python3
"""Generates the C API surface of Mimic's libcuda.so.1 from the CUDA toolkit headers.

The toolkit headers are the only declaration source:
  - cuda.h (and cudaProfiler.h) declare every exported symbol once the C preprocessor
    has applied their renames (`#define cuMemAlloc cuMemAlloc_v2`, `__CUDA_API_PTDS`,
    `__CUDA_API_PTSZ`) and their `__CUDA_API_VERSION_INTERNAL` section (the legacy
    unversioned symbols such as the 32-bit `cuMemAlloc`);
  - cudaTypedefs.h (and cudaProfilerTypedefs.h) declare `PFN_<name>_v<version>[_ptds|_ptsz]`
    for every (name, version) pair that cuGetProcAddress serves: the signature by version.

Exported symbols are matched to PFN typedefs per base name: the symbols `cuX`, `cuX_v2`,
`cuX_v3`, ... in that order take the PFN versions of `cuX` in ascending order, and the same
for the `_ptds`/`_ptsz` symbols. The generated exports assert each pairing at compile time
(the definition must match cuda.h's declaration, and its address the PFN type).

src/driver/implemented.def names the (name, version[, per-thread]) pairs that Mimic
implements; their exports call `mimic::driver::impl::<name>_v<version>[_ptds|_ptsz]`
through one wrapper, every other export is a stub returning CUDA_ERROR_NOT_SUPPORTED.

Outputs (into --out): driver/driver_impl.h, driver_exports.cpp, driver_proc_table.c,
driver_result_names.c, libcuda.map.
`--summary` prints the coverage instead of writing anything.
"""
import argparse
import dataclasses
import os
import re
import subprocess
import sys
from collections import defaultdict

# (declaring header, its PFN typedef header). The GL, EGL and VDPAU interop headers are
# left out: they need the system's GL/EGL/VDPAU headers.
HEADERS = [("cuda.h", "cudaTypedefs.h"), ("cudaProfiler.h", "cudaProfilerTypedefs.h")]

# Preprocessor configurations whose declarations together make up the exported set.
MODES = {
    "internal": ["-D__CUDA_API_VERSION_INTERNAL"],
    "public": [],
    "per-thread": ["-DCUDA_API_PER_THREAD_DEFAULT_STREAM"],
}

# Entry points whose implementation is generated here rather than listed in
# implemented.def: cuGetProcAddress serves the generated table (proc_address.cpp).
BUILTIN_IMPLEMENTED = [("cuGetProcAddress", 11030, ""), ("cuGetProcAddress", 12000, "")]

C_TYPE_WORDS = {"void", "char", "short", "int", "long", "float", "double", "signed",
                "unsigned", "const", "volatile", "struct", "enum", "union"}
DEVICE_POINTER_TYPES = {"CUdeviceptr", "CUdeviceptr_v1", "CUdeviceptr_v2"}


class GenError(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class Param:
    type: str  # rendered C type, e.g. "const char*"
    name: str
    is_device_pointer: bool


@dataclasses.dataclass
class Pfn:
    name: str  # base name: cuMemAlloc
    version: int
    suffix: str  # "", "ptds" or "ptsz"
    params: list

    @property
    def key(self):
        return (self.name, self.version, self.suffix)

    @property
    def typedef(self):
        return "PFN_" + self.impl_name

    @property
    def impl_name(self):
        return f"{self.name}_v{self.version}" + (f"_{self.suffix}" if self.suffix else "")


@dataclasses.dataclass
class Export:
    symbol: str
    pfn: Pfn  # None for a declared symbol without a PFN typedef
    params: list
    implemented: bool = False


# ---------------------------------------------------------------------------------------
# Reading the headers

def preprocess(cc, include_dir, headers, defines):
    source = "".join(f"#include <{h}>\n" for h in headers)
    cmd = [cc, "-E", "-P", "-x", "c", "-I", include_dir, *defines, "-"]
    try:
        done = subprocess.run(cmd, input=source, capture_output=True, text=True, check=False)
    except OSError as e:
        raise GenError(f"cannot run the preprocessor {cc!r}: {e}")
    if done.returncode != 0:
        raise GenError(f"preprocessing {', '.join(headers)} with {' '.join(cmd)} failed:\n"
                       + done.stderr)
    return done.stdout


def balanced_parens(text, start):
    """Returns (inside, end) for the parenthesis opened just before text[start]."""
    depth, i = 1, start
    while depth:
        if i >= len(text):
            raise GenError("unbalanced parentheses in preprocessed header text")
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return text[start:i - 1], i


def split_top_level(text, sep=","):
    parts, depth, current = [], 0, []
    for ch in text:
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(ch, 0)
        if ch == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def parse_params(text, where):
    text = " ".join(text.split())
    if text in ("", "void"):
        return []
    params = []
    for index, piece in enumerate(split_top_level(text)):
        tokens = re.findall(r"[A-Za-z_]\w*|\*|\S", piece)
        if any(t in ("(", ")", "[", "]") for t in tokens):
            raise GenError(f"{where}: parameter {piece.strip()!r} is not of the form 'type name'")
        if len(tokens) >= 2 and re.match(r"[A-Za-z_]\w*$", tokens[-1]) and \
                tokens[-1] not in C_TYPE_WORDS:
            type_tokens, name = tokens[:-1], tokens[-1]
        else:
            type_tokens, name = tokens, f"arg{index}"
        rendered = ""
        for t in type_tokens:
            rendered += t if t == "*" or not rendered else " " + t
        if name.startswith("mimic_"):
            raise GenError(f"{where}: parameter name {name!r} collides with generated locals")
        params.append(Param(rendered, name, rendered in DEVICE_POINTER_TYPES))
    return params


PFN_RE = re.compile(r"\bCUresult\s*\(\s*(?:CUDAAPI\s*)?\*\s*PFN_(cu\w+?)_v(\d+)(?:_(ptds|ptsz))?\s*\)\s*\(")


def parse_pfn_typedefs(text):
    pfns = {}
    for m in PFN_RE.finditer(text):
        inside, _ = balanced_parens(text, m.end())
        pfn = Pfn(m.group(1), int(m.group(2)), m.group(3) or "", [])
        pfn.params = parse_params(inside, pfn.typedef)
        pfns[pfn.key] = pfn
    return pfns


DECL_RE = re.compile(r"\bCUresult\s+(?:CUDAAPI\s+)?(cu\w+)\s*\(")


def parse_declarations(text):
    """Returns {symbol: params} for every function declaration (not inline definitions)."""
    decls = {}
    for m in DECL_RE.finditer(text):
        inside, end = balanced_parens(text, m.end())
        tail = text[end:end + 300].lstrip()
        while tail.startswith("__attribute__"):
            _, attr_end = balanced_parens(tail, tail.index("(") + 1)
            tail = tail[attr_end:].lstrip()
        if not tail.startswith(";"):
            continue  # static inline helpers such as cuGetProcAddress_v2_ptsz
        decls[m.group(1)] = parse_params(inside, m.group(1))
    return decls


def parse_result_codes(text):
    m = re.search(r"enum\s+cudaError_enum\s*\{([^}]*)\}", text)
    if not m:
        raise GenError("cuda.h: enum cudaError_enum not found")
    codes = []
    for item in m.group(1).split(","):
        em = re.match(r"\s*(CUDA_\w+)\s*=\s*(\d+)\s*$", item)
        if em:
            codes.append((em.group(1), int(em.group(2))))
    return codes


def defined_macros(cc, include_dir, defines):
    source = "".join(f"#include <{h}>\n" for pair in HEADERS for h in pair)
    cmd = [cc, "-E", "-dM", "-x", "c", "-I", include_dir, *defines, "-"]
    return subprocess.run(cmd, input=source, capture_output=True, text=True, check=True).stdout


def leftover_rename_macros(cc, include_dir, symbols):
    """Entry-point names still #defined after the internal-mode include would break the
    definitions of the exports; cuda.h #undefs them all today."""
    defined = set(re.findall(r"^#define (cu\w+)\b", defined_macros(cc, include_dir, MODES["internal"]),
                             re.M))
    return sorted(defined & symbols)


def header_groups(cc, include_dir):
    """Maps declared names to their documentation group (\\defgroup) in the raw headers,
    both as written (cuGraphInstantiate) and as renamed (cuGraphInstantiateWithFlags)."""
    renames = dict(re.findall(r"^#define (cu\w+)\s+(?:__CUDA_API_PT(?:DS|SZ)\()?(cu\w+)",
                              defined_macros(cc, include_dir, MODES["public"]), re.M))
    groups = {}
    for header, _ in HEADERS:
        with open(os.path.join(include_dir, header), encoding="utf-8", errors="replace") as f:
            text = f.read()
        events = [(m.start(), "open", m.group(1))
                  for m in re.finditer(r"\\defgroup\s+(\w+)", text)]
        events += [(m.start(), "close", None) for m in re.finditer(r"@\}", text)]
        events += [(m.start(), "declare", m.group(1))
                   for m in re.finditer(r"\bCUDAAPI\s+(cu\w+)\s*\(", text)]
        current = None
        for _, kind, value in sorted(events, key=lambda e: e[0]):
            if kind != "declare":
                current = value
                continue
            for name in (value, renames.get(value)):
                if name and current:
                    groups.setdefault(name, current)
    return groups


# ---------------------------------------------------------------------------------------
# Pairing exported symbols with PFN typedefs

SYMBOL_RE = re.compile(r"^(cu\w+?)(?:_v(\d+))?(?:_(ptds|ptsz))?$")


def split_symbol(symbol, pfn_names):
    """cuMemcpyHtoD_v2_ptds -> (cuMemcpyHtoD, 2, "ptds"); (None, ...) when no PFN name fits."""
    m = SYMBOL_RE.match(symbol)
    if m and m.group(1) in pfn_names:
        return m.group(1), int(m.group(2) or 1), m.group(3) or ""
    if symbol in pfn_names:
        return symbol, 1, ""
    return None, 0, ""


def match_exports(decls, pfns):
    """Pairs the symbols of each base name (cuX, cuX_v2, cuX_v3, ...; the per-thread ones
    apart) with its PFN typedefs in ascending version order. The counts must agree: a
    header change that breaks the rule stops the build here rather than misroutes calls."""
    pfn_names = {name for name, _, _ in pfns}
    symbols_by_group = defaultdict(list)
    exports = []
    for symbol, params in sorted(decls.items()):
        base, rank, suffix = split_symbol(symbol, pfn_names)
        export = Export(symbol, None, params)
        exports.append(export)
        if base:
            symbols_by_group[(base, bool(suffix))].append((rank, export))
    pfns_by_group = defaultdict(list)
    for pfn in pfns.values():
        pfns_by_group[(pfn.name, bool(pfn.suffix))].append(pfn)
    for group in sorted(set(symbols_by_group) | set(pfns_by_group)):
        symbols = [e for _, e in sorted(symbols_by_group.get(group, []), key=lambda x: x[0])]
        versions = sorted(pfns_by_group.get(group, []), key=lambda p: p.version)
        if len(symbols) != len(versions):
            raise GenError(
                f"cannot pair the symbols of {group[0]}{' (per-thread)' if group[1] else ''}: "
                f"symbols {[e.symbol for e in symbols]} vs typedefs {[p.typedef for p in versions]}")
        for export, pfn in zip(symbols, versions):
            if not export.symbol.endswith(pfn.suffix):
                raise GenError(f"{export.symbol} paired with {pfn.typedef}: suffixes differ")
            export.pfn = pfn
    return exports


# ---------------------------------------------------------------------------------------
# implemented.def

IMPL_RE = re.compile(r"^(IMPL|IMPL_PTDS)\(\s*(cu\w+)\s*,\s*(\d+)\s*\)$")


def read_implemented(path, pfns):
    keys = {}
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("//", 1)[0].strip()
            if not line:
                continue
            where = f"{path}:{lineno}"
            m = IMPL_RE.match(line)
            if not m:
                raise GenError(f"{where}: expected IMPL(cuName, version) or "
                               f"IMPL_PTDS(cuName, version), got {line!r}")
            macro, name, version = m.group(1), m.group(2), int(m.group(3))
            suffixes = ["ptds", "ptsz"] if macro == "IMPL_PTDS" else [""]
            found = [(name, version, s) for s in suffixes if (name, version, s) in pfns]
            if not found:
                wanted = " or ".join(f"PFN_{name}_v{version}" + (f"_{s}" if s else "")
                                     for s in suffixes)
                known = sorted(p.typedef for p in pfns.values() if p.name == name)
                raise GenError(f"{where}: no {wanted} in the toolkit headers"
                               + (f" (known: {', '.join(known)})" if known else ""))
            if found[0] in keys:
                raise GenError(f"{where}: {line} is already listed at line {keys[found[0]]}")
            keys[found[0]] = lineno
    return set(keys)


# ---------------------------------------------------------------------------------------
# Output

GENERATED_NOTE = "// Generated by tools/gen_driver_api.py from the CUDA toolkit headers and\n" \
                 "// src/driver/implemented.def. Do not edit.\n"
GENERATED_NOTE_C = "/* Generated by tools/gen_driver_api.py from the CUDA toolkit headers. Do not edit. */\n"


def param_list(params):
    return ", ".join(f"{p.type} {p.name}" for p in params)


def emit_impl_header(impl_pfns):
    out = [GENERATED_NOTE,
           "// The internal functions behind the implemented entry points: one per line of\n"
           "// implemented.def, each with the parameter list of its PFN typedef.\n",
           "#pragma once\n\n#include \"driver/cuda_api.h\"\n\n",
           "namespace mimic::driver::impl {\n\n"]
    for pfn in impl_pfns:
        out.append(f"CUresult {pfn.impl_name}({param_list(pfn.params)});\n")
    out.append("\n} // namespace mimic::driver::impl\n")
    return "".join(out)


def trace_args(params):
    parts = []
    for p in params:
        value = f"mimic::driver::DevicePtr{{{p.name}}}" if p.is_device_pointer else p.name
        parts.append(f'.arg("{p.name}", {value})')
    return "".join(parts)


def emit_export(export):
    pfn = export.pfn
    # cuda.h's parameter names (the documented ones); the static_assert below checks that
    # the types are the PFN typedef's.
    params = export.params
    args = ", ".join(p.name for p in params)
    lines = [f"// {pfn.typedef}" if pfn else "// no PFN typedef: not served by cuGetProcAddress",
             f"extern \"C\" MIMIC_EXPORT CUresult CUDAAPI {export.symbol}({param_list(params)}) {{"]
    if export.implemented:
        lines.append(f"  const CUresult mimic_result = mimic::driver::guarded_call(\"{export.symbol}\", "
                     f"[&] {{ return mimic::driver::impl::{pfn.impl_name}({args}); }});")
    else:
        lines.append("  static std::atomic<bool> mimic_reported{false};")
        lines.append(f"  const CUresult mimic_result = "
                     f"mimic::driver::report_not_implemented(\"{export.symbol}\", mimic_reported);")
    lines.append("  if (mimic::driver::trace_enabled()) [[unlikely]]")
    add_args = (f"[&](mimic::driver::TraceLine& mimic_line) {{ mimic_line{trace_args(params)}; }}"
                if params else "[](mimic::driver::TraceLine&) {}")
    lines.append(f"    mimic::driver::trace_call(\"{export.symbol}\", mimic_result, {add_args});")
    lines.append("  return mimic_result;")
    lines.append("}")
    if pfn:
        lines.append(f"static_assert(std::is_same_v<decltype(&{export.symbol}), {pfn.typedef}>);")
    return "\n".join(lines) + "\n\n"


def emit_exports(exports, leftover_macros):
    out = [GENERATED_NOTE,
           "// Every exported entry point of libcuda.so.1: implemented ones call the internal\n"
           "// function through guarded_call, the others are stubs that report themselves once.\n",
           "#include \"driver/api_support.h\"\n#include \"driver/driver_impl.h\"\n\n",
           "#include <atomic>\n#include <type_traits>\n\n"]
    out += [f"#undef {m}\n" for m in leftover_macros]
    out += [emit_export(e) for e in exports]
    return "".join(out)


def emit_proc_table(exports):
    served = sorted((e for e in exports if e.pfn),
                    key=lambda e: (e.pfn.name, bool(e.pfn.suffix), e.pfn.version))
    out = [GENERATED_NOTE_C,
           "#include \"driver/api_tables.h\"\n\n",
           "/* Sorted by name (as strcmp orders), then plain before per-thread, then version. */\n",
           "const struct mimic_proc_entry mimic_proc_entries[] = {\n"]
    for e in served:
        out.append(f"    {{\"{e.pfn.name}\", {e.pfn.version}, {int(bool(e.pfn.suffix))}, "
                   f"(mimic_any_fn){e.symbol}}},\n")
    out.append("};\n")
    out.append(f"const unsigned mimic_proc_entry_count = {len(served)};\n")
    return "".join(out)


def emit_result_names(result_codes):
    first_name = {}
    for name, value in result_codes:
        first_name.setdefault(value, name)
    out = [GENERATED_NOTE_C,
           "#include \"driver/api_tables.h\"\n\n",
           "/* Sorted by value; the first name where several share a value. */\n",
           "const struct mimic_result_name mimic_result_names[] = {\n"]
    for value in sorted(first_name):
        out.append(f"    {{{value}, \"{first_name[value]}\"}},\n")
    out.append("};\n")
    out.append(f"const unsigned mimic_result_name_count = {len(first_name)};\n")
    return "".join(out)


def emit_version_script(exports):
    lines = ["/* Generated by tools/gen_driver_api.py: only the CUDA driver API is exported. */",
             "{", "  global:"]
    lines += [f"    {e.symbol};" for e in exports]
    lines += ["  local:", "    *;", "};", ""]
    return "\n".join(lines)


def write_if_changed(path, text):
    """Leaves unchanged outputs untouched so that their dependents are not rebuilt."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------

def load(args):
    headers = [h for pair in HEADERS for h in pair]
    texts = {mode: preprocess(args.cc, args.cuda_include, headers, defines)
             for mode, defines in MODES.items()}
    pfns = parse_pfn_typedefs(texts["internal"])
    decls = {}
    for mode in MODES:
        for symbol, params in parse_declarations(texts[mode]).items():
            decls.setdefault(symbol, params)
    if not pfns or not decls:
        raise GenError(f"no declarations found under {args.cuda_include}")
    exports = match_exports(decls, pfns)
    implemented = read_implemented(args.implemented, pfns) | set(BUILTIN_IMPLEMENTED)
    for e in exports:
        e.implemented = bool(e.pfn) and e.pfn.key in implemented
    return texts, pfns, exports, implemented


def print_summary(args, pfns, exports, implemented):
    groups = header_groups(args.cc, args.cuda_include)
    by_group = defaultdict(lambda: [set(), 0, 0])
    for pfn in pfns.values():
        row = by_group[groups.get(pfn.name, "(no group)")]
        row[0].add(pfn.name)
        row[1] += 1
        row[2] += pfn.key in implemented
    names = {p.name for p in pfns.values()}
    print(f"CUDA driver API from {args.cuda_include}: {len(pfns)} entry points "
          f"({len(names)} names), {len(exports)} exported symbols, "
          f"{len(implemented)} implemented")
    print(f"{'group':28} {'names':>6} {'entry points':>13} {'implemented':>12}")
    for group in sorted(by_group):
        row = by_group[group]
        print(f"{group:28} {len(row[0]):>6} {row[1]:>13} {row[2]:>12}")
    print("implemented:", ", ".join(sorted(pfns[k].impl_name for k in implemented)))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuda-include", required=True, help="the toolkit's include folder")
    parser.add_argument("--implemented", required=True, help="src/driver/implemented.def")
    parser.add_argument("--cc", default=os.environ.get("CC", "cc"), help="C compiler for -E")
    parser.add_argument("--out", help="folder for the generated files")
    parser.add_argument("--summary", action="store_true", help="print the coverage and exit")
    args = parser.parse_args(argv)
    try:
        texts, pfns, exports, implemented = load(args)
        if args.summary:
            print_summary(args, pfns, exports, implemented)
            return 0
        if not args.out:
            raise GenError("--out is required unless --summary is given")
        leftovers = leftover_rename_macros(args.cc, args.cuda_include,
                                           {e.symbol for e in exports})
        impl_pfns = sorted((pfns[k] for k in implemented), key=lambda p: p.key)
        os.makedirs(os.path.join(args.out, "driver"), exist_ok=True)
        outputs = {
            "driver/driver_impl.h": emit_impl_header(impl_pfns),
            "driver_exports.cpp": emit_exports(exports, leftovers),
            "driver_proc_table.c": emit_proc_table(exports),
            "driver_result_names.c": emit_result_names(parse_result_codes(texts["internal"])),
            "libcuda.map": emit_version_script(exports),
        }
        for name, text in outputs.items():
            write_if_changed(os.path.join(args.out, name), text)
    except (GenError, OSError, subprocess.CalledProcessError) as e:
        print(f"gen_driver_api.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
