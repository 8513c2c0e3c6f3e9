// Sum a float32 vector at memory speed.
//
// One pass over a grid of a few blocks per multiprocessor. Each thread walks
// the vector with 16-byte loads, four of them in flight at a time, and keeps a
// private running sum in registers. The block then folds its 512 sums with
// warp shuffles (no shared memory traffic until one value per warp), and one
// thread per block adds the block's total to out[0]: a few hundred atomics in
// all instead of one per element.
//
// drill: block=512 grid=4*sm

#define THREADS 512

__device__ __forceinline__ float add4(float4 v)
{
    return (v.x + v.y) + (v.z + v.w);
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

extern "C" __global__ void __launch_bounds__(THREADS)
reduce_sum(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    const int n4 = n >> 2;                       // whole float4s; x is 16-byte aligned
    const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);

    float a = 0.f, b = 0.f, c = 0.f, d = 0.f;   // four chains: four loads in flight
    int i = tid;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        float4 p = x4[i];
        float4 q = x4[i + stride];
        float4 r = x4[i + 2 * stride];
        float4 s = x4[i + 3 * stride];
        a += add4(p);
        b += add4(q);
        c += add4(r);
        d += add4(s);
    }
    for (; i < n4; i += stride)
        a += add4(x4[i]);
    if (tid < (n & 3))                           // the last one to three elements
        a += x[(n4 << 2) + tid];

    float sum = warp_sum((a + b) + (c + d));

    __shared__ float per_warp[THREADS / 32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0)
        per_warp[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < (blockDim.x >> 5) ? per_warp[lane] : 0.f;
        sum = warp_sum(sum);
        if (lane == 0)
            atomicAdd(out, sum);
    }
}
