#!/usr/bin/env python3
"""amdgcn IR (mimic compile --emit llvm) -> IR the host compiles: address spaces dropped,
the wave's intrinsics (work-item id, mbcnt, ds_bpermute) renamed to mma_numeric.cpp's
emulation functions, the target's attributes removed. Only for straight-line kernels that
use nothing else of the target, as mma_forms.ptx's do.   usage: host_ir.py IN.ll OUT.ll"""
import re, sys
s = open(sys.argv[1]).read()
s = "\n".join(l for l in s.splitlines() if not l.startswith(("target datalayout", "target triple", "attributes #")))
s = s.replace("amdgpu_kernel ", "")
s = re.sub(r" addrspace\(\d+\)", "", s)
s = re.sub(r"addrspacecast \(ptr (%?[\w.]+) to ptr\)", r"\1", s)
s = s.replace("@llvm.amdgcn.ds.bpermute", "@emu_bpermute").replace("@llvm.amdgcn.workitem.id.x", "@emu_tid")
s = s.replace("@llvm.amdgcn.mbcnt.lo", "@emu_mbcnt_lo").replace("@llvm.amdgcn.mbcnt.hi", "@emu_mbcnt_hi")
s = re.sub(r"\) (local_unnamed_addr )?#\d+", r") \1", s)
s = re.sub(r"declare (noundef )?range\([^)]*\) ", "declare ", s)
s = re.sub(r", !amdgpu\.\w+ !\d+", "", s)
open(sys.argv[2], "w").write(s)
