// archs: sm_75 sm_90 sm_100
// Tensor cores through the WMMA API: f16 (sm_70+), bf16/tf32/f64 (sm_80+).
#include <mma.h>
using namespace nvcuda;
__global__ void wmma_f16(const half *a, const half *b, float *c)
{
	wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
	wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
	wmma::fill_fragment(fc, 0.0f);
	wmma::load_matrix_sync(fa, a, 16);
	wmma::load_matrix_sync(fb, b, 16);
	wmma::mma_sync(fc, fa, fb, fc);
	wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
__global__ void wmma_more(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c, const double *da, double *dc,
			  const float *ta)
{
	wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
	wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
	wmma::load_matrix_sync(fa, a, 16);
	wmma::load_matrix_sync(fb, b, 16);
	wmma::load_matrix_sync(fc, c, 16, wmma::mem_col_major);
	wmma::mma_sync(fc, fa, fb, fc);
	wmma::store_matrix_sync(c, fc, 16, wmma::mem_col_major);
	wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> da_;
	wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> db_;
	wmma::fragment<wmma::accumulator, 8, 8, 4, double> dc_;
	wmma::load_matrix_sync(da_, da, 4);
	wmma::load_matrix_sync(db_, da, 4);
	wmma::fill_fragment(dc_, 0.0);
	wmma::mma_sync(dc_, da_, db_, dc_);
	wmma::store_matrix_sync(dc, dc_, 8, wmma::mem_row_major);
	wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> tf;
	wmma::load_matrix_sync(tf, ta, 8);
	for (int i = 0; i < tf.num_elements; i++) tf.x[i] = wmma::__float_to_tf32(tf.x[i]);
	wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> tb;
	wmma::load_matrix_sync(tb, ta, 8);
	wmma::fragment<wmma::accumulator, 16, 16, 8, float> tc;
	wmma::fill_fragment(tc, 1.0f);
	wmma::mma_sync(tc, tf, tb, tc);
	wmma::store_matrix_sync(c + 256, tc, 16, wmma::mem_row_major);
}
#endif
