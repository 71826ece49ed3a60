"""A kernel author's module for --kernel tests: a correct mhc_post and one with a planted bug."""

from mhcdoctor import reference


def good_post(x, residual, post_layer_mix, comb_res_mix):
    return reference.mhc_post(x, residual, post_layer_mix, comb_res_mix)


def transposed_post(x, residual, post_layer_mix, comb_res_mix):
    """The classic slip: comb[i, j] read as comb[j, i]."""
    return reference.mhc_post(x, residual, post_layer_mix, comb_res_mix.transpose(-1, -2))
