"""The per-query kernel of the retrieval measures: queries validated and ranked in blocks
(``batch``, ``kernels``), a measure's identity (``spec``), running sums over a query stream
(``state``) and per-query values (``values``). Private."""
