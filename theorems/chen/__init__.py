"""Chen, "Effective gradient flow of cumulative weights and biases" (seed
003_ff3e15aaa1f2a936.txt; catalogue ``research/chen_flow.md``).

The paper derives explicit equations for the cumulative weights and biases of a ReLU network
and reads gradient descent as a progressive truncation of data clusters.  The decisive checks
integrate the derived flow beside the direct gradient flow it claims to describe (rotations kept
on O(Q) by a group integrator in ``solvers``).  Claim ids are ``chen.<name>``.
"""

SEED = '003_ff3e15aaa1f2a936.txt'
TITLE = 'Effective gradient flow of cumulative weights and biases (Chen)'
CATALOGUES = ('research/chen_flow.md',)
