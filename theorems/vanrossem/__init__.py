"""van Rossem & Saxe, effective theory of the two-point interaction
(seed 001_6205c7e10fbf4cce.txt; catalogue ``research/vanrossem_saxe.md``).

Conventions for every module here (catalogue §1/§6, recorded in :mod:`theorems.vanrossem._common`):
``a = delta_x^2``, ``b = delta_y^2``; Eq 7 time units (the paper's Eq 17 gradient factor, erratum E1); the lifted
integrator of :mod:`solvers.twopoint`.  The network claims follow the conventions recorded in ``_networks``.

Claim modules follow the document's sections (each module's docstring gives its seed lines):
``sec2_1_function_dynamics`` (§2.1), ``sec2_2_two_point_interaction`` (§2.2), ``sec2_3_reduction`` (§2.3 with
App. A.1), ``sec3_universal_dynamics`` (§3, §3.1-3.2, Figs 2-3) and ``sec3_3_training_loss`` (§3.3, App. A.2),
``sec4_1_fixed_point`` and ``sec4_1_weight_limits`` (§4.1), ``sec4_2_4_3_rich_structure`` (§4.2-4.3, Fig 5),
``sec4_4_4_6_xor_blobs_mnist`` (§3.4, §4.4-4.6, App. B.2-B.4, C.3-C.4), ``sec5_1a_depth_scaling`` and
``sec5_1b_depth_constants`` (§5.1-5.2), ``appA1_gradients`` (App. A.1), ``appA3_final_distance`` (App. A.3),
``appA4_identical_outputs`` (App. A.4), ``appA5_A6_lazy_random_features`` (App. A.5-A.6),
``appB1_two_point_experiments`` (App. B, B.1), ``appC_alternatives_loss_adam`` (App. C.1, C.2, C.5), and
``sec2_appC_notation_typos`` (the typos and notation slips across §2.2-App. C.3).  Private helpers shared by
several of them: ``_common`` (parameter blocks, consistent initial states, converged lifted integration and its
error model), ``_networks`` (trained two-point networks, the effective theory along their records, the Eq 49 fit),
``_two_point_instances`` (random instances of the linearised problem, Eq 16), ``_symbolic`` (SymPy forms of Eq 7
and Eq 16), ``_seed`` (the seed text and Table 2).
"""

SEED = '001_6205c7e10fbf4cce.txt'
TITLE = 'An effective theory of the two-point interaction (van Rossem & Saxe)'
CATALOGUES = ('research/vanrossem_saxe.md',)
