"""A stand-in for AMD's aiter in tests: aiter.ops.mhc in torch code, with a switch for the sqrsum race."""
