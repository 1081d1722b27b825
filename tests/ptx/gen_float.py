"""Floating-point (f32/f64), half-precision and conversion kernels of tests/ptx."""
import math
import random
import struct
from fractions import Fraction as Fr

import refs as R
from suite import signed

MODES = (R.RN, R.RZ, R.RM, R.RP)

F32_EDGE = [0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3fc00000, 0x40490fdb, 0x3eaaaaab, 0x00000001,
            0x007fffff, 0x00800000, 0x80800001, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
            0x4b800001, 0x33800000, 0x3f800001, 0x807fffff, 0x5f000000, 0x1f800000]
F64_EDGE = [0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000, 0x3ff8000000000000,
            0x400921fb54442d18, 0x3fd5555555555555, 0x0000000000000001, 0x000fffffffffffff, 0x0010000000000000,
            0x7fefffffffffffff, 0xffefffffffffffff, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000,
            0x3ff0000000000001, 0x2000000000000000, 0x1ff0000000000001, 0x5fe0000000000000, 0x8010000000000001]
F16_EDGE = [0x0000, 0x8000, 0x3c00, 0xbc00, 0x3e00, 0x4248, 0x3555, 0x0001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00,
            0xfc00, 0x7e00, 0x3c01, 0x6400, 0x1400, 0x8401]
BF16_EDGE = [0x0000, 0x8000, 0x3f80, 0xbf80, 0x3fc0, 0x4049, 0x3eab, 0x0001, 0x007f, 0x0080, 0x7f7f, 0xff7f, 0x7f80,
             0xff80, 0x7fc0, 0x3f81, 0x4b80, 0x3380]


def rand_f(fmt, n, elo, ehi):
    eb, mb, _, nbits = R.FORMATS[fmt]
    bias = (1 << (eb - 1)) - 1
    out = []
    for _ in range(n):
        e = random.randint(elo, ehi) + bias
        out.append(random.getrandbits(1) << (nbits - 1) | e << mb | random.getrandbits(mb))
    return out


def pairs(edge, rnd):
    return [(a, b) for a in edge for b in edge] + list(zip(rnd[::2], rnd[1::2]))


def triples(edge, rnd, n=200):
    out = [(random.choice(edge), random.choice(edge), random.choice(edge)) for _ in range(n // 2)]
    out += [(random.choice(rnd), random.choice(rnd), random.choice(rnd)) for _ in range(n // 2)]
    return out


def make_ref(fmt, op, mode=R.RN, ftz=False, sat=False, relu=False):
    def ref(*bits):
        xs = [R.decode(b, fmt) for b in bits]
        if ftz:
            xs = [R.flush(x, fmt) for x in xs]
        r = op(xs, mode)
        out = r if isinstance(r, int) else R.round_to(r, fmt, mode, relu=relu)
        if ftz:
            out = R.flush_bits(out, fmt)
        if sat:
            out = R.encode_exact(R.saturate(R.decode(out, fmt)), fmt)
        return out
    return ref


def op_add(xs, mode):
    return R.add(xs[0], xs[1], mode)


def op_sub(xs, mode):
    return R.add(xs[0], R.neg(xs[1]), mode)


def op_mul(xs, mode):
    return R.mul(xs[0], xs[1])


def op_fma(xs, mode):
    return R.fma(xs[0], xs[1], xs[2], mode)


def op_div(xs, mode):
    return R.div(xs[0], xs[1])


def op_rcp(xs, mode):
    return R.div(R.num(1), xs[0])


def approx(fn):
    def op(xs, mode):
        v = R.to_float(xs[0])
        try:
            r = fn(v)
        except (OverflowError, ValueError):
            r = math.inf if v > 0 else math.nan
        return R.from_float(r)
    return op


def ex2(v):
    if v == -math.inf:
        return 0.0
    if v > 2000:
        return math.inf
    return 2.0 ** v


def lg2(v):
    if math.isnan(v) or v < 0:
        return math.nan
    if v == 0:
        return -math.inf
    if math.isinf(v):
        return math.inf
    return math.log2(v)


def f32_val(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def generate_float(m):
    types = {"f32": (F32_EDGE, rand_f("f32", 120, -30, 30)), "f64": (F64_EDGE, rand_f("f64", 120, -60, 60))}
    for t, (edge, rnd) in types.items():
        two = pairs(edge, rnd)
        three = triples(edge, rnd, 300)
        for mode in MODES:
            for name, op in (("add", op_add), ("sub", op_sub), ("mul", op_mul)):
                m.add(f"{name}.{mode}.{t}", [t, t], [t], f"{name}.{mode}.{t} %o0, %i0, %i1;", two, make_ref(t, op, mode))
            m.add(f"fma.{mode}.{t}", [t, t, t], [t], f"fma.{mode}.{t} %o0, %i0, %i1, %i2;", three, make_ref(t, op_fma, mode))
            m.add(f"div.{mode}.{t}", [t, t], [t], f"div.{mode}.{t} %o0, %i0, %i1;", two, make_ref(t, op_div, mode))
            m.add(f"rcp.{mode}.{t}", [t], [t], f"rcp.{mode}.{t} %o0, %i0;", [(v,) for v in edge + rnd],
                  make_ref(t, op_rcp, mode))
            m.add(f"sqrt.{mode}.{t}", [t], [t], f"sqrt.{mode}.{t} %o0, %i0;", [(v,) for v in edge + rnd + [x & ~(1 << (63 if t == 'f64' else 31)) for x in rnd]],
                  lambda a, t=t, mode=mode: R.sqrt_round(R.decode(a, t), t, mode))
        m.add(f"mad.rn.{t}", [t, t, t], [t], f"mad.rn.{t} %o0, %i0, %i1, %i2;", three, make_ref(t, op_fma))
        m.add(f"abs.{t}", [t], [t], f"abs.{t} %o0, %i0;", [(v,) for v in edge],
              lambda a, t=t: R.encode_exact(R.F(nan=True) if R.decode(a, t).nan else R.F(inf=R.decode(a, t).inf, sign=0, mag=R.decode(a, t).mag), t))
        m.add(f"neg.{t}", [t], [t], f"neg.{t} %o0, %i0;", [(v,) for v in edge], lambda a, t=t: R.encode_exact(R.neg(R.decode(a, t)), t))
        for op in ("min", "max"):
            for nan in ("", ".NaN"):
                if nan and t == "f64":
                    continue
                m.add(f"{op}{nan}.{t}", [t, t], [t], f"{op}{nan}.{t} %o0, %i0, %i1;", pairs(edge, rnd[:20]),
                      lambda a, b, op=op, nan=nan, t=t: R.encode_exact(R.minmax(R.decode(a, t), R.decode(b, t), op == "min", bool(nan)), t))
        for cls in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
            def testp(a, cls=cls, t=t):
                x = R.decode(a, t)
                tiny = Fr(2) ** (-126 if t == "f32" else -1022)
                return int({"finite": not x.nan and not x.inf, "infinite": x.inf, "number": not x.nan,
                            "notanumber": x.nan, "normal": not x.nan and not x.inf and x.mag >= tiny,
                            "subnormal": not x.nan and not x.inf and 0 < x.mag < tiny}[cls])
            m.add(f"testp.{cls}.{t}", [t], ["pred"], f"testp.{cls}.{t} %o0, %i0;", [(v,) for v in edge], testp)
        m.add(f"copysign.{t}", [t, t], [t], f"copysign.{t} %o0, %i0, %i1;", [(a, b) for a in edge[:8] for b in edge if not R.decode(b, t).nan],
              lambda a, b, t=t: (b & ~(1 << (63 if t == "f64" else 31))) | (a & (1 << (63 if t == "f64" else 31))))
        cmps = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
        for c in (cmps if t == "f32" else cmps[:6] + ("nan",)):
            m.add(f"setp.{c}.{t}", [t, t], ["pred"], f"setp.{c}.{t} %o0, %i0, %i1;", pairs(edge, rnd[:20]),
                  lambda a, b, c=c, t=t: int(R.compare(c, R.decode(a, t), R.decode(b, t))))
        if t == "f32":
            m.add("setp.lt.ftz.f32", [t, t], ["pred"], "setp.lt.ftz.f32 %o0, %i0, %i1;", pairs(edge, []),
                  lambda a, b: int(R.compare("lt", R.flush(R.decode(a, "f32"), "f32"), R.flush(R.decode(b, "f32"), "f32"))))
        m.add(f"set.lt.f32.{t}", [t, t], ["f32"], f"set.lt.f32.{t} %o0, %i0, %i1;", pairs(edge[:8], []),
              lambda a, b, t=t: R.encode_exact(R.num(1) if R.compare("lt", R.decode(a, t), R.decode(b, t)) else R.num(0), "f32"))
        m.add(f"set.gtu.s32.{t}", [t, t], ["s32"], f"set.gtu.s32.{t} %o0, %i0, %i1;", pairs(edge[:8], []),
              lambda a, b, t=t: 0xffffffff if R.compare("gtu", R.decode(a, t), R.decode(b, t)) else 0)

    # ---- f64 directed rounding where residuals underflow: products, quotients and roots
    # near and below 2^-1022, and sums that cancel against them
    tiny = []
    for _ in range(240):
        ea, eb = random.randint(-560, 40), random.randint(-560, 40)
        a = random.getrandbits(1) << 63 | (1023 + ea) << 52 | random.getrandbits(52)
        b = random.getrandbits(1) << 63 | (1023 + eb) << 52 | random.getrandbits(52)
        tiny.append((a, b))
    subn = [(random.getrandbits(1) << 63 | random.getrandbits(random.choice([1, 8, 30, 52])),) for _ in range(60)]
    for mode in MODES:
        m.add(f"fma.{mode}.f64.tiny", ["f64"] * 3, ["f64"], f"fma.{mode}.f64 %o0, %i0, %i1, %i2;",
              [(a, b, c) for (a, b), (c,) in zip(tiny, subn * 4)] + [(a, b, 0x0010000000000000 ^ (a & (1 << 63))) for a, b in tiny[:60]],
              make_ref("f64", op_fma, mode))
        m.add(f"mul.{mode}.f64.tiny", ["f64"] * 2, ["f64"], f"mul.{mode}.f64 %o0, %i0, %i1;", tiny, make_ref("f64", op_mul, mode))
        m.add(f"div.{mode}.f64.tiny", ["f64"] * 2, ["f64"], f"div.{mode}.f64 %o0, %i0, %i1;",
              [(a, b ^ (1 << 62) if (b >> 52) & 0x7ff < 1023 else b) for a, b in tiny] + [(a[0], 0x3ff8000000000000) for a in subn],
              make_ref("f64", op_div, mode))
        m.add(f"sqrt.{mode}.f64.tiny", ["f64"], ["f64"], f"sqrt.{mode}.f64 %o0, %i0;", [(a[0] & ~(1 << 63),) for a in subn],
              lambda a, mode=mode: R.sqrt_round(R.decode(a, "f64"), "f64", mode))

    # ---- f32 only: .ftz, .sat, min/max forms, approximations
    e32, r32 = types["f32"]
    two = pairs(e32, r32)
    m.add("add.ftz.f32", ["f32", "f32"], ["f32"], "add.ftz.f32 %o0, %i0, %i1;", two, make_ref("f32", op_add, ftz=True))
    m.add("add.rz.ftz.f32", ["f32", "f32"], ["f32"], "add.rz.ftz.f32 %o0, %i0, %i1;", two, make_ref("f32", op_add, R.RZ, ftz=True))
    m.add("mul.ftz.f32", ["f32", "f32"], ["f32"], "mul.ftz.f32 %o0, %i0, %i1;", two, make_ref("f32", op_mul, ftz=True))
    m.add("mul.rm.ftz.f32", ["f32", "f32"], ["f32"], "mul.rm.ftz.f32 %o0, %i0, %i1;", two, make_ref("f32", op_mul, R.RM, ftz=True))
    m.add("fma.rn.ftz.f32", ["f32"] * 3, ["f32"], "fma.rn.ftz.f32 %o0, %i0, %i1, %i2;", triples(e32, r32), make_ref("f32", op_fma, ftz=True))
    m.add("add.sat.f32", ["f32", "f32"], ["f32"], "add.sat.f32 %o0, %i0, %i1;", two, make_ref("f32", op_add, sat=True))
    m.add("mul.rp.sat.f32", ["f32", "f32"], ["f32"], "mul.rp.sat.f32 %o0, %i0, %i1;", two, make_ref("f32", op_mul, R.RP, sat=True))
    m.add("fma.rn.sat.f32", ["f32"] * 3, ["f32"], "fma.rn.sat.f32 %o0, %i0, %i1, %i2;", triples(e32, r32), make_ref("f32", op_fma, sat=True))
    m.add("div.rn.ftz.f32", ["f32", "f32"], ["f32"], "div.rn.ftz.f32 %o0, %i0, %i1;", two, make_ref("f32", op_div, ftz=True))
    m.add("sqrt.rn.ftz.f32", ["f32"], ["f32"], "sqrt.rn.ftz.f32 %o0, %i0;", [(v,) for v in e32 + r32],
          lambda a: R.flush_bits(R.sqrt_round(R.flush(R.decode(a, "f32"), "f32"), "f32", R.RN), "f32"))
    m.add("neg.ftz.f32", ["f32"], ["f32"], "neg.ftz.f32 %o0, %i0;", [(v,) for v in e32],
          make_ref("f32", lambda xs, mode: R.neg(xs[0]), ftz=True))
    m.add("min.ftz.f32", ["f32", "f32"], ["f32"], "min.ftz.f32 %o0, %i0, %i1;", pairs(e32, []),
          make_ref("f32", lambda xs, mode: R.minmax(xs[0], xs[1], True), ftz=True))

    def xorsign(a, b, is_min, t="f32"):
        x, y = R.decode(a, t), R.decode(b, t)
        ax = R.F(nan=x.nan, inf=x.inf, mag=x.mag)
        ay = R.F(nan=y.nan, inf=y.inf, mag=y.mag)
        r = R.minmax(ax, ay, is_min)
        if not r.nan:
            r = R.F(inf=r.inf, sign=x.sign ^ y.sign, mag=r.mag)
        return R.encode_exact(r, t)

    m.add("min.xorsign.abs.f32", ["f32", "f32"], ["f32"], "min.xorsign.abs.f32 %o0, %i0, %i1;", pairs(e32, []),
          lambda a, b: xorsign(a, b, True))
    m.add("max.xorsign.abs.f32", ["f32", "f32"], ["f32"], "max.xorsign.abs.f32 %o0, %i0, %i1;", pairs(e32, []),
          lambda a, b: xorsign(a, b, False))
    # approximations, within the ISA's bounds
    normal = rand_f("f32", 60, -20, 20)
    m.add("div.full.f32", ["f32", "f32"], ["f32"], "div.full.f32 %o0, %i0, %i1;", pairs(e32[:7], normal), make_ref("f32", op_div),
          tol=("ulp", 2))
    m.add("div.approx.f32", ["f32", "f32"], ["f32"], "div.approx.f32 %o0, %i0, %i1;", list(zip(normal[::2], normal[1::2])),
          make_ref("f32", op_div), tol=("ulp", 2))
    m.add("rcp.approx.f32", ["f32"], ["f32"], "rcp.approx.f32 %o0, %i0;", [(v,) for v in normal + e32[:7]], make_ref("f32", op_rcp),
          tol=("ulp", 1))
    m.add("sqrt.approx.f32", ["f32"], ["f32"], "sqrt.approx.f32 %o0, %i0;", [(v & 0x7fffffff,) for v in normal + e32[:7]],
          lambda a: R.sqrt_round(R.decode(a, "f32"), "f32", R.RN), tol=("ulp", 1))
    m.add("rsqrt.approx.f32", ["f32"], ["f32"], "rsqrt.approx.f32 %o0, %i0;", [(v & 0x7fffffff,) for v in normal],
          make_ref("f32", approx(lambda v: 1 / math.sqrt(v))), tol=("ulp", 2))
    m.add("rsqrt.approx.f64", ["f64"], ["f64"], "rsqrt.approx.f64 %o0, %i0;",
          [(v & 0x7fffffffffffffff,) for v in rand_f("f64", 30, -40, 40)],
          lambda a: R.round_to(R.from_float(1 / math.sqrt(R.to_float(R.decode(a, "f64")))), "f64"),
          tol=("ulp", 2))
    def rsqrt_ftz64(a):
        x = R.flush(R.decode(a, "f64"), "f64")
        if x.nan or (x.sign and not x.zero):
            return R.nan_bits("f64")
        if x.zero:  # rsqrt(+-0) = +-inf
            return R.round_to(R.inf(x.sign), "f64")
        if x.inf:
            return 0
        return R.round_to(R.from_float(1 / math.sqrt(float(x.mag))), "f64")

    m.add("rsqrt.approx.ftz.f64", ["f64"], ["f64"], "rsqrt.approx.ftz.f64 %o0, %i0;",
          [(v,) for v in (0x0000000000000001, 0x8000000000000001, 0x000fffffffffffff, 0x3ff0000000000000,
                          0x7ff0000000000000, 0x4010000000000000)],
          rsqrt_ftz64, tol=("ulp", 2))
    # Beyond the random ones: results near overflow, subnormal results, and underflow to 0.
    ex_edges = [struct.unpack("<I", struct.pack("<f", v))[0]
                for v in (127.5, 127.99, 128.0, 100.25, -100.25, -125.9, -126.7, -140.3, -149.0, -149.5, -150.0, -151.0)]
    ex_in = [(v,) for v in rand_f("f32", 60, -6, 4) + [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x42c80000]
             + ex_edges]
    m.add("ex2.approx.f32", ["f32"], ["f32"], "ex2.approx.f32 %o0, %i0;", ex_in, make_ref("f32", approx(ex2)), tol=("ulp", 2))
    m.add("ex2.approx.ftz.f32", ["f32"], ["f32"], "ex2.approx.ftz.f32 %o0, %i0;", ex_in,
          make_ref("f32", approx(ex2), ftz=True), tol=("ulp", 2))
    lg_in = [(v & 0x7fffffff,) for v in rand_f("f32", 60, -30, 30)] + [(0,), (0x7f800000,), (0x3f800000,), (0xbf800000,)]
    m.add("lg2.approx.f32", ["f32"], ["f32"], "lg2.approx.f32 %o0, %i0;", lg_in, make_ref("f32", approx(lg2)), tol=("rel", 2 ** -21))
    trig_in = [(v,) for v in rand_f("f32", 60, -8, 8)] + [(0,), (0x80000000,), (0x40490fdb,)]
    m.add("sin.approx.f32", ["f32"], ["f32"], "sin.approx.f32 %o0, %i0;", trig_in, make_ref("f32", approx(math.sin)),
          tol=("abs", 2 ** -20.5))
    m.add("cos.approx.f32", ["f32"], ["f32"], "cos.approx.f32 %o0, %i0;", trig_in, make_ref("f32", approx(math.cos)),
          tol=("abs", 2 ** -20.5))
    tanh_in = [(v,) for v in rand_f("f32", 40, -10, 4)] + [(0,), (0x80000000,), (0x7f800000,), (0xff800000,)]
    m.add("tanh.approx.f32", ["f32"], ["f32"], "tanh.approx.f32 %o0, %i0;", tanh_in, make_ref("f32", approx(math.tanh)),
          tol=("rel", 2 ** -11))


# ---------------------------------------------------------------- halves

def lanes2(fmt, scalar_ref):
    def ref(*words):
        r = 0
        for lane in range(2):
            r |= scalar_ref(*[(w >> (16 * lane)) & 0xffff for w in words]) << (16 * lane)
        return r
    return ref


def generate_half(m):
    formats = {"f16": (F16_EDGE, rand_f("f16", 80, -10, 10)), "bf16": (BF16_EDGE, rand_f("bf16", 80, -30, 30))}
    for fmt, (edge, rnd) in formats.items():
        two = pairs(edge, rnd)
        three = triples(edge, rnd, 300)
        two_x2 = [(a | b << 16, c | d << 16) for (a, c), (b, d) in zip(two, two[::-1])]
        three_x2 = [(a | d << 16, b | e << 16, c | f << 16) for (a, b, c), (d, e, f) in zip(three, three[::-1])]
        for name, op in (("add", op_add), ("sub", op_sub), ("mul", op_mul)):
            ref = make_ref(fmt, op)
            m.add(f"{name}.rn.{fmt}", ["b16", "b16"], ["b16"], f"{name}.rn.{fmt} %o0, %i0, %i1;", two, ref)
            m.add(f"{name}.rn.{fmt}x2", ["b32", "b32"], ["b32"], f"{name}.rn.{fmt}x2 %o0, %i0, %i1;", two_x2, lanes2(fmt, ref))
        ref = make_ref(fmt, op_fma)
        m.add(f"fma.rn.{fmt}", ["b16"] * 3, ["b16"], f"fma.rn.{fmt} %o0, %i0, %i1, %i2;", three, ref)
        m.add(f"fma.rn.{fmt}x2", ["b32"] * 3, ["b32"], f"fma.rn.{fmt}x2 %o0, %i0, %i1, %i2;", three_x2, lanes2(fmt, ref))
        m.add(f"fma.rn.relu.{fmt}", ["b16"] * 3, ["b16"], f"fma.rn.relu.{fmt} %o0, %i0, %i1, %i2;", three,
              make_ref(fmt, op_fma, relu=True))
        neg = lambda a: a if R.decode(a, fmt).nan else a ^ 0x8000  # noqa: E731
        m.add(f"neg.{fmt}", ["b16"], ["b16"], f"neg.{fmt} %o0, %i0;", [(v,) for v in edge if not R.decode(v, fmt).nan], neg)
        m.add(f"abs.{fmt}", ["b16"], ["b16"], f"abs.{fmt} %o0, %i0;", [(v,) for v in edge if not R.decode(v, fmt).nan],
              lambda a: a & 0x7fff)
        m.add(f"neg.{fmt}x2", ["b32"], ["b32"], f"neg.{fmt}x2 %o0, %i0;",
              [(a | b << 16,) for a in edge[:6] for b in edge[:6]], lambda w: w ^ 0x80008000)
        for op in ("min", "max"):
            for nan in ("", ".NaN"):
                ref = lambda a, b, op=op, nan=nan, fmt=fmt: R.encode_exact(R.minmax(R.decode(a, fmt), R.decode(b, fmt), op == "min", bool(nan)), fmt)  # noqa: E731
                m.add(f"{op}{nan}.{fmt}", ["b16", "b16"], ["b16"], f"{op}{nan}.{fmt} %o0, %i0, %i1;", pairs(edge, []), ref)
                m.add(f"{op}{nan}.{fmt}x2", ["b32", "b32"], ["b32"], f"{op}{nan}.{fmt}x2 %o0, %i0, %i1;", two_x2[::3],
                      lanes2(fmt, ref))
        for c in ("eq", "lt", "gtu", "nan"):
            m.add(f"setp.{c}.{fmt}", ["b16", "b16"], ["pred"], f"setp.{c}.{fmt} %o0, %i0, %i1;", pairs(edge, rnd[:20]),
                  lambda a, b, c=c, fmt=fmt: int(R.compare(c, R.decode(a, fmt), R.decode(b, fmt))))
        m.add(f"setp.lt.{fmt}x2", ["b32", "b32"], ["pred", "pred"], f"setp.lt.{fmt}x2 %o0|%o1, %i0, %i1;", two_x2,
              lambda a, b, fmt=fmt: tuple(int(R.compare("lt", R.decode((a >> s) & 0xffff, fmt), R.decode((b >> s) & 0xffff, fmt)))
                                          for s in (0, 16)))
    e16, r16 = formats["f16"]
    two = pairs(e16, r16)
    m.add("add.ftz.f16", ["b16", "b16"], ["b16"], "add.ftz.f16 %o0, %i0, %i1;", two, make_ref("f16", op_add, ftz=True))
    m.add("mul.sat.f16", ["b16", "b16"], ["b16"], "mul.sat.f16 %o0, %i0, %i1;", two, make_ref("f16", op_mul, sat=True))
    m.add("fma.rn.sat.f16", ["b16"] * 3, ["b16"], "fma.rn.sat.f16 %o0, %i0, %i1, %i2;", triples(e16, r16),
          make_ref("f16", op_fma, sat=True))
    m.add("fma.rn.ftz.f16", ["b16"] * 3, ["b16"], "fma.rn.ftz.f16 %o0, %i0, %i1, %i2;", triples(e16, r16),
          make_ref("f16", op_fma, ftz=True))

    def xorsign16(a, b, is_min, fmt):
        x, y = R.decode(a, fmt), R.decode(b, fmt)
        r = R.minmax(R.F(nan=x.nan, inf=x.inf, mag=x.mag), R.F(nan=y.nan, inf=y.inf, mag=y.mag), is_min)
        if not r.nan:
            r = R.F(inf=r.inf, sign=x.sign ^ y.sign, mag=r.mag)
        return R.encode_exact(r, fmt)

    m.add("min.xorsign.abs.f16", ["b16", "b16"], ["b16"], "min.xorsign.abs.f16 %o0, %i0, %i1;", pairs(e16, []),
          lambda a, b: xorsign16(a, b, True, "f16"))
    m.add("max.xorsign.abs.bf16", ["b16", "b16"], ["b16"], "max.xorsign.abs.bf16 %o0, %i0, %i1;", pairs(BF16_EDGE, []),
          lambda a, b: xorsign16(a, b, False, "bf16"))
    ex_f16 = [(v,) for v in rand_f("f16", 40, -4, 3)] + [(0,), (0x8000,), (0x7c00,), (0xfc00,)]
    m.add("ex2.approx.f16", ["b16"], ["b16"], "ex2.approx.f16 %o0, %i0;", ex_f16, make_ref("f16", approx(ex2)), tol=("ulp", 2))
    ex_bf = [(v,) for v in rand_f("bf16", 40, -4, 3)] + [(0,), (0x8000,), (0x7f80,), (0xff80,)]
    m.add("ex2.approx.ftz.bf16", ["b16"], ["b16"], "ex2.approx.ftz.bf16 %o0, %i0;", ex_bf, make_ref("bf16", approx(ex2), ftz=True),
          tol=("ulp", 2))
    m.add("tanh.approx.f16", ["b16"], ["b16"], "tanh.approx.f16 %o0, %i0;", [(v,) for v in rand_f("f16", 40, -8, 3)],
          make_ref("f16", approx(math.tanh)), tol=("ulp", 2))
    m.add("tanh.approx.bf16", ["b16"], ["b16"], "tanh.approx.bf16 %o0, %i0;", [(v,) for v in rand_f("bf16", 40, -8, 3)],
          make_ref("bf16", approx(math.tanh)), tol=("ulp", 2))
    ex_x2 = [(a[0] | b[0] << 16,) for a, b in zip(ex_f16, ex_f16[::-1])]
    m.add("ex2.approx.f16x2", ["b32"], ["b32"], "ex2.approx.f16x2 %o0, %i0;", ex_x2,
          lanes2("f16", make_ref("f16", approx(ex2))), tol=("ulp", 2))
    two_x2 = [(a | b << 16, c | d << 16) for (a, c), (b, d) in zip(two, two[::-1])]
    m.add("add.rn.ftz.sat.f16x2", ["b32", "b32"], ["b32"], "add.rn.ftz.sat.f16x2 %o0, %i0, %i1;", two_x2,
          lanes2("f16", make_ref("f16", op_add, ftz=True, sat=True)))
    bf3 = triples(BF16_EDGE, rand_f("bf16", 40, -20, 20), 200)
    m.add("fma.rn.relu.bf16x2", ["b32"] * 3, ["b32"], "fma.rn.relu.bf16x2 %o0, %i0, %i1, %i2;",
          [(a | d << 16, b | e << 16, c | f << 16) for (a, b, c), (d, e, f) in zip(bf3, bf3[::-1])],
          lanes2("bf16", make_ref("bf16", op_fma, relu=True)))
    m.add("setp.ftz.lt.f16", ["b16", "b16"], ["pred"], "setp.lt.ftz.f16 %o0, %i0, %i1;", pairs(e16, []),
          lambda a, b: int(R.compare("lt", R.flush(R.decode(a, "f16"), "f16"), R.flush(R.decode(b, "f16"), "f16"))))
    m.add("set.lt.f16x2.f16x2", ["b32", "b32"], ["b32"], "set.lt.f16x2.f16x2 %o0, %i0, %i1;",
          [(a | b << 16, c | d << 16) for a, b, c, d in zip(e16, e16[::-1], e16[3:] + e16[:3], e16)],
          lanes2("f16", lambda a, b: 0x3c00 if R.compare("lt", R.decode(a, "f16"), R.decode(b, "f16")) else 0))
    m.add("set.gt.u32.f16", ["b16", "b16"], ["u32"], "set.gt.u32.f16 %o0, %i0, %i1;", pairs(e16, []),
          lambda a, b: 0xffffffff if R.compare("gt", R.decode(a, "f16"), R.decode(b, "f16")) else 0)
    # the vector form of mov
    words = [random.getrandbits(32) for _ in range(20)]
    m.add("mov.pack.b32", ["b16", "b16"], ["b32"], "mov.b32 %o0, {%i0, %i1};", [(w & 0xffff, w >> 16) for w in words],
          lambda lo, hi: lo | hi << 16)
    m.add("mov.unpack.b32", ["b32"], ["b16", "b16"], "mov.b32 {%o0, %o1}, %i0;", [(w,) for w in words],
          lambda w: (w & 0xffff, w >> 16))
    m.add("mov.unpack.sink.b32", ["b32"], ["b16"], "mov.b32 {_, %o0}, %i0;", [(w,) for w in words], lambda w: w >> 16)
    m.add("mov.pack.b64", ["b32", "b32"], ["b64"], "mov.b64 %o0, {%i0, %i1};", [(w, w ^ 0xffff) for w in words],
          lambda lo, hi: lo | hi << 32)
    m.add("mov.unpack4.b64", ["b64"], ["b16"] * 4, "mov.b64 {%o0, %o1, %o2, %o3}, %i0;",
          [(w << 32 | w ^ 0x1234,) for w in words], lambda w: tuple((w >> (16 * i)) & 0xffff for i in range(4)))


# ---------------------------------------------------------------- conversions

INT_RANGE = {"s16": (-(1 << 15), (1 << 15) - 1), "u16": (0, (1 << 16) - 1), "s32": (-(1 << 31), (1 << 31) - 1),
             "u32": (0, (1 << 32) - 1), "s64": (-(1 << 63), (1 << 63) - 1), "u64": (0, (1 << 64) - 1)}


def round_integral(v, mode):
    if mode == R.RZ:
        return math.trunc(v)
    if mode == R.RM:
        return math.floor(v)
    if mode == R.RP:
        return math.ceil(v)
    f = math.floor(v)
    d = v - f
    return f + 1 if d > Fr(1, 2) or (d == Fr(1, 2) and f % 2) else f


def f2i(sfmt, dt, mode, ftz=False):
    lo, hi = INT_RANGE[dt]

    def ref(a):
        x = R.decode(a, sfmt)
        if ftz:
            x = R.flush(x, sfmt)
        if x.nan:
            return 0
        if x.inf:
            return lo if x.sign else hi
        return max(lo, min(hi, round_integral(x.value, mode)))
    return ref


def ival(v, t):
    return signed(v, int(t[1:])) if t[0] == "s" else v


def generate_cvt(m):
    e32, r32 = F32_EDGE, rand_f("f32", 80, -40, 70)
    e64, r64 = F64_EDGE, rand_f("f64", 80, -200, 200)
    ints = {t: [0, 1, 2, 3, lo & ((1 << int(t[1:])) - 1), hi, 0x7fffffff & hi, 255, 256, 65535, (1 << 24) + 1, (1 << 53) + 1,
                (1 << 63) | 0x401, 0x8000000000000c00] for t, (lo, hi) in INT_RANGE.items()}
    for t in ints:
        bits = int(t[1:])
        ints[t] = sorted(set(v & ((1 << bits) - 1) for v in ints[t] + [random.getrandbits(bits) for _ in range(30)]))

    for mode in MODES:
        m.add(f"cvt.{mode}.f32.f64", ["f64"], ["f32"], f"cvt.{mode}.f32.f64 %o0, %i0;", [(v,) for v in e64 + r64 + rand_f("f64", 40, -150, -120)],
              lambda a, mode=mode: R.round_to(R.decode(a, "f64"), "f32", mode))
        for it in ("s32", "u32", "s64", "u64"):
            m.add(f"cvt.{mode}.f32.{it}", [it], ["f32"], f"cvt.{mode}.f32.{it} %o0, %i0;", [(v,) for v in ints[it]],
                  lambda a, it=it, mode=mode: R.round_to(R.num(ival(a, it)), "f32", mode))
            if it in ("s64", "u64"):
                m.add(f"cvt.{mode}.f64.{it}", [it], ["f64"], f"cvt.{mode}.f64.{it} %o0, %i0;", [(v,) for v in ints[it]],
                      lambda a, it=it, mode=mode: R.round_to(R.num(ival(a, it)), "f64", mode))
        for dt in ("s32", "u32", "s64", "u64"):
            m.add(f"cvt.{mode}i.{dt}.f32", ["f32"], [dt], f"cvt.{mode}i.{dt}.f32 %o0, %i0;",
                  [(v,) for v in e32 + r32 + [0x3f000000, 0xbf000000, 0x3fc00000, 0x40200000, 0xbfc00000, 0x4f000000, 0x5f800000]],
                  f2i("f32", dt, mode))
        m.add(f"cvt.{mode}i.s64.f64", ["f64"], ["s64"], f"cvt.{mode}i.s64.f64 %o0, %i0;", [(v,) for v in e64 + r64 + [0x3fe0000000000000, 0x43e0000000000000]],
              f2i("f64", "s64", mode))
        m.add(f"cvt.{mode}i.f32.f32", ["f32"], ["f32"], f"cvt.{mode}i.f32.f32 %o0, %i0;", [(v,) for v in e32 + r32 + [0x3f000000, 0xbf000000, 0x3fc00000, 0xbec00000]],
              lambda a, mode=mode: R.encode_exact(integral_f(R.decode(a, "f32"), mode), "f32"))
        m.add(f"cvt.{mode}i.f64.f64", ["f64"], ["f64"], f"cvt.{mode}i.f64.f64 %o0, %i0;", [(v,) for v in e64 + r64 + [0x3fe0000000000000, 0xc004000000000000]],
              lambda a, mode=mode: R.encode_exact(integral_f(R.decode(a, "f64"), mode), "f64"))
        # narrow float formats
        m.add(f"cvt.{mode}.f16.f32", ["f32"], ["b16"], f"cvt.{mode}.f16.f32 %o0, %i0;", [(v,) for v in e32 + rand_f("f32", 80, -27, 16) + [0x477ff000, 0x477fefff, 0x33000000, 0x33400000]],
              lambda a, mode=mode: R.round_to(R.decode(a, "f32"), "f16", mode))
        m.add(f"cvt.{mode}.bf16.f32", ["f32"], ["b16"], f"cvt.{mode}.bf16.f32 %o0, %i0;", [(v,) for v in e32 + r32 + rand_f("f32", 30, -133, -120)],
              lambda a, mode=mode: R.round_to(R.decode(a, "f32"), "bf16", mode))
    for mode in (R.RN, R.RZ):
        m.add(f"cvt.{mode}.f16.f64", ["f64"], ["b16"], f"cvt.{mode}.f16.f64 %o0, %i0;", [(v,) for v in e64 + rand_f("f64", 60, -27, 16)],
              lambda a, mode=mode: R.round_to(R.decode(a, "f64"), "f16", mode))
    m.add("cvt.rn.bf16.f64", ["f64"], ["b16"], "cvt.rn.bf16.f64 %o0, %i0;", [(v,) for v in e64 + rand_f("f64", 60, -140, 140)],
          lambda a: R.round_to(R.decode(a, "f64"), "bf16", R.RN))
    m.add("cvt.f64.f32", ["f32"], ["f64"], "cvt.f64.f32 %o0, %i0;", [(v,) for v in e32 + r32],
          lambda a: R.encode_exact(R.decode(a, "f32"), "f64"))
    m.add("cvt.ftz.f64.f32", ["f32"], ["f64"], "cvt.ftz.f64.f32 %o0, %i0;", [(v,) for v in e32],
          lambda a: R.encode_exact(R.flush(R.decode(a, "f32"), "f32"), "f64"))
    m.add("cvt.ftz.f32.f32", ["f32"], ["f32"], "cvt.ftz.f32.f32 %o0, %i0;", [(v,) for v in e32],
          lambda a: R.flush_bits(a, "f32"))
    m.add("cvt.sat.f32.f32", ["f32"], ["f32"], "cvt.sat.f32.f32 %o0, %i0;", [(v,) for v in e32 + r32[:10]],
          lambda a: R.encode_exact(R.saturate(R.decode(a, "f32")), "f32"))
    m.add("cvt.rn.sat.f32.s32", ["s32"], ["f32"], "cvt.rn.sat.f32.s32 %o0, %i0;", [(v,) for v in ints["s32"]],
          lambda a: R.encode_exact(R.saturate(R.num(signed(a, 32))), "f32"))
    for ft, fmt in (("f16", "f16"), ("bf16", "bf16")):
        edge = F16_EDGE if fmt == "f16" else BF16_EDGE
        vals = [(v,) for v in edge + rand_f(fmt, 40, -14, 15)]
        m.add(f"cvt.f32.{ft}", ["b16"], ["f32"], f"cvt.f32.{ft} %o0, %i0;", vals, lambda a, fmt=fmt: R.encode_exact(R.decode(a, fmt), "f32"))
        m.add(f"cvt.f64.{ft}", ["b16"], ["f64"], f"cvt.f64.{ft} %o0, %i0;", vals, lambda a, fmt=fmt: R.encode_exact(R.decode(a, fmt), "f64"))
        m.add(f"cvt.rni.s32.{ft}", ["b16"], ["s32"], f"cvt.rni.s32.{ft} %o0, %i0;", vals, f2i(fmt, "s32", R.RN))
        m.add(f"cvt.rzi.u16.{ft}", ["b16"], ["u16"], f"cvt.rzi.u16.{ft} %o0, %i0;", vals, f2i(fmt, "u16", R.RZ))
        m.add(f"cvt.rn.{ft}.s32", ["s32"], ["b16"], f"cvt.rn.{ft}.s32 %o0, %i0;", [(v,) for v in ints["s32"]],
              lambda a, fmt=fmt: R.round_to(R.num(signed(a, 32)), fmt, R.RN))
        m.add(f"cvt.rz.{ft}.u64", ["u64"], ["b16"], f"cvt.rz.{ft}.u64 %o0, %i0;", [(v,) for v in ints["u64"]],
              lambda a, fmt=fmt: R.round_to(R.num(a), fmt, R.RZ))
        m.add(f"cvt.rni.{ft}.{ft}", ["b16"], ["b16"], f"cvt.rni.{ft}.{ft} %o0, %i0;", vals,
              lambda a, fmt=fmt: R.encode_exact(integral_f(R.decode(a, fmt), R.RN), fmt))
    m.add("cvt.rn.bf16.f16", ["b16"], ["b16"], "cvt.rn.bf16.f16 %o0, %i0;", [(v,) for v in F16_EDGE + rand_f("f16", 40, -14, 15)],
          lambda a: R.round_to(R.decode(a, "f16"), "bf16", R.RN))
    m.add("cvt.rn.f16.bf16", ["b16"], ["b16"], "cvt.rn.f16.bf16 %o0, %i0;", [(v,) for v in BF16_EDGE + rand_f("bf16", 40, -26, 17)],
          lambda a: R.round_to(R.decode(a, "bf16"), "f16", R.RN))
    sat16 = [(v,) for v in e32 + [0x477ff000, 0x47800000, 0xc7800000, 0x477fefff]]
    m.add("cvt.rn.satfinite.f16.f32", ["f32"], ["b16"], "cvt.rn.satfinite.f16.f32 %o0, %i0;", sat16,
          lambda a: R.round_to(R.decode(a, "f32"), "f16", R.RN, satfinite=True))
    m.add("cvt.rn.relu.f16.f32", ["f32"], ["b16"], "cvt.rn.relu.f16.f32 %o0, %i0;", sat16,
          lambda a: R.round_to(R.decode(a, "f32"), "f16", R.RN, relu=True))
    m.add("cvt.rz.relu.bf16.f32", ["f32"], ["b16"], "cvt.rz.relu.bf16.f32 %o0, %i0;", [(v,) for v in e32 + r32[:20]],
          lambda a: R.round_to(R.decode(a, "f32"), "bf16", R.RZ, relu=True))
    # packed pairs: d = {cvt(a) in the upper half, cvt(b) in the lower half}
    f32pairs = list(zip(e32 + r32[:40], (e32 + r32[:40])[::-1]))
    for name, fmt, mode, extra in (("cvt.rn.f16x2.f32", "f16", R.RN, {}), ("cvt.rz.bf16x2.f32", "bf16", R.RZ, {}),
                                   ("cvt.rn.relu.satfinite.f16x2.f32", "f16", R.RN, {"relu": True, "satfinite": True}),
                                   ("cvt.rn.bf16x2.f32", "bf16", R.RN, {})):
        m.add(name, ["f32", "f32"], ["b32"], f"{name} %o0, %i0, %i1;", f32pairs,
              lambda a, b, fmt=fmt, mode=mode, extra=extra: R.round_to(R.decode(a, "f32"), fmt, mode, **extra) << 16 |
              R.round_to(R.decode(b, "f32"), fmt, mode, **extra))
    tf = [(v,) for v in e32 + r32 + [0x3f801000, 0x3f803000, 0x3f800fff, 0x7f7ff000]]
    m.add("cvt.rna.tf32.f32", ["f32"], ["b32"], "cvt.rna.tf32.f32 %o0, %i0;", tf,
          lambda a: R.round_to(R.decode(a, "f32"), "tf32", R.RNA) << 13)
    m.add("cvt.rna.satfinite.tf32.f32", ["f32"], ["b32"], "cvt.rna.satfinite.tf32.f32 %o0, %i0;", tf,
          lambda a: R.round_to(R.decode(a, "f32"), "tf32", R.RNA, satfinite=True) << 13)
    fp8_in = e32 + rand_f("f32", 60, -12, 10) + [0x43e00000, 0x43e80000, 0x43f00000, 0x47600000, 0x47700000, 0x3a800000, 0x3a000000, 0x37800000]
    fp8_pairs = list(zip(fp8_in, fp8_in[::-1]))
    for f8 in ("e4m3", "e5m2"):
        for relu in ("", ".relu"):
            name = f"cvt.rn.satfinite{relu}.{f8}x2.f32"
            m.add(name, ["f32", "f32"], ["b16"], f"{name} %o0, %i0, %i1;", fp8_pairs,
                  lambda a, b, f8=f8, relu=relu: R.round_to(R.decode(a, "f32"), f8, R.RN, satfinite=True, relu=bool(relu)) << 8 |
                  R.round_to(R.decode(b, "f32"), f8, R.RN, satfinite=True, relu=bool(relu)))
        h16 = [(a | b << 16,) for a, b in zip(F16_EDGE + rand_f("f16", 30, -10, 10), (F16_EDGE + rand_f("f16", 30, -10, 10))[::-1])]
        m.add(f"cvt.rn.satfinite.{f8}x2.f16x2", ["b32"], ["b16"], f"cvt.rn.satfinite.{f8}x2.f16x2 %o0, %i0;", h16,
              lambda w, f8=f8: R.round_to(R.decode(w & 0xffff, "f16"), f8, R.RN, satfinite=True) |
              R.round_to(R.decode(w >> 16, "f16"), f8, R.RN, satfinite=True) << 8)
        for relu in ("", ".relu"):
            m.add(f"cvt.rn{relu}.f16x2.{f8}x2", ["b16"], ["b32"], f"cvt.rn{relu}.f16x2.{f8}x2 %o0, %i0;",
                  [(v,) for v in range(0, 0x10000, 97)] + [(0x7f7e,), (0xfffe,), (0x7c7b,), (0x0180,)],
                  lambda w, f8=f8, relu=relu: R.round_to(R.decode(w & 0xff, f8), "f16", R.RN, relu=bool(relu)) |
                  R.round_to(R.decode(w >> 8, f8), "f16", R.RN, relu=bool(relu)) << 16)
    # 8-bit destinations held in 16-bit registers
    INT_RANGE["u8"] = (0, 255)
    m.add("cvt.rzi.u8.f32", ["f32"], ["u16"], "cvt.rzi.u8.f32 %o0, %i0;",
          [(v,) for v in e32 + [0x437f0000, 0x43800000, 0x3f7fffff, 0xbf800000, 0x42fe0000]], f2i("f32", "u8", R.RZ))
    m.add("cvt.rni.u8.f16", ["b16"], ["u16"], "cvt.rni.u8.f16 %o0, %i0;", [(v,) for v in F16_EDGE + [0x5bf8, 0x5c00, 0x5bfc]],
          f2i("f16", "u8", R.RN))
    m.add("cvt.sat.u8.s32", ["s32"], ["u16"], "cvt.sat.u8.s32 %o0, %i0;", [(v,) for v in ints["s32"]],
          lambda a: max(0, min(255, signed(a, 32))))
    # integer to integer
    for dt, st, sat in (("s64", "s32", False), ("u64", "u32", False), ("s32", "s16", False), ("u32", "u16", False),
                        ("u16", "u32", False), ("s16", "s64", False), ("u32", "s64", False), ("s16", "s32", True),
                        ("u16", "s32", True), ("u32", "s32", True), ("s32", "u32", True), ("s32", "s64", True),
                        ("u32", "s64", True), ("u64", "s64", True), ("s64", "u64", True), ("u16", "u64", True)):
        lo, hi = INT_RANGE[dt]
        dbits = int(dt[1:])
        name = f"cvt{'.sat' if sat else ''}.{dt}.{st}"
        m.add(name, [st], [dt], f"{name} %o0, %i0;", [(v,) for v in ints[st]],
              lambda a, st=st, lo=lo, hi=hi, sat=sat, dbits=dbits: max(lo, min(hi, ival(a, st))) if sat else ival(a, st))


def integral_f(x, mode):
    if x.nan or x.inf or x.zero:
        return x
    v = round_integral(x.value, mode)
    return R.zero(x.sign) if v == 0 else R.num(v)
