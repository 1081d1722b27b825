#!/usr/bin/env python3
"""Generates the tests/ptx suite: one PTX module per family (int, float, half, cvt) with one
small kernel per instruction form, and a .cases file per module with the inputs and the
expected outputs computed by refs.py (reference semantics from the PTX ISA manual, written
independently of the C++ lowering). Run it after changing the suite; the generated files are
checked in. tests/ptx/refresh_from_gpu.sh re-records the expected data on an NVIDIA GPU.

    python3 tests/ptx/gen.py            # writes tests/ptx/{int,float,half,cvt}.{ptx,cases}
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gen_float  # noqa: E402
import gen_int  # noqa: E402
from suite import Module  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    modules = [Module("int"), Module("float"), Module("half"), Module("cvt")]
    generators = [gen_int.generate, gen_float.generate_float, gen_float.generate_half, gen_float.generate_cvt]
    for m, generate in zip(modules, generators):
        random.seed("tests/ptx " + m.name)  # one stream per family: a new kernel changes only its family's data
        generate(m)
    total_k = total_c = 0
    for m in modules:
        m.write(HERE)
        total_k += len(m.kernels)
        total_c += sum(len(k.cases) for k in m.kernels)
    print(f"tests/ptx: {total_k} kernels, {total_c} cases")


if __name__ == "__main__":
    main()
