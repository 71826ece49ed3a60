// ROCm/aiter main at #2479 (7ea98c6a7c31ffc9c23efa3a44ff805274f32e83) csrc/kernels/mhc_kernels.cu: the regions mhcdoctor.knowledge.aiter_code reads
// lines 28-32
    }

    template <typename DTYPE_I, int block_size, int tile_m, int tile_n, int tile_k>
    __global__ __launch_bounds__(block_size, 2)
    void mhc_pre_gemm_sqrsum_kernel(
// lines 198-202

        float sqrsum_ = cross_row_sum_4(sqrsum_part, lane_id);
        if ((warp_id * mfma_m + lane_id < m_oob)) {
            sqrsum[k_split_idx * m + idx + warp_id * mfma_m + lane_id] = sqrsum_;
        }
// lines 348-352
        }
        for(int i = 0; i < num_rows; i++) {
            rms[i] = rsqrtf(rms[i] / (hidden_size * hc_mult) + rms_eps);
        }

// lines 415-422
            lds_load_res_tile(1);

            opus::s_waitcnt_vmcnt(opus::number<lds_res_load_loop>{});
            __builtin_amdgcn_s_barrier();
            
            static_assert(num_rows * hc_mult * residual_block % (pre_thread_num * 8) == 0, 
                "num_rows * hc_mult * residual_block must be divisible by pre_thread_num * 8");
            const int out_loop = hidden_size / residual_block;
// lines 655-660
        } \
        if constexpr(prefetch) { \
            v_x[BUF] = load_vector_nbytes<DTYPE_I, x_vec_size, x_load_bytes, 0, true, warp_size>(g_x, lane_id * ds_read_vec + residual_block * ((i) + 2)); \
            lds_load_residual_tile((i) + 2); \
        } \
    } while(false);
