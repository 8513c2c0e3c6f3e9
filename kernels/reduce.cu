// Sum a float32 vector: out[0] = x[0] + x[1] + ... + x[n-1].
//
// This starter is correct and very slow: every thread does one atomicAdd on
// the same address, so the whole GPU queues at one memory location.
//
// The judge calls reduce_sum once per pass. Pass 1 reads x (n elements); each
// later pass reads the previous pass's `out`, which has one slot per block of
// that pass. Every `out` is zeroed before its pass. The answer is out[0] of
// the last pass.
//
// The launch is yours, set on the `drill:` line below; give one value per pass
// (grid=1024,1 is two passes; the last value repeats):
//   block=THREADS            threads per block, at most 1024
//   grid=auto                one thread per element; auto/K: K elements per thread;
//                            K*sm: K blocks per multiprocessor; or a plain number
//   smem=BYTES               dynamic shared memory per block (extern __shared__)
//
// drill: block=256 grid=auto

extern "C" __global__ void reduce_sum(const float* __restrict__ x, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(out, x[i]);
    }
}
