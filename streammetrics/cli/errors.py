"""Error reporting for the command line: every user error is one line on stderr and an exit status
(2 usage error, 1 data error, 130 interrupted), never a traceback.

* :class:`InputError` -- an error the user can act on, raised anywhere in the commands;
* :class:`OneLineParser` -- an ``argparse`` parser whose usage errors are one line (not the whole
  usage) and which plain-texts reStructuredText markup in its help;
* :func:`guarded` -- runs a command: known errors are reported with their own message, a
  ``KeyboardInterrupt`` exits 130, a closed stdout (``| head``) exits quietly, anything else is
  reported as one line naming the exception (a last resort: known errors have specific messages).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

__all__ = ["InputError", "OneLineParser", "guarded", "one_line", "plain"]


class InputError(Exception):
    """An error the user can act on; ``code`` is the exit status (2 usage, 1 data)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def plain(text: str) -> str:
    """reStructuredText inline markup as plain text: ``\\`\\`x\\`\\``` and ``:class:`x``` -> ``x``."""
    return _ROLE.sub(r"\1", text).replace("``", "")


def one_line(text: str, limit: int = 400) -> str:
    """``text`` on one line (newlines and runs of spaces collapsed), at most ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line -- ``prog: error: message (see prog
    --help)`` -- with exit status 2, and whose description and help texts are plain text."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for key in ("description", "epilog"):
            if kwargs.get(key):
                kwargs[key] = plain(kwargs[key])
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> Any:
        if isinstance(kwargs.get("help"), str):
            kwargs["help"] = plain(kwargs["help"])
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so that the interpreter's final flush does
    not raise again (the documented recipe of the ``signal`` module)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (captured in tests)
        pass


def guarded(prog: str, command: Callable[[], int]) -> int:
    """Run ``command`` and return its exit status; errors become one line on stderr.

    ``InputError`` -> its message and code; ``KeyboardInterrupt`` -> ``interrupted``, 130; a
    broken pipe on stdout -> 0 (the reader went away: not an error); ``MemoryError`` -> 1; any other
    exception -> one line naming its type and message, 1.
    """
    try:
        return command()
    except InputError as exc:
        _say(f"{prog}: error: {one_line(str(exc))}")
        return exc.code
    except KeyboardInterrupt:
        _say(f"{prog}: interrupted")
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except MemoryError:
        _say(f"{prog}: error: out of memory (try a smaller --batch-size, or --max-bytes)")
        return 1
    except RecursionError:
        _say(f"{prog}: error: input nested too deeply")
        return 1
    except Exception as exc:  # noqa: BLE001 - the last resort: one line, never a traceback
        _say(f"{prog}: error: unexpected {type(exc).__name__}: {one_line(str(exc))} "
             "(please report this with the command line)")
        return 1


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr closed as well
        print(line, file=sys.stderr)
