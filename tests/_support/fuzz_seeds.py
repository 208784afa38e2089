"""Run the property and fuzz suites as fuzzers: each run with a fresh random Hypothesis seed.

CI is derandomized (``tests/conftest.py``); this script is how a person hunts for new failures::

    nice -n 10 python tests/_support/fuzz_seeds.py --runs 20            # every module that uses hypothesis
    python tests/_support/fuzz_seeds.py --runs 5 tests/core/test_load_fuzz.py  # some modules only
    python tests/_support/fuzz_seeds.py --seed 123 tests/core/test_load_fuzz.py  # repeat one seed
    nice -n 10 python tests/_support/fuzz_seeds.py --runs 24 --shards 4  # a shared machine: see below

``--shards K`` keeps each run short: run i runs the fuzzers (:data:`CORE`) and every K-th of
the other modules (those at index i mod K), so K consecutive runs cover every module once and
the fuzzers K times.

Every seed is printed before its run, so a failure can be replayed with
``python -m pytest <module> -p no:cacheprovider --hypothesis-seed=<seed>``. A failure found this
way becomes an explicit ``@example`` or a regression test. ``CI`` is removed from the
environment of the runs (it would select the derandomized profile).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: The crafted-file fuzzers (quick), run every time with ``--shards``; the other fuzzers
#: (``test_protocol_laws.py``, ``test_fuzz_inputs.py``) take a minute each and rotate with the
#: property modules.
CORE = ("tests/core/test_load_fuzz.py", "tests/core/test_load_hostile.py", "tests/core/test_load_crafted.py",
        "tests/core/test_fuzz_constructors.py")


def hypothesis_modules() -> list[str]:
    """Every test module that imports hypothesis, relative to the repository root."""
    out = []
    for path in sorted(TESTS.rglob("test_*.py")):
        if "hypothesis" in path.read_text(encoding="utf-8"):
            out.append(str(path.relative_to(TESTS.parent)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*",
                        help="test modules (default: the fuzzers and every module using hypothesis)")
    parser.add_argument("--runs", type=int, default=1, help="number of runs, each with a new seed")
    parser.add_argument("--seed", type=int, action="append", help="a given seed (repeatable)")
    parser.add_argument("--stop", action="store_true", help="stop at the first failing run")
    parser.add_argument("--shards", type=int, default=1,
                        help="run i: the fuzzers and the other modules at index i mod SHARDS")
    args = parser.parse_args(argv)
    modules = args.modules or sorted({*hypothesis_modules(), *CORE})
    seeds = args.seed or [random.SystemRandom().randrange(2**32) for _ in range(args.runs)]
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    failed = []
    for i, seed in enumerate(seeds, 1):
        print(f"run {i}/{len(seeds)} seed {seed}", flush=True)
        start = time.perf_counter()
        chosen = modules
        if args.shards > 1:
            rest = [m for m in modules if m not in CORE]
            chosen = [m for m in CORE if m in modules] + rest[(i - 1) % args.shards::args.shards]
            print(f"modules: {' '.join(chosen)}", flush=True)
        cmd = [sys.executable, "-m", "pytest", *chosen, "-q", "-p", "no:cacheprovider",
               f"--hypothesis-seed={seed}"]
        rc = subprocess.run(cmd, cwd=TESTS.parent, env=env).returncode
        print(f"seed {seed}: {'clean' if rc == 0 else f'FAILED (exit {rc})'} "
              f"in {time.perf_counter() - start:.0f} s", flush=True)
        if rc:
            failed.append(seed)
            if args.stop:
                break
    print(f"{len(seeds)} seeds, failing: {failed or 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
