// ROCm/aiter main at #2136 (5e8ade9515a6c5ff77d3adfd996f695607c4114f) csrc/kernels/mhc_kernels.cu: the regions mhcdoctor.knowledge.aiter_code reads
// lines 28-32
    }

    template <typename DTYPE_I, int block_size, int tile_m, int tile_n, int tile_k>
    __global__ __launch_bounds__(block_size, 2)
    void mhc_pre_gemm_sqrsum_kernel(
// lines 198-202

        float sqrsum_ = cross_row_sum_4(sqrsum_part, lane_id);
        if (lane_id < mfma_m) {
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
