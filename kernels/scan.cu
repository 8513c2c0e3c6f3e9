// Inclusive prefix sum of a float32 vector: out[i] = x[0] + x[1] + ... + x[i].
//
// This starter is correct and slow. Each block scans one tile of 1,024
// elements in shared memory (ten steps of Hillis and Steele, each a barrier),
// then thread 0 waits for the tile before it to publish its inclusive prefix,
// adds it, and publishes its own. The tiles pass their prefixes along a chain:
// at 2^28 elements, 262,144 tiles one after the other, each waiting on the
// last one's write to reach memory. Let a tile publish its own sum before it
// knows its prefix, and look back over several predecessors at once.
//
// The judge launches scan once, one block per tile of block · items elements.
// tile_status has one 64-bit word per tile and tile_counter one word, all zero
// before the launch. Blocks may start in any order: take tile numbers from
// tile_counter, so a tile only ever waits on tiles that have already started.
//
// The launch is yours, set on the `drill:` line:
//   block=THREADS     threads per block, at most 1024
//   items=K           elements per thread (1 to 64): a tile is THREADS · K
//
// drill: block=1024 items=1

#define THREADS 1024

extern "C" __global__ void scan(const float* __restrict__ x, float* __restrict__ out,
                                unsigned long long* tile_status, unsigned int* tile_counter, int n)
{
    __shared__ float buf[THREADS];
    __shared__ unsigned int tile_id;
    __shared__ float prefix;

    if (threadIdx.x == 0)
        tile_id = atomicAdd(tile_counter, 1u);
    __syncthreads();
    const unsigned int tile = tile_id;
    const long long i = (long long)tile * THREADS + threadIdx.x;

    buf[threadIdx.x] = i < n ? x[i] : 0.f;
    __syncthreads();
    for (int offset = 1; offset < THREADS; offset <<= 1) {
        float add = threadIdx.x >= offset ? buf[threadIdx.x - offset] : 0.f;
        __syncthreads();
        buf[threadIdx.x] += add;
        __syncthreads();
    }

    if (threadIdx.x == 0) {
        float before = 0.f;
        if (tile > 0) {
            volatile unsigned long long* status = tile_status;
            unsigned long long word;
            do {
                word = status[tile - 1];
            } while ((word >> 32) == 0ull);  // the high half is a flag, the low half the prefix's bits
            before = __uint_as_float((unsigned int)word);
        }
        const float inclusive = before + buf[THREADS - 1];
        atomicExch(&tile_status[tile], (1ull << 32) | __float_as_uint(inclusive));
        prefix = before;
    }
    __syncthreads();
    if (i < n)
        out[i] = buf[threadIdx.x] + prefix;
}
