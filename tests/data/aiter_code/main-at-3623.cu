// ROCm/aiter main at #3623 (468cba1c1fbdf36949f0d63239ff7b1bdd0ec565) csrc/kernels/mhc_kernels.cu: the regions mhcdoctor.knowledge.aiter_code reads
// lines 35-39
    }

    template <typename DTYPE_I, int block_size, int tile_m, int tile_n, int tile_k>
    __global__ __launch_bounds__(block_size, 2)
    void mhc_pre_gemm_sqrsum_kernel(
// lines 280-284
        if (n_idx == 0) {
            float sqrsum_ = cross_row_sum_4(sqrsum_part, lane_id);
            if (lane_id < mfma_m && (warp_id * mfma_m + lane_id < m_oob)) {
                sqrsum[k_split_idx * m + idx + warp_id * mfma_m + lane_id] = sqrsum_;
            }
// lines 529-536
        float rms[num_rows];
        constexpr int hc_mult3_reduce_warp_num = (warp_num_pow2 * num_rows + warp_size - 1) / warp_size;
        if(warp_id < hc_mult3_reduce_warp_num) {
            float sum = 0.0f;
            if(lane_id < warp_num_pow2 * num_rows && lane_id % warp_num_pow2 < warp_num) {
                sum = s_pre_rms_partial[lane_id];
            }
            sum = multithread_reduce(sum, sum_f, warp_num_pow2);
// lines 594-598
            const int res_hc_id = res_rowhc_id % hc_mult;
            const int K_swizzled = row_hc_iter * res_vec_size;
            auto load_res_loop = [&](int i) {
                res_vec_t v_res;
                if (i < out_loop) {
// lines 860-865
        if constexpr(prefetch) { \
            v_x[BUF] = load_vector_nbytes<DTYPE_I, x_vec_size, x_load_bytes, 0, true, warp_size>(g_x, lane_id * ds_read_vec + residual_block * ((i) + 2)); \
            __builtin_amdgcn_s_barrier(); \
            lds_load_residual_tile((i) + 2); \
        } \
    } while(false);
