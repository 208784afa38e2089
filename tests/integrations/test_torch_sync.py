"""streammetrics.torch.sync across real gloo ranks (torch.multiprocessing.spawn on 127.0.0.1).

Rank r gets shard r of a fixed dataset; the last rank gets nothing. After ``sync`` every rank must
hold exactly the single-process state: confusion counts (all_reduce), exact ranking buffers
(padded all_gather), bounded (binned) ranking states, a MetricSet mixing both, and retrieval sums.
"""

from __future__ import annotations

import os
import socket
import tempfile
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import streammetrics as sm  # noqa: E402

if not dist.is_available():  # pragma: no cover
    pytest.skip("torch.distributed is not available", allow_module_level=True)

from streammetrics._core.metric import Metric  # noqa: E402
from streammetrics._core.state import State  # noqa: E402
from streammetrics.torch import PaddingFilter, num_unpadded, sync  # noqa: E402


class _TopScoreState(State):
    """A fixed-shape state whose merge is not a sum (per-label maximum score), standing in for
    bounded ranking states: it must travel through the gather path, not all_reduce."""

    def __init__(self) -> None:
        self.top = np.full(2, -np.inf)

    def key(self) -> Any:
        return ("top-score",)

    def prepare(self, y_true: Any, y_score: Any, sample_weight: Any = None) -> np.ndarray:
        out = np.full(2, -np.inf)
        np.maximum.at(out, np.asarray(y_true).astype(np.int64), np.asarray(y_score, dtype=np.float64))
        return out

    def apply(self, delta: np.ndarray) -> None:
        np.maximum(self.top, delta, out=self.top)

    def arrays(self) -> dict[str, Any]:
        return {"top": self.top.copy()}

    def load_arrays(self, arrays: Any) -> None:
        top = np.asarray(arrays["top"], dtype=np.float64)
        if top.shape != (2,):
            raise ValueError("state: bad shape")
        self.top = top.copy()

    def merge(self, other: State) -> None:
        assert isinstance(other, _TopScoreState)
        np.maximum(self.top, other.top, out=self.top)

    def reset(self) -> None:
        self.top[:] = -np.inf


class ScaleoutTopScore(Metric):
    """Test double: the highest score seen per label (fixed shape, merged by maximum)."""

    def __init__(self) -> None:
        super().__init__()
        self._state = _TopScoreState()

    def _config(self) -> dict[str, Any]:
        return {}

    def _compute(self) -> np.ndarray:
        return self._state.top.copy()

N = 30_000
C = 3


def _data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    logits = rng.normal(size=(N, C))
    return {
        "y": rng.integers(0, 2, N),
        "p": np.round(rng.random(N), 3),  # ties
        "w": rng.integers(0, 4, N).astype(np.float64),
        "yc": rng.integers(0, C, N),
        "s": np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 3),
        "q": np.repeat(np.arange(N // 10), 10),
        # regression: float targets with ties, a second output, interval bounds
        "ry": np.round(rng.normal(size=(N, 2)) * 4) / 4,
        "rp": np.round(rng.normal(size=(N, 2)) * 8) / 8,
        "rel": rng.integers(0, 3, N),
    }


def _shard(world: int, rank: int) -> slice:
    """Shards over the first world - 1 ranks; the last rank is empty. Cut at query boundaries."""
    cuts = np.linspace(0, N // 10, world).astype(int) * 10
    if rank == world - 1:
        return slice(N, N)
    return slice(int(cuts[rank]), int(cuts[rank + 1]))


def _accumulators() -> dict[str, sm.Metric]:
    return {
        "confusion": sm.MetricSet(cm=sm.ConfusionMatrix(), f1=sm.F1(), acc=sm.Accuracy(threshold=0.3)),
        "multiclass": sm.ConfusionMatrix(num_classes=C),
        "auroc_w": sm.AUROC(),
        "mixed": sm.MetricSet(auroc=sm.AUROC(num_classes=C), ap=sm.AveragePrecision(num_classes=C),
                              f1=sm.F1(num_classes=C), cm=sm.ConfusionMatrix(num_classes=C)),
        "fixed_unsummed": sm.MetricSet(top=ScaleoutTopScore(), f1=sm.F1()),
        "retrieval": sm.MetricSet(ndcg=sm.NDCG(k=5), map=sm.MAP(), p5=sm.PrecisionAtK(5)),
        # bounded ranking: binned once the distinct scores exceed the 2 KiB budget
        "bounded": sm.MetricSet(auroc=sm.AUROC(max_bytes=2048), ap=sm.AveragePrecision(max_bytes=2048)),
        "bounded_mc": sm.AUROC(num_classes=C, max_bytes=4096, average=None),
        # per-slice accumulators; the ranks see different slices (keys follow the row order)
        "sliced": sm.Sliced(sm.MetricSet(f1=sm.F1(), auroc=sm.AUROC())),
        # regression (issue #30): moments, sorted value buffers, pair ranks, bounded bins, intervals
        "regression": sm.MetricSet(mse=sm.MeanSquaredError(multioutput="raw_values"),
                                   r2=sm.R2Score(), medae=sm.MedianAbsoluteError(),
                                   spearman=sm.SpearmanCorrCoef(multioutput="raw_values"),
                                   kendall=sm.KendallTau(), pearson=sm.PearsonCorrCoef()),
        "regression_bounded": sm.MedianAbsoluteError(max_bytes=1024),
        "regression_interval": sm.IntervalCoverage(),
    }


def _feed(accs: dict[str, sm.Metric], d: dict[str, np.ndarray], sl: slice, as_tensor: bool) -> None:
    def t(x: np.ndarray) -> Any:
        return torch.from_numpy(np.ascontiguousarray(x)) if as_tensor else x

    y, p, w, yc, s = (d[k][sl] for k in ("y", "p", "w", "yc", "s"))
    accs["confusion"].update(t(y), t(p), sample_weight=t(w))
    accs["multiclass"].update(t(yc), t(s))
    accs["auroc_w"].update(t(y), t(p), sample_weight=t(w))
    accs["mixed"].update(t(yc), t(s))
    accs["fixed_unsummed"].update(y, p)
    accs["bounded"].update(t(y), t(p), sample_weight=t(w))
    accs["bounded_mc"].update(t(yc), t(s))
    accs["sliced"].update(y, p, slices=np.arange(sl.start, sl.stop) * 7 // N, sample_weight=w)
    ry, rp = d["ry"][sl], d["rp"][sl]
    accs["regression"].update(t(ry), t(rp), sample_weight=t(w))
    accs["regression_bounded"].update(t(ry[:, 0]), t(p))  # thousands of distinct errors: binned
    accs["regression_interval"].update(ry[:, 0], np.stack([rp[:, 0] - 0.5, rp[:, 0] + 0.5], axis=1),
                                       sample_weight=w)
    if sl.stop > sl.start:
        accs["retrieval"].update(d["rel"][sl], d["p"][sl], query_ids=d["q"][sl])


def _same_state(a: sm.Metric, b: sm.Metric, what: str) -> None:
    da, db = a.state_dict(), b.state_dict()
    assert da.keys() == db.keys(), what
    assert da["config"] == db["config"], what
    for k in da:
        if k in ("class", "format_version", "config"):
            continue
        x, y = np.asarray(da[k]), np.asarray(db[k])
        if what.startswith("regression") and not what.endswith("unchanged"):  # compared by value below
            assert x.shape == y.shape and x.dtype == y.dtype, f"{what}: {k}"
        elif x.dtype.kind == "f" and what == "retrieval":  # per-query sums added in another order
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=0, err_msg=f"{what}: {k}")
        else:
            np.testing.assert_array_equal(x, y, err_msg=f"{what}: {k}")


def _regression_oracle(name: str, merged: sm.Metric, d: dict[str, np.ndarray]) -> None:
    """The synced regression accumulators equal scikit-learn / scipy on every row (issue #30)."""
    import scipy.stats as ss
    from sklearn import metrics as skm

    y, p, w = d["ry"], d["rp"], d["w"]
    if name == "regression_bounded":
        assert not merged.is_exact  # type: ignore[attr-defined]
        low, high = merged.bounds()  # type: ignore[attr-defined]
        assert low <= skm.median_absolute_error(y[:, 0], d["p"]) <= high
        return
    if name == "regression_interval":
        inside = (p[:, 0] - 0.5 <= y[:, 0]) & (y[:, 0] <= p[:, 0] + 0.5)
        np.testing.assert_allclose(merged.compute(), (w * inside).sum() / w.sum(), rtol=1e-12)
        return
    got = merged.compute()
    want = {"mse": skm.mean_squared_error(y, p, sample_weight=w, multioutput="raw_values"),
            "r2": skm.r2_score(y, p, sample_weight=w),
            "medae": skm.median_absolute_error(y, p, sample_weight=w)}
    for k, v in want.items():
        np.testing.assert_allclose(got[k], v, rtol=1e-12, err_msg=k)
    assert set(got) == {*want, "spearman", "kendall", "pearson"}
    # the rank and product-moment correlations, weighted: equal to the unweighted scipy values on
    # the rows repeated by their integer weights
    rep = np.repeat(np.arange(len(w)), w.astype(np.int64))
    for j in range(2):
        np.testing.assert_allclose(got["spearman"][j], ss.spearmanr(y[rep, j], p[rep, j]).statistic,
                                   rtol=1e-12)


def _worker(rank: int, world: int, init: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    try:
        d = _data()
        local = _accumulators()
        _feed(local, d, _shard(world, rank), as_tensor=(rank % 2 == 1))
        before = {k: m.state_dict() for k, m in local.items()}
        ref = _accumulators()
        _feed(ref, d, slice(0, N), as_tensor=False)
        for name, acc in local.items():
            merged = sync(acc)
            assert type(merged) is type(acc)
            _same_state(merged, ref[name], name)
            got, want = merged.compute(), ref[name].compute()
            if name.startswith("regression"):
                _regression_oracle(name, merged, d)
            if isinstance(want, dict) and name in ("retrieval", "regression"):
                for k in want:
                    np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=0)
            elif name.startswith("regression"):
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
            else:
                np.testing.assert_equal(got, want)
            if name.startswith("bounded"):  # really binned, and still certified
                member = merged["auroc"] if isinstance(merged, sm.MetricSet) else merged
                assert not member.is_exact
                np.testing.assert_equal(member.bounds(), ref[name]["auroc"].bounds()
                                        if isinstance(merged, sm.MetricSet) else ref[name].bounds())
            # the local accumulator is untouched: a later sync does not double count
            _same_state(acc, type(acc).from_state_dict(before[name]), f"{name} unchanged")
        # a configuration mismatch raises the same ValueError on every rank (no hang)
        try:
            sync(sm.F1(threshold=0.5 if rank == 0 else 0.25))
        except ValueError as exc:
            assert "configuration" in str(exc)
        else:
            raise AssertionError("sync accepted different configurations")
        # the group is still usable afterwards
        again = sync(local["multiclass"])
        _same_state(again, ref["multiclass"], "after error")
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("world", [3])
def test_gloo_ranks_hold_the_single_process_state(world: int) -> None:
    init = f"tcp://127.0.0.1:{_free_port()}"
    with tempfile.TemporaryDirectory() as tmp:
        env = os.environ.copy()
        os.environ["TMPDIR"] = tmp
        try:
            mp.spawn(_worker, args=(world, init), nprocs=world, join=True)
        finally:
            os.environ.clear()
            os.environ.update(env)


def test_sync_without_process_group_is_a_copy() -> None:
    m = sm.F1().update([0, 1, 1], [0.2, 0.7, 0.4])
    c = sync(m)
    assert c is not m and c.compute() == m.compute()
    with pytest.raises(ValueError, match="accumulator"):
        sync([1, 2, 3])  # type: ignore[type-var]


def test_gathered_states_keep_0d_arrays() -> None:
    """The gather path's byte encoding keeps every array's shape, 0-d included (the regression
    moments' row and weight totals: ``np.ascontiguousarray`` makes a 0-d array 1-d, and the
    synced state was refused on load, issue #30)."""
    from streammetrics.torch import _decode, _encode

    arrays = {"rows": np.array(3.0), "mean": np.arange(4.0).reshape(2, 2), "none": np.zeros(0),
              "n": 7}
    back = _decode(_encode(arrays))
    for k, v in arrays.items():
        np.testing.assert_array_equal(back[k], v)
        assert np.shape(back[k]) == np.shape(v), k


class _FakeSampler:
    def __init__(self, n: int, world: int, rank: int, drop_last: bool) -> None:
        self.sampler = torch.utils.data.DistributedSampler(
            range(n), num_replicas=world, rank=rank, shuffle=True, seed=3, drop_last=drop_last)


@pytest.mark.parametrize("drop_last", [False, True])
def test_padding_helpers_count_every_sample_once(drop_last: bool) -> None:
    for n in range(1, 23):
        for world in (1, 2, 3, 4, 5):
            seen: list[int] = []
            for rank in range(world):
                sampler = _FakeSampler(n, world, rank, drop_last).sampler
                indices = np.fromiter(iter(sampler), dtype=np.int64)
                k = num_unpadded(sampler)
                keep = PaddingFilter(sampler)
                kept = [keep(torch.from_numpy(b)) for b in np.array_split(indices, 3)]
                kept_idx = np.concatenate([b.numpy() for b in kept]) if kept else np.zeros(0)
                np.testing.assert_array_equal(kept_idx, indices[:k])
                seen.extend(indices[:k].tolist())
            if drop_last:
                assert len(seen) == len(set(seen))  # nothing duplicated (the tail is dropped)
            else:
                assert sorted(seen) == list(range(n)), (n, world)
    # several arguments are cut together; reset starts a new epoch
    sampler = _FakeSampler(5, 3, 2, False).sampler  # rank 2 of 3 on 5 samples: 1 real, 1 padded
    keep = PaddingFilter(sampler)
    y, s = keep(np.array([1, 0]), np.array([0.3, 0.8]))
    assert y.tolist() == [1] and s.tolist() == [0.3]
    assert keep.remaining == 0
    assert keep.reset().remaining == 1
    with pytest.raises(ValueError, match="DistributedSampler"):
        num_unpadded(object())


def test_only_plain_summed_blocks_take_the_all_reduce_path() -> None:
    from streammetrics.torch import _summed_keys

    def keys(m: sm.Metric) -> list[str]:
        sd = m.state_dict()
        return _summed_keys(m, {k: v for k, v in sd.items() if k not in ("class", "format_version", "config")})

    assert keys(sm.MetricSet(cm=sm.ConfusionMatrix(), au=sm.AUROC())) == ["cm.counts", "cm.counts_w2"]
    assert keys(sm.F1()) == ["counts", "counts_w2"]
    assert keys(sm.AUROC()) == []
    assert keys(sm.MetricSet(top=ScaleoutTopScore())) == []
    # wrappers add their own entries (clocks, counters): they always take the gather path
    assert keys(sm.Decayed(sm.F1(), half_life=10)) == []
    assert keys(sm.Window(sm.F1(), size=10)) == []


def _left_keys(call: int) -> list[str]:
    """Which of the store keys of the world group's sync call ``call`` are still in the store:
    each rank's post ("0", "1"), the roll and the count of ranks gone."""
    import streammetrics.torch as smt

    store = smt._store()
    names = ("0", "1", "roll", "gone")
    return [n for n in names if store.check([f"streammetrics/sync/world/{call}/{n}"])]


def _steps_worker(rank: int, world: int, init: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    try:
        m = sm.F1().update([0, 1, 1, 0], [0.2, 0.7, 0.4, 0.9] if rank else [0.1, 0.8, 0.6, 0.3])
        ref = sm.F1().update([0, 1, 1, 0, 0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3, 0.2, 0.7, 0.4, 0.9])
        assert sync(m, step=1).compute() == ref.compute()
        # ranks at different steps: the same ValueError on every rank, nothing exchanged
        try:
            sync(m, step=2 if rank == 0 else "epoch-end")
        except ValueError as exc:
            assert "different steps" in str(exc) and "rank 0: 2" in str(exc) and "rank 1: 'epoch-end'" in str(exc)
        else:
            raise AssertionError("sync accepted different steps")
        assert sync(m, step=3).compute() == ref.compute()  # the group still works
        # rank 1 stops syncing: rank 0 is told which rank is missing instead of waiting forever
        if rank == 0:
            try:
                sync(m, step=4, timeout=2.0)
            except TimeoutError as exc:
                assert "rank(s) [1]" in str(exc) and "step 4" in str(exc)
            else:
                raise AssertionError("sync did not time out")
        dist.barrier()
        # the calls that merged and the one at different steps left nothing in the store; the
        # timed-out call its closed roll (for rank 1, should it come) and the count of ranks gone
        assert [_left_keys(call) for call in range(4)] == [[], [], [], ["roll", "gone"]]
    finally:
        dist.destroy_process_group()


def test_sync_checks_steps_and_names_a_missing_rank() -> None:
    mp.spawn(_steps_worker, args=(2, f"tcp://127.0.0.1:{_free_port()}"), nprocs=2, join=True)


def _late_rank_worker(rank: int, world: int, init: str) -> None:
    """Rank 1 skips a sync that rank 0 gives up on; when rank 1 reaches that call later it raises
    the same TimeoutError at once (it does not enter the collectives alone), and the next sync
    of both ranks pairs up and merges. The process group's own timeout bounds a regression (a
    collective waiting for a rank that will not join) to an error, not a hang."""
    from datetime import timedelta

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world, timeout=timedelta(seconds=60))
    try:
        m = sm.AUROC().update([0, 1, 1, 0], [0.2, 0.7, 0.4, 0.9] if rank else [0.1, 0.8, 0.6, 0.3])
        ref = sm.AUROC().update([0, 1, 1, 0, 0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3, 0.2, 0.7, 0.4, 0.9])
        assert sync(m, step=1).compute() == ref.compute()
        if rank == 0:
            try:
                sync(m, step=2, timeout=1.0)
            except TimeoutError as exc:
                assert "rank(s) [1] of [0, 1] did not reach sync call #1 (step 2 on rank 0)" in str(exc)
                assert "this rank gave up waiting" in str(exc)
            else:
                raise AssertionError("sync did not time out")
        dist.barrier()  # rank 1 comes to the call only after rank 0 gave up on it
        if rank == 1:
            try:
                sync(m, step=2, timeout=30.0)
            except TimeoutError as exc:
                assert "rank(s) [1] of [0, 1] did not reach sync call #1 (step 2 on rank 1)" in str(exc)
                assert "this rank came after" in str(exc)
            else:
                raise AssertionError("the late rank entered a sync the others had given up")
        # the call counts agree again: the next sync pairs up and merges
        assert sync(m, step=3, timeout=30.0).compute() == ref.compute()
        assert sync(m).compute() == ref.compute()
        dist.barrier()
        # every rank has left the timed-out call #1 too: no call left a key in the store
        assert [_left_keys(call) for call in range(4)] == [[], [], [], []]
    finally:
        dist.destroy_process_group()


def test_a_timed_out_sync_leaves_the_group_usable() -> None:
    mp.spawn(_late_rank_worker, args=(2, f"tcp://127.0.0.1:{_free_port()}"), nprocs=2, join=True)


def _no_store_worker(rank: int, world: int, init: str) -> None:
    """Without a key-value store (a torch that does not expose the default group's), step= and
    timeout= cannot be honoured: a RuntimeError on every rank before any collective; a plain
    sync warns once and still merges."""
    import warnings

    import streammetrics.torch as smt

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    try:
        m = sm.F1().update([0, 1, 1, 0], [0.2, 0.7, 0.4, 0.9] if rank else [0.1, 0.8, 0.6, 0.3])
        ref = sm.F1().update([0, 1, 1, 0, 0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3, 0.2, 0.7, 0.4, 0.9])
        real = smt._store
        smt._store = lambda: None  # streammetrics' own lookup of the store, not torch.distributed
        try:
            for kwargs, named in (({"step": 4}, "step="), ({"timeout": 5.0}, "timeout="),
                                  ({"step": 4, "timeout": 5.0}, "step and timeout=")):
                try:
                    sync(m, **kwargs)
                except RuntimeError as exc:
                    assert f"sync: {named} cannot be honoured" in str(exc) and "key-value store" in str(exc)
                else:
                    raise AssertionError(f"sync ignored {kwargs} without a store")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                assert sync(m).compute() == ref.compute()
                assert sync(m).compute() == ref.compute()
            shown = [w for w in caught if issubclass(w.category, RuntimeWarning)]
            assert len(shown) == 1 and "goes straight to the collectives" in str(shown[0].message)
        finally:
            smt._store = real
        assert sync(m, step=5).compute() == ref.compute()  # with the store again: checked
        dist.barrier()
    finally:
        dist.destroy_process_group()


def test_without_a_store_step_and_timeout_raise_and_a_plain_sync_warns() -> None:
    mp.spawn(_no_store_worker, args=(2, f"tcp://127.0.0.1:{_free_port()}"), nprocs=2, join=True)


@pytest.mark.parametrize("bad", ["x", float("nan"), float("inf"), -1.0, 0, True, 1e300])
def test_a_bad_timeout_is_refused_naming_it_before_anything_is_counted(bad) -> None:
    """``timeout`` is checked first (a string, NaN, inf, 0, a negative or overflowing duration):
    a ValueError naming it and the value, raised before this rank counts the call or posts to
    the store, so a rank that passed a bad timeout leaves the group's call counts as they were."""
    import datetime

    from streammetrics import torch as sm_torch

    before = dict(sm_torch._CALLS)
    with pytest.raises(ValueError, match=r"^timeout: .*got "):
        sm_torch.sync(sm.AUROC().update([0, 1], [0.2, 0.7]), timeout=bad)
    with pytest.raises(ValueError, match=r"^timeout: "):
        sm_torch.sync(sm.AUROC(), timeout=datetime.timedelta(seconds=-1))
    assert before == sm_torch._CALLS
    assert sm_torch._checked_timeout(2) == datetime.timedelta(seconds=2)
    assert sm_torch._checked_timeout(None) is None
