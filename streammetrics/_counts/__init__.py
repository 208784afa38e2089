"""The confusion-count kernel and its label views: the counts every confusion metric reads,
counted into cells (dense or the occupied cells only), and the label options that read them.
Private."""
