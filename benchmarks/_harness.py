"""Shared helpers for the benchmark scripts in ``benchmarks/`` (not part of the library).

The API is deliberately small; every ``bench_*.py`` module may use it:

* :func:`measure` -- time a callable: warm-up runs, then ``repeat`` runs, median and best.
* :func:`measure_interleaved` -- time several callables in alternation (run 1 of each, run 2 of
  each, ...), so that load from other processes disturbs all of them alike: use it for ratios.
* :func:`run_limited` -- run ``module:function(**kwargs)`` in a fresh Python subprocess with an
  address-space limit (``resource.setrlimit(RLIMIT_AS)``), one thread for torch / BLAS / OpenMP,
  and a timeout. Returns the function's JSON-able dict plus ``status`` (``"ok"``,
  ``"out of memory (limit N MB)"``, ``"timeout (N s)"`` or ``"error: ..."``) and ``peak_rss_mb``
  (the child's peak resident set). A workload a peer cannot run on this machine is therefore
  *reported* with its status instead of being dropped.
* :func:`default_mem_limit_mb` -- the default limit: 75 % of the memory available now.
* :func:`single_thread` -- pin torch (if importable) and the BLAS pools to one thread.
* :func:`markdown_table` -- a GitHub markdown table from headers and rows.
* :func:`env_header` -- a markdown block with CPU count, platform and package versions.
* :func:`machine_line` -- one line with the CPU model, the CPU count and the load average now,
  printed next to every table (a table measured on a busy machine says so).
* :func:`fmt_rate`, :func:`fmt_ratio`, :func:`fmt_us` -- number formatting for the tables.
* :func:`differing_values` -- which metrics' values differ between two runs, and by how much.
* :class:`Report` -- the one way a benchmark prints: each line, table or table row goes to
  stdout (flushed) the moment it is measured, and :meth:`Report.section` runs one part so that
  an exception there prints its error and lets the later parts run. A crash, a kill or a
  timeout after minutes of work therefore never loses the tables already measured.

Each benchmark module exposes ``main(argv: list[str] | None) -> str`` returning the markdown it
printed; ``python -m benchmarks.run_all`` discovers and runs them all.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

__all__ = [
    "Timing",
    "measure",
    "measure_interleaved",
    "run_limited",
    "default_mem_limit_mb",
    "single_thread",
    "markdown_table",
    "env_header",
    "machine_line",
    "fmt_rate",
    "fmt_ratio",
    "fmt_us",
    "Report",
    "differing_values",
]

#: Environment that keeps every numeric library in a child process on one thread.
_ONE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of the measured runs of one callable."""

    runs: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def best(self) -> float:
        return min(self.runs)


def measure(fn: Callable[[], Any], *, repeat: int = 5, warmup: int = 1) -> Timing:
    """Call ``fn()`` ``warmup`` times untimed, then ``repeat`` times timed (``perf_counter``).

    ``fn`` must redo its whole workload each call (e.g. build a fresh accumulator and feed every
    batch). Report :attr:`Timing.median`; :attr:`Timing.best` is the least-disturbed run.
    """
    for _ in range(warmup):
        fn()
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return Timing(tuple(runs))


def measure_interleaved(fns: Sequence[Callable[[], Any]], *, repeat: int = 5,
                        warmup: int = 1) -> list[Timing]:
    """Like :func:`measure` for several callables, alternating them run by run.

    Returns one :class:`Timing` per callable, in order. A ratio of two medians measured this
    way is far less sensitive to a busy machine than one of two separate measurements.
    """
    for _ in range(warmup):
        for fn in fns:
            fn()
    runs: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, runs, strict=True):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return [Timing(tuple(r)) for r in runs]


def single_thread() -> None:
    """One thread for the BLAS/OpenMP pools (already started ones too, with threadpoolctl) and torch.

    torch is not imported here (that alone adds about 200 MB to a child's peak RSS): a torch
    imported later reads ``OMP_NUM_THREADS=1``; one that is already imported is set directly."""
    for key, value in _ONE_THREAD_ENV.items():
        os.environ.setdefault(key, value)
    # numpy is imported before this call, so its BLAS pool has already started with every core:
    # the environment no longer reaches it; threadpoolctl (scikit-learn's dependency) limits it
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    torch = sys.modules.get("torch")
    if torch is None:
        return
    torch.set_num_threads(1)
    with contextlib.suppress(RuntimeError):  # already set, or parallel work already started
        torch.set_num_interop_threads(1)


def _mem_available_mb() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


def default_mem_limit_mb() -> int:
    """75 % of the memory available now (Linux ``/proc/meminfo``), or 4096 MB if unknown."""
    avail = _mem_available_mb()
    return 4096 if avail is None else max(512, int(avail * 0.75))


def _peak_rss_mb() -> float:
    """This process's peak resident set size in MB: ``VmHWM`` on Linux (``ru_maxrss`` survives
    fork and exec, so a child of a large parent would report the parent's peak), else
    ``ru_maxrss``."""
    import resource

    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20  # KiB on Linux, bytes on macOS


def _child_main() -> None:
    """Entry point of :func:`run_limited`'s subprocess: spec on stdin, JSON on stdout."""
    spec = json.loads(sys.stdin.read())
    limit_mb = spec.get("mem_limit_mb")
    if limit_mb:
        import resource

        limit = int(limit_mb) * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    single_thread()
    out: dict[str, Any]
    try:
        module, _, func = spec["target"].partition(":")
        fn = getattr(importlib.import_module(module), func)
        out = dict(fn(**spec["kwargs"]))
        out.setdefault("status", "ok")
    except MemoryError:
        out = {"status": f"out of memory (limit {limit_mb} MB)"}
    except Exception as exc:  # noqa: BLE001 - reported, not hidden
        text = str(exc).splitlines()[0][:160] if str(exc) else ""
        # allocators other than CPython's report exhaustion with their own exception types
        oom = any(s in text.lower() for s in ("out of memory", "cannot allocate", "bad_alloc"))
        out = {"status": f"out of memory (limit {limit_mb} MB)" if oom
               else f"error: {type(exc).__name__}: {text}"}
    out["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    sys.stdout.write("\n@@RESULT@@" + json.dumps(out) + "\n")
    sys.stdout.flush()


def run_limited(
    target: str,
    kwargs: dict[str, Any] | None = None,
    *,
    mem_limit_mb: int | None = None,
    timeout: float = 900.0,
) -> dict[str, Any]:
    """Run ``target`` (``"package.module:function"``) with ``kwargs`` in a limited subprocess.

    The function must be importable, take JSON-able keyword arguments and return a JSON-able dict
    (it usually builds its seeded data, times itself with :func:`measure` and returns numbers).
    ``mem_limit_mb=None`` uses :func:`default_mem_limit_mb`; ``0`` means no limit. The result
    always has ``status`` and (unless the child was killed) ``peak_rss_mb``; it never raises for
    a failing workload. The repository root and the parent's ``sys.path`` are passed on.
    """
    limit = default_mem_limit_mb() if mem_limit_mb is None else mem_limit_mb
    spec = {"target": target, "kwargs": kwargs or {}, "mem_limit_mb": limit}
    env = {**os.environ, **_ONE_THREAD_ENV}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # so ``benchmarks`` imports
    env["PYTHONPATH"] = os.pathsep.join(p for p in [root, *sys.path] if p)
    code = "from benchmarks._harness import _child_main; _child_main()"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"status": f"timeout ({timeout:.0f} s)"}
    marker = proc.stdout.rfind("@@RESULT@@")
    if marker >= 0:
        return dict(json.loads(proc.stdout[marker + len("@@RESULT@@"):].strip()))
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:160]
    if proc.returncode < 0 or "MemoryError" in proc.stderr or "bad_alloc" in proc.stderr:
        return {"status": f"out of memory or killed (limit {limit} MB, exit {proc.returncode}): {tail}"}
    return {"status": f"error (exit {proc.returncode}): {tail}"}


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]],
                   align: str | None = None) -> str:
    """A GitHub markdown table; ``align`` is one character per column (``l``/``r``)."""
    rows = [[str(c) for c in row] for row in rows]
    align = align or "l" * len(headers)
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(
            c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, align, strict=True)
        ) + " |"

    rule = "|" + "|".join(
        ("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2)) for w, a in zip(widths, align, strict=True)
    ) + "|"
    return "\n".join([line(list(headers)), rule, *(line(r) for r in rows)])


class Report:
    """The markdown of one benchmark run, printed as it is measured.

    Every :meth:`emit` prints its lines to ``file`` (stdout by default) and flushes at once, and
    keeps them for :meth:`text` (what ``main`` returns to ``run_all``). :meth:`rows` prints a
    table's header now and each row when it is added. :meth:`section` runs a block: an exception
    in it (or a ``SystemExit``) prints one line ``**<name>: failed** -- Type: message`` (the
    traceback to stderr) and is recorded in :attr:`failures`; the benchmark goes on with the
    next section. Time and memory: proportional to the text printed.
    """

    def __init__(self, file: Any = None) -> None:
        self.lines: list[str] = []
        #: ``(section name, "Type: message")`` of every section that raised.
        self.failures: list[tuple[str, str]] = []
        self._file = file

    def emit(self, *lines: str) -> None:
        """Print ``lines`` (joined by newlines) now, flushed, and keep them."""
        print("\n".join(lines), file=self._file or sys.stdout, flush=True)
        self.lines.extend(lines)

    def table(self, headers: Sequence[str], rows: Iterable[Sequence[Any]], align: str | None = None) -> None:
        """Print a finished table (:func:`markdown_table`) now."""
        self.emit(markdown_table(headers, rows, align))

    def rows(self, headers: Sequence[str], align: str | None = None) -> Callable[[Sequence[Any]], None]:
        """Print a table's header and rule now; the returned ``add(row)`` prints one row at once.

        The rows are not padded to a common width (markdown renders them alike): each is printed
        the moment it is measured."""
        align = align or "l" * len(headers)
        self.emit("| " + " | ".join(headers) + " |",
                  "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|")

        def add(row: Sequence[Any]) -> None:  # a "|" inside a cell is escaped (an error message's)
            self.emit("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")

        return add

    @contextlib.contextmanager
    def section(self, name: str, on_error: Callable[[str], None] | None = None) -> Iterator[None]:
        """Run the ``with`` block; an exception in it is printed and not raised.

        The error (``"Type: first line of the message"``) is printed as one line, or handed to
        ``on_error`` (e.g. to print it as a row of a table being printed)."""
        try:
            yield
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - printed, then the next section runs
            traceback.print_exc(file=sys.stderr)
            first = (str(exc).strip().splitlines() or [""])[0][:200]
            what = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
            self.failures.append((name, what))
            if on_error is None:
                self.emit("", f"**{name}: failed** -- {what}", "")
            else:
                on_error(what)

    def text(self) -> str:
        """Everything printed so far, as one string."""
        return "\n".join(self.lines)


def differing_values(values: dict[str, Any], reference: dict[str, Any]) -> dict[str, str]:
    """``{metric: "off by 3.1e-16"}`` for every metric whose value (array values element by
    element, nan equal to nan) is not exactly the reference's; a metric missing on one side, or
    of another shape, is ``"missing"`` / ``"shape (2, 2) != (3, 3)"``. Empty when all are equal.
    O(total size of the values)."""
    import numpy as np

    out: dict[str, str] = {}
    for key in sorted(set(values) | set(reference)):
        if key not in values or key not in reference:
            out[key] = "missing"
            continue
        a = np.asarray(values[key], dtype=np.float64)
        b = np.asarray(reference[key], dtype=np.float64)
        if a.shape != b.shape:
            out[key] = f"shape {a.shape} != {b.shape}"
        elif not np.array_equal(a, b, equal_nan=True):
            both_nan = np.isnan(a) & np.isnan(b)
            out[key] = f"off by {float(np.max(np.where(both_nan, 0.0, np.abs(a - b)))):.1e}"
    return out


def _cpu_model() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            names = [ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")]
        return names[0] if names else cpu
    except OSError:
        return cpu


def machine_line() -> str:
    """``"Machine: <CPU model>, <n> CPUs; load average now <1/5/15 min>"``, for the line next to
    a table: with a load above the CPU count, absolute times are inflated (ratios measured in
    alternation much less)."""
    return (f"Machine: {_cpu_model()}, {os.cpu_count()} CPUs; load average when this table was "
            f"measured {_load()}.")


def env_header(packages: Sequence[str] = ("numpy", "streammetrics", "torch", "torchmetrics",
                                          "torcheval", "river", "scikit-learn")) -> str:
    """Markdown lines describing the machine and the package versions (missing ones say so)."""
    versions = []
    for name in packages:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    cpu = _cpu_model()
    avail = _mem_available_mb()
    return "\n".join([
        f"- machine: {cpu}, {os.cpu_count()} CPUs, "
        f"{'?' if avail is None else f'{avail / 1024:.1f} GiB'} available memory, "
        f"{platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}; " + ", ".join(versions),
        "- every library runs single-threaded (OMP/MKL/OpenBLAS = 1, torch.set_num_threads(1)); "
        "runs that report peak memory or may run out of it go to a fresh subprocess with an "
        "address-space limit, the others run in this process",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average at the start "
        f"of this section: {_load()} (other processes compete for the CPUs when it exceeds the "
        "CPU count: absolute times are inflated; ratios taken in alternation, where a table says so, "
        "are the robust numbers)",
    ])


def _load() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg()) + " (1/5/15 min)"
    except OSError:
        return "unknown"


def fmt_rate(samples_per_s: float | None) -> str:
    """Samples per second as ``"312.4 M/s"`` / ``"45.1 k/s"``."""
    if samples_per_s is None:
        return "-"
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if samples_per_s >= scale:
            return f"{samples_per_s / scale:.1f} {unit}/s"
    return f"{samples_per_s:.1f} /s"


def fmt_ratio(ratio: float | None) -> str:
    """A ratio to the reference as ``"0.83x"``."""
    return "-" if ratio is None else f"{ratio:.2f}x"


def fmt_us(seconds: float | None) -> str:
    """Seconds as microseconds, ``"2.41 µs"``."""
    return "-" if seconds is None else f"{seconds * 1e6:.2f} µs"


def windowed_auroc_peer(name: str, window: int) -> tuple[Callable[[Any, Any], None], Callable[[], float]]:
    """(update(y, s), read()) of a peer's sliding-window AUROC over the last ``window`` samples:
    ``"river"`` (RollingROCAUC, one sample per call) or ``"torcheval"`` (WindowedBinaryAUROC).
    Raises ImportError when the peer is not installed."""
    if name == "river":
        from river import metrics

        r = metrics.RollingROCAUC(window_size=window)

        def update_r(y: Any, s: Any) -> None:
            for yi, si in zip(y.tolist(), s.tolist(), strict=True):
                r.update(bool(yi), si)

        return update_r, r.get
    if name == "torcheval":
        import torch
        from torcheval.metrics import WindowedBinaryAUROC

        t = WindowedBinaryAUROC(max_num_samples=window)

        def update_t(y: Any, s: Any) -> None:
            t.update(torch.from_numpy(s), torch.from_numpy(y))

        return update_t, lambda: float(t.compute())
    raise ValueError(f"name: unknown windowed AUROC peer {name!r}")
