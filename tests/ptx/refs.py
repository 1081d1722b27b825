"""Reference semantics of PTX arithmetic for tests/ptx, written from the PTX ISA manual and
independent of the C++ lowering: integers are Python integers, floating-point results are
computed exactly with fractions.Fraction and rounded by `round_to` below."""
import math
from fractions import Fraction as Fr

# name: (exponent bits, stored fraction bits, has infinities, total bits)
FORMATS = {
    "f16": (5, 10, True, 16),
    "bf16": (8, 7, True, 16),
    "tf32": (8, 10, True, 19),
    "f32": (8, 23, True, 32),
    "f64": (11, 52, True, 64),
    "e4m3": (4, 3, False, 8),
    "e5m2": (5, 2, True, 8),
}

RN, RNA, RZ, RM, RP = "rn", "rna", "rz", "rm", "rp"


class F:
    """A floating-point datum: NaN, an infinity or a finite value (sign kept for zeros)."""

    def __init__(self, nan=False, inf=False, sign=0, mag=Fr(0)):
        self.nan, self.inf, self.sign, self.mag = nan, inf, sign, Fr(mag)

    @property
    def value(self):
        return -self.mag if self.sign else self.mag

    @property
    def zero(self):
        return not self.nan and not self.inf and self.mag == 0

    def __repr__(self):
        return "NaN" if self.nan else ("-" if self.sign else "+") + ("inf" if self.inf else str(float(self.mag)))


def num(x):
    """An F for an exact value (Fraction/int); zero is +0."""
    x = Fr(x)
    return F(sign=1 if x < 0 else 0, mag=abs(x))


NAN = F(nan=True)


def inf(sign):
    return F(inf=True, sign=sign)


def zero(sign):
    return F(sign=sign)


def decode(bits, fmt):
    eb, mb, has_inf, nbits = FORMATS[fmt]
    bias = (1 << (eb - 1)) - 1
    sign = (bits >> (nbits - 1)) & 1
    e = (bits >> mb) & ((1 << eb) - 1)
    frac = bits & ((1 << mb) - 1)
    if has_inf and e == (1 << eb) - 1:
        return F(inf=True, sign=sign) if frac == 0 else NAN
    if not has_inf and e == (1 << eb) - 1 and frac == (1 << mb) - 1:
        return NAN
    if e == 0:
        return F(sign=sign, mag=Fr(frac) * Fr(2) ** (1 - bias - mb))
    return F(sign=sign, mag=Fr(frac + (1 << mb)) * Fr(2) ** (e - bias - mb))


def max_finite(fmt):
    eb, mb, has_inf, nbits = FORMATS[fmt]
    if not has_inf:
        return (1 << (nbits - 1)) - 2
    return (((1 << eb) - 2) << mb) | ((1 << mb) - 1)


def nan_bits(fmt):
    return (1 << (FORMATS[fmt][3] - 1)) - 1


def floor_log2(x):
    """floor(log2(x)) of a positive Fraction."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fr(2) ** e > x:
        e -= 1
    while Fr(2) ** (e + 1) <= x:
        e += 1
    return e


def round_to(x, fmt, mode=RN, satfinite=False, relu=False, sticky=0):
    """Encoding of the F `x` in `fmt` rounded with `mode`. `sticky` (+1/-1) says the exact value
    lies just above/below x.mag in magnitude (used for irrational results such as sqrt)."""
    eb, mb, has_inf, nbits = FORMATS[fmt]
    if x.nan:
        return nan_bits(fmt)
    sign = x.sign
    bias = (1 << (eb - 1)) - 1
    emin = 1 - bias
    toward_zero = mode == RZ or (mode == RM and not sign) or (mode == RP and sign)
    if x.inf:
        enc = max_finite(fmt) if satfinite else (((1 << eb) - 1) << mb if has_inf else nan_bits(fmt))
    elif x.mag == 0:
        enc = 0
    else:
        e = max(floor_log2(x.mag), emin)
        q = x.mag / Fr(2) ** (e - mb)
        qi = math.floor(q)
        rem = q - qi
        if mode == RN:
            up = rem > Fr(1, 2) or (rem == Fr(1, 2) and (sticky > 0 or (sticky == 0 and qi % 2 == 1)))
        elif mode == RNA:
            up = rem > Fr(1, 2) or (rem == Fr(1, 2) and sticky >= 0)
        elif toward_zero:
            up = False
        else:
            up = rem != 0 or sticky > 0
        if toward_zero and rem == 0 and sticky < 0:
            qi -= 1
        enc = (e - emin) * (1 << mb) + qi + (1 if up else 0)
        if enc > max_finite(fmt):
            if satfinite or toward_zero:
                enc = max_finite(fmt)
            else:
                enc = ((1 << eb) - 1) << mb if has_inf else nan_bits(fmt)
    if relu and sign:
        return 0
    return (sign << (nbits - 1)) | enc


def flush(x, fmt):
    """Subnormal inputs/results flushed to zero of the same sign (.ftz)."""
    if x.nan or x.inf or x.mag == 0:
        return x
    eb, mb, _, _ = FORMATS[fmt]
    if x.mag < Fr(2) ** (2 - (1 << (eb - 1))):
        return zero(x.sign)
    return x


def flush_bits(bits, fmt):
    return encode_exact(flush(decode(bits, fmt), fmt), fmt)


def encode_exact(x, fmt):
    return round_to(x, fmt, RN)


def saturate(x):
    if x.nan or x.sign and not x.zero or x.zero:
        return zero(0)
    if x.inf or x.mag > 1:
        return num(1)
    return x


# ---------------------------------------------------------------- operations on F


def add(a, b, mode=RN):
    if a.nan or b.nan:
        return NAN
    if a.inf or b.inf:
        if a.inf and b.inf and a.sign != b.sign:
            return NAN
        return a if a.inf else b
    s = a.value + b.value
    if s == 0:
        if a.zero and b.zero and a.sign == b.sign:
            return zero(a.sign)
        return zero(1 if mode == RM else 0)
    return num(s)


def neg(a):
    return a if a.nan else F(inf=a.inf, sign=1 - a.sign, mag=a.mag)


def mul(a, b):
    if a.nan or b.nan:
        return NAN
    sign = a.sign ^ b.sign
    if a.inf or b.inf:
        if a.zero or b.zero:
            return NAN
        return inf(sign)
    return F(sign=sign, mag=a.mag * b.mag)


def fma(a, b, c, mode=RN):
    p = mul(a, b)
    if p.nan or c.nan:
        return NAN
    return add(p, c, mode)


def div(a, b):
    if a.nan or b.nan:
        return NAN
    sign = a.sign ^ b.sign
    if a.inf and b.inf or a.zero and b.zero:
        return NAN
    if a.inf or b.zero:
        return inf(sign)
    if b.inf:
        return zero(sign)
    return F(sign=sign, mag=a.mag / b.mag)


def sqrt_round(a, fmt, mode):
    """Correctly rounded square root (an irrational result is given to round_to as a value
    truncated far below the target's precision plus a sticky bit)."""
    if a.nan or (a.sign and not a.zero):
        return nan_bits(fmt)
    if a.inf or a.zero:
        return round_to(a, fmt, mode)
    p = 1200
    scaled = a.mag * Fr(2) ** (2 * p)
    assert scaled.denominator == 1
    r = math.isqrt(scaled.numerator)
    sticky = 0 if r * r == scaled.numerator else 1
    return round_to(num(Fr(r, 1 << p)), fmt, mode, sticky=sticky)


def minmax(a, b, is_min, propagate_nan=False):
    if a.nan or b.nan:
        if propagate_nan or (a.nan and b.nan):
            return NAN
        return b if a.nan else a
    va = -math.inf if a.inf and a.sign else math.inf if a.inf else a.value
    vb = -math.inf if b.inf and b.sign else math.inf if b.inf else b.value
    if va == vb:  # -0 orders below +0
        if is_min:
            return a if a.sign >= b.sign else b
        return a if a.sign <= b.sign else b
    return a if (va < vb) == is_min else b


def compare(op, a, b):
    unordered = a.nan or b.nan
    if op == "num":
        return not unordered
    if op == "nan":
        return unordered
    base = op
    if op in ("equ", "neu", "ltu", "leu", "gtu", "geu"):
        if unordered:
            return True
        base = op[:2]
    elif unordered:
        return False
    va = (-math.inf if a.sign else math.inf) if a.inf else a.value
    vb = (-math.inf if b.sign else math.inf) if b.inf else b.value
    return {"eq": va == vb, "ne": va != vb, "lt": va < vb, "le": va <= vb, "gt": va > vb, "ge": va >= vb}[base]


def to_float(x):
    if x.nan:
        return math.nan
    if x.inf:
        return -math.inf if x.sign else math.inf
    v = float(x.mag)
    return -v if x.sign else v


def from_float(v):
    if math.isnan(v):
        return NAN
    if math.isinf(v):
        return inf(1 if v < 0 else 0)
    return F(sign=1 if math.copysign(1, v) < 0 else 0, mag=Fr(abs(v)))
