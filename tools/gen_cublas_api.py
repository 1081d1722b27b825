#!/usr/bin/env python3
"""Generates the C API surface of one of Mimic's drop-in libraries (libcublas first) from
the toolkit headers, the only declaration source.

The headers are read in groups, each as one translation unit sees them (cuBLAS: the v2
API from cublas_api.h, the legacy API from cublas.h, cublasXt.h), because some groups
cannot be included together. Every function a group declares with the library's prefix
is exported once, from the first group that declares it; the generated definitions are
compiled against that group's headers, so the compiler checks each one against its
declaration.

implemented.def says which entry points have an implementation. A line is
    PATTERN  IMPL  [TYPE...]
PATTERN is an entry point name; `{T}` in it is replaced by each TYPE token, giving one
entry point per token that calls `IMPL<C++ type of the token>(arguments...)` in the
implementation namespace (without TYPEs: `IMPL(arguments...)`). When the headers also
declare `<name>_64` (the 64-bit-integer API), it is implemented by the same call. Type
tokens are declared by `type TOKEN C++TYPE` lines. Every other entry point is a stub that
logs its name once and returns the library's NOT_SUPPORTED status (a value-returning
legacy function returns a zero value). `--omit NAME` leaves out a declared function that the
vendor's library does not export (a program calling it would not link against NVIDIA's).

Outputs (into --out): <prefix>_exports_<group>.cpp per group, and one linker version
script per --version-node (<node>.map). `--summary` prints the coverage instead, and
`--reference-exports FILE` (the names `nm -D --defined-only` lists for the vendor's
library) reports vendor exports that the headers do not declare.
"""
import argparse
import dataclasses
import os
import re
import subprocess
import sys


class GenError(Exception):
    pass


@dataclasses.dataclass
class Param:
    text: str  # the declaration as written: "const float* const Aarray[]"
    name: str


@dataclasses.dataclass
class Function:
    name: str
    return_type: str
    params: list
    group: str
    call: str = ""  # the implementation call, empty for a stub


# ---------------------------------------------------------------------------------------
# Reading the headers

def preprocess(cxx, include_dir, header):
    cmd = [cxx, "-E", "-P", "-x", "c++", "-std=c++17", "-I", include_dir, "-"]
    try:
        done = subprocess.run(cmd, input=f"#include <{header}>\n", capture_output=True,
                              text=True, check=False)
    except OSError as e:
        raise GenError(f"cannot run the preprocessor {cxx!r}: {e}")
    if done.returncode != 0:
        raise GenError(f"preprocessing {header} with {' '.join(cmd)} failed:\n{done.stderr}")
    return done.stdout


def balanced_parens(text, start):
    depth, i = 1, start
    while depth:
        if i >= len(text):
            raise GenError("unbalanced parentheses in preprocessed header text")
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return text[start:i - 1], i


def split_top_level(text):
    parts, depth, current = [], 0, []
    for ch in text:
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
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
    for piece in split_top_level(text):
        piece = piece.strip()
        m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\])?$", piece)
        if not m or "(" in piece:
            raise GenError(f"{where}: parameter {piece!r} is not of the form 'type name'")
        if m.group(1).startswith("mimic_"):
            raise GenError(f"{where}: parameter name {m.group(1)!r} collides with generated names")
        params.append(Param(piece, m.group(1)))
    return params


RETURN_TYPE_RE = re.compile(r"^(?:const\s+)?[A-Za-z_]\w*(?:\s+[A-Za-z_]\w*)*\s*\**$")


def parse_declarations(text, prefix, group):
    """{name: Function} for every declaration (not definition) of a prefixed function."""
    found = {}
    for m in re.finditer(r"\b(" + prefix + r"\w*)\s*\(", text):
        start = max(text.rfind(c, 0, m.start()) for c in ";{}")
        return_type = " ".join(text[start + 1:m.start()].split())
        if return_type.startswith('extern "C"'):
            return_type = return_type[len('extern "C"'):].strip()
        if not RETURN_TYPE_RE.match(return_type) or \
                re.search(r"\b(static|inline|return|typedef)\b", return_type):
            continue  # a call, an inline helper or a typedef, not a declaration
        inside, end = balanced_parens(text, m.end())
        if not text[end:].lstrip().startswith(";"):
            continue
        name = m.group(1)
        found[name] = Function(name, return_type, parse_params(inside, name), group)
    return found


# ---------------------------------------------------------------------------------------
# implemented.def

def read_implemented(path, functions):
    types, lines = {}, []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            words = line.split()
            where = f"{path}:{number}"
            if words[0] == "type":
                if len(words) < 3:
                    raise GenError(f"{where}: expected 'type TOKEN C++TYPE'")
                types[words[1]] = " ".join(words[2:])
                continue
            lines.append((where, words[0], words[1] if len(words) > 1 else None, words[2:]))
    for where, pattern, impl, tokens in lines:
        if impl is None:
            raise GenError(f"{where}: expected 'PATTERN IMPL [TYPE...]'")
        if ("{T}" in pattern) != bool(tokens):
            raise GenError(f"{where}: a pattern with {{T}} needs type tokens, and only it")
        for token in tokens or [None]:
            if token is not None and token not in types:
                raise GenError(f"{where}: unknown type token {token!r}")
            name = pattern.replace("{T}", token) if token else pattern
            call = impl + (f"<{types[token]}>" if token else "")
            if name not in functions:
                raise GenError(f"{where}: {name} is not declared by the headers")
            for variant in (name, name + "_64"):
                fn = functions.get(variant)
                if not fn:
                    continue
                if fn.call:
                    raise GenError(f"{where}: {variant} is implemented twice")
                fn.call = call


# ---------------------------------------------------------------------------------------
# Output

def emit_group(group, header, functions, args):
    out = [f"// Generated by tools/gen_cublas_api.py from {header}; do not edit.\n",
           f"#include <{header}>\n", f'#include "{args.impl_header}"\n\n',
           "#include <atomic>\n\n",
           "// Exported despite -fvisibility=hidden; the version script lists the names.\n",
           '#define MIMIC_EXPORT __attribute__((visibility("default")))\n\n']
    ns = args.namespace
    for fn in functions:
        params = ", ".join(p.text for p in fn.params)
        names = ", ".join(p.name for p in fn.params)
        out.append(f'extern "C" MIMIC_EXPORT {fn.return_type} {fn.name}({params}) {{\n')
        if fn.call:
            out.append(f'  return {ns}::api_call("{fn.name}", [&] {{ return {ns}::{fn.call}({names}); }});\n')
        else:
            out.append("  static std::atomic<bool> mimic_reported{false};\n")
            out.append(f'  return {ns}::not_implemented<{fn.return_type}>("{fn.name}", mimic_reported);\n')
        out.append("}\n\n")
    return "".join(out)


def emit_version_script(node, functions):
    lines = [f"/* Generated by tools/gen_cublas_api.py; do not edit. */", f"{node} {{", "  global:"]
    lines += [f"    {fn.name};" for fn in functions]
    lines += ["  local: *;", "};", ""]
    return "\n".join(lines)


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def load(args):
    functions = {}
    for spec in args.group:
        group, header = spec.split("=", 1)
        for name, fn in parse_declarations(preprocess(args.cxx, args.include, header),
                                           args.prefix, group).items():
            functions.setdefault(name, fn)
    for name in args.omit:
        if functions.pop(name, None) is None:
            raise GenError(f"--omit {name}: the headers do not declare it")
    if not functions:
        raise GenError(f"no {args.prefix}* declarations found under {args.include}")
    read_implemented(args.implemented, functions)
    return [functions[n] for n in sorted(functions)]


def check_reference(functions, path):
    with open(path, encoding="utf-8") as f:
        vendor = {line.split("@")[0].strip() for line in f if line.strip()}
    ours = {fn.name for fn in functions}
    return sorted(vendor - ours), sorted(ours - vendor)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--include", required=True, help="the toolkit's include directory")
    parser.add_argument("--group", action="append", required=True, metavar="NAME=HEADER")
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--implemented", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--impl-header", required=True)
    parser.add_argument("--version-node", action="append", default=[])
    parser.add_argument("--omit", action="append", default=[], metavar="NAME",
                        help="a declared function not to export")
    parser.add_argument("--cxx", default="c++")
    parser.add_argument("--out")
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--reference-exports")
    args = parser.parse_args(argv)
    try:
        functions = load(args)
    except GenError as e:
        print(f"gen_cublas_api.py: {e}", file=sys.stderr)
        return 1
    if args.summary:
        done = [fn for fn in functions if fn.call]
        print(f"{args.prefix}: {len(functions)} entry points, {len(done)} implemented, "
              f"{len(functions) - len(done)} stubs")
        for group in dict.fromkeys(fn.group for fn in functions):
            members = [fn for fn in functions if fn.group == group]
            print(f"  {group}: {sum(1 for fn in members if fn.call)}/{len(members)}")
        if args.reference_exports:
            missing, extra = check_reference(functions, args.reference_exports)
            print(f"vendor exports the headers do not declare ({len(missing)}): {' '.join(missing)}")
            print(f"declared but not exported by the vendor ({len(extra)}): {' '.join(extra)}")
        return 0
    if not args.out:
        parser.error("--out is required unless --summary")
    for spec in args.group:
        group, header = spec.split("=", 1)
        members = [fn for fn in functions if fn.group == group]
        write_if_changed(os.path.join(args.out, f"{args.prefix}_exports_{group}.cpp"),
                         emit_group(group, header, members, args))
    for node in args.version_node:
        write_if_changed(os.path.join(args.out, f"{node}.map"), emit_version_script(node, functions))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
