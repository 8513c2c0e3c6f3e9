// Transpose a float32 matrix at close to copy speed.
//
// The same tiling as the starter, with one change that matters: each row of
// the shared tile is padded by one float. A warp reads a *column* of the tile
// on the way out; with 32 floats per row every element of that column sits in
// the same one of the 32 banks, so the read is split into 32 transactions.
// With 33 floats per row, element k of the column lands in bank (k + c) mod 32:
// all different, one transaction.
//
// drill: block=32x4 tile=32x32

#define TILE 32
#define ROWS_PER_PASS 4

extern "C" __global__ void __launch_bounds__(TILE * ROWS_PER_PASS)
transpose(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];   // +1: column reads hit 32 different banks

    const int c = blockIdx.x * TILE + threadIdx.x;
    const int r0 = blockIdx.y * TILE;
    #pragma unroll
    for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
        const int r = r0 + k;
        if (r < rows && c < cols)
            tile[k][threadIdx.x] = in[(size_t)r * cols + c];
    }
    __syncthreads();

    const int oc = blockIdx.y * TILE + threadIdx.x;
    const int or0 = blockIdx.x * TILE;
    #pragma unroll
    for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
        const int orow = or0 + k;
        if (orow < cols && oc < rows)
            out[(size_t)orow * rows + oc] = tile[threadIdx.x][k];
    }
}
