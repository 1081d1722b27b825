#!/usr/bin/env python3
"""Checks one AMDGPU code object with LLVM's object tools against the launch's view of its
kernels (`mimic compile --emit kernels`): a valid AMDGPU ELF for the target (type, machine,
e_flags mach), code object v5 metadata listing every kernel with wave32, the explicit
arguments at the packed offsets and sizes of the CUDA launch, the static LDS, and no
undefined symbols.

usage: check_code_object.py HSACO TARGET KERNELS READELF READOBJ
Prints one line per problem; exit status 1 when there is one."""
import re
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def scalar(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text.startswith("[") and text.endswith("]"):
        return [scalar(t) for t in text[1:-1].split(",") if t.strip()]
    if text in ("true", "false"):
        return text == "true"
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def parse_block(lines, at, indent):
    """The block-style YAML LLVM writes for the metadata (maps, '- ' sequences, plain
    scalars), from lines[at] at `indent`: (value, next line)."""
    if lines[at][1].startswith("- "):
        items = []
        while at < len(lines) and lines[at][0] == indent and lines[at][1].startswith("- "):
            # The item's first line, with the dash replaced by indentation.
            lines[at] = (indent + 2, lines[at][1][2:])
            if ":" in lines[at][1]:
                value, at = parse_block(lines, at, indent + 2)
            else:
                value, at = scalar(lines[at][1]), at + 1
            items.append(value)
        return items, at
    result = {}
    while at < len(lines) and lines[at][0] == indent and not lines[at][1].startswith("- "):
        key, _, rest = lines[at][1].partition(":")
        at += 1
        if rest.strip():
            result[key.strip()] = scalar(rest)
        elif at < len(lines) and lines[at][0] >= indent and (lines[at][0] > indent or lines[at][1].startswith("- ")):
            result[key.strip()], at = parse_block(lines, at, lines[at][0])
        else:
            result[key.strip()] = None
    return result, at


def metadata(readobj, path):
    text = run(readobj, "--notes", path)
    m = re.search(r"AMDGPU Metadata: ---\n(.*?)\n\.\.\.", text, re.S)
    if not m:
        raise ValueError("no NT_AMDGPU_METADATA note")
    lines = [(len(l) - len(l.lstrip(" ")), l.strip()) for l in m.group(1).splitlines() if l.strip()]
    base = lines[0][0] if lines else 0
    value, at = parse_block(lines, 0, base)
    if at != len(lines):
        raise ValueError("cannot read the metadata from line %d: %s" % (at + 1, lines[at][1]))
    return value


def expected_kernels(path):
    kernels = {}
    for line in open(path):
        fields = line.split()
        if not fields:
            continue
        params = [tuple(int(x) for x in f.split(":")) for f in fields[1:] if ":" in f]
        shared = int(next(f for f in fields if f.startswith("shared=")).split("=")[1])
        kernels[fields[0]] = (params, shared)
    return kernels


# LDS the GPU lowering adds to a kernel's shared variables when it uses them: bar.red's
# word, the named barriers' words, the block's reserved shared memory (%reserved_smem_*).
EXTRA_LDS = (4, 64, 1024)


def lds_accounted(lds, shared):
    """Whether a kernel's static LDS is its shared variables plus some of EXTRA_LDS, each
    placed with at most 16 bytes of alignment padding."""
    extra = lds - shared
    for mask in range(1 << len(EXTRA_LDS)):
        parts = [EXTRA_LDS[i] for i in range(len(EXTRA_LDS)) if mask >> i & 1]
        if sum(parts) <= extra <= sum(parts) + 16 * (len(parts) + 1):
            return True
    return False


def check(hsaco, target, kernels_file, readelf, readobj):
    problems = []
    header = run(readelf, "-h", hsaco)
    if not re.search(r"Type:\s+DYN", header):
        problems.append("not a shared object (ET_DYN)")
    if not re.search(r"Machine:\s+EM_AMDGPU", header):
        problems.append("machine is not EM_AMDGPU")
    if not re.search(r"Flags:\s+0x[0-9a-f]+, %s\b" % re.escape(target), header):
        problems.append("e_flags do not name %s: %s" % (target, re.search(r"Flags:.*", header).group(0)))
    undefined = [l for l in run(readelf, "--dyn-syms", "-W", hsaco).splitlines()
                 if re.search(r"\bUND\b\s+\S+$", l)]
    if undefined:
        problems.append("undefined symbols: " + "; ".join(u.split()[-1] for u in undefined))
    md = metadata(readobj, hsaco)
    if md.get("amdhsa.version") != [1, 2]:
        problems.append("metadata version %s is not code object v5's [1, 2]" % md.get("amdhsa.version"))
    if target not in str(md.get("amdhsa.target", "")):
        problems.append("metadata target %s is not %s" % (md.get("amdhsa.target"), target))
    expected = expected_kernels(kernels_file)
    found = {k[".name"]: k for k in md.get("amdhsa.kernels", [])}
    for name in sorted(set(expected) - set(found)):
        problems.append("kernel %s missing from the metadata" % name)
    for name in sorted(set(found) - set(expected)):
        problems.append("unexpected kernel %s in the metadata" % name)
    for name, (params, shared) in expected.items():
        k = found.get(name)
        if not k:
            continue
        if k.get(".wavefront_size") != 32:
            problems.append("%s: wavefront size %s, not 32" % (name, k.get(".wavefront_size")))
        args = [(a[".offset"], a[".size"]) for a in k.get(".args", [])
                if not a[".value_kind"].startswith("hidden_")]
        want = [(offset, size) for offset, size, _ in params]
        if args != want:
            problems.append("%s: arguments at %s, the launch packs them at %s" % (name, args, want))
        lds = k.get(".group_segment_fixed_size", -1)
        if not lds_accounted(lds, shared):
            problems.append("%s: %s bytes of static LDS, the kernel declares %d" % (name, lds, shared))
        end = (params[-1][0] + params[-1][1]) if params else 0
        if k.get(".kernarg_segment_size", 0) < end:
            problems.append("%s: kernarg segment of %s bytes, parameters need %d" % (name, k.get(".kernarg_segment_size"), end))
    return problems, len(expected)


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        problems, count = check(*sys.argv[1:])
    except (subprocess.CalledProcessError, ValueError, KeyError) as e:
        problems, count = ["cannot read: %s" % e], 0
    for p in problems:
        print(p)
    if not problems:
        print("ok %d kernels" % count)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
