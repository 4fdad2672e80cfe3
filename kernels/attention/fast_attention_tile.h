// The lane arithmetic of the fast paged attention kernel (paged_attention_fast.cuh) as plain
// C++ that nvcc and g++ both compile: the compile-time shape of each instantiation, which
// lane holds which (head, key) score after the team reduction, and the reductions themselves
// written over a shuffle function. The kernel passes __shfl_xor_sync; the CPU tests
// (tests/kernels/fast_attention_lanes_test.cpp) pass an exchange between 32 host threads and
// values that record which lane contributed what, so the same code shows on the host that
// every (head, key) score has exactly one owner and every head one writer.
#pragma once

#include "kv/format/kv_format.h"
#include "quant/quant_codec_base.h"

namespace kvscope::cuda {

inline constexpr int kFastWarps = 4;  // warps per CTA of the fast kernel
inline constexpr int kFastThreads = kFastWarps * qd::kLanes;

// The instantiated shapes: query heads per CTA (tiles) and head dims.
inline constexpr int kFastTiles[] = {1, 2, 4, 8};
inline constexpr int kFastHeadDims[] = {64, 96, 128, 256};

constexpr int ilog2(int n) {
  return n <= 1 ? 0 : 1 + ilog2(n / 2);
}

// The stored formats a lane reads: the K side's Int4 is offset int4, the V side's symmetric.
enum class LaneFormat : std::uint8_t { F16, Int8, Int4Sym, Int4Offset };

constexpr LaneFormat k_lane_format(KvDtype d) {
  return d == KvDtype::F16 ? LaneFormat::F16
                           : (d == KvDtype::Int8 ? LaneFormat::Int8 : LaneFormat::Int4Offset);
}
constexpr LaneFormat v_lane_format(KvDtype d) {
  return d == KvDtype::F16 ? LaneFormat::F16
                           : (d == KvDtype::Int8 ? LaneFormat::Int8 : LaneFormat::Int4Sym);
}

// Bytes of data one lane loads per vector (its 8 elements).
constexpr int lane_data_bytes(LaneFormat f) {
  return f == LaneFormat::F16 ? 16 : (f == LaneFormat::Int8 ? 8 : 4);
}

// The vector geometry of head_dim HD (64, 96, 128 or 256), as compile-time constants so
// that the addresses of a chunk's loads differ by immediates (kv_format.h's sizes; the host
// checks the layout agrees, fast_attention_unsupported).
template <KvDtype KD, KvDtype VD, int HD>
struct FastGeometry {
  static constexpr int kTeam = HD <= 64 ? 8 : (HD <= 128 ? 16 : 32);  // P: lanes per key
  static constexpr int kGroups = (HD + 31) / 32;
  static constexpr int kKStride = lane_data_bytes(k_lane_format(KD)) * HD / 8;
  static constexpr int kVStride = lane_data_bytes(v_lane_format(VD)) * HD / 8;
  static constexpr int kK4Groups = (HD + 15) / 16;  // offset-int4 keys: groups of 16
  static constexpr int kKScales =
      KD == KvDtype::F16 ? 0 : (KD == KvDtype::Int8 ? kGroups : 2 * kK4Groups);
  static constexpr int kVScales = VD == KvDtype::F16 ? 0 : kGroups;
};

// Keys in flight per team (U): about 128 bytes of loads per lane, halved at G = 8 where the
// query and the accumulators take 128 registers.
template <KvDtype KD, KvDtype VD, int G>
constexpr int fast_unroll() {
  constexpr bool wide = KD == KvDtype::F16 || VD == KvDtype::F16;
  return G == 8 ? (wide ? 2 : 4) : (wide ? 4 : 8);
}

// CTAs per SM the registers are capped for (65536 / (128 x CTAs) registers a thread): 3 up
// to G = 4 (168 registers: no spills at U = 4 fp16 or U = 8 quantized keys in flight); at
// G = 8 the query and accumulators alone take 128 registers, so 2.
constexpr int fast_min_ctas(int g) {
  return g == 8 ? 2 : 3;
}

// The compile-time shape of one instantiation: the team of P lanes a key, U keys a team in
// flight, N = U * G scores a lane before the reduction and VPL after it (see
// team_reduce_scatter: lane c then holds scores n0 .. n0 + VPL - 1, n0 = (c >> kShiftT) * VPL,
// of the head-major index n = h * U + u).
template <KvDtype KD_, KvDtype VD_, int G_, int HD_>
struct FastShape {
  static constexpr KvDtype KD = KD_, VD = VD_;
  static constexpr int G = G_, HD = HD_;
  using Geo = FastGeometry<KD, VD, HD>;
  static constexpr int P = Geo::kTeam, U = fast_unroll<KD, VD, G>(), N = U * G;
  static constexpr int KPW = qd::kLanes / P, CK = KPW * U;  // keys a warp load, keys a chunk
  static constexpr int S = ilog2(P) < ilog2(N) ? ilog2(P) : ilog2(N);
  static constexpr int kShiftT = ilog2(P) - S;  // team-index bits below it: copies of one sum
  static constexpr int VPL = N >> S;
  static constexpr int kUBits = ilog2(U / VPL);  // team-index bits over a head's keys
  static_assert(N % 4 == 0 && VPL <= U && U % VPL == 0, "fast attention tile shape");
};

// What thread `thread` of the CTA is in the tile: warp, team s, place c in it, and the scores
// it holds after the reduction (head hl, keys u0 .. u0 + VPL - 1).
template <class T>
struct LaneRole {
  int warp, s, c, n0, hl, u0;
  bool active;  // holds elements of the key: 8c < head_dim
  bool owner;   // the first of the copies of its scores
  bool writer;  // the owner in team 0 holding key 0 of head hl: writes r, m and l
  KVSCOPE_HD explicit LaneRole(int thread) {
    const int lane = thread % qd::kLanes;
    warp = thread / qd::kLanes;
    s = lane / T::P;
    c = lane % T::P;
    n0 = (c >> T::kShiftT) * T::VPL;
    hl = n0 / T::U;
    u0 = n0 % T::U;
    active = c * 8 < T::HD;
    owner = (c & ((1 << T::kShiftT) - 1)) == 0;
    writer = owner && s == 0 && u0 == 0;
  }
};

// Sums v[0, Count) over each aligned team of P lanes while scattering the sums: every xor
// step lane pairs swap halves of what they hold and keep one half each (lanes with bit O of
// the team index c set keep the upper half), so Count values cost Count - 1 shuffles instead
// of Count * log2(P). When Count reaches 1 before O does, the remaining steps are plain
// butterfly sums. Afterwards v[0, max(1, N / P)) holds the team's sums of the indices
// (c >> (log2 P - S)) * (N >> S) + i, S = min(log2 P, log2 N): team lanes that differ only
// in their low log2 P - S bits hold copies. xor_lane(x, o): x of the lane whose index
// differs in bit o (__shfl_xor_sync on the device).
template <int O, int Count, int N, class V, class XorLane>
KVSCOPE_HD void team_reduce_scatter(V (&v)[N], int c, const XorLane& xor_lane) {
  if constexpr (O >= 1) {
    if constexpr (Count > 1) {
      constexpr int kHalf = Count / 2;
      const bool upper = (c & O) != 0;
      KVSCOPE_UNROLL
      for (int i = 0; i < kHalf; ++i) {
        const V send = upper ? v[i] : v[i + kHalf];
        const V keep = upper ? v[i + kHalf] : v[i];
        v[i] = keep + xor_lane(send, O);
      }
      team_reduce_scatter<O / 2, kHalf>(v, c, xor_lane);
    } else {
      v[0] = v[0] + xor_lane(v[0], O);
      team_reduce_scatter<O / 2, 1>(v, c, xor_lane);
    }
  }
}

// v combined (op) over the lanes that differ in the lane-index bits [Lo, Lo + Bits) and in
// the bits from TeamBit up (the other key teams of the warp): a head's running max and sum.
template <int Lo, int Bits, int TeamBit, class V, class XorLane, class Op>
KVSCOPE_HD V combine_over(V v, const XorLane& xor_lane, const Op& op) {
  KVSCOPE_UNROLL
  for (int k = 0; k < Bits; ++k) v = op(v, xor_lane(v, 1 << (Lo + k)));
  KVSCOPE_UNROLL
  for (int o = 1 << TeamBit; o < qd::kLanes; o *= 2) v = op(v, xor_lane(v, o));
  return v;
}

}  // namespace kvscope::cuda
