// ROCm/aiter main at #3033 (b639cb63bcac4672dce33a731fad042a65cb3649) csrc/kernels/mhc_kernels.cu: the regions mhcdoctor.knowledge.aiter_code reads
// lines 28-32
    }

    template <typename DTYPE_I, int block_size, int tile_m, int tile_n, int tile_k>
    __global__ __launch_bounds__(block_size, 2)
    void mhc_pre_gemm_sqrsum_kernel(
// lines 203-207
        if (n_idx == 0) {
            float sqrsum_ = cross_row_sum_4(sqrsum_part, lane_id);
            if (lane_id < mfma_m && (warp_id * mfma_m + lane_id < m_oob)) {
                sqrsum[k_split_idx * m + idx + warp_id * mfma_m + lane_id] = sqrsum_;
            }
// lines 372-376
        }
        for(int i = 0; i < num_rows; i++) {
            rms[i] = rsqrtf(rms[i] / (hidden_size * hc_mult) + rms_eps);
        }

// lines 446-452
            const int row_hc_step = pre_thread_num / (num_rows * hc_mult) * 8;
            const int row_hc_iter = threadIdx.x / (num_rows * hc_mult);
            for(int i = 0; i < out_loop; i++) {
                __builtin_amdgcn_s_barrier();
                DTYPE_I* s_res_rd_ptr = s_res + (i & 1) * (num_rows * hc_mult * residual_block);
                for(int j = 0; j < residual_block / row_hc_step; j++) {
                    int K_swizzled = (row_hc_iter * 8 + j * row_hc_step);
// lines 686-691
        if constexpr(prefetch) { \
            v_x[BUF] = load_vector_nbytes<DTYPE_I, x_vec_size, x_load_bytes, 0, true, warp_size>(g_x, lane_id * ds_read_vec + residual_block * ((i) + 2)); \
            __builtin_amdgcn_s_barrier(); \
            lds_load_residual_tile((i) + 2); \
        } \
    } while(false);
