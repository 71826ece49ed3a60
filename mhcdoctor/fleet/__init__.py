"""The fleet: many nodes' check reports merged into one summary that names the nodes that differ.

`summary.py` is pure (report documents in, a fleet/1 document out) and serves both `mhcdoctor merge` (reports
gathered by Slurm, kubectl or by hand) and `mhcdoctor fleet` (`ray_runner.py` gathers them on a Ray cluster).
"""
