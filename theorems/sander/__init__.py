"""Sander, "Deeper Learning: Residual Networks, Neural Differential Equations and
Transformers, in Theory and Action" (PhD thesis, 2024; seed 004_1c55d58107c357f8.txt).

Catalogues: ``research/sander_part1.md`` (Part I, chapters 1-3) and
``research/sander_part23.md`` (Parts II-III, chapters 4-7).  One module per topic;
claim ids are ``sander.<name>``.
"""

SEED = '004_1c55d58107c357f8.txt'
TITLE = 'Deeper Learning: ResNets, neural differential equations and transformers (Sander, thesis)'
CATALOGUES = ('research/sander_part1.md', 'research/sander_part23.md')
