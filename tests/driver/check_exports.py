#!/usr/bin/env python3
"""Checks the dynamic symbols of libcuda.so.1 against the toolkit headers.

  check_exports.py symbols --lib L --cuda-include I --cc CC
      The library defines only cu* symbols, and every function that cuda.h and
      cudaProfiler.h declare (after their macro renames, in the public, per-thread and
      __CUDA_API_VERSION_INTERNAL configurations) is among them.
  check_exports.py static-init --lib L
      The library runs no static constructors: it is loaded into every CUDA process.

Deliberately independent of tools/gen_driver_api.py: a simpler reading of the headers.
"""
import argparse
import re
import subprocess
import sys

CONFIGURATIONS = [[], ["-DCUDA_API_PER_THREAD_DEFAULT_STREAM"], ["-D__CUDA_API_VERSION_INTERNAL"]]


def run(cmd, stdin=None):
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True).stdout


def declared_functions(cc, include_dir):
    names = set()
    for defines in CONFIGURATIONS:
        text = run([cc, "-E", "-P", "-x", "c", "-I", include_dir, *defines, "-"],
                   "#include <cuda.h>\n#include <cudaProfiler.h>\n")
        # A declaration ends at the first ';' or '{' after its name: skip inline bodies.
        for m in re.finditer(r"\bCUresult\s+(cu\w+)\s*\(([^;{]*)([;{])", text):
            if m.group(3) == ";":
                names.add(m.group(1))
    return names


def dynamic_symbols(lib):
    symbols = set()
    for line in run(["nm", "-D", "--defined-only", lib]).splitlines():
        parts = line.split()
        # Lower-case types are local symbols the linker left in .dynsym: not exported.
        if len(parts) == 3 and parts[1].isupper():
            symbols.add(parts[2].split("@")[0])
    return symbols


def check_symbols(args):
    declared = declared_functions(args.cc, args.cuda_include)
    exported = dynamic_symbols(args.lib)
    failures = []
    foreign = sorted(s for s in exported if not s.startswith("cu"))
    if foreign:
        failures.append(f"{len(foreign)} exported symbols are not cu*: {', '.join(foreign[:20])}")
    missing = sorted(declared - exported)
    if missing:
        failures.append(f"{len(missing)} declared functions are not exported: "
                        f"{', '.join(missing[:20])}")
    extra = sorted(s for s in exported - declared if s.startswith("cu"))
    if extra:
        failures.append(f"{len(extra)} exported cu* symbols are not declared by the headers: "
                        f"{', '.join(extra[:20])}")
    print(f"{len(declared)} functions declared, {len(exported)} symbols exported")
    return failures


def init_array_entries(lib):
    """The function addresses in .init_array (empty when there is no such section)."""
    entries = []
    for line in run(["objdump", "-s", "-j", ".init_array", lib]).splitlines():
        m = re.match(r"\s*[0-9a-f]+\s+((?:[0-9a-f]{8}\s){1,4})", line + " ")
        if m:
            words = m.group(1).split()
            for low, high in zip(words[0::2], words[1::2]):
                entries.append(int.from_bytes(bytes.fromhex(low + high), "little"))
    return entries


def check_static_init(args):
    symbols = {}
    for line in run(["nm", args.lib]).splitlines():
        parts = line.split()
        if len(parts) == 3:
            symbols[int(parts[0], 16)] = parts[2]
    try:
        entries = init_array_entries(args.lib)
    except subprocess.CalledProcessError:
        entries = []  # no .init_array section
    names = [symbols.get(a, hex(a)) for a in entries]
    # frame_dummy comes from the C runtime's crtbegin and registers nothing of ours.
    ours = [n for n in names if n != "frame_dummy"]
    print(f".init_array: {names}")
    if ours:
        return [f"static constructors run when the library is loaded: {', '.join(ours)} "
                "(initialise on first use instead)"]
    return []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("check", choices=["symbols", "static-init"])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--cuda-include")
    parser.add_argument("--cc", default="cc")
    args = parser.parse_args()
    failures = check_symbols(args) if args.check == "symbols" else check_static_init(args)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
