// Inclusive prefix sum at memory speed: one pass, decoupled look-back.
//
// Each block takes the next tile number from tile_counter, loads its tile
// (256 threads x 16 elements) with 16-byte reads (float4, striped: each warp
// reads 512 contiguous bytes per instruction) into padded shared memory,
// scans it (16 serial adds per thread, then warp shuffles across threads and
// across warps), and publishes its tile's total at once, flagged AGGREGATE.
// Warp 0 then looks back over 32 predecessors at a time: each lane reads one
// status word, a ballot finds the nearest INCLUSIVE prefix, and a warp
// reduction adds the values up to it; with none in the window, the 32
// aggregates are added and the window moves 32 tiles further back. It
// publishes its own INCLUSIVE prefix, and every thread writes its 16 outputs
// through shared memory with 16-byte stores. Each element is read once and
// written once; tiles wait on each other only for as long as a predecessor
// takes to publish its total, not its prefix (Merrill and Garland, 2016).
//
// drill: block=256 items=16

#define THREADS 256
#define ITEMS 16
#define TILE (THREADS * ITEMS)
#define VECS (TILE / 4)  // float4s in a tile
#define WARPS (THREADS / 32)
#define AGGREGATE 1ull
#define INCLUSIVE 2ull
#define FULL 0xffffffffu

__device__ __forceinline__ int padded(int i)  // one spare word every 32: a thread's 16 in a row hit 16 banks
{
    return i + (i >> 5);
}

__device__ __forceinline__ float warp_inclusive(float v, int lane)
{
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const float up = __shfl_up_sync(FULL, v, offset);
        if (lane >= offset)
            v += up;
    }
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(FULL, v, offset);
    return v;
}

__device__ __forceinline__ unsigned long long status_word(unsigned long long flag, float value)
{
    return (flag << 32) | __float_as_uint(value);  // one 64-bit store: a reader sees the flag and value together
}

// Warp 0's look-back: the sum of every tile before `tile`. All 32 lanes call it.
__device__ __forceinline__ float look_back(const unsigned long long* tile_status, long long tile, int lane)
{
    const volatile unsigned long long* status = tile_status;
    float before = 0.f;
    long long top = tile - 1;  // the nearest predecessor in the window; lane l reads tile top - l
    for (;;) {
        const long long j = top - lane;
        // before tile 0 there is nothing: read as an INCLUSIVE zero, which ends the walk
        const unsigned long long word = j >= 0 ? status[j] : status_word(INCLUSIVE, 0.f);
        const unsigned long long flag = word >> 32;
        if (__any_sync(FULL, flag == 0ull))
            continue;  // a predecessor in the window has not published yet: read the window again
        const unsigned int inclusive = __ballot_sync(FULL, flag == INCLUSIVE);
        float value = __uint_as_float((unsigned int)word);
        if (inclusive != 0u) {
            const int nearest = __ffs(inclusive) - 1;  // lowest lane: the nearest INCLUSIVE prefix
            if (lane > nearest)
                value = 0.f;  // tiles before it are already counted in its prefix
            return before + warp_sum(value);
        }
        before += warp_sum(value);  // 32 aggregates, none of them a prefix yet: move the window back
        top -= 32;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
scan(const float* __restrict__ x, float* __restrict__ out, unsigned long long* tile_status,
     unsigned int* tile_counter, int n)
{
    __shared__ float tile_buf[TILE + TILE / 32];
    __shared__ float warp_total[WARPS];
    __shared__ unsigned int tile_id;
    __shared__ float tile_prefix;

    if (threadIdx.x == 0)
        tile_id = atomicAdd(tile_counter, 1u);  // tiles in the order blocks start: predecessors always run
    __syncthreads();
    const unsigned int tile = tile_id;
    const long long base = (long long)tile * TILE;
    const bool whole = base + TILE <= n;  // every tile but perhaps the last
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;

    if (whole) {
        const float4* xv = reinterpret_cast<const float4*>(x + base);  // base is a multiple of 4 floats
        float4 q[VECS / THREADS];
#pragma unroll
        for (int k = 0; k < VECS / THREADS; ++k)
            q[k] = __ldcs(xv + k * THREADS + threadIdx.x);  // all loads in flight before the first store
#pragma unroll
        for (int k = 0; k < VECS / THREADS; ++k) {
            const int i = 4 * (k * THREADS + threadIdx.x);
            tile_buf[padded(i)] = q[k].x;
            tile_buf[padded(i + 1)] = q[k].y;
            tile_buf[padded(i + 2)] = q[k].z;
            tile_buf[padded(i + 3)] = q[k].w;
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = k * THREADS + threadIdx.x;
            tile_buf[padded(i)] = base + i < n ? x[base + i] : 0.f;
        }
    }
    __syncthreads();

    float v[ITEMS];
    float run = 0.f;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        run += tile_buf[padded(threadIdx.x * ITEMS + k)];
        v[k] = run;
    }
    const float inclusive = warp_inclusive(run, lane);
    float exclusive = __shfl_up_sync(FULL, inclusive, 1);
    if (lane == 0)
        exclusive = 0.f;
    if (lane == 31)
        warp_total[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        float w = lane < WARPS ? warp_total[lane] : 0.f;
        w = warp_inclusive(w, lane);
        if (lane < WARPS)
            warp_total[lane] = w;
    }
    __syncthreads();
    if (warp > 0)
        exclusive += warp_total[warp - 1];

    if (warp == 0) {
        const float aggregate = warp_total[WARPS - 1];
        float before = 0.f;
        if (tile == 0) {
            if (lane == 0)
                atomicExch(&tile_status[0], status_word(INCLUSIVE, aggregate));
        } else {
            if (lane == 0)
                atomicExch(&tile_status[tile], status_word(AGGREGATE, aggregate));
            before = look_back(tile_status, tile, lane);
            if (lane == 0)
                atomicExch(&tile_status[tile], status_word(INCLUSIVE, before + aggregate));
        }
        if (lane == 0)
            tile_prefix = before;
    }
    __syncthreads();

    const float offset = tile_prefix + exclusive;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
        tile_buf[padded(threadIdx.x * ITEMS + k)] = v[k] + offset;
    __syncthreads();
    if (whole) {
        float4* outv = reinterpret_cast<float4*>(out + base);
#pragma unroll
        for (int k = 0; k < VECS / THREADS; ++k) {
            const int i = 4 * (k * THREADS + threadIdx.x);
            const float4 q = make_float4(tile_buf[padded(i)], tile_buf[padded(i + 1)], tile_buf[padded(i + 2)],
                                         tile_buf[padded(i + 3)]);
            __stcs(outv + k * THREADS + threadIdx.x, q);
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = k * THREADS + threadIdx.x;
            if (base + i < n)
                out[base + i] = tile_buf[padded(i)];
        }
    }
}
