// CUB: stream compaction (select if, flagged, unique), partition, run-length encoding.
// G-archs: sm_90 (ptxas -g on the -G build of this source takes 5-12 s of CPU per arch)
#include <cub/device/device_select.cuh>
#include <cub/device/device_partition.cuh>
#include <cub/device/device_run_length_encode.cuh>
struct Pos { __device__ bool operator()(int x) const { return x > 0; } };
void select(const int *in, int *out, int *nsel, const char *flags, int n, void *tmp, size_t &bytes, int *counts)
{
	cub::DeviceSelect::If(tmp, bytes, in, out, nsel, n, Pos());
	cub::DeviceSelect::Flagged(tmp, bytes, in, flags, out, nsel, n);
	cub::DeviceSelect::Unique(tmp, bytes, in, out, nsel, n);
	cub::DevicePartition::If(tmp, bytes, in, out, nsel, n, Pos());
	cub::DeviceRunLengthEncode::Encode(tmp, bytes, in, out, counts, nsel, n);
}
