"""Registering a command of ``streammetrics``: its subparser, written once for every command.

Each command module (``demo``, ``evaluate``, ``trec``, ``trec_compare``, ``drift``) registers its
parser with :func:`add_command`, which gives every command the same help layout: a one-line
``help`` in the root's command list, a plain-text ``description`` (reStructuredText markup
removed: a command's description is often a paragraph of its module docstring, see
:func:`doc_paragraph`) and the exit statuses as the epilog.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .errors import guarded, plain

__all__ = ["EXIT_STATUS", "add_command", "command", "doc_paragraph", "exit_status", "runner"]


def exit_status(*extra: str) -> str:
    """The epilog of a command's ``--help``: its exit statuses.

    Parameters
    ----------
    *extra : str
        Statuses of this command besides those :func:`streammetrics.cli.errors.guarded` returns
        (``"143 terminated (SIGTERM)"``).

    Returns
    -------
    str
        ``exit status: 0 success, 1 data error, 2 usage error, 130 interrupted, ... (errors are
        one line on stderr)``.
    """
    codes = ", ".join(["0 success", "1 data error", "2 usage error", "130 interrupted", *extra])
    return f"exit status: {codes} (errors are one line on stderr)"


#: The epilog of every command's ``--help`` (:func:`exit_status` without extra statuses).
EXIT_STATUS = exit_status()


def doc_paragraph(doc: str | None, index: int) -> str | None:
    """One paragraph of a docstring, as plain text (None without docstrings, ``python -OO``).

    Parameters
    ----------
    doc : str or None
        A module's ``__doc__``.
    index : int
        Which paragraph (paragraphs are separated by a blank line; 0 is the summary).

    Returns
    -------
    str or None
        The paragraph without reStructuredText markup, or None when ``doc`` is None.
    """
    return plain(doc.split("\n\n")[index]) if doc else None


def add_command(sub: Any, name: str, *, help: str, description: str | None,  # noqa: A002
                epilog: str = EXIT_STATUS) -> argparse.ArgumentParser:
    """Register the command ``name`` on an ``argparse`` subparsers object.

    Parameters
    ----------
    sub : argparse subparsers action
        What ``ArgumentParser.add_subparsers`` returned.
    name : str
        The command's name (``streammetrics NAME``).
    help : str
        Its line in the root parser's list of commands.
    description : str or None
        Its ``--help`` description (made plain text, as :func:`streammetrics.cli.errors.plain`).
    epilog : str, default EXIT_STATUS
        The end of its ``--help``: the exit statuses (:func:`exit_status`).

    Returns
    -------
    argparse.ArgumentParser
        The command's parser (of the root parser's class); the caller adds its arguments.
    """
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=plain(help),
        description=plain(description) if description else None,
        epilog=epilog,
    )
    return parser


def command(name: str, *, help: str, description: str | None,  # noqa: A002
            arguments: Callable[[argparse.ArgumentParser], None],
            epilog: str = EXIT_STATUS) -> Callable[[Any], argparse.ArgumentParser]:
    """A command module's ``add_parser(sub)``: :func:`add_command`, then ``arguments``.

    Parameters
    ----------
    name, help, description, epilog
        As for :func:`add_command`.
    arguments : callable
        Adds the command's arguments to its parser.

    Returns
    -------
    callable
        ``add_parser(sub) -> argparse.ArgumentParser``, documented as such.
    """

    def add_parser(sub: Any) -> argparse.ArgumentParser:
        parser = add_command(sub, name, help=help, description=description, epilog=epilog)
        arguments(parser)
        return parser

    add_parser.__doc__ = f"""Register ``{name}`` on an ``argparse`` subparsers object.

    Parameters
    ----------
    sub : argparse subparsers action
        What ``ArgumentParser.add_subparsers`` returned.

    Returns
    -------
    argparse.ArgumentParser
        The ``{name}`` parser, with its arguments.
    """
    return add_parser


def runner(name: str, body: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command module's ``run(args)``: ``body`` run by :func:`streammetrics.cli.errors.guarded`.

    Parameters
    ----------
    name : str
        The command's name (``streammetrics NAME`` prefixes its error lines).
    body : callable
        ``body(args) -> int``: the command; it may raise
        :class:`~streammetrics.cli.errors.InputError`.

    Returns
    -------
    callable
        ``run(args) -> int``, documented as such: the exit status, errors printed as one line.
    """

    def run(args: argparse.Namespace) -> int:
        return guarded(f"streammetrics {name}", lambda: body(args))

    run.__doc__ = f"""Run ``streammetrics {name}``; errors are printed as one line, not raised.

    Parameters
    ----------
    args : argparse.Namespace
        The options parsed by the ``{name}`` parser (``add_parser``).

    Returns
    -------
    int
        The exit status: 0 success, 1 data error, 2 usage error, 130 interrupted.
    """
    return run
