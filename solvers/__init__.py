"""Numerics that know nothing of claims: array-API dispatch, matrix functions,
Runge-Kutta and Euler-Maruyama integrators (NumPy references and Numba kernels),
and deep-linear-network helpers."""
