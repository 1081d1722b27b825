#!/usr/bin/env python3
"""Writes src/ptx/modifiers.def from the keyword list below.

Every dotted word of the PTX ISA (directives, state spaces, types, instruction
modifiers) is listed here once; the lexer/parser intern them into `Modifier` ids.
Matrix shapes (.m16n8k16, .m64n256k32, ...) are encoded numerically, not listed.
Run after editing: python3 tools/gen_modifiers.py
"""
import os, re

KEYWORDS = """
# directives
version target address_size file section loc pragma alias entry func extern visible weak common
maxnreg maxntid reqntid minnctapersm maxnctapersm noreturn explicitcluster reqnctapercluster
maxclusterrank blocksareclusters callprototype calltargets branchtargets align attribute managed
unified ptr texref samplerref surfref abi_preserve abi_preserve_control
# state spaces
reg sreg const global local param shared tex generic shared::cta shared::cluster param::entry param::func
# types
pred b1 b4 b6 b8 b16 b32 b64 b128 b1024 u4 u8 u16 u32 u64 s4 s8 s16 s32 s64 f16 f16x2 bf16 bf16x2 f32 f64 tf32
e4m3 e5m2 e4m3x2 e5m2x2 e2m1 e2m1x2 e2m3 e2m3x2 e3m2 e3m2x2 ue8m0 ue8m0x2 ue4m3 f32x2 u16x2 s16x2
e4m3x4 e5m2x4 e2m1x4 e2m3x4 e3m2x4 s2f6x2 b8x16 b6x16_p32 b4x16_p64 f16x4 bf16x4
# vectors and fragment counts
v2 v4 v8 v16 x1 x2 x4 x8 x16 x32 x64 x128
# rounding and floating-point behaviour
rn rz rm rp rna rs rni rzi rmi rpi ftz sat satfinite approx full relu NaN xorsign abs oob noftz
# comparisons and boolean ops
eq ne lt le gt ge lo ls hi hs equ neu ltu leu gtu geu num nan and or xor not popc
# integer arithmetic
wide cc shiftamt clamp wrap l r f4e b4e rc8 ecl ecr rc16 mode
# memory semantics and scopes
weak relaxed acquire release acq_rel sc volatile mmio cta cluster gpu sys gl
ca cg cs lu cv wb wt nc to L1 L2
L1::evict_normal L1::evict_unchanged L1::evict_first L1::evict_last L1::no_allocate
L2::evict_normal L2::evict_first L2::evict_last L2::evict_unchanged L2::64B L2::128B L2::256B
L2::cache_hint L2::cache_hint::eviction_priority level::eviction_priority level::prefetch_size
level::cache_hint
# atomics and reductions
add inc dec min max exch cas sub
# warp-level
sync aligned up down bfly idx all any uni ballot red arrive wait warp
# barriers, fences, proxies
proxy async alias async::generic tensormap::generic mbarrier_init op_restrict
sync_restrict::shared::cta sync_restrict::shared::cluster
init inval arrive_drop test_wait try_wait pending_count expect_tx complete_tx noComplete parity
# async copies
commit_group wait_group wait_all mbarrier mbarrier::arrive noinc bulk tensor 1d 2d 3d 4d 5d tile im2col
im2col::w im2col::w::128 im2col_no_offs tile::gather4 tile::scatter4 mbarrier::complete_tx::bytes
multicast::cluster multicast::cluster::all reduce prefetch cta_group::1 cta_group::2 bulk_group read
cp_mask ignore_oob
# conversions
frnd2 pack
# video instructions (vmad scaling and plus-one modes)
shr7 shr15 po
# pmevent, prefetch.tensormap
mask tensormap
# textures and surfaces
a1d a2d cube acube 2dms a2dms base level grad g b a p trap zero
width height depth channel_data_type channel_order normalized_coords filter_mode addr_mode_0
addr_mode_1 addr_mode_2 samp_pos array_size num_mipmap_levels num_samples force_unnormalized_coords
memory_layout
# matrix operations
load store mma row col c d sp sp::ordered_metadata kind::f8f6f4 kind::mxf8f6f4 kind::mxf4
kind::mxf4nvf4 kind::f16 kind::tf32 kind::i8 block_scale scale_vec::1X scale_vec::2X scale_vec::4X
trans mma_async fence commit ws block16 block32
# testp and friends
finite infinite number notanumber normal subnormal
# createpolicy, discard, applypriority, griddepcontrol, elect, setmaxnreg
fractional range cvt launch_dependents
# multimem
ld_reduce st acc::f32 acc::f16
# clusterlaunchcontrol
try_cancel query_cancel is_canceled get_first_ctaid get_first_ctaid::x get_first_ctaid::y
get_first_ctaid::z
# tensormap
replace global_address rank box_dim global_dim global_stride element_stride elemtype
interleave_layout swizzle_mode swizzle_atomicity fill_mode cp_fenceproxy
# tcgen05
ld alloc dealloc relinquish_alloc_permit wait::ld wait::st 16x64b 16x128b 16x256b 32x32b 16x32bx2
pack::16b unpack::16b mbarrier::arrive::one cp 128x256b 4x256b 128x128b 64x128b 32x128b warpx2::02_13
warpx2::01_23 warpx4 shift fence::before_thread_sync fence::after_thread_sync ashift
collector::a::fill collector::a::use collector::a::lastuse collector::a::discard
collector::b0::fill collector::b0::use collector::b0::lastuse collector::b0::discard
collector::b1::fill collector::b1::use collector::b1::lastuse collector::b1::discard
collector::b2::fill collector::b2::use collector::b2::lastuse collector::b2::discard
collector::b3::fill collector::b3::use collector::b3::lastuse collector::b3::discard
"""

def ident(word):
    s = word.replace('::', '_')
    parts = re.split(r'[_]', s)
    out = ''.join(p[:1].upper() + p[1:] for p in parts if p)
    if out[0].isdigit():
        out = 'K' + out
    return out

def main():
    words = []
    for line in KEYWORDS.splitlines():
        line = line.split('#', 1)[0]
        words += line.split()
    seen, ids = set(), set()
    rows = []
    for w in words:
        if w in seen:
            continue
        seen.add(w)
        i = ident(w)
        while i in ids:
            i += '_'
        ids.add(i)
        rows.append((i, w))
    path = os.path.join(os.path.dirname(__file__), '..', 'src', 'ptx', 'modifiers.def')
    with open(path, 'w') as f:
        f.write('// Generated by tools/gen_modifiers.py: edit the list there, not this file.\n')
        f.write('// MODIFIER(Identifier, "text without the leading dot")\n')
        for i, w in rows:
            f.write(f'MODIFIER({i}, "{w}")\n')
    print(f'{len(rows)} modifiers')

main()
