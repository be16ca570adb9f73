/* harness.c: CUB's DeviceRadixSortOnesweepKernel (radixSortThrust's, u32 keys and values) alone through the
 * driver API: one pass (bits 0..7) over n random keys (srand(seed), rand()<<16 ^ rand()), tiles of
 * 6528 keys in blocks of 384 threads, checked against a stable counting sort. README.md says how.
 * usage: harness KERNEL.ptx [n [seed [debug_words]]]: debug_words > 0 passes a 13th parameter, a
 * buffer of that many u32 (0xff bytes), written to dbg.bin after the launch. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorString(r_, &s); fprintf(stderr, "%s: %d %s\n", #x, r_, s); exit(1);} } while (0)
int main(int argc, char **argv) {
  const char *path = argv[1]; int n = argc > 2 ? atoi(argv[2]) : 20000; unsigned seed = argc > 3 ? atoi(argv[3]) : 1;
  int ndbg = argc > 4 ? atoi(argv[4]) : 0;
  FILE *f = fopen(path, "rb"); fseek(f, 0, SEEK_END); long L = ftell(f); fseek(f, 0, SEEK_SET);
  char *ptx = malloc(L + 1); fread(ptx, 1, L, f); ptx[L] = 0; fclose(f);
  CK(cuInit(0)); CUdevice d; CK(cuDeviceGet(&d, 0)); CUcontext c; CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
  CUmodule m; CK(cuModuleLoadData(&m, ptx));
  CUfunction fn; CK(cuModuleGetFunction(&fn, m, "_ZN3cub17CUB_300001_SM_9006detail10radix_sort29DeviceRadixSortOnesweepKernelINS1_5radix10policy_hubIjjyE10Policy1000ELNS0_9SortOrderE0EjjyiiNS1_21identity_decomposer_tEEEvPT5_SB_PT3_PKSC_PT1_PKSG_PT2_PKSK_T4_iiT6_"));
  int tile = 6528, tiles = (n + tile - 1) / tile;
  uint32_t *keys = malloc(4 * n), *vals = malloc(4 * n);
  srand(seed); for (int i = 0; i < n; i++) { keys[i] = ((uint32_t)rand() << 16) ^ (uint32_t)rand(); vals[i] = i; }
  uint64_t bins[256] = {0}; for (int i = 0; i < n; i++) bins[keys[i] & 255]++;
  uint64_t s = 0; for (int b = 0; b < 256; b++) { uint64_t t = bins[b]; bins[b] = s; s += t; }
  CUdeviceptr lb, ctr, bi, ko, ki, vo, vi, dbg = 0;
  CK(cuMemAlloc(&lb, 4 * 256 * tiles)); CK(cuMemsetD8(lb, 0, 4 * 256 * tiles));
  CK(cuMemAlloc(&ctr, 4)); CK(cuMemsetD8(ctr, 0, 4));
  CK(cuMemAlloc(&bi, 8 * 256)); CK(cuMemcpyHtoD(bi, bins, 8 * 256));
  CK(cuMemAlloc(&ko, 4 * n)); CK(cuMemAlloc(&ki, 4 * n)); CK(cuMemAlloc(&vo, 4 * n)); CK(cuMemAlloc(&vi, 4 * n));
  CK(cuMemcpyHtoD(ki, keys, 4 * n)); CK(cuMemcpyHtoD(vi, vals, 4 * n));
  CK(cuMemsetD8(ko, 0xee, 4 * n)); CK(cuMemsetD8(vo, 0xee, 4 * n));
  if (ndbg) { CK(cuMemAlloc(&dbg, 4 * ndbg)); CK(cuMemsetD8(dbg, 0xff, 4 * ndbg)); }
  CUdeviceptr z = 0; int cur = 0, nb = 8; char dec = 0;
  void *args[] = {&lb, &ctr, &z, &bi, &ko, &ki, &vo, &vi, &n, &cur, &nb, &dec, &dbg};
  CUresult r = cuLaunchKernel(fn, tiles, 1, 1, 384, 1, 1, 0, 0, args, 0);
  if (!r) r = cuCtxSynchronize();
  printf("launch: %d\n", r);
  uint32_t *ok = malloc(4 * n), *ov = malloc(4 * n);
  cuMemcpyDtoH(ok, ko, 4 * n); cuMemcpyDtoH(ov, vo, 4 * n);
  /* reference: stable counting sort by digit */
  uint32_t *rk = malloc(4 * n); uint64_t pos[256]; memcpy(pos, bins, sizeof pos);
  uint32_t *rv = malloc(4 * n);
  for (int i = 0; i < n; i++) { rk[pos[keys[i] & 255]] = keys[i]; rv[pos[keys[i] & 255]++] = i; }
  int bad = 0; for (int i = 0; i < n; i++) if (ok[i] != rk[i] || ov[i] != rv[i]) { if (bad < 10) printf("out[%d] key %08x val %u want %08x %u\n", i, ok[i], ov[i], rk[i], rv[i]); bad++; }
  printf("%d wrong of %d\n", bad, n);
  if (ndbg) { uint32_t *h = malloc(4 * ndbg); cuMemcpyDtoH(h, dbg, 4 * ndbg); FILE *o = fopen("dbg.bin", "wb"); fwrite(h, 4, ndbg, o); fclose(o); }
  return bad != 0;
}
