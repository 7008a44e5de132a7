// padded_copy_funnel_ab: issue 49's A copy (kernels/operand_staging.cu's copy_rows_kernel, copied here as it stood at
// 56aba54) against a candidate that reads each row as the 16-byte quads covering it and funnel-shifts neighbours
// (the next quad from the next lane) into each stored quad: a quarter of the load instructions, the row split once per
// 128 quads instead of a 64-bit division per quad. Measured on the H200 (results/nvidia-h200/padded_copy_funnel_ab.txt)
// and not kept: the copy was not bound by its instructions.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o ab padded_copy_funnel_ab.cu && ./ab 874x5159 3500x1487 ...   (MxK[+offset])
//
// Per size and kernel: one launch between CUDA events after evicting L2 (cold), then 50 launches back to back between
// two events (their launch gaps hidden), and cudaMemcpyAsync device to device of the same bytes back to back; every
// row of the copy checked against the source bit for bit, padding against zeros. The candidate runs with its grid
// capped at 1024, 2048 and 8192 blocks.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cstring>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
struct PaddedCopy { const float* src = nullptr; std::int64_t ld_src = 0; float* dst = nullptr; std::int64_t ld_dst = 0, rows = 0, cols = 0; };
namespace ptx {
__device__ __forceinline__ void wait_for_previous_grid() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void let_next_grid_start() { asm volatile("griddepcontrol.launch_dependents;\n" ::); }
}
__device__ void copy_quad(const PaddedCopy& c, std::int64_t i) {
  const std::int64_t quads = (c.cols + 3) / 4;
  const std::int64_t r = i / quads, col = i % quads * 4;
  const float* row = c.src + r * c.ld_src;
  float4 v;
  v.x = row[col];
  v.y = col + 1 < c.cols ? row[col + 1] : 0.f;
  v.z = col + 2 < c.cols ? row[col + 2] : 0.f;
  v.w = col + 3 < c.cols ? row[col + 3] : 0.f;
  *reinterpret_cast<float4*>(c.dst + r * c.ld_dst + col) = v;
}
__global__ void copy_rows_kernel(const PaddedCopy first, const PaddedCopy second) {
  ptx::let_next_grid_start(); ptx::wait_for_previous_grid();
  const std::int64_t first_total = first.rows * ((first.cols + 3) / 4);
  const std::int64_t total = first_total + second.rows * ((second.cols + 3) / 4);
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += std::int64_t{gridDim.x} * blockDim.x) {
    if (i < first_total) copy_quad(first, i); else copy_quad(second, i - first_total);
  }
}
// The candidate.
constexpr int kQuadsPerLane = 4;
constexpr int kSegmentQuads = 32 * kQuadsPerLane;

__device__ __forceinline__ float4 load_quad(const float* p, const float* begin, const float* end) {
  if (p >= begin && p + 4 <= end) return *reinterpret_cast<const float4*>(p);
  float v[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) v[c] = p + c >= begin && p + c < end ? p[c] : 0.f;
  return make_float4(v[0], v[1], v[2], v[3]);
}

__device__ __forceinline__ float4 shfl_quad(float4 v, int lane) {
  return make_float4(__shfl_sync(~0u, v.x, lane), __shfl_sync(~0u, v.y, lane), __shfl_sync(~0u, v.z, lane),
                     __shfl_sync(~0u, v.w, lane));
}

__device__ __forceinline__ float4 funnel(float4 lo, float4 hi, int s) {
  switch (s) {
    case 1: return make_float4(lo.y, lo.z, lo.w, hi.x);
    case 2: return make_float4(lo.z, lo.w, hi.x, hi.y);
    case 3: return make_float4(lo.w, hi.x, hi.y, hi.z);
    default: return lo;
  }
}

__device__ void copy_segment(const PaddedCopy& c, std::int64_t row, std::int64_t seg) {
  const int lane = threadIdx.x % 32;
  const std::int64_t quads = (c.cols + 3) / 4;
  const float* row_src = c.src + row * c.ld_src;
  const int s = static_cast<int>(reinterpret_cast<std::uintptr_t>(row_src) / sizeof(float) % 4);
  const float* aligned = row_src - s;
  const float* end = c.src + (c.rows - 1) * c.ld_src + c.cols;
  const std::int64_t j0 = seg * kSegmentQuads + lane;
  float4 lo[kQuadsPerLane], hi[kQuadsPerLane];
#pragma unroll
  for (int t = 0; t < kQuadsPerLane; ++t) {
    const std::int64_t j = j0 + 32 * t;
    lo[t] = 4 * j < c.cols + s ? load_quad(aligned + 4 * j, c.src, end) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  if (s != 0) {
#pragma unroll
    for (int t = 0; t < kQuadsPerLane; ++t) {
      hi[t] = shfl_quad(lo[t], (lane + 1) % 32);
      if (t + 1 < kQuadsPerLane) {
        const float4 wrap = shfl_quad(lo[t + 1 < kQuadsPerLane ? t + 1 : t], 0);
        if (lane == 31) hi[t] = wrap;
      } else if (lane == 31) {
        const std::int64_t j = j0 + 32 * t + 1;
        hi[t] = 4 * j < c.cols + s ? load_quad(aligned + 4 * j, c.src, end) : make_float4(0.f, 0.f, 0.f, 0.f);
      }
    }
  }
  float* row_dst = c.dst + row * c.ld_dst;
#pragma unroll
  for (int t = 0; t < kQuadsPerLane; ++t) {
    const std::int64_t j = j0 + 32 * t;
    if (j >= quads) break;
    float4 v = s != 0 ? funnel(lo[t], hi[t], s) : lo[t];
    const std::int64_t left = c.cols - 4 * j;
    if (left < 4) {
      if (left < 2) v.y = 0.f;
      if (left < 3) v.z = 0.f;
      v.w = 0.f;
    }
    *reinterpret_cast<float4*>(row_dst + 4 * j) = v;
  }
}

__device__ __forceinline__ std::int64_t segments_per_row(const PaddedCopy& c) {
  return ((c.cols + 3) / 4 + kSegmentQuads - 1) / kSegmentQuads;
}

__global__ void copy_rows_new_kernel(const PaddedCopy first, const PaddedCopy second) {
  ptx::let_next_grid_start();
  ptx::wait_for_previous_grid();
  const std::int64_t first_per_row = segments_per_row(first), second_per_row = segments_per_row(second);
  const std::int64_t first_units = first.rows * first_per_row;
  const std::int64_t units = first_units + second.rows * second_per_row;
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / 32);
  for (std::int64_t u = std::int64_t{blockIdx.x} * (blockDim.x / 32) + threadIdx.x / 32; u < units; u += warps) {
    if (u < first_units)
      copy_segment(first, u / first_per_row, u % first_per_row);
    else
      copy_segment(second, (u - first_units) / second_per_row, (u - first_units) % second_per_row);
  }
}
__global__ void fill(float* p, std::int64_t n, unsigned seed) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n; i += (std::int64_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed; x ^= x >> 13; x *= 0x5bd1e995; x ^= x >> 15;
    p[i] = (x & 0xffffff) / 16777216.f - 0.5f;
  }
}
__global__ void nanfill(float* p, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n; i += (std::int64_t)gridDim.x * blockDim.x) p[i] = __int_as_float(0x7fc00000);
}
__global__ void flushk(float* p, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n; i += (std::int64_t)gridDim.x * blockDim.x) p[i] += 1.f;
}
void launch(int which, const PaddedCopy& c, int cap, cudaStream_t s) {
  if (which == 0) {
    const std::int64_t quads = c.rows * (c.ld_dst / 4);
    const unsigned blocks = (unsigned)std::min<std::int64_t>((quads + 255) / 256, 2048);
    copy_rows_kernel<<<blocks, 256, 0, s>>>(c, PaddedCopy{});
  } else {
    const std::int64_t units = c.rows * (((c.cols + 3) / 4 + kSegmentQuads - 1) / kSegmentQuads);
    const unsigned blocks = (unsigned)std::min<std::int64_t>((units + 7) / 8, cap);
    copy_rows_new_kernel<<<blocks, 256, 0, s>>>(c, PaddedCopy{});
  }
  CK(cudaGetLastError());
}
int main(int argc, char** argv) {
  cudaStream_t s; CK(cudaStreamCreate(&s));
  const std::int64_t flushn = 2 * 64 * 1024 * 1024 / 4 * 2;  // 256 MB
  float* fl; CK(cudaMalloc(&fl, flushn * 4));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 1; i < argc; ++i) {
    long long m, k, off = 0; int n = sscanf(argv[i], "%lldx%lld+%lld", &m, &k, &off); if (n < 2) return 2;
    const std::int64_t ld = (k + 3) / 4 * 4;
    float* srcb; float* dst; CK(cudaMalloc(&srcb, (m * k + off) * 4)); CK(cudaMalloc(&dst, m * ld * 4));
    const float* src = srcb + off;
    fill<<<1024, 256, 0, s>>>(srcb, m * k + off, 1234u + i);
    std::vector<float> want(m * k), got(m * ld);
    CK(cudaMemcpy(want.data(), src, m * k * 4, cudaMemcpyDeviceToHost));
    PaddedCopy c{src, k, dst, ld, m, k};
    printf("%lldx%lld%s  %.1f MB:", m, k, off ? "+off" : "", m * k * 4 / 1e6);
    const int caps[] = {0, 1024, 2048, 8192};
    for (int v = 0; v < 4; ++v) {
      const int which = v == 0 ? 0 : 1;
      nanfill<<<1024, 256, 0, s>>>(dst, m * ld);
      double med[2];
      for (int cold = 1; cold >= 0; --cold) {
        std::vector<float> us;
        for (int call = 0; call < 25; ++call) {
          if (cold) flushk<<<2048, 256, 0, s>>>(fl, flushn);
          CK(cudaEventRecord(a, s)); launch(which, c, caps[v], s); CK(cudaEventRecord(b, s));
          CK(cudaStreamSynchronize(s));
          float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (call >= 5) us.push_back(ms * 1e3f);
        }
        std::sort(us.begin(), us.end()); med[cold] = us[us.size() / 2];
      }
      {  // back to back: 50 launches between two events, the launch gaps hidden behind the running copies
        launch(which, c, caps[v], s);
        CK(cudaEventRecord(a, s));
        for (int call = 0; call < 50; ++call) launch(which, c, caps[v], s);
        CK(cudaEventRecord(b, s));
        CK(cudaStreamSynchronize(s));
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); med[0] = ms * 1e3 / 50;
      }
      CK(cudaMemcpy(got.data(), dst, m * ld * 4, cudaMemcpyDeviceToHost));
      bool ok = true;
      for (std::int64_t r = 0; r < m && ok; ++r) {
        for (std::int64_t j = 0; j < ld; ++j) { float w = j < k ? want[r * k + j] : 0.f; if (memcmp(&w, &got[r * ld + j], 4)) { ok = false; printf(" [mismatch r%lld j%lld]", (long long)r, (long long)j); break; } }
      }
      const double bytes = 2.0 * m * k * 4;
      printf("  %s: cold %.2f (%.2f TB/s) b2b %.2f (%.2f TB/s) %s", v == 0 ? "old" : caps[v] == 1024 ? "new1024" : caps[v] == 2048 ? "new2048" : "new8192",
             med[1], bytes / med[1] / 1e6, med[0], bytes / med[0] / 1e6, ok ? "ok" : "WRONG");
    }
    {
      CK(cudaMemcpyAsync(dst, src, m * k * 4, cudaMemcpyDeviceToDevice, s));
      CK(cudaEventRecord(a, s));
      for (int call = 0; call < 50; ++call) CK(cudaMemcpyAsync(dst, srcb, m * k * 4, cudaMemcpyDeviceToDevice, s));
      CK(cudaEventRecord(b, s));
      CK(cudaStreamSynchronize(s));
      float ms; CK(cudaEventElapsedTime(&ms, a, b));
      printf("  memcpyD2D b2b %.2f (%.2f TB/s)", ms * 1e3 / 50, 2.0 * m * k * 4 / (ms * 1e3 / 50) / 1e6);
    }
    printf("\n");
    CK(cudaFree(srcb)); CK(cudaFree(dst));
  }
  return 0;
}
