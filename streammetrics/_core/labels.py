"""Labels as users have them: one mapping from labels to the class indices the states count.

Every classification accumulator counts classes ``0..C-1``; users hold strings, non-contiguous
integers, booleans or pandas categoricals. This module is the one place that turns the one into
the other, for the accumulators (``classes=``, ``pos_label=``) and for
:mod:`streammetrics.functional` alike:

* :func:`encode` -- the kernel: codes of labels in a given list of classes (``-1`` or ``missing``
  for a label not in it). O(n) for integers spanning a small range (one look-up table), else
  O(n log C) (``searchsorted`` on the sorted classes), pandas categoricals O(n + K) through their
  codes, object arrays of mixed kinds one dictionary look-up per distinct value;
* :class:`ClassMapping` -- a list of distinct classes fixed at construction (strings, integers,
  floats or booleans: what a state file's JSON holds), with :meth:`ClassMapping.encode` raising a
  ``ValueError`` that names the argument and the first unknown label with its index;
* :class:`LabelCodec` -- how one accumulator's ``update`` arguments become codes: the mapping
  and/or ``pos_label`` (binary: the positive label, every other known label negative), which
  argument holds labels (``y_true``; ``y_pred`` too for hard predictions), ``ignore_index``
  passing through, and scikit-learn's target-type rules (an indicator matrix where labels are
  expected, integer 2-D "scores", more than two labels for a binary task are ``ValueError`` s);
* :func:`refuse_huge_ints` -- Python ints beyond int64 given as labels are refused as labels
  (numpy would make them float64 scores);

A metric's codec is not part of its state: it is the label step of the metric's update path
(``Metric._prepare``: ``codec.encode_args``, then ``State.prepare``), so states stay plain (type
checks, windows and persistence see the state as built), ``MetricSet`` shares a state only
between metrics whose codecs agree (``Metric.share_key``), and a rejected batch (an unknown
label) leaves the state exactly as it was, as the mapping happens before anything is applied.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Hashable
from typing import Any

import numpy as np

from .params import nonempty_param
from .validation import InputTypeError, as_numpy, first_bad


def is_sparse(x: Any) -> bool:
    """True for scipy.sparse matrices and arrays (without importing scipy)."""
    return hasattr(x, "toarray") and hasattr(x, "nnz") and hasattr(x, "tocsr")


def _is_categorical(x: Any) -> bool:
    return str(getattr(x, "dtype", "")) == "category"


def is_label_scalar(x: Any) -> bool:
    """True for one label given as a scalar: a number, a bool or a string."""
    return isinstance(x, (numbers.Number, np.bool_, str, np.str_)) and not isinstance(x, np.ndarray)


def label_array(y: Any, name: str) -> np.ndarray:
    """``y`` as a numpy array that may hold strings or other objects (a pandas categorical becomes
    an object array; numeric framework tensors go through :func:`as_numpy`). O(n) at most."""
    if isinstance(y, np.ndarray):
        return y
    if isinstance(y, (str, bytes)):
        return np.array([y])
    if _is_categorical(y):
        return np.asarray(y.astype(object))
    if (hasattr(y, "__dlpack__") and not hasattr(y, "dtype")) or hasattr(y, "detach"):
        return as_numpy(y, name)
    return np.asarray(y)


# -- the kernel ---------------------------------------------------------------------------------
def small_range(*arrays: np.ndarray) -> tuple[int, np.ndarray] | None:
    """For integer arrays spanning a small range: (lowest value, presence mask over the range)."""
    nonempty = [a for a in arrays if a.size]
    if not nonempty:
        return None
    lo = min(int(a.min()) for a in nonempty)
    hi = max(int(a.max()) for a in nonempty)
    total = sum(a.size for a in nonempty)
    if hi - lo > max(1024, 4 * total):
        return None
    if hi - lo <= 1:  # the lowest and the highest value both occur: nothing to count
        return lo, np.ones(hi - lo + 1, dtype=bool)
    present = np.zeros(hi - lo + 1, dtype=bool)
    for a in nonempty:
        b = a.ravel() if a.dtype == np.intp else a.ravel().astype(np.intp)
        present |= np.bincount(b - lo if lo else b, minlength=hi - lo + 1).astype(bool)
    return lo, present


def unique(y: np.ndarray) -> np.ndarray:
    """Sorted distinct values: O(n) for integers spanning a small range, else a sort."""
    if y.dtype.kind == "O":
        values = set(y.ravel().tolist())
        try:
            return np.array(sorted(values), dtype=object)
        except TypeError as exc:  # e.g. strings mixed with numbers, or None among them
            kinds = sorted({type(v).__name__ for v in values})
            raise InputTypeError(
                f"labels must be uniformly strings or numbers, got values of types {kinds} ({exc})"
            ) from exc
    if y.dtype.kind in "biu" and y.size:
        small = small_range(y.ravel())
        if small is not None:
            lo, present = small
            return (np.flatnonzero(present) + lo).astype(y.dtype)
    return np.unique(y)


def encode(y: Any, classes: np.ndarray, missing: int = -1) -> np.ndarray:
    """Codes of the labels ``y`` in ``classes`` (distinct, any order): ``classes[code] == label``;
    a label not in ``classes`` gets ``missing``. Returns an integer array of ``y``'s shape.

    O(n) for integer labels spanning a small range and for pandas categoricals (through their
    codes), else O(n log C) (``searchsorted``); labels of mixed kinds (strings with numbers) one
    dictionary look-up per distinct value after a sort (or per value if they do not sort).
    """
    if _is_categorical(y):
        cat = y.cat if hasattr(y, "cat") else y
        table = np.append(encode(np.asarray(cat.categories.astype(object)), classes, missing), missing)
        codes = np.asarray(cat.codes, dtype=np.intp)
        return table[np.where(codes < 0, table.shape[0] - 1, codes)]
    y = np.asarray(y)
    k = classes.shape[0]
    if (
        y.dtype.kind in "iu"
        and classes.dtype.kind in "iu"
        and k
        and classes[0] == 0
        and classes[-1] == k - 1
        and np.array_equal(classes, np.arange(k))
        and y.size
        and y.min() >= 0
        and y.max() < k
    ):
        return y  # already the codes
    if y.dtype.kind in "biu" and classes.dtype.kind in "biu" and k:
        yi = y.astype(np.int64)
        ci = classes.astype(np.int64)
        lo = min(int(yi.min()), int(ci.min())) if yi.size else int(ci.min())
        hi = max(int(yi.max()), int(ci.max())) if yi.size else int(ci.max())
        if hi - lo <= max(1024, 4 * (yi.size + k)):
            table = np.full(hi - lo + 1, missing, dtype=np.intp)
            table[ci - lo] = np.arange(k)
            return table[yi - lo]
    if k == 0 or y.size == 0:
        return np.full(y.shape, missing, dtype=np.intp)
    texts = (y.dtype.kind in "US", classes.dtype.kind in "US")
    if y.dtype.kind == "O" or classes.dtype.kind == "O" or texts[0] != texts[1]:
        return _encode_objects(y, classes, missing)
    try:
        order = np.argsort(classes, kind="stable")
        sorted_classes = classes[order]
        pos = np.searchsorted(sorted_classes, y)
    except TypeError:  # incomparable values
        return _encode_objects(y, classes, missing)
    pos = np.minimum(pos, k - 1)
    found = sorted_classes[pos] == y
    return np.where(found, order[pos], missing).astype(np.intp)


def _encode_objects(y: np.ndarray, classes: np.ndarray, missing: int) -> np.ndarray:
    """Labels of mixed kinds: one dictionary look-up per distinct value (per value if they do not
    sort). Python equality decides (1 == 1.0 == True, as for numbers everywhere)."""
    lookup: dict[Any, int] = {}
    for i, v in enumerate(classes.tolist()):
        lookup.setdefault(_key(v), i)
    flat = y.ravel()
    try:
        values, inverse = np.unique(flat.astype(object), return_inverse=True)
    except TypeError:
        out = np.array([lookup.get(_key(v), missing) for v in flat.tolist()], dtype=np.intp)
        return out.reshape(y.shape)
    table = np.array([lookup.get(_key(v), missing) for v in values.tolist()], dtype=np.intp)
    return table[inverse.reshape(-1)].reshape(y.shape)


def _key(v: Any) -> Any:
    """A dictionary key for a label: NaN never matches (not even itself), unhashables never."""
    if isinstance(v, float) and math.isnan(v):
        return object()
    try:
        hash(v)
    except TypeError:
        return object()
    return v


# -- a mapping fixed at construction --------------------------------------------------------------
def _plain_label(v: Any, name: str) -> Any:
    """One class label as a plain JSON-able Python value (str, int, float or bool)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (bool, str)):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"{name}: labels must be finite, got {v!r}")
        return f
    raise ValueError(
        f"{name}: labels must be strings, integers, floats or booleans (a state file stores them "
        f"as JSON), got {v!r} of type {type(v).__name__}"[:300]
    )


class ClassMapping:
    """Distinct class labels in a fixed order: class ``i`` is ``classes[i]``.

    Labels are strings, integers, floats or booleans (as a state file's JSON holds them); numbers
    compare by value (``2 == 2.0``), so ``[1, 1.0]`` or ``[1, True]`` are duplicates.
    ``encode`` maps a batch to codes ``0..C-1`` and raises a ``ValueError`` naming the first
    unknown label. Serialised as the plain list :meth:`config`.

    Parameters
    ----------
    classes : sequence
        The labels, in class order (a list, a numpy array, a pandas Index or Categorical -- for a
        categorical, its categories).
    name : str
        The argument name used in messages.
    """

    def __init__(self, classes: Any, name: str = "classes") -> None:
        if _is_categorical(classes) or hasattr(classes, "categories"):
            classes = getattr(classes, "cat", classes).categories
        raw = nonempty_param(classes, name, "expected a non-empty sequence of labels")
        labels = [_plain_label(v, name) for v in raw]
        index: dict[Any, int] = {}
        for i, v in enumerate(labels):
            if v in index:
                raise ValueError(f"{name}: labels must be distinct; {v!r} at position {i} repeats "
                                 f"{labels[index[v]]!r} at position {index[v]}")
            index[v] = i
        self.classes: tuple[Any, ...] = tuple(labels)
        self._index = index
        kinds = {type(v) for v in labels}
        if kinds <= {str}:
            self._array = np.array(labels, dtype=str)
        elif kinds <= {int}:
            self._array = np.array(labels, dtype=np.int64) if all(
                -(2**63) <= v < 2**63 for v in labels) else np.array(labels, dtype=object)
        elif kinds <= {int, float}:
            self._array = np.array(labels, dtype=np.float64)
        else:
            self._array = np.array(labels, dtype=object)

    def __len__(self) -> int:
        return len(self.classes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClassMapping) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return f"ClassMapping({list(self.classes)!r})"

    def key(self) -> tuple[Any, ...]:
        """Identity for merges: the labels with their kinds (``1`` and ``"1"`` differ)."""
        return tuple((type(v).__name__, v) for v in self.classes)

    def config(self) -> list[Any]:
        """The labels as a JSON-able list (the constructor's argument)."""
        return list(self.classes)

    @property
    def array(self) -> np.ndarray:
        """The labels as a numpy array (strings, int64, float64 or objects)."""
        return self._array

    def index(self, label: Any, name: str) -> int:
        """The class index of one label; ``ValueError`` naming ``name`` if it is not a class."""
        i = self._index.get(_key(label.item() if isinstance(label, np.generic) else label))
        if i is None or (isinstance(label, (str, np.str_)) != isinstance(self.classes[i], str)):
            raise ValueError(f"{name}: unknown label {label!r} (classes: {self._shown()})"[:400])
        return i

    def encode(self, y: Any, name: str, passthrough: int | None = None) -> np.ndarray:
        """Codes ``0..C-1`` of the labels ``y`` (any shape); a label equal to ``passthrough`` (an
        ``ignore_index``) keeps that value. Unknown labels: ``ValueError`` naming ``name``, the
        first unknown label and its index. O(n) / O(n log C), see :func:`encode`."""
        codes = encode(y, self._array)
        a: np.ndarray | None = None
        if passthrough is not None:
            a = label_array(y, name)
            if a.dtype.kind in "biuf" or a.dtype.kind == "O":
                with np.errstate(invalid="ignore"):
                    hit = np.asarray(a == passthrough)
                if hit.shape == codes.shape and hit.any():
                    codes = np.where(hit, passthrough, codes)
        bad = codes == -1
        if passthrough == -1:
            bad &= ~np.asarray(label_array(y, name) == -1)
        if bad.any():
            a = label_array(y, name) if a is None else a
            idx = first_bad(bad)
            value = a[idx]
            value = value.item() if isinstance(value, np.generic) else value
            raise ValueError(
                f"{name}: unknown label {value!r} at index {idx} (classes: {self._shown()})"[:400]
            )
        return codes.astype(np.intp, copy=False)

    def _shown(self) -> str:
        shown = ", ".join(repr(v) for v in self.classes[:10])
        return f"[{shown}{', ...' if len(self.classes) > 10 else ''}]"


# -- how one accumulator's arguments become codes ------------------------------------------------
class LabelCodec:
    """The label encoding of one accumulator (see the module docstring).

    Parameters
    ----------
    task : {"binary", "multiclass", "multilabel"}
    mapping : ClassMapping or None
        The classes (binary: two, ``[negative, positive]`` unless ``pos_label`` says which).
    pos_label : label or None
        Binary only: the positive label. Without ``mapping`` every other label is negative (a
        batch holding more than two distinct labels is a ``ValueError``, as scikit-learn's binary
        targets hold at most two).
    ignore_index : int or None
        A ``y_true`` value that passes through unchanged (the state skips it).
    hard_predictions : bool
        Whether the second argument may hold labels (the confusion family): binary non-float
        ``y_pred`` and multiclass 1-D ``y_pred`` are encoded too; float binary ``y_pred`` and
        2-D multiclass ``y_pred`` are scores and pass through.
    """

    def __init__(self, task: str, mapping: ClassMapping | None, pos_label: Any = None,
                 ignore_index: int | None = None, hard_predictions: bool = False) -> None:
        self.task, self.mapping, self.ignore_index = task, mapping, ignore_index
        self.hard_predictions = hard_predictions
        self.pos_label = None if pos_label is None else _plain_label(pos_label, "pos_label")
        self.positive = 1
        if task == "binary" and mapping is not None:
            self.positive = 1 if pos_label is None else mapping.index(pos_label, "pos_label")

    def key(self) -> Hashable:
        return ("labels", None if self.mapping is None else self.mapping.key(),
                (type(self.pos_label).__name__, self.pos_label), self.positive)

    def encode_args(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``(y_true, y_pred/y_score, ...)`` with the labels replaced by codes."""
        if len(args) >= 2:
            return (self.true_codes(args[0]), self.pred_codes(args[1]), *args[2:]), kwargs
        kwargs = dict(kwargs)
        if args:
            args = (self.true_codes(args[0]),)
        elif "y_true" in kwargs:
            kwargs["y_true"] = self.true_codes(kwargs["y_true"])
        if "y_pred" in kwargs:
            kwargs["y_pred"] = self.pred_codes(kwargs["y_pred"])
        return args, kwargs

    def true_codes(self, y: Any) -> Any:
        if self.task == "multilabel":  # an indicator matrix: a sparse batch as the dense scores
            return y.toarray() if is_sparse(y) else y
        if is_label_scalar(y):
            return self._one(y, "y_true")
        if is_sparse(y):
            raise ValueError(f"y_true: a sparse (multilabel-indicator) target for a {self.task} metric")
        a = label_array(y, "y_true") if not _is_categorical(y) else y
        if np.ndim(a) == 2 and np.shape(a)[1] > 1:
            raise ValueError(f"y_true: a multilabel-indicator target of shape {np.shape(a)} for a "
                             f"{self.task} metric (labels must be 1-D)")
        return self._codes(a, "y_true", ignore=True)

    def pred_codes(self, p: Any) -> Any:
        if not self.hard_predictions or self.task == "multilabel":
            return p
        if is_label_scalar(p):
            if isinstance(p, (float, np.floating)) and self.task == "binary":
                return p  # a score
            return self._one(p, "y_pred")
        if is_sparse(p):
            raise ValueError(f"y_pred: a sparse (multilabel-indicator) target for a {self.task} metric")
        a = p if _is_categorical(p) else label_array(p, "y_pred")
        if np.ndim(a) == 2 and self.task == "multiclass":
            if a.dtype.kind != "f":
                raise ValueError(
                    f"y_pred: a 2-D array of {a.dtype} for a multiclass metric: scores must be "
                    "floats (an integer 0/1 matrix is a multilabel-indicator target, which "
                    "cannot be mixed with multiclass labels)")
            return a
        if self.task == "binary" and not _is_categorical(a) and a.dtype.kind == "f":
            return a  # scores, thresholded by the state
        if np.ndim(a) == 2 and np.shape(a)[1] > 1:
            raise ValueError(f"y_pred: a multilabel-indicator target of shape {np.shape(a)} for a "
                             f"{self.task} metric (labels must be 1-D)")
        return self._codes(a, "y_pred", ignore=False)

    def _one(self, y: Any, name: str) -> Any:
        if name == "y_true" and self.ignore_index is not None and not isinstance(y, (str, np.str_)) \
                and y == self.ignore_index:
            return self.ignore_index
        if self.mapping is not None:
            i = self.mapping.index(y, name)
            return int(i == self.positive) if self.task == "binary" else i
        return int(self._is_positive(np.array([y]))[0])

    def _codes(self, a: Any, name: str, ignore: bool) -> np.ndarray:
        passthrough = self.ignore_index if ignore else None
        if self.mapping is not None:
            codes = self.mapping.encode(a, name, passthrough)
            if self.task == "binary":
                keep = codes == passthrough if passthrough is not None else None
                codes = (codes == self.positive).astype(np.intp)
                if keep is not None and keep.any():
                    codes[keep] = passthrough
            return codes
        # binary, pos_label only
        arr = label_array(a, name)
        values = unique(arr.ravel()) if arr.dtype.kind != "O" else _distinct_objects(arr)
        if passthrough is not None:
            values = [v for v in (values.tolist() if isinstance(values, np.ndarray) else values)
                      if not (not isinstance(v, str) and v == passthrough)]
        if len(values) > 2:
            shown = ", ".join(repr(v) for v in list(values)[:5])
            raise ValueError(
                f"{name}: a binary task (pos_label={self.pos_label!r}) takes at most two distinct "
                f"labels, got {len(values)} in this batch ({shown}{', ...' if len(values) > 5 else ''}); "
                "give classes=[negative, positive] to fix both"[:400])
        codes = self._is_positive(arr).astype(np.intp)
        if passthrough is not None:
            with np.errstate(invalid="ignore"):
                hit = np.asarray(arr == passthrough)
            if hit.shape == codes.shape and hit.any():
                codes[hit] = passthrough
        return codes

    def _is_positive(self, arr: np.ndarray) -> np.ndarray:
        pos = self.pos_label
        if arr.dtype.kind in "US":
            return arr == pos if isinstance(pos, str) else np.zeros(arr.shape, dtype=bool)
        if arr.dtype.kind == "O":
            return same_labels(arr, pos)
        if isinstance(pos, str):
            return np.zeros(arr.shape, dtype=bool)
        return np.asarray(arr == pos)


def same_labels(arr: np.ndarray, label: Any) -> np.ndarray:
    """Which entries of an object array are the label ``label``: of its kind (a string or not:
    ``1`` is not ``"1"``) and equal to it -- ``isinstance(v, str) == isinstance(label, str) and
    bool(v == label)`` for each entry ``v`` (so ``None`` and NaN never are, ``True`` is ``1``,
    ``np.str_("a")`` is ``"a"``), as a boolean array of ``arr``'s shape.

    Vectorised: numpy's elementwise ``==``, then the types of the equal entries only (a set of
    them: one C pass). An entry whose ``==`` gives no truth value (``pd.NA``, an array) sends
    the batch through the entry-by-entry rule, which refuses it as it did (``TypeError`` /
    ``ValueError``) or skips it where the kinds differ. O(n) comparisons; O(n) Python steps
    only on that fallback.
    """
    flat = arr.ravel()
    want = isinstance(label, str)
    try:
        hit = np.asarray(flat == label, dtype=bool)
    except (TypeError, ValueError):
        hit = None
    if hit is None or hit.shape != flat.shape:
        return np.array([(isinstance(v, str) == want) and v == label for v in flat.tolist()],
                        dtype=bool).reshape(arr.shape)
    if hit.any():  # an equal entry of the other kind (a str subclass equal to a number...) is not
        where = np.flatnonzero(hit)
        equal = flat[where]
        for kind in set(map(type, equal.tolist())):
            if issubclass(kind, str) != want:
                hit[where[[type(v) is kind for v in equal.tolist()]]] = False
    return hit.reshape(arr.shape)


def _distinct_objects(arr: np.ndarray) -> list[Any]:
    """The distinct labels of an object array as :func:`_key` tells them apart (each NaN and
    each unhashable entry its own): one C pass (``set``) unless the array holds one of those.
    O(n)."""
    items = arr.ravel().tolist()
    try:
        found = set(items)
    except TypeError:  # an unhashable entry
        found = None
    if found is None or any(isinstance(v, float) and math.isnan(v) for v in found):
        return list({_key(v) for v in items})
    return list(found)


def numeric_or_labels(x: Any, name: str) -> Any:
    """``x`` converted once for several states (a ``MetricSet``): numbers through
    :func:`as_numpy`; labels that only a codec reads (strings, objects, pandas categoricals,
    sparse indicators, scalars) as they are or as a numpy array of them. O(n)."""
    if is_label_scalar(x) or is_sparse(x) or _is_categorical(x):
        return x
    if type(x) is list or type(x) is tuple or (type(x) is np.ndarray and x.dtype.kind == "O"):
        with contextlib.suppress(Exception):  # ints beyond int64 stay ints: labels refuse them
            arr = np.asarray(x)
            if arr.dtype.kind == "O" and _first_huge(arr, arr.ndim) is not None:
                return arr
    try:
        return as_numpy(x, name)
    except ValueError:
        arr = label_array(x, name)
        if arr.dtype.kind in "USO":
            return arr
        raise


def refuse_huge_ints(x: Any, name: str, rule: str, max_ndim: int = 2) -> Any:
    """``x`` with Python ints beyond int64 refused as the labels they are: ``ValueError``
    ``"{name}: {rule}; first invalid value {v} at index {i}"`` for such an int alone, or in a
    list, tuple or object array whose entries are all ints (numpy makes them float64, which
    would read ``10**30`` as a score). A list or tuple comes back as its numpy array (converted
    once); anything else unchanged. O(1) unless ``x`` is a list, tuple or object array (O(n)).

    Parameters
    ----------
    x : Any
        ``y_true`` or ``y_pred`` as given to ``update``.
    name : str
        The argument's name, for the message.
    rule : str
        What the labels must be (e.g. ``"labels must be 0 or 1"``), for the message.
    max_ndim : int, default 2
        Arrays of more dimensions are left alone (1: a multiclass ``y_pred``, whose 2-D form
        holds scores).

    Returns
    -------
    Any
        ``x``, or its numpy array.
    """
    if type(x) is int:
        if not -(2**63) <= x < 2**63:
            raise ValueError(f"{name}: {rule}; first invalid value {x!r} at index 0")
        return x
    if type(x) is list or type(x) is tuple:
        try:
            arr = np.asarray(x)
        except Exception:  # noqa: BLE001 - ragged or odd: as_numpy reports it
            return x
        if arr.dtype.kind not in "biufO":
            return x
        x = arr
    if type(x) is np.ndarray and x.dtype.kind == "O":
        found = _first_huge(x, max_ndim)
        if found is not None:
            raise ValueError(f"{name}: {rule}; first invalid value {found[1]!r} at index {found[0]}")
    return x


def _first_huge(x: np.ndarray, max_ndim: int) -> tuple[Any, int] | None:
    """(index, value) of the first int beyond int64 in an object array of at most ``max_ndim``
    dimensions whose entries are all ints (not bools); None otherwise. O(n)."""
    if not x.size or x.ndim > max_ndim:
        return None
    flat = x.ravel().tolist()
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in flat):
        return None
    for i, v in enumerate(flat):
        if not -(2**63) <= int(v) < 2**63:
            return (i if x.ndim == 1 else tuple(int(j) for j in np.unravel_index(i, x.shape))), int(v)
    return None


def label_rule(name: str, task: str, num_classes: int, ignore_index: int | None) -> str:
    """What the labels of argument ``name`` of a confusion state must be, worded as the label
    checks of :mod:`streammetrics._core.validation` word it. O(1)."""
    extra = f" (or ignore_index={ignore_index})" if name == "y_true" and ignore_index is not None else ""
    if task == "multiclass":
        return f"class labels must be integers in [0, {num_classes}){extra}"
    return f"labels must be 0 or 1{extra}"


def label_numbers(y_true: Any, y_pred: Any, task: str, num_classes: int,
                  ignore_index: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Both arguments of a confusion state as numpy arrays (:func:`as_numpy`), a Python int
    beyond int64 refused as a label (:func:`refuse_huge_ints`) instead of read as a float64
    score (a multiclass ``y_pred`` of scores, 2-D, excepted). O(n) for lists, O(1) for arrays."""
    out = []
    for x, name in ((y_true, "y_true"), (y_pred, "y_pred")):
        if type(x) is not np.ndarray or x.dtype.kind == "O":  # a numeric array holds no int objects
            ndim = 1 if task == "multiclass" and name == "y_pred" else 2
            x = refuse_huge_ints(x, name, label_rule(name, task, num_classes, ignore_index), ndim)
        out.append(as_numpy(x, name))
    return out[0], out[1]
