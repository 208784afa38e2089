"""The exact score state: a sorted score buffer (``buffer``), its sorted runs and counting kernels,
sliding removal, k-way merges and the optional compiled kernels (numba, the ``fast`` extra).
Private."""
