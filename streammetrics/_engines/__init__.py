"""What the engines and framework integrations share: the plan of a run and its per-partition
states (``plan``), exact ranking from score ranges (``ranked``, ``range_counts``,
``dask_ranked``) and the callbacks' common part (``callbacks``). Private: the public modules are
``streammetrics.dask``, ``spark``, ``ray``, ``torch`` and the framework modules."""
