"""Jacot & Kaiser, "Hamiltonian mechanics of feature learning: bottleneck structure in leaky
ResNets" (seed 000_1e4f04944f31ad67.txt; catalogue ``research/jacot_leaky.md``).

Conventions for every module here (catalogue jacot, preamble): ``A_p`` is ``w x N`` (rows
neurons, columns data points); ``sigma(A) = [relu(A); 1^T]``; ``K = sigma(A)^T sigma(A)``;
``||M||_G^2 = Tr[M G^+ M^T]``, infinite when ``Im M^T ⊄ Im G`` (l.87).  The numerics live in
``solvers.leaky`` (cost of identity with the image condition, Hamilton's equations).

Key observation (catalogue §2): any solution of Hamilton's equations from arbitrary
``(A_0, B_0)`` is an exact critical path for the synthetic target ``A_1 + lambda N/2 B_1``, so
the pointwise claims are certified by forward shooting, without training.

Claim modules follow the document's sections (each module's docstring gives its seed lines):
``sec2_1_symmetries`` (§2, §2.1), ``sec2_2a_lagrangian`` and ``sec2_2b_three_terms`` (§2.2),
``sec2_3a_coi_rank``, ``sec2_3b_coi_continuity``, ``sec2_3c_coi_minima`` and ``sec2_3d_negative_minima``
(§2.3), ``sec2_4_hamiltonian`` (§2.4), ``sec3_1a_energies``, ``sec3_1b_theorem4``, ``sec3_1c_bottleneck`` and
``sec3_1d_bottleneck_variability`` (§3.1), ``sec4_discretization`` and ``sec4_appB_experiments`` (§4, App. B), ``appA1_cost_of_identity``,
``appA2_bottleneck`` and ``appA3_balancedness`` (App. A.1-A.3).  Private helpers shared by several of them:
``_shared`` (cost-of-identity tools, RK4 set-ups, remarks), ``_shooting`` (Hamilton's equations),
``_theorem4_paths`` (Theorem 4's geodesics and error model), ``_training`` (trained leaky ResNets, the
trained claims' hypotheses and declared ranges).
"""

SEED = '000_1e4f04944f31ad67.txt'
TITLE = 'Hamiltonian mechanics of feature learning: bottleneck structure in leaky ResNets (Jacot & Kaiser)'
CATALOGUES = ('research/jacot_leaky.md',)
