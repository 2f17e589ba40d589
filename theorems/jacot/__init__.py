"""Jacot & Kaiser, "Hamiltonian mechanics of feature learning: bottleneck structure in leaky
ResNets" (seed 000_1e4f04944f31ad67.txt; catalogue ``research/jacot_leaky.md``).

Conventions for every module here (catalogue jacot, preamble): ``A_p`` is ``w x N`` (rows
neurons, columns data points); ``sigma(A) = [relu(A); 1^T]``; ``K = sigma(A)^T sigma(A)``;
``||M||_G^2 = Tr[M G^+ M^T]``, infinite when ``Im M^T ⊄ Im G`` (l.87).  The numerics live in
``solvers.leaky`` (cost of identity with the image condition, Hamilton's equations).

Key observation (catalogue §2): any solution of Hamilton's equations from arbitrary
``(A_0, B_0)`` is an exact critical path for the synthetic target ``A_1 + lambda N/2 B_1``, so
the pointwise claims are certified by forward shooting, without training.
"""

SEED = '000_1e4f04944f31ad67.txt'
TITLE = 'Hamiltonian mechanics of feature learning: bottleneck structure in leaky ResNets (Jacot & Kaiser)'
CATALOGUES = ('research/jacot_leaky.md',)
