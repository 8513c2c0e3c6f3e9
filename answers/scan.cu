// Inclusive prefix sum at memory speed: one pass, decoupled look-back.
//
// Each block takes the next tile number from tile_counter, loads its tile
// (256 threads x 16 elements) with coalesced reads into padded shared memory,
// scans it (16 serial adds per thread, then warp shuffles across threads and
// across warps), and publishes its tile's total at once, flagged AGGREGATE.
// Thread 0 then walks back over its predecessors' status words: an AGGREGATE
// is added and the walk goes on; an INCLUSIVE prefix is added and ends it. It
// publishes its own INCLUSIVE prefix, and every thread writes its 16 outputs
// through shared memory, coalesced. Each element is read once and written
// once; tiles wait on each other only for as long as a predecessor takes to
// publish its total, not its prefix (Merrill and Garland, 2016).
//
// drill: block=256 items=16

#define THREADS 256
#define ITEMS 16
#define TILE (THREADS * ITEMS)
#define WARPS (THREADS / 32)
#define AGGREGATE 1ull
#define INCLUSIVE 2ull

__device__ __forceinline__ int padded(int i)  // one spare word every 32: a thread's 16 in a row hit 16 banks
{
    return i + (i >> 5);
}

__device__ __forceinline__ float warp_inclusive(float v, int lane)
{
    for (int offset = 1; offset < 32; offset <<= 1) {
        const float up = __shfl_up_sync(0xffffffffu, v, offset);
        if (lane >= offset)
            v += up;
    }
    return v;
}

__device__ __forceinline__ unsigned long long status_word(unsigned long long flag, float value)
{
    return (flag << 32) | __float_as_uint(value);  // one 64-bit store: a reader sees the flag and value together
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
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;

#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = k * THREADS + threadIdx.x;
        tile_buf[padded(i)] = base + i < n ? x[base + i] : 0.f;
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
    float exclusive = __shfl_up_sync(0xffffffffu, inclusive, 1);
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

    if (threadIdx.x == 0) {
        const float aggregate = warp_total[WARPS - 1];
        float before = 0.f;
        if (tile == 0) {
            atomicExch(&tile_status[0], status_word(INCLUSIVE, aggregate));
        } else {
            atomicExch(&tile_status[tile], status_word(AGGREGATE, aggregate));
            volatile unsigned long long* status = tile_status;
            long long j = (long long)tile - 1;
            for (;;) {
                const unsigned long long word = status[j];
                const unsigned long long flag = word >> 32;
                if (flag == 0ull)
                    continue;  // the predecessor has not published yet
                before += __uint_as_float((unsigned int)word);
                if (flag == INCLUSIVE)
                    break;
                --j;
            }
            atomicExch(&tile_status[tile], status_word(INCLUSIVE, before + aggregate));
        }
        tile_prefix = before;
    }
    __syncthreads();

    const float offset = tile_prefix + exclusive;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
        tile_buf[padded(threadIdx.x * ITEMS + k)] = v[k] + offset;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = k * THREADS + threadIdx.x;
        if (base + i < n)
            out[base + i] = tile_buf[padded(i)];
    }
}
