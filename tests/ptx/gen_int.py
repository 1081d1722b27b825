"""Integer, logic, bit-manipulation, comparison and selection kernels of tests/ptx."""
import random

from suite import BITS, mask, signed


def edge(bits):
    m = (1 << bits) - 1
    top = 1 << (bits - 1)
    vals = [0, 1, 2, 3, 7, m, m - 1, top, top - 1, top + 1, 0x5555555555555555 & m, 0xAAAAAAAAAAAAAAAA & m,
            0x12345678 & m, 0x89ABCDEF & m]
    return sorted(set(vals))


def rand(bits, n):
    return [random.getrandbits(bits) for _ in range(n)]


def pairs(bits, nrand=24, bbits=None):
    bbits = bbits or bits
    e = edge(bits)
    eb = edge(bbits)
    out = [(a, b) for a in e for b in eb]
    out += list(zip(rand(bits, nrand), rand(bbits, nrand)))
    return out


def triples(bits, n=60):
    e = edge(bits)
    out = [(random.choice(e), random.choice(e), random.choice(e)) for _ in range(n // 2)]
    out += list(zip(rand(bits, n // 2), rand(bits, n // 2), rand(bits, n // 2)))
    return out


def sv(v, t):
    """The value of raw bits v as the type t (signed types sign-extended)."""
    return signed(v, BITS[t]) if t[0] == "s" else v & mask(t)


def generate(m):
    int_types = ["u16", "s16", "u32", "s32", "u64", "s64"]

    # ---- add / sub (wrap), .sat
    for op in ("add", "sub"):
        for t in int_types:
            f = (lambda a, b: a + b) if op == "add" else (lambda a, b: a - b)
            m.add(f"{op}.{t}", [t, t], [t], f"{op}.{t} %o0, %i0, %i1;", pairs(BITS[t]), f)
        lo, hi = -(1 << 31), (1 << 31) - 1
        f = (lambda a, b: a + b) if op == "add" else (lambda a, b: a - b)
        m.add(f"{op}.sat.s32", ["s32", "s32"], ["s32"], f"{op}.sat.s32 %o0, %i0, %i1;", pairs(32),
              lambda a, b, f=f: max(lo, min(hi, f(signed(a, 32), signed(b, 32)))))

    # ---- mul / mad .lo .hi .wide
    for t in int_types:
        bits = BITS[t]
        m.add(f"mul.lo.{t}", [t, t], [t], f"mul.lo.{t} %o0, %i0, %i1;", pairs(bits), lambda a, b: a * b)
        m.add(f"mul.hi.{t}", [t, t], [t], f"mul.hi.{t} %o0, %i0, %i1;", pairs(bits),
              lambda a, b, t=t, bits=bits: (sv(a, t) * sv(b, t)) >> bits)
        m.add(f"mad.lo.{t}", [t, t, t], [t], f"mad.lo.{t} %o0, %i0, %i1, %i2;", triples(bits),
              lambda a, b, c: a * b + c)
        m.add(f"mad.hi.{t}", [t, t, t], [t], f"mad.hi.{t} %o0, %i0, %i1, %i2;", triples(bits),
              lambda a, b, c, t=t, bits=bits: ((sv(a, t) * sv(b, t)) >> bits) + c)
        if bits <= 32:
            wt = t[0] + str(bits * 2)
            m.add(f"mul.wide.{t}", [t, t], [wt], f"mul.wide.{t} %o0, %i0, %i1;", pairs(bits),
                  lambda a, b, t=t: sv(a, t) * sv(b, t))
            m.add(f"mad.wide.{t}", [t, t, wt], [wt], f"mad.wide.{t} %o0, %i0, %i1, %i2;",
                  [(a, b, c) for (a, b), c in zip(pairs(bits), rand(bits * 2, 500))],
                  lambda a, b, c, t=t: sv(a, t) * sv(b, t) + c)
    m.add("mad.hi.sat.s32", ["s32", "s32", "s32"], ["s32"], "mad.hi.sat.s32 %o0, %i0, %i1, %i2;", triples(32, 120),
          lambda a, b, c: max(-(1 << 31), min((1 << 31) - 1, ((signed(a, 32) * signed(b, 32)) >> 32) + signed(c, 32))))

    # ---- carry chains: 64-bit and 96-bit arithmetic from 32-bit pieces
    m.add("add.cc.addc.u32", ["u32", "u32", "u32", "u32"], ["u32", "u32"],
          "add.cc.u32 %o0, %i0, %i2;\naddc.u32 %o1, %i1, %i3;",
          [(a & 0xffffffff, a >> 32, b & 0xffffffff, b >> 32) for a, b in pairs(64)],
          lambda a0, a1, b0, b1: ((a0 + b0), (a1 + b1 + ((a0 + b0) >> 32))))
    m.add("sub.cc.subc.u32", ["u32", "u32", "u32", "u32"], ["u32", "u32"],
          "sub.cc.u32 %o0, %i0, %i2;\nsubc.u32 %o1, %i1, %i3;",
          [(a & 0xffffffff, a >> 32, b & 0xffffffff, b >> 32) for a, b in pairs(64)],
          lambda a0, a1, b0, b1: ((a0 - b0), (a1 - b1 - (1 if a0 < b0 else 0))))

    def add96(a0, a1, a2, b0, b1, b2):
        s = (a0 | a1 << 32 | a2 << 64) + (b0 | b1 << 32 | b2 << 64)
        return (s, s >> 32, s >> 64)

    six = [tuple(random.choice([0, 1, 0xffffffff, 0x80000000, random.getrandbits(32)]) for _ in range(6))
           for _ in range(80)]
    m.add("addc.cc.chain.u32", ["u32"] * 6, ["u32"] * 3,
          "add.cc.u32 %o0, %i0, %i3;\naddc.cc.u32 %o1, %i1, %i4;\naddc.u32 %o2, %i2, %i5;", six, add96)

    def sub96(a0, a1, a2, b0, b1, b2):
        s = (a0 | a1 << 32 | a2 << 64) - (b0 | b1 << 32 | b2 << 64)
        return (s, s >> 32, s >> 64)

    m.add("subc.cc.chain.u32", ["u32"] * 6, ["u32"] * 3,
          "sub.cc.u32 %o0, %i0, %i3;\nsubc.cc.u32 %o1, %i1, %i4;\nsubc.u32 %o2, %i2, %i5;", six, sub96)
    m.add("add.cc.addc.u64", ["u64"] * 4, ["u64", "u64"],
          "add.cc.u64 %o0, %i0, %i2;\naddc.u64 %o1, %i1, %i3;",
          [(a, c, b, d) for (a, b), (c, d) in zip(pairs(64), pairs(64)[::-1])],
          lambda a0, a1, b0, b1: (a0 + b0, a1 + b1 + ((a0 + b0) >> 64)))

    # CC.CF holds a carry in both directions (sub.cc sets it when nothing is borrowed and
    # subc subtracts !CF), which shows when chains mix or CF is read with addc.
    m.add("sub.cc.flag.u32", ["u32", "u32"], ["u32", "u32"], "sub.cc.u32 %o0, %i0, %i1;\naddc.u32 %o1, 0, 0;",
          pairs(32, 8), lambda a, b: (a - b, int(a >= b)))
    m.add("add.cc.subc.u32", ["u32"] * 4, ["u32", "u32"], "add.cc.u32 %o0, %i0, %i1;\nsubc.u32 %o1, %i2, %i3;",
          [(a, b, c, d) for (a, b), (c, d) in zip(pairs(32, 8), pairs(32, 8)[::-1])],
          lambda a, b, c, d: (a + b, c - d - (1 - ((a + b) >> 32))))
    m.add("subc.cc.flag.u64", ["u64"] * 4, ["u64", "u64", "u32"],
          "sub.cc.u64 %o0, %i0, %i2;\nsubc.cc.u64 %o1, %i1, %i3;\naddc.u32 %o2, 0, 0;",
          [(a, c, b, d) for (a, b), (c, d) in zip(pairs(64, 4), pairs(64, 4)[::-1])],
          lambda a0, a1, b0, b1: ((a0 - b0), (a1 - b1 - (1 if a0 < b0 else 0)),
                                  int((a1 << 64 | a0) >= (b1 << 64 | b0))))

    # 32x32 -> 64 multiply-accumulate with mad.lo.cc / madc.hi: {o1,o0} = a*b + {c1,c0}
    def mac(a, b, c0, c1):
        s = a * b + (c0 | c1 << 32)
        return (s, s >> 32)

    m.add("mad.cc.madc.u32", ["u32"] * 4, ["u32", "u32"],
          "mad.lo.cc.u32 %o0, %i0, %i1, %i2;\nmadc.hi.u32 %o1, %i0, %i1, %i3;",
          [(a, b, c, d) for (a, b), (c, d) in zip(pairs(32), pairs(32)[::-1])], mac)

    # ---- mul24 / mad24
    for t in ("u32", "s32"):
        def p24(a, b, t=t):
            a, b = a & 0xffffff, b & 0xffffff
            if t == "s32":
                a, b = signed(a, 24), signed(b, 24)
            return a * b

        m.add(f"mul24.lo.{t}", [t, t], [t], f"mul24.lo.{t} %o0, %i0, %i1;", pairs(32), lambda a, b, p=p24: p(a, b))
        m.add(f"mul24.hi.{t}", [t, t], [t], f"mul24.hi.{t} %o0, %i0, %i1;", pairs(32),
              lambda a, b, p=p24: p(a, b) >> 16)
        m.add(f"mad24.lo.{t}", [t, t, t], [t], f"mad24.lo.{t} %o0, %i0, %i1, %i2;", triples(32),
              lambda a, b, c, p=p24: p(a, b) + c)
        m.add(f"mad24.hi.{t}", [t, t, t], [t], f"mad24.hi.{t} %o0, %i0, %i1, %i2;", triples(32),
              lambda a, b, c, p=p24: (p(a, b) >> 16) + c)

    # ---- sad, div, rem, min, max, abs, neg
    for t in int_types:
        bits = BITS[t]
        m.add(f"sad.{t}", [t, t, t], [t], f"sad.{t} %o0, %i0, %i1, %i2;", triples(bits),
              lambda a, b, c, t=t: c + abs(sv(a, t) - sv(b, t)))

        def divide(a, b, t=t, bits=bits):
            a, b = sv(a, t), sv(b, t)
            if b == 0:
                return -1
            q = abs(a) // abs(b)
            return q if (a < 0) == (b < 0) else -q

        def remainder(a, b, t=t):
            if sv(b, t) == 0:
                return a
            a_, b_ = sv(a, t), sv(b, t)
            r = abs(a_) % abs(b_)
            return -r if a_ < 0 else r

        m.add(f"div.{t}", [t, t], [t], f"div.{t} %o0, %i0, %i1;", pairs(bits), divide)
        m.add(f"rem.{t}", [t, t], [t], f"rem.{t} %o0, %i0, %i1;", pairs(bits), remainder)
        m.add(f"min.{t}", [t, t], [t], f"min.{t} %o0, %i0, %i1;", pairs(bits), lambda a, b, t=t: min(sv(a, t), sv(b, t)))
        m.add(f"max.{t}", [t, t], [t], f"max.{t} %o0, %i0, %i1;", pairs(bits), lambda a, b, t=t: max(sv(a, t), sv(b, t)))
        if t[0] == "s":
            m.add(f"abs.{t}", [t], [t], f"abs.{t} %o0, %i0;", [(v,) for v in edge(bits) + rand(bits, 10)],
                  lambda a, t=t: abs(sv(a, t)))
            m.add(f"neg.{t}", [t], [t], f"neg.{t} %o0, %i0;", [(v,) for v in edge(bits) + rand(bits, 10)],
                  lambda a, t=t: -sv(a, t))
    m.add("min.relu.s32", ["s32", "s32"], ["s32"], "min.relu.s32 %o0, %i0, %i1;", pairs(32),
          lambda a, b: max(0, min(signed(a, 32), signed(b, 32))))
    m.add("max.relu.s32", ["s32", "s32"], ["s32"], "max.relu.s32 %o0, %i0, %i1;", pairs(32),
          lambda a, b: max(0, max(signed(a, 32), signed(b, 32))))

    def lanes(f, sgn, relu=False):
        def g(a, b):
            r = 0
            for i in range(2):
                x, y = (a >> 16 * i) & 0xffff, (b >> 16 * i) & 0xffff
                if sgn:
                    x, y = signed(x, 16), signed(y, 16)
                v = f(x, y)
                if relu:
                    v = max(v, 0)
                r |= (v & 0xffff) << 16 * i
            return r
        return g

    for op, f in (("min", min), ("max", max)):
        m.add(f"{op}.u16x2", ["b32", "b32"], ["b32"], f"{op}.u16x2 %o0, %i0, %i1;", pairs(32), lanes(f, False))
        m.add(f"{op}.s16x2", ["b32", "b32"], ["b32"], f"{op}.s16x2 %o0, %i0, %i1;", pairs(32), lanes(f, True))
        m.add(f"{op}.relu.s16x2", ["b32", "b32"], ["b32"], f"{op}.relu.s16x2 %o0, %i0, %i1;", pairs(32),
              lanes(f, True, True))

    # ---- bit counts and reversal
    for bits in (32, 64):
        t = f"b{bits}"
        vals = [(v,) for v in edge(bits) + rand(bits, 20) + [1 << k for k in range(0, bits, 5)]]
        m.add(f"popc.{t}", [t], ["u32"], f"popc.{t} %o0, %i0;", vals, lambda a: bin(a).count("1"))
        m.add(f"clz.{t}", [t], ["u32"], f"clz.{t} %o0, %i0;", vals, lambda a, bits=bits: bits - a.bit_length())
        m.add(f"brev.{t}", [t], [t], f"brev.{t} %o0, %i0;", vals,
              lambda a, bits=bits: int(format(a, "0%db" % bits)[::-1], 2))
        for sg in ("u", "s"):
            ty = f"{sg}{bits}"

            def bfind(a, ty=ty, bits=bits, shiftamt=False):
                if ty[0] == "s" and a >> (bits - 1):
                    a = ~a & ((1 << bits) - 1)
                if a == 0:
                    return 0xffffffff
                pos = a.bit_length() - 1
                return bits - 1 - pos if shiftamt else pos

            m.add(f"bfind.{ty}", [ty], ["u32"], f"bfind.{ty} %o0, %i0;", vals, bfind)
            m.add(f"bfind.shiftamt.{ty}", [ty], ["u32"], f"bfind.shiftamt.{ty} %o0, %i0;", vals,
                  lambda a, f=bfind: f(a, shiftamt=True))

        # bfe / bfi: positions and lengths past the width, 0..255 range
        def bfe(a, pos, ln, bits=bits, sgn=False):
            pos, ln = pos & 0xff, ln & 0xff
            msb = bits - 1
            sbit = 0 if (not sgn or ln == 0) else (a >> min(pos + ln - 1, msb)) & 1
            d = 0
            for i in range(bits):
                bit = (a >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
                d |= bit << i
            return d

        pl = [0, 1, 4, 8, 16, bits - 1, bits, bits + 1, 200, 255, 256 + 3]
        bfe_cases = [(random.getrandbits(bits) | (random.choice([0, 1]) << (bits - 1)), p, ln) for p in pl for ln in pl]
        for sg in ("u", "s"):
            ty = f"{sg}{bits}"
            m.add(f"bfe.{ty}", [ty, "u32", "u32"], [ty], f"bfe.{ty} %o0, %i0, %i1, %i2;", bfe_cases,
                  lambda a, p, ln, f=bfe, sg=sg: f(a, p, ln, sgn=sg == "s"))

        def bfi(a, b, pos, ln, bits=bits):
            pos, ln = pos & 0xff, ln & 0xff
            f = b
            i = 0
            while i < ln and pos + i <= bits - 1:
                f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
                i += 1
            return f

        m.add(f"bfi.{t}", [t, t, "u32", "u32"], [t], f"bfi.{t} %o0, %i0, %i1, %i2, %i3;",
              [(random.getrandbits(bits), random.getrandbits(bits), p, ln) for p in pl for ln in pl], bfi)

    # ---- fns
    def fns(mask_, base, offset):
        offset = signed(offset, 32)
        if offset == 0:
            return base if (mask_ >> base) & 1 else 0xffffffff
        pos, count, inc = base, abs(offset) - 1, (1 if offset > 0 else -1)
        while 0 <= pos < 32:
            if (mask_ >> pos) & 1:
                if count == 0:
                    return pos
                count -= 1
            pos += inc
        return 0xffffffff

    fns_cases = [(mk, base, off) for mk in (0xaaaaaaaa, 0xffffffff, 0, 0x80000001, 0x12345678)
                 for base in (0, 2, 3, 15, 31) for off in (0, 1, 2, 3, -1, -2, -3, 17, -17, 32, -32, 0x7fffffff)]
    m.add("fns.b32", ["b32", "u32", "s32"], ["b32"], "fns.b32 %o0, %i0, %i1, %i2;", fns_cases, fns)

    # ---- lop3 (every immLut through the same truth-table reference)
    def lop3(a, b, c, lut):
        r = 0
        for bit in range(32):
            idx = ((a >> bit) & 1) << 2 | ((b >> bit) & 1) << 1 | ((c >> bit) & 1)
            r |= ((lut >> idx) & 1) << bit
        return r

    for lut in (0x00, 0xff, 0xf0, 0xcc, 0xaa, 0x96, 0xe8, 0x80, 0xfe, 0x1e, 0x6a, 0x3c, 0xb4):
        m.add(f"lop3.b32.{lut:#04x}", ["b32"] * 3, ["b32"], f"lop3.b32 %o0, %i0, %i1, %i2, {lut:#04x};", triples(32, 40),
              lambda a, b, c, lut=lut: lop3(a, b, c, lut))
    m.add("lop3.or.b32", ["b32", "b32", "b32", "pred"], ["b32", "pred"], "lop3.or.b32 %o0|%o1, %i0, %i1, %i2, 0x80, %i3;",
          [(a, b, c, p) for (a, b, c) in triples(32, 20) + [(0, 0, 0), (1, 1, 1)] for p in (0, 1)],
          lambda a, b, c, p: (a & b & c, int((a & b & c) != 0 or p)))

    # ---- shifts
    amounts = [0, 1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 200, 0x10000, 0xffffffff]
    for bits in (16, 32, 64):
        vals = [(v, n) for v in edge(bits)[::2] + rand(bits, 3) for n in amounts]
        bt, ut, st = f"b{bits}", f"u{bits}", f"s{bits}"
        m.add(f"shl.{bt}", [bt, "u32"], [bt], f"shl.{bt} %o0, %i0, %i1;", vals,
              lambda a, n, bits=bits: 0 if n >= bits else a << n)
        m.add(f"shr.{ut}", [ut, "u32"], [ut], f"shr.{ut} %o0, %i0, %i1;", vals,
              lambda a, n, bits=bits: 0 if n >= bits else a >> n)
        m.add(f"shr.{bt}", [bt, "u32"], [bt], f"shr.{bt} %o0, %i0, %i1;", vals,
              lambda a, n, bits=bits: 0 if n >= bits else a >> n)
        m.add(f"shr.{st}", [st, "u32"], [st], f"shr.{st} %o0, %i0, %i1;", vals,
              lambda a, n, bits=bits: signed(a, bits) >> min(n, bits))

    def shf(a, b, c, left, clamp):
        n = min(c, 32) if clamp else c & 31
        pair = b << 32 | a
        return (pair << n) >> 32 if left else pair >> n

    shf_cases = [(a, b, n) for a, b in pairs(32, 4)[::7] for n in (0, 1, 8, 31, 32, 33, 63, 64, 100)]
    for d in ("l", "r"):
        for mode in ("wrap", "clamp"):
            m.add(f"shf.{d}.{mode}.b32", ["b32", "b32", "u32"], ["b32"], f"shf.{d}.{mode}.b32 %o0, %i0, %i1, %i2;",
                  shf_cases, lambda a, b, c, d=d, mode=mode: shf(a, b, c, d == "l", mode == "clamp"))

    # ---- prmt, every mode
    def prmt(a, b, c, mode):
        src = b << 32 | a
        byte = lambda i: (src >> (8 * i)) & 0xff  # noqa: E731
        tables = {
            "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
            "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
            "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
            "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
            "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
            "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
        }
        r = 0
        for i in range(4):
            if mode is None:
                ctl = (c >> (4 * i)) & 0xf
                v = byte(ctl & 7)
                if ctl & 8:
                    v = 0xff if v & 0x80 else 0
            else:
                v = byte(tables[mode][c & 3][i])
            r |= v << (8 * i)
        return r

    ab = [(0x03020100, 0x07060504), (0x80ff7f01, 0xfe8090a0), (0xdeadbeef, 0x12345678)]
    sels = [0x3210, 0x7654, 0x0123, 0x4567, 0x1111, 0x8888, 0xf0e1, 0xabcd, 0x9999, 0x7531, 0xffff0000, 0x1, 0x2, 0x3]
    for mode in (None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"):
        name = "prmt.b32" + ("" if mode is None else "." + mode)
        m.add(name, ["b32", "b32", "b32"], ["b32"], f"{name} %o0, %i0, %i1, %i2;",
              [(a, b, c) for a, b in ab for c in sels + list(range(4))], lambda a, b, c, mode=mode: prmt(a, b, c, mode))

    # ---- dp4a / dp2a
    def dp(a, b, c, at, bt, width, first):
        total = signed(c, 32) if (at == "s32" or bt == "s32") else c
        n = 4 if width == 8 else 2
        for i in range(n):
            x = (a >> (width * i)) & ((1 << width) - 1)
            y = (b >> (8 * (first + i))) & 0xff
            if at == "s32":
                x = signed(x, width)
            if bt == "s32":
                y = signed(y, 8)
            total += x * y
        return total

    for at in ("u32", "s32"):
        for bt in ("u32", "s32"):
            ct = "s32" if "s32" in (at, bt) else "u32"
            m.add(f"dp4a.{at}.{bt}", [at, bt, ct], [ct], f"dp4a.{at}.{bt} %o0, %i0, %i1, %i2;", triples(32, 60),
                  lambda a, b, c, at=at, bt=bt: dp(a, b, c, at, bt, 8, 0))
            for half in ("lo", "hi"):
                m.add(f"dp2a.{half}.{at}.{bt}", [at, bt, ct], [ct], f"dp2a.{half}.{at}.{bt} %o0, %i0, %i1, %i2;",
                      triples(32, 40), lambda a, b, c, at=at, bt=bt, half=half: dp(a, b, c, at, bt, 16, 2 if half == "hi" else 0))

    # ---- bmsk, szext
    def bmsk(a, b, clamp):
        a1, b1 = a & 31, b & 31
        mask0 = (0xffffffff << a1) & 0xffffffff
        s = a1 + b1
        mask1 = (0xffffffff << s) & 0xffffffff if s < 32 else 0
        over = s >= 32
        if clamp:
            if a >= 32:
                over = True
                mask0 = 0
            if b >= 32:
                over = True
        if over:
            mask1 = 0
        elif b1 == 0:
            mask1 = 0xffffffff
        return mask0 & ~mask1

    small = [0, 1, 2, 5, 16, 31, 32, 33, 40, 64, 0xffffffff]
    for mode in ("clamp", "wrap"):
        m.add(f"bmsk.{mode}.b32", ["b32", "b32"], ["b32"], f"bmsk.{mode}.b32 %o0, %i0, %i1;",
              [(a, b) for a in small for b in small], lambda a, b, mode=mode: bmsk(a, b, mode == "clamp"))

        for t in ("u32", "s32"):
            def szext(a, b, mode=mode, t=t):
                b1 = b & 31
                too_large = b >= 32 and mode == "clamp"
                msk = 0 if too_large else (0xffffffff << b1) & 0xffffffff
                sign_pos = (b1 - 1) & 31
                sbit = 0 if (b1 == 0 or too_large or t != "s32") else (a >> sign_pos) & 1
                return (a & ~msk) | (msk if sbit else 0)

            m.add(f"szext.{mode}.{t}", [t, "u32"], [t], f"szext.{mode}.{t} %o0, %i0, %i1;",
                  [(a, b) for a in (0, 0xffffffff, 0x80, 0x7f, 0x12345678, 0x87654321) for b in small], szext)

    # ---- SIMD video instructions (vop2/vop4): lanes from {b, a}, .sat per lane, merged
    # into c under the mask or (.add) accumulated into c
    def video(op, n, dt, at, bt, sat=False, add=False, asel=None, bsel=None, mask=None, cmp=None):
        w = 32 // n
        asel = asel or list(range(n))
        bsel = bsel or list(range(n, 2 * n))
        mask = list(range(n)) if mask is None else mask

        def ref(a, b, c):
            src = b << 32 | a
            out = c
            total = signed(c, 32) if "s32" in (dt,) else c
            for k in range(n):
                x = (src >> (w * asel[k])) & ((1 << w) - 1)
                y = (src >> (w * bsel[k])) & ((1 << w) - 1)
                if at == "s32":
                    x = signed(x, w)
                if bt == "s32":
                    y = signed(y, w)
                if op == "vadd":
                    t = x + y
                elif op == "vsub":
                    t = x - y
                elif op == "vavrg":
                    t = (x + y + 1) >> 1 if x + y >= 0 else (x + y) >> 1
                elif op == "vabsdiff":
                    t = abs(x - y)
                elif op == "vmin":
                    t = min(x, y)
                elif op == "vmax":
                    t = max(x, y)
                else:
                    t = int({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp])
                if sat:
                    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dt == "s32" else (0, (1 << w) - 1)
                    t = max(lo, min(hi, t))
                if k not in mask:
                    continue
                if add:
                    total += t
                else:
                    field = ((1 << w) - 1) << (k * w)
                    out = (out & ~field) | ((t << (k * w)) & field)
            return total if add else out
        return ref

    vcases = triples(32, 60) + [(0x80ff7f00, 0x7f0180ff, 0x12345678), (0xffffffff, 0x01010101, 0), (0x7fff8000, 0x80007fff, 5)]
    for op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax"):
        for n in (2, 4):
            for dt, at, bt, mod in (("u32", "u32", "u32", ""), ("s32", "s32", "s32", ".sat"), ("u32", "s32", "u32", ".sat"),
                                    ("s32", "u32", "s32", ".add")):
                name = f"{op}{n}.{dt}.{at}.{bt}{mod}"
                m.add(name, ["b32"] * 3, ["b32"], f"{name} %o0, %i0, %i1, %i2;", vcases,
                      video(op, n, dt, at, bt, sat=mod == ".sat", add=mod == ".add"))
    for n in (2, 4):
        for at, bt, cmp, mod in (("u32", "u32", "lt", ""), ("s32", "s32", "ge", ".add"), ("s32", "u32", "ne", ""),
                                 ("u32", "s32", "le", "")):
            name = f"vset{n}.{at}.{bt}.{cmp}{mod}"
            m.add(name, ["b32"] * 3, ["b32"], f"{name} %o0, %i0, %i1, %i2;", vcases,
                  video("vset", n, "u32", at, bt, add=mod == ".add", cmp=cmp))
    m.add("vadd4.selectors", ["b32"] * 3, ["b32"], "vadd4.u32.u32.u32 %o0.b20, %i0.b0123, %i1.b4567, %i2;", vcases,
          video("vadd", 4, "u32", "u32", "u32", asel=[3, 2, 1, 0], bsel=[7, 6, 5, 4], mask=[0, 2]))
    m.add("vmax4.selectors", ["b32"] * 3, ["b32"], "vmax4.s32.s32.s32 %o0.b3, %i0.b7654, %i1.b0000, %i2;", vcases,
          video("vmax", 4, "s32", "s32", "s32", asel=[4, 5, 6, 7], bsel=[0, 0, 0, 0], mask=[3]))
    m.add("vsub2.selectors", ["b32"] * 3, ["b32"], "vsub2.s32.s32.s32.sat %o0.h1, %i0.h01, %i1.h23, %i2;", vcases,
          video("vsub", 2, "s32", "s32", "s32", sat=True, asel=[1, 0], bsel=[3, 2], mask=[1]))
    m.add("vabsdiff2.selectors.add", ["b32"] * 3, ["b32"], "vabsdiff2.u32.u32.u32.add %o0.h0, %i0.h32, %i1.h10, %i2;", vcases,
          video("vabsdiff", 2, "u32", "u32", "u32", add=True, asel=[2, 3], bsel=[0, 1], mask=[0]))

    # ---- scalar video instructions: selected byte/half/word of each source, extended by its
    # type; .sat clamps to the destination (or the merged subword); then .add/.min/.max
    # with c, or a merge into c at the destination selector
    SEL = {None: (0, 32), "b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}

    def vscalar(op, dt, at, bt, sat=False, op2=None, asel=None, bsel=None, dsel=None, cmp=None):
        def part(v, t, sel):
            shift, width = SEL[sel]
            x = (v >> shift) & ((1 << width) - 1)
            return signed(x, width) if t == "s32" else x

        def ref(a, b, c=0):
            x, y = part(a, at, asel), part(b, bt, bsel)
            t = {"vadd": lambda: x + y, "vsub": lambda: x - y, "vabsdiff": lambda: abs(x - y),
                 "vmin": lambda: min(x, y), "vmax": lambda: max(x, y),
                 "vset": lambda: int({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
                                      "ge": x >= y}[cmp])}[op]()
            shift, width = SEL[dsel]
            if sat:
                lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if dt == "s32" else (0, (1 << width) - 1)
                t = max(lo, min(hi, t))
            if dsel is not None:
                field = ((1 << width) - 1) << shift
                return (c & ~field) | ((t << shift) & field)
            cv = signed(c, 32) if dt == "s32" else c
            if op2 == "add":
                return t + c
            if op2 == "min":
                return min(t, cv)
            if op2 == "max":
                return max(t, cv)
            return t
        return ref

    for op in ("vadd", "vsub", "vabsdiff", "vmin", "vmax"):
        for dt, at, bt, sat, asel, bsel in (("u32", "u32", "u32", False, None, None), ("s32", "s32", "s32", True, None, None),
                                            ("s32", "u32", "s32", True, "b1", "h1"), ("u32", "s32", "u32", True, "h0", "b3")):
            sels = ("." + asel if asel else "", "." + bsel if bsel else "")
            name = f"{op}.{dt}.{at}.{bt}{'.sat' if sat else ''}"
            tag = f"{name}{'.sel' if asel else ''}"
            m.add(tag, ["b32", "b32"], ["b32"], f"{name} %o0, %i0{sels[0]}, %i1{sels[1]};", pairs(32, 16),
                  vscalar(op, dt, at, bt, sat, asel=asel, bsel=bsel))
        for op2 in ("add", "min", "max"):
            name = f"{op}.s32.s32.s32.{op2}"
            m.add(name, ["b32"] * 3, ["b32"], f"{name} %o0, %i0, %i1, %i2;", triples(32, 80),
                  vscalar(op, "s32", "s32", "s32", op2=op2))
        name = f"{op}.u32.u32.u32.sat"
        m.add(f"{name}.merge", ["b32"] * 3, ["b32"], f"{name} %o0.b2, %i0.b0, %i1.b1, %i2;", triples(32, 80),
              vscalar(op, "u32", "u32", "u32", sat=True, asel="b0", bsel="b1", dsel="b2"))
    def vshift(left, dt, at, mode, sat=False, asel=None, bsel=None, op2=None, dsel=None):
        def ref(a, b, c=0):
            shift, width = SEL[asel]
            x = (a >> shift) & ((1 << width) - 1)
            if at == "s32":
                x = signed(x, width)
            bs, bw = SEL[bsel]
            n = (b >> bs) & ((1 << bw) - 1)
            n = min(n, 32) if mode == "clamp" else n & 31
            t = x << n if left else x >> n
            shift, width = SEL[dsel]
            if sat:
                lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if dt == "s32" else (0, (1 << width) - 1)
                t = max(lo, min(hi, t))
            if dsel is not None:
                field = ((1 << width) - 1) << shift
                return (c & ~field) | ((t << shift) & field)
            if op2 == "add":
                return t + c
            if op2 == "max":
                return max(t, signed(c, 32) if dt == "s32" else c)
            return t
        return ref

    shift_cases = [(a, n) for a in edge(32)[::2] + rand(32, 4) for n in (0, 1, 4, 16, 31, 32, 33, 40, 0x10001, 0xffffffff)]
    for op in ("vshl", "vshr"):
        for dt, at, mode, sat in (("u32", "u32", "clamp", False), ("s32", "s32", "wrap", False), ("s32", "s32", "clamp", True),
                                  ("u32", "s32", "clamp", True)):
            name = f"{op}.{dt}.{at}.u32{'.sat' if sat else ''}.{mode}"
            m.add(name, ["b32", "b32"], ["b32"], f"{name} %o0, %i0, %i1;", shift_cases, vshift(op == "vshl", dt, at, mode, sat))
        name = f"{op}.s32.s32.u32.clamp.add"
        m.add(name, ["b32"] * 3, ["b32"], f"{name} %o0, %i0.h1, %i1.b0, %i2;", [(a, n, 77) for a, n in shift_cases],
              vshift(op == "vshl", "s32", "s32", "clamp", asel="h1", bsel="b0", op2="add"))
        name = f"{op}.u32.u32.u32.sat.wrap"
        m.add(f"{name}.merge", ["b32"] * 3, ["b32"], f"{name} %o0.h0, %i0.b3, %i1, %i2;", [(a, n, 0x12345678) for a, n in shift_cases],
              vshift(op == "vshl", "u32", "u32", "wrap", sat=True, asel="b3", dsel="h0"))
    for cmp in ("eq", "lt", "ge"):
        m.add(f"vset.s32.u32.{cmp}", ["b32", "b32"], ["b32"], f"vset.s32.u32.{cmp} %o0, %i0.h1, %i1.h0;", pairs(32, 16),
              vscalar("vset", "u32", "s32", "u32", asel="h1", bsel="h0", cmp=cmp))
    m.add("vset.u32.u32.ne.add", ["b32"] * 3, ["b32"], "vset.u32.u32.ne.add %o0, %i0.b0, %i1.b0, %i2;", triples(32, 60),
          vscalar("vset", "u32", "u32", "u32", asel="b0", bsel="b0", cmp="ne", op2="add"))

    # ---- vmad: (selected a * selected b), negated when exactly one of them is, plus c
    # (negated, or plus one with .po), exact; then .shr7/.shr15 (arithmetic) and .sat to the
    # final type: signed when a type is signed or anything is negated
    def vmad(dt, at, bt, na=False, nb=False, nc=False, po=False, sat=False, shr=0, asel=None, bsel=None):
        def ref(a, b, c):
            def part(v, t, sel):
                shift, width = SEL[sel]
                x = (v >> shift) & ((1 << width) - 1)
                return signed(x, width) if t == "s32" else x
            t = part(a, at, asel) * part(b, bt, bsel)
            neg_product = na != nb
            signed_final = at == "s32" or bt == "s32" or neg_product or nc
            cv = signed(c, 32) if signed_final else c
            if neg_product:
                t = -t
            elif nc:
                cv = -cv
            t = t + cv + (1 if po else 0)
            t >>= shr
            if sat:
                lo, hi = (-(1 << 31), (1 << 31) - 1) if signed_final else (0, (1 << 32) - 1)
                t = max(lo, min(hi, t))
            return t
        return ref

    vmad_cases = triples(32, 60) + [(0xffffffff, 0xffffffff, 0xffffffff), (0x80000000, 0x80000000, 0x7fffffff),
                                    (0x7fffffff, 0x7fffffff, 0x80000000), (0x80000000, 0x7fffffff, 1)]
    for dt, at, bt, na, nb, nc, po, sat, shr, asel, bsel in (
            ("u32", "u32", "u32", False, False, False, False, False, 0, None, None),
            ("u32", "u32", "u32", False, False, False, False, True, 0, None, None),
            ("s32", "s32", "s32", False, False, False, False, True, 0, None, None),
            ("s32", "s32", "s32", True, False, False, False, True, 15, None, None),
            ("s32", "s32", "s32", False, False, True, False, False, 0, None, None),
            ("s32", "u32", "u32", True, False, False, False, True, 0, None, None),
            ("s32", "u32", "u32", False, False, True, False, True, 0, None, None),
            ("s32", "u32", "s32", False, False, False, False, True, 7, "h0", "h1"),
            ("u32", "u32", "u32", False, False, False, True, True, 7, "b3", "b3"),
            ("s32", "s32", "s32", True, True, False, False, True, 0, "b1", "b2")):
        mods = (".po" if po else "") + (".sat" if sat else "") + (f".shr{shr}" if shr else "")
        name = f"vmad.{dt}.{at}.{bt}{mods}"
        tag = name + ("" if not (na or nb or nc) else ".neg" + "a" * na + "b" * nb + "c" * nc) + (".sel" if asel else "")
        ops = (("-" if na else "") + "%i0" + ("." + asel if asel else ""),
               ("-" if nb else "") + "%i1" + ("." + bsel if bsel else ""),
               ("-" if nc else "") + "%i2")
        m.add(tag, ["b32"] * 3, ["b32"], f"{name} %o0, {ops[0]}, {ops[1]}, {ops[2]};", vmad_cases,
              vmad(dt, at, bt, na, nb, nc, po, sat, shr, asel, bsel))

    # ---- logic
    for bits in (16, 32, 64):
        t = f"b{bits}"
        for op, f in (("and", lambda a, b: a & b), ("or", lambda a, b: a | b), ("xor", lambda a, b: a ^ b)):
            m.add(f"{op}.{t}", [t, t], [t], f"{op}.{t} %o0, %i0, %i1;", pairs(bits, 4), f)
        m.add(f"not.{t}", [t], [t], f"not.{t} %o0, %i0;", [(v,) for v in edge(bits)], lambda a: ~a)
        m.add(f"cnot.{t}", [t], [t], f"cnot.{t} %o0, %i0;", [(v,) for v in edge(bits)], lambda a: int(a == 0))
    pp = [(a, b) for a in (0, 1) for b in (0, 1)]
    for op, f in (("and", lambda a, b: a & b), ("or", lambda a, b: a | b), ("xor", lambda a, b: a ^ b)):
        m.add(f"{op}.pred", ["pred", "pred"], ["pred"], f"{op}.pred %o0, %i0, %i1;", pp, f)
    m.add("not.pred", ["pred"], ["pred"], "not.pred %o0, %i0;", [(0,), (1,)], lambda a: 1 - a)

    # ---- setp / set / selp / slct on integers
    cmp_ref = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
               "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
               "lo": lambda a, b: a < b, "ls": lambda a, b: a <= b, "hi": lambda a, b: a > b, "hs": lambda a, b: a >= b}
    for t in ("s16", "u16", "s32", "u32", "s64", "u64"):
        for c in ("eq", "ne", "lt", "le", "gt", "ge"):
            if t in ("s16", "u16") and c in ("ne", "le", "ge"):
                continue
            m.add(f"setp.{c}.{t}", [t, t], ["pred"], f"setp.{c}.{t} %o0, %i0, %i1;", pairs(BITS[t], 8),
                  lambda a, b, c=c, t=t: int(cmp_ref[c](sv(a, t), sv(b, t))))
    for c in ("lo", "ls", "hi", "hs"):
        m.add(f"setp.{c}.u32", ["u32", "u32"], ["pred"], f"setp.{c}.u32 %o0, %i0, %i1;", pairs(32, 8),
              lambda a, b, c=c: int(cmp_ref[c](a, b)))
    three = [(a, b, p) for a, b in pairs(32, 4)[::5] for p in (0, 1)]
    for op, f in (("and", lambda x, p: x and p), ("or", lambda x, p: x or p), ("xor", lambda x, p: x != p)):
        m.add(f"setp.lt.{op}.s32", ["s32", "s32", "pred"], ["pred"], f"setp.lt.{op}.s32 %o0, %i0, %i1, %i2;", three,
              lambda a, b, p, f=f: int(bool(f(signed(a, 32) < signed(b, 32), bool(p)))))
    m.add("setp.lt.and.not.s32", ["s32", "s32", "pred"], ["pred"], "setp.lt.and.s32 %o0, %i0, %i1, !%i2;", three,
          lambda a, b, p: int(signed(a, 32) < signed(b, 32) and not p))
    m.add("setp.pair.gt.u32", ["u32", "u32"], ["pred", "pred"], "setp.gt.u32 %o0|%o1, %i0, %i1;", pairs(32, 4),
          lambda a, b: (int(a > b), int(not a > b)))
    m.add("set.lt.u32.s32", ["s32", "s32"], ["u32"], "set.lt.u32.s32 %o0, %i0, %i1;", pairs(32, 8),
          lambda a, b: 0xffffffff if signed(a, 32) < signed(b, 32) else 0)
    m.add("set.eq.or.s32.u64", ["u64", "u64", "pred"], ["s32"], "set.eq.or.s32.u64 %o0, %i0, %i1, %i2;",
          [(a, b, p) for a, b in pairs(64, 2)[::9] + [(5, 5)] for p in (0, 1)],
          lambda a, b, p: 0xffffffff if (a == b or p) else 0)
    for t in ("u16", "s32", "u64", "f32", "f64"):
        bits = BITS[t]
        m.add(f"selp.{t}", [t, t, "pred"], [t], f"selp.{t} %o0, %i0, %i1, %i2;",
              [(a, b, p) for a, b in pairs(bits, 2)[::11] for p in (0, 1)], lambda a, b, p: a if p else b)
    m.add("slct.u32.s32", ["u32", "u32", "s32"], ["u32"], "slct.u32.s32 %o0, %i0, %i1, %i2;",
          [(1, 2, c) for c in (0, 1, 0x7fffffff, 0x80000000, 0xffffffff)], lambda a, b, c: a if signed(c, 32) >= 0 else b)
    m.add("slct.s64.s32", ["s64", "s64", "s32"], ["s64"], "slct.s64.s32 %o0, %i0, %i1, %i2;",
          [(1, (1 << 64) - 5, c) for c in (0, 1, 0x80000000, 0xffffffff)], lambda a, b, c: a if signed(c, 32) >= 0 else b)
    m.add("slct.b32.f32", ["b32", "b32", "f32"], ["b32"], "slct.b32.f32 %o0, %i0, %i1, %i2;",
          [(1, 2, c) for c in (0, 0x80000000, 0x3f800000, 0xbf800000, 0x7fc00000, 0x00000001, 0x80000001, 0x7f800000,
                                0xff800000)],
          lambda a, b, c: a if (c >> 31 == 0 and c <= 0x7f800000) or c == 0x80000000 or (c >> 31 == 1 and (c & 0x7fffffff) == 0) else b)
    m.add("slct.ftz.b32.f32", ["b32", "b32", "f32"], ["b32"], "slct.ftz.b32.f32 %o0, %i0, %i1, %i2;",
          [(1, 2, c) for c in (0, 0x80000000, 0x00000001, 0x80000001, 0xbf800000)],
          lambda a, b, c: b if c == 0xbf800000 else a)
