// Transpose a float32 matrix: out[c][r] = in[r][c]; in is rows x cols, out is cols x rows.
//
// This starter stages each 32x32 tile in shared memory so that both the global
// read and the global write are coalesced. It is correct, and slower than it
// should be: look at how the tile is read back out of shared memory.
//
// Launch, set on the `drill:` line below:
//   block=XxY   threads per block (at most 1024)
//   tile=WxH    the piece of `in` one block handles; grid = ceil(cols/W) x ceil(rows/H)
//   smem=BYTES  dynamic shared memory per block (extern __shared__), if you want it
//
// drill: block=32x8 tile=32x32

#define TILE 32
#define ROWS_PER_PASS 8   // blockDim.y: each thread moves TILE / ROWS_PER_PASS elements

extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE];

    int c = blockIdx.x * TILE + threadIdx.x;   // column of `in`
    int r0 = blockIdx.y * TILE;
    for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
        int r = r0 + k;
        if (r < rows && c < cols)
            tile[k][threadIdx.x] = in[(size_t)r * cols + c];
    }
    __syncthreads();

    int oc = blockIdx.y * TILE + threadIdx.x;  // column of `out` = row of `in`
    int or0 = blockIdx.x * TILE;
    for (int k = threadIdx.y; k < TILE; k += ROWS_PER_PASS) {
        int orow = or0 + k;                    // row of `out` = column of `in`
        if (orow < cols && oc < rows)
            out[(size_t)orow * rows + oc] = tile[threadIdx.x][k];
    }
}
