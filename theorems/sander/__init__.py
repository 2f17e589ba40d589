"""Sander, "Deeper Learning: Residual Networks, Neural Differential Equations and
Transformers, in Theory and Action" (PhD thesis, 2024; seed 004_1c55d58107c357f8.txt).

Catalogues: ``research/sander_part1.md`` (Part I, chapters 1-3) and
``research/sander_part23.md`` (Parts II-III, chapters 4-7).  Claim ids are ``sander.<name>``.

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
