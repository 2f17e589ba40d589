"""Menon, "The geometry of the deep linear network" (seed 002_d339aa9bbc964917.txt).

Conventions for every module here (catalogue menon §1): tuples in the paper's order
``[W_N, ..., W_1]``; ``C_p = W_{p+1}^T W_{p+1} - W_p W_p^T`` (erratum E1 decides the sign);
``A_p = W_N ... W_p``, ``B_p = W_p ... W_1``.
"""

SEED = '002_d339aa9bbc964917.txt'
TITLE = 'The geometry of the deep linear network (Menon)'
CATALOGUES = ('research/menon_dln.md',)
