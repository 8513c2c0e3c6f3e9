// Transpose a float32 matrix at close to copy speed.
//
// Two changes from the starter.
//
// 1. The shared tile gets one float of padding per row. A warp reads a
//    *column* of the tile on the way out. With rows of 32 (or 64) floats,
//    every element of that column sits in the same one of the 32 banks, so
//    the read is replayed once per lane. With one extra float per row,
//    element k of a column lands in bank (k + c) mod 32: all different, one
//    pass. This is the lesson of the card.
//
// 2. Global memory is touched 16 bytes at a time. Each block moves a 64 x 64
//    tile with 256 threads (16 x 16): a thread loads four neighbouring floats
//    of a row with one float4 load, and on the way out writes four
//    neighbouring floats of an output row with one float4 store (gathered
//    from a column of the tile). A quarter of the memory instructions for the
//    same bytes, so each multiprocessor keeps more bytes in flight, which is
//    what a GPU with more bandwidth to fill needs. Loads are marked streaming
//    (__ldcs): every input byte is read once, so it need not stay in cache.
//    Where a row's width is not a multiple of 4 (or at the matrix's edge) the
//    thread falls back to four single-float accesses.
//
// drill: block=16x16 tile=64x64

#define TILE 64
#define VEC 4                // floats per thread per row: 16 threads x 4 = 64 columns
#define ROWS_PER_PASS 16     // blockDim.y

extern "C" __global__ void __launch_bounds__((TILE / VEC) * ROWS_PER_PASS)
transpose(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    // +1: a column's elements fall in different banks. (Here a warp reads rows 4 apart in a column: at
    // most two lanes share a bank, against sixteen without the padding.)
    __shared__ float tile[TILE][TILE + 1];

    const int tx = threadIdx.x;
    const int c0 = blockIdx.x * TILE + VEC * tx;       // first of this thread's four columns of `in`
    const int r0 = blockIdx.y * TILE;
    const bool whole_in = (cols % VEC == 0) && (c0 + VEC - 1 < cols);
    #pragma unroll
    for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
        const int r = r0 + k;
        if (r >= rows)
            continue;
        if (whole_in) {
            const float4 v = __ldcs(reinterpret_cast<const float4*>(in + (size_t)r * cols + c0));
            tile[k][VEC * tx] = v.x;
            tile[k][VEC * tx + 1] = v.y;
            tile[k][VEC * tx + 2] = v.z;
            tile[k][VEC * tx + 3] = v.w;
        } else {
            for (int j = 0; j < VEC; ++j)
                if (c0 + j < cols)
                    tile[k][VEC * tx + j] = in[(size_t)r * cols + c0 + j];
        }
    }
    __syncthreads();

    const int oc0 = blockIdx.y * TILE + VEC * tx;      // columns of `out` = rows of `in`
    const int or0 = blockIdx.x * TILE;                 // first row of `out` = first column of `in`
    const bool whole_out = (rows % VEC == 0) && (oc0 + VEC - 1 < rows);
    #pragma unroll
    for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
        const int orow = or0 + k;
        if (orow >= cols)
            continue;
        if (whole_out) {
            const float4 v = make_float4(tile[VEC * tx][k], tile[VEC * tx + 1][k],
                                         tile[VEC * tx + 2][k], tile[VEC * tx + 3][k]);
            *reinterpret_cast<float4*>(out + (size_t)orow * rows + oc0) = v;
        } else {
            for (int j = 0; j < VEC; ++j)
                if (oc0 + j < rows)
                    out[(size_t)orow * rows + oc0 + j] = tile[VEC * tx + j][k];
        }
    }
}
