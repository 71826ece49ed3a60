"""mhcdoctor: which mHC path DeepSeek-V4 takes in vLLM on this machine, why, and whether it computes right."""

__version__ = "0.1.0"
