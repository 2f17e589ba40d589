"""Chen, "Effective gradient flow of cumulative weights and biases" (seed
003_ff3e15aaa1f2a936.txt; catalogue ``research/chen_flow.md``).

The paper derives explicit equations for the cumulative weights and biases of a ReLU network
and reads gradient descent as a progressive truncation of data clusters.  The decisive checks
integrate the derived flow beside the direct gradient flow it claims to describe (rotations kept
on O(Q) by a group integrator in ``solvers``).  Claim ids are ``chen.<name>``.

Claim modules follow the document's sections (each module's docstring gives its seed lines and claims):
``sec1_introduction`` (§1), ``sec2_model`` (§2), ``sec2_1_standard_cost`` (§2.1), ``sec2_2_reparametrisation``
(§2.2), ``sec2_3_alignment`` (§2.3), ``sec3_1_cluster_separation`` (§3.1), ``sec3_2a_effective_flow`` and
``sec3_2b_pointwise_flow`` (§3.2), ``sec3_3_moments`` (§3.3), ``sec4_1_equilibria`` (§4, §4.1),
``sec4_2_partial_truncation`` (§4.2), ``sec4_3_fixed_rotation`` (§4.3), ``sec5_sec7_theorem_5_1`` (§5 and its
proof, §7), ``sec6_proof_of_theorem_3_2`` (§6), ``sec8_collapsed_data`` (§8), ``sec8_1_propagators`` (§8.1),
``sec8_2_conservation_laws`` (§8.2), ``sec9_clustered_data`` (§9).  Private helpers shared by several of them:
``_common`` (notation decisions D1-D9, seeded instances, cluster-separated configurations, ``XP``/``KINK``),
``_network`` (random networks and the rounding-error model of their maps, §2-§2.2), ``_pointwise``
(single-cluster states, §3.2-§3.3), ``_orbits`` (one-layer instances in layer coordinates, §4), ``_toy``
(the standard cost, the collapsed instance and the bilinear toy of §8-9).  The Numba kernels are in
``solvers/chen.py``.
"""

SEED = '003_ff3e15aaa1f2a936.txt'
TITLE = 'Effective gradient flow of cumulative weights and biases (Chen)'
CATALOGUES = ('research/chen_flow.md',)
