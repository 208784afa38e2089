"""Registering a command of ``streammetrics``: its subparser, written once for every command.

Each command module (``demo``, ``evaluate``, ``trec``, ``trec_compare``, ``drift``) registers its
parser with :func:`add_command`, which gives every command the same help layout: a one-line
``help`` in the root's command list, a plain-text ``description`` (reStructuredText markup
removed: a command's description is often a paragraph of its module docstring, see
:func:`doc_paragraph`) and the exit statuses as the epilog.
"""

from __future__ import annotations

import argparse
from typing import Any

from .errors import plain

__all__ = ["EXIT_STATUS", "add_command", "doc_paragraph"]

#: The epilog of every command's ``--help``: what :func:`streammetrics.cli.errors.guarded` returns.
EXIT_STATUS = ("exit status: 0 success, 1 data error, 2 usage error, 130 interrupted (errors are one "
               "line on stderr)")


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


def add_command(sub: Any, name: str, *, help: str, description: str | None) -> argparse.ArgumentParser:  # noqa: A002
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

    Returns
    -------
    argparse.ArgumentParser
        The command's parser (of the root parser's class), with :data:`EXIT_STATUS` as epilog;
        the caller adds its arguments.
    """
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=plain(help),
        description=plain(description) if description else None,
        epilog=EXIT_STATUS,
    )
    return parser
