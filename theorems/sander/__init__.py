"""Sander, "Deeper Learning: Residual Networks, Neural Differential Equations and
Transformers, in Theory and Action" (PhD thesis, 2024; seed 004_1c55d58107c357f8.txt).

Catalogues: ``research/sander_part1.md`` (Part I, chapters 1-3) and
``research/sander_part23.md`` (Parts II-III, chapters 4-7).  Claim ids are ``sander.<name>``.

Part I (chapters 1-3) claim modules follow the thesis' sections (each module's docstring gives its seed lines):
``ch1_1_deep_learning_resnets`` (§1.1), ``ch1_2_resnets_discretize_odes`` (§1.2-1.2.1), ``ch2_2_background``
(§2.2), ``ch2_3_1a_distance_to_ode`` and ``ch2_3_1b_nonsmooth_weights`` (§2.3.1, App 2.A.1),
``ch2_3_2a_linear_model_gradient``, ``ch2_3_2b_smoothness_in_depth`` and ``ch2_3_2c_linear_depth_limit`` (§2.3.2,
App 2.A.2-2.A.5), ``ch2_4_adjoint_method`` (§2.4, App 2.A.6-2.A.8), ``ch2_5_experiments`` (§2.5, App 2.B-2.C),
``ch2_appA8_heun_reversal_gradient`` (App 2.A.8-2.A.9), ``ch3_3_definitions`` (§3.3, App 3.A.4, 3.B.1-3.B.2),
``ch3_4_large_depth_limit`` (§3.4, App 3.B.3-3.B.4), ``ch3_5_experiments`` (§3.5, App 3.E),
``ch3_appA0_backprop_lipschitz`` (App 3.A), ``ch3_appA2_bounds_and_limit`` (App 3.A.2-3.A.5), ``ch3_appB5_B6_prop36_thm37``
(App 3.B.5-3.B.6), ``ch3_appCa_ode_and_limit_lemmas`` and ``ch3_appCb_gaussian_lemmas`` (App 3.C),
``ch3_appD_relu_counterexample`` (App 3.D).  Private helpers shared by several of them: ``_resnet_harness`` (the linear-ResNet
harness H2, the adjoint harness's weight draws, the log-log slope fits, chapter 3's depth ladder; it states Part I's
conventions once).

Chapter 4 (Momentum ResNets) follows the thesis's sections (each module's docstring gives its seed lines):
``ch4_3_1_momentum_inverse`` (§4.1, §4.3.1), ``ch4_3_2_memory`` (§4.3.2), ``ch4_3_3a_revnet_fixed_points`` and
``ch4_3_3b_revnet_continuous`` (§4.3.3, App. 4.A.0), ``ch4_3_4_verlet`` (§4.3.4), ``ch4_4_2_second_order``
(§4.4.2, App. 4.A.1, 4.B.4), ``ch4_4_3a_psi_solution``, ``ch4_4_3b_culver``, ``ch4_4_3c_psi_threshold`` and
``ch4_4_3d_representable`` (§4.4.3, App. 4.A.2-4.A.3), ``ch4_5_experiments`` (§4.5), ``ch4_appA3_f_eps``
(App. 4.A.3.1, 4.A.3.3), ``ch4_appA3_4_jordan`` (App. 4.A.3.4), ``ch4_appB1_B3_universality`` (App. 4.B.1-4.B.3),
``ch4_appB5_B7_first_order`` (App. 4.B.5-4.B.7), ``ch4_appC_exact_multiplication`` (App. 4.C) and
``ch4_appE_backprop`` (App. 4.E).  Private helpers shared by several of them: ``_momentum`` (the chapter's
conventions, RevNet spectral numerics and their eigenvalue error model, the ODE solve); the Thm 4.4/4.7
decision procedure is in ``solvers.psi_representable`` and ``solvers.psi_preimage``.

Chapters 5-7 (Parts II-III): claim modules follow the thesis' sections (each module's docstring gives its
seed lines): ``ch5_3_sinkformer_attention`` (§5.3, §5.A.1, §5.B), ``ch5_4_sinkformer_gradient_flows`` (§5.4),
``ch5_5_sinkformer_diffusion`` (§5.5), ``ch5_6_sinkformer_experiments`` (§5.6),
``ch6_3_incontext_linear_attention`` (§6.3), ``ch6_4a_incontext_positional_heads`` and
``ch6_4b_incontext_gd_step`` (§6.4, §6.A.1-6.A.3), ``ch6_5_1_incontext_unitary`` (§6.5-6.5.1),
``ch6_5_2_incontext_orthogonal`` (§6.5.2), ``ch6_5_3_incontext_positional_encoding`` (§6.5.3),
``ch6_6_incontext_experiments`` (§6.6), ``ch7_3_topk_lmo`` (§7.3), ``ch7_4a_topk_relaxed`` and
``ch7_4b_topk_smoothness`` (§7.4), ``ch7_5_topk_algorithms`` (§7.5), ``ch7_6_7_topk_experiments`` (§7.6-7.7),
``ch7_appA_topk_isotonic`` (§7.A.5, §7.A.8), ``ch7_appB1_topk_negentropy`` (§7.B.1).  Private helpers shared
by several of them, with the chapters' conventions and error models: ``_attention``.
"""

SEED = '004_1c55d58107c357f8.txt'
TITLE = 'Deeper Learning: ResNets, neural differential equations and transformers (Sander, thesis)'
CATALOGUES = ('research/sander_part1.md', 'research/sander_part23.md')
