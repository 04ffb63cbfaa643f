// convert.cl: conversions between float and the storage types, shared by the families.
//
// Purpose: the 16- and 8-bit floating-point storage types of the suite (kernels.StorageTypes:
// IEEE binary16, bfloat16, OCP float8 E4M3 and E5M2) live in buffers as the bits of a
// ushort or uchar; a kernel converts each element to float as it loads it and back as it
// stores it, so that it computes in float32 and needs no fp16 arithmetic of the device.
// These functions are integer code, exact where the result is representable, and give the
// bits engine's Go conversions give (engine.Half, engine.BFloat16, engine.Float8E4M3,
// engine.Float8E5M2), special values included: a NaN stays a NaN of its sign, made quiet,
// with the leading bits of its payload.
//   prism_tf32(float) -> float          x rounded to tf32 (10 fraction bits), ties away
//                                        from zero, as NVIDIA's cvt.rna.tf32.f32
//   prism_half(ushort) -> float         the value of an IEEE binary16, exactly
//   prism_bfloat16(ushort) -> float     the value of a bfloat16, exactly
//   prism_e4m3(uchar) -> float          the value of an OCP float8 E4M3, exactly
//   prism_e5m2(uchar) -> float          the value of an OCP float8 E5M2, exactly
//   prism_to_half(float) -> ushort      x rounded to binary16, to nearest even: subnormal
//                                        results kept, magnitudes from 65520 up to Inf
//   prism_to_bfloat16(float) -> ushort  x rounded to bfloat16, to nearest even, overflow
//                                        to Inf
//   prism_to_e4m3(float) -> uchar       x rounded to OCP float8 E4M3, to nearest even:
//                                        subnormal results kept, magnitudes that round
//                                        past 448 (and infinities) NaN (OFP8's
//                                        non-saturating mode)
//
// Use: a family whose kernels convert builds kernels.ConvertSource + its own source (Go:
// the text of this file, embedded in package kernels) and names the functions in its -D
// options (gemm.cl's CONV, attention.cl's CONV and STORE). The last line of this file is a
// #line directive, so that compilers number the lines of the source that follows from 1:
// build logs point into the family's file.

// prism_tf32 rounds x to tf32 (1 + 10 mantissa bits), ties away from zero; infinities and
// NaNs unchanged.
float prism_tf32(float x) {
    uint u = as_uint(x);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u = (u + 0x1000u) & 0xffffe000u;
    }
    return as_float(u);
}

// prism_half returns the value of the IEEE binary16 with bits h, exactly (a NaN made quiet).
// The branches test the magnitude bits a, here and in the float8 conversions: testing the
// exponent field taken out of the bits gave wrong values for negative zeros, subnormals,
// infinities and NaNs under Oclgrind 21.10 (PoCL and Rusticl were right).
float prism_half(ushort h) {
    const uint s = ((uint)h & 0x8000u) << 16;
    const uint a = (uint)h & 0x7fffu;
    if (a < 0x400u) { // zero or subnormal: a * 2^-24
        const float v = (float)a * 5.9604644775390625e-8f;
        return s != 0u ? -v : v;
    }
    if (a >= 0x7c00u) { // Inf, NaN
        return as_float(s | 0x7f800000u | (a != 0x7c00u ? 0x400000u : 0u) | ((a & 0x3ffu) << 13));
    }
    return as_float(s | ((a + 0x1c000u) << 13)); // the exponent rebiased by 127 - 15 = 112
}

// prism_bfloat16 returns the value of the bfloat16 with bits h: the upper half of a float
// (a NaN made quiet).
float prism_bfloat16(ushort h) {
    uint u = (uint)h << 16;
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        u |= 0x400000u;
    }
    return as_float(u);
}

// prism_e4m3 returns the value of the OCP float8 E4M3 with bits v (bias 7, no infinities,
// S.1111.111 the only NaNs).
float prism_e4m3(uchar v) {
    const uint s = ((uint)v & 0x80u) << 24;
    const uint a = (uint)v & 0x7fu;
    if (a < 0x8u) { // zero or subnormal: a * 2^-9
        const float r = (float)a * 0.001953125f;
        return s != 0u ? -r : r;
    }
    if (a == 0x7fu) {
        return as_float(s | 0x7fc00000u);
    }
    return as_float(s | ((a + 0x3c0u) << 20)); // the exponent rebiased by 127 - 7 = 120
}

// prism_e5m2 returns the value of the OCP float8 E5M2 with bits v (bias 15, IEEE-like; a
// NaN made quiet).
float prism_e5m2(uchar v) {
    const uint s = ((uint)v & 0x80u) << 24;
    const uint a = (uint)v & 0x7fu;
    if (a < 0x4u) { // zero or subnormal: a * 2^-16
        const float r = (float)a * 1.52587890625e-5f;
        return s != 0u ? -r : r;
    }
    if (a >= 0x7cu) { // Inf, NaN
        return as_float(s | 0x7f800000u | (a != 0x7cu ? 0x400000u : 0u) | ((a & 0x3u) << 21));
    }
    return as_float(s | ((a + 0x1c0u) << 21)); // the exponent rebiased by 127 - 15 = 112
}

// prism_shift_rne returns the significand of the normal float32 magnitude a (24 bits, the
// implicit one set) shifted right by sh (1 to 24) and rounded to nearest, ties to even: a
// subnormal result's bits in the narrower format's units.
uint prism_shift_rne(uint a, uint sh) {
    const uint m = (a & 0x7fffffu) | 0x800000u;
    const uint rest = m & ((1u << sh) - 1u);
    const uint halfway = 1u << (sh - 1u);
    uint r = m >> sh;
    if (rest > halfway || (rest == halfway && (r & 1u) != 0u)) {
        r += 1u;
    }
    return r;
}

// prism_to_half returns the bits of x rounded to the nearest IEEE binary16, ties to even.
// Magnitudes from 65520 (halfway between 65504, the largest finite value, and 2^16) up
// give Inf of their sign, results below 2^-14 are subnormal (below 2^-25, and 2^-25
// itself, zero), signed zeros are kept, and a NaN gives a quiet NaN of its sign with the
// leading bits of its payload.
ushort prism_to_half(float x) {
    const uint u = as_uint(x);
    const uint s = (u >> 16) & 0x8000u;
    const uint a = u & 0x7fffffffu;
    if (a > 0x7f800000u) { // NaN
        return (ushort)(s | 0x7e00u | ((a >> 13) & 0x3ffu));
    }
    if (a >= 0x477ff000u) { // 65520 and up, Inf included
        return (ushort)(s | 0x7c00u);
    }
    if (a >= 0x38800000u) { // normal: rebias the exponent (127 - 15), round 13 bits away
        const uint r = a - 0x38000000u;
        return (ushort)(s | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
    }
    if (a <= 0x33000000u) { // at most 2^-25: zero (2^-25 is a tie, to the even zero)
        return (ushort)s;
    }
    // Subnormal: the significand times 2^(e-150) is its units of 2^-24 shifted right by
    // 126 - e, e in 102..112; a carry to 0x400 is the smallest normal, correctly.
    return (ushort)(s | prism_shift_rne(a, 126u - (a >> 23)));
}

// prism_to_bfloat16 returns the bits of x rounded to the nearest bfloat16, ties to even:
// the upper half of the float after rounding the lower 16 bits away (magnitudes that round
// past the largest finite value give Inf); a NaN gives a quiet NaN of its sign with the
// leading bits of its payload.
ushort prism_to_bfloat16(float x) {
    const uint u = as_uint(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (ushort)((u >> 16) | 0x40u);
    }
    // Adding just under half of the last place, plus one when the kept part is odd,
    // carries exactly when the result rounds up.
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// prism_to_e4m3 returns the bits of x rounded to the nearest OCP float8 E4M3, ties to even
// (engine.Float8E4M3FromFloat32). A magnitude whose rounding passes 448, the largest finite
// value (from 464 up, infinities included), gives NaN of its sign (S.1111.111: E4M3 has no
// infinities), results below 2^-6 are subnormal (at most 2^-10, the tie, zero), signed
// zeros are kept, and a NaN gives NaN of its sign.
uchar prism_to_e4m3(float x) {
    const uint u = as_uint(x);
    const uint s = (u >> 24) & 0x80u;
    const uint a = u & 0x7fffffffu;
    if (a > 0x7f800000u) { // NaN
        return (uchar)(s | 0x7fu);
    }
    if (a >= 0x3c800000u) { // 2^-6 and up: rebias the exponent (127 - 7), round 20 bits away
        const uint r = a - 0x3c000000u;
        const uint b = (r + 0x7ffffu + ((r >> 20) & 1u)) >> 20;
        return (uchar)(s | (b > 0x7eu ? 0x7fu : b));
    }
    if (a <= 0x3a800000u) { // at most 2^-10: zero (2^-10 is a tie, to the even zero)
        return (uchar)s;
    }
    // Subnormal: the significand times 2^(e-150) is its units of 2^-9 shifted right by
    // 141 - e, e in 117..120; a carry to 8 is the smallest normal, correctly.
    return (uchar)(s | prism_shift_rne(a, 141u - (a >> 23)));
}

#line 1
