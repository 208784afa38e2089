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

__all__ = ["InputError", "OneLineParser", "guarded", "plain"]


class InputError(Exception):
    """An error the user can act on, reported as one line on stderr.

    Parameters
    ----------
    message : str
        The message (one line; newlines are collapsed when printed).
    code : int, default 1
        The exit status: 2 usage error, 1 data error.
    """

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def plain(text: str) -> str:
    """reStructuredText inline markup as plain text: ``\\`\\`x\\`\\``` and ``:class:`x``` -> ``x``.

    Parameters
    ----------
    text : str
        A docstring or help text.

    Returns
    -------
    str
        ``text`` without roles and double backquotes.
    """
    return _ROLE.sub(r"\1", text).replace("``", "")


def _one_line(text: str, limit: int = 400) -> str:
    """``text`` on one line (newlines and runs of spaces collapsed), at most ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line -- ``prog: error: message (see prog
    --help)`` -- with exit status 2, and whose description and help texts are plain text.

    Parameters
    ----------
    *args, **kwargs
        Those of :class:`argparse.ArgumentParser`; ``description`` and ``epilog`` are turned into
        plain text.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for key in ("description", "epilog"):
            if kwargs.get(key):
                kwargs[key] = plain(kwargs[key])
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`argparse.ArgumentParser.add_argument` with the ``help`` text made plain.

        Parameters
        ----------
        *args, **kwargs
            Those of :meth:`argparse.ArgumentParser.add_argument`.

        Returns
        -------
        argparse.Action
            The action added.
        """
        if isinstance(kwargs.get("help"), str):
            kwargs["help"] = plain(kwargs["help"])
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Exit with status 2 after one line ``prog: error: message (see prog --help)``.

        Parameters
        ----------
        message : str
            argparse's message.

        Returns
        -------
        NoReturn
            Never returns (raises ``SystemExit``).
        """
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


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

    Parameters
    ----------
    prog : str
        The command's name, the prefix of each error line (``streammetrics evaluate``).
    command : callable
        Runs the command and returns its exit status.

    Returns
    -------
    int
        The exit status.
    """
    try:
        return command()
    except InputError as exc:
        _say(f"{prog}: error: {_one_line(str(exc))}")
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
        _say(f"{prog}: error: unexpected {type(exc).__name__}: {_one_line(str(exc))} "
             "(please report this with the command line)")
        return 1


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr closed as well
        print(line, file=sys.stderr)
