// ROCm/aiter main at #3237 (79624295c8b713a646d91c742694fd2cbb1139c0) csrc/kernels/mhc_kernels.cu: the regions mhcdoctor.knowledge.aiter_code reads
// lines 28-32
    }

    template <typename DTYPE_I, int block_size, int tile_m, int tile_n, int tile_k>
    __global__ __launch_bounds__(block_size, 2)
    void mhc_pre_gemm_sqrsum_kernel(
// lines 272-276
        if (n_idx == 0) {
            float sqrsum_ = cross_row_sum_4(sqrsum_part, lane_id);
            if (lane_id < mfma_m && (warp_id * mfma_m + lane_id < m_oob)) {
                sqrsum[k_split_idx * m + idx + warp_id * mfma_m + lane_id] = sqrsum_;
            }
// lines 445-449
        }
        for(int i = 0; i < num_rows; i++) {
            rms[i] = rsqrtf(rms[i] / (hidden_size * hc_mult) + rms_eps);
        }

// lines 524-528
            const int res_hc_id = res_rowhc_id % hc_mult;
            const int K_swizzled = row_hc_iter * 8;
            auto load_res_loop = [&](int i) {
                halfx8_t v_res = {0};
                if (i < out_loop && res_row_id < m_oob) {
// lines 791-796
        if constexpr(prefetch) { \
            v_x[BUF] = load_vector_nbytes<DTYPE_I, x_vec_size, x_load_bytes, 0, true, warp_size>(g_x, lane_id * ds_read_vec + residual_block * ((i) + 2)); \
            __builtin_amdgcn_s_barrier(); \
            lds_load_residual_tile((i) + 2); \
        } \
    } while(false);
