#define MHC_PYBIND                              \
    m.def("mhc_pre_gemm_sqrsum",                \
          &aiter::mhc_pre_gemm_sqrsum,          \
          "mhc_pre_gemm_sqrsum",                \
          py::arg("out"),                       \
          py::arg("sqrsum"),                    \
          py::arg("x"),                         \
          py::arg("fn"),                        \
          py::arg("tile_k") = 128);             \
    m.def("mhc_pre_big_fuse",                   \
          &aiter::mhc_pre_big_fuse,             \
          "mhc_pre_big_fuse",                   \
          py::arg("post_mix"),                  \
          py::arg("comb_mix"),                  \
          py::arg("layer_input"),               \
          py::arg("gemm_out_mul"),              \
          py::arg("gemm_out_sqrsum"),           \
          py::arg("hc_scale"),                  \
          py::arg("hc_base"),                   \
          py::arg("residual"),                  \
          py::arg("rms_eps")            = 1e-6, \
          py::arg("hc_pre_eps")         = 1e-6, \
          py::arg("hc_sinkhorn_eps")    = 1e-6, \
          py::arg("hc_post_mult_value") = 1.0,  \
          py::arg("sinkhorn_repeat")    = 20);     \
    m.def("mhc_pre_big_fuse_rmsnorm",           \
          &aiter::mhc_pre_big_fuse_rmsnorm,     \
          "mhc_pre_big_fuse_rmsnorm",           \
          py::arg("post_mix"),                  \
          py::arg("comb_mix"),                  \
          py::arg("out"),                       \
          py::arg("gemm_out_mul"),              \
          py::arg("gemm_out_sqrsum"),           \
          py::arg("hc_scale"),                  \
          py::arg("hc_base"),                   \
          py::arg("residual"),                  \
          py::arg("norm_weight"),               \
          py::arg("rms_eps")            = 1e-6, \
          py::arg("hc_pre_eps")         = 1e-6, \
          py::arg("hc_sinkhorn_eps")    = 1e-6, \
          py::arg("norm_eps")           = 1e-6, \
          py::arg("hc_post_mult_value") = 1.0,  \
          py::arg("sinkhorn_repeat")    = 20);     \
    m.def("mhc_post",                           \
          &aiter::mhc_post,                     \
          "mhc_post",                           \
          py::arg("out"),                       \
          py::arg("x"),                         \
          py::arg("residual"),                  \
          py::arg("post_layer_mix"),            \
          py::arg("comb_res_mix"),              \
          py::arg("store_nt")       = -1);      \
    m.def("mhc_fused_post_pre_gemm_sqrsum",     \
          &aiter::mhc_fused_post_pre_gemm_sqrsum, \
          "mhc_fused_post_pre_gemm_sqrsum",     \
          py::arg("gemm_out_mul"),              \
          py::arg("gemm_out_sqrsum"),           \
          py::arg("next_residual"),             \
          py::arg("layer_input"),               \
          py::arg("residual_in"),               \
          py::arg("post_layer_mix"),            \
          py::arg("comb_res_mix"),              \
          py::arg("fn"),                        \
          py::arg("tile_m") = 16,               \
          py::arg("tile_n") = 32,               \
          py::arg("tile_k") = 32);
