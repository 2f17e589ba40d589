"""van Rossem & Saxe, effective theory of the two-point interaction
(seed 001_6205c7e10fbf4cce.txt; catalogue ``research/vanrossem_saxe.md``)."""

SEED = '001_6205c7e10fbf4cce.txt'
TITLE = 'An effective theory of the two-point interaction (van Rossem & Saxe)'
CATALOGUES = ('research/vanrossem_saxe.md',)
