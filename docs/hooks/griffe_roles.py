"""Griffe extension: the Sphinx roles of the docstrings become cross-references of the API site.

The docstrings are numpydoc, written for ``help()`` and Sphinx: they cite other objects with roles
(``:func:`~streammetrics._scores.thresholds.roc_auc_bounds```, ``:class:`Accuracy```, ``:meth:`compute```).
mkdocstrings renders Markdown, where a role is raw text. Once the whole package is loaded, this
extension rewrites every role of every docstring, resolving its target the way Sphinx does (the
object's own class and module first, then the package, then a unique name anywhere in it):

- a target with a public name (no path component starting with ``_``, or re-exported under one,
  e.g. ``streammetrics._core.metric.Metric`` is ``streammetrics.Metric``) becomes an mkdocs-autorefs
  cross-reference: a link when that object is rendered on some page of the site, plain code
  otherwise. The link text is the public name (``~`` keeps the last component only, as in Sphinx);
  functions and methods get ``()``.
- a private target (no public name) and a target outside the package (``time.time``) become plain
  code: the site never links into a private module.

The bases of a class are shown by their public names: a private base class is replaced by its
public ancestors (``AUROC``'s bases read ``Metric``, not the private ``RankingMetric``), through
the template override ``docs/hooks/templates/python/material/class.html.jinja``.

reStructuredText's literal-block marker (``text::`` before an indented block) reads ``text:``.

Paths of guide pages written in a docstring (``docs/definitions/ranking.md#bounded-memory``)
become links to that page of the site, titled by the heading they name.

The docstrings in the package stay as they are (Sphinx roles, read by ``help()`` and doctests).
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import griffe
from markdown.extensions.toc import slugify

PACKAGE = "streammetrics"

#: ``:func:`x```, ``:py:meth:`~a.b```, ``:class:`title <a.b>```.
ROLE = re.compile(r":(?:py:)?(func|class|meth|attr|mod|data|obj|exc|const|type):`([^`]+)`")
CALLABLE_ROLES = {"func", "meth"}


def _private(path: str) -> bool:
    return any(part.startswith("_") for part in path.split("."))


def _final(obj: Any) -> Any | None:
    """The object an alias points to, or None when it points outside the loaded packages."""
    if not getattr(obj, "is_alias", False):
        return obj
    try:
        return obj.final_target
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


class _Resolver:
    """Targets of roles -> objects of the loaded package, and objects -> their public names."""

    def __init__(self, pkg: griffe.Module) -> None:
        self.pkg = pkg
        self.public: dict[str, str] = {}  # canonical path -> public path
        self.by_name: dict[str, list[Any]] = defaultdict(list)
        self._index(pkg)
        self._publish()

    def _index(self, obj: Any) -> None:
        for member in obj.members.values():
            if member.is_alias:
                continue
            self.by_name[member.name].append(member)
            if member.is_module or member.is_class:
                self._index(member)

    def _publish(self) -> None:
        """Breadth first from the package: the shortest public path of each object wins."""
        queue: list[Any] = [self.pkg]
        while queue:
            module = queue.pop(0)
            names = module.exports if module.exports is not None else list(module.members)
            for name in names:
                if not isinstance(name, str) or name.startswith("_") or name not in module.members:
                    continue
                target = _final(module.members[name])
                if target is None or not target.path.startswith(PACKAGE + "."):
                    continue
                self.public.setdefault(target.path, f"{module.path}.{name}")
            for name, member in module.members.items():  # public submodules, exported or not
                if not member.is_alias and member.is_module and not name.startswith("_"):
                    self.public.setdefault(member.path, member.path)
                    queue.append(member)

    def public_path(self, path: str) -> str | None:
        """The public name of the object at ``path`` (its own, or its nearest public parent's)."""
        if not _private(path):
            return path
        parts = path.split(".")
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            if head in self.public:
                full = ".".join([self.public[head], *parts[cut:]])
                return None if _private(full) else full
        return None

    def lookup(self, path: str) -> Any | None:
        first, _, rest = path.partition(".")
        if first != PACKAGE:
            return None
        try:
            obj = self.pkg[rest] if rest else self.pkg
        except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return None
        return _final(obj)

    def resolve(self, target: str, where: Any) -> Any | None:
        """Sphinx's search: the enclosing scopes of ``where``, the package, a unique name."""
        name = target.lstrip(".")
        scope = where
        while scope is not None:
            if scope.is_module or scope.is_class:
                found = self.lookup(f"{scope.path}.{name}")
                if found is not None:
                    return found
            scope = scope.parent
        for absolute in (name, f"{PACKAGE}.{name}"):
            found = self.lookup(absolute)
            if found is not None:
                return found
        *_, last = name.split(".")
        candidates = [c for c in self.by_name.get(last, []) if c.path.endswith("." + name)]
        return candidates[0] if len(candidates) == 1 else None


def rewrite(text: str, where: Any, resolver: _Resolver, stats: dict[str, list[str]] | None = None) -> str:
    """``text`` with every role replaced by a cross-reference (public target) or plain code."""

    def replace(match: re.Match[str]) -> str:
        role, body = match.group(1), match.group(2).strip()
        title = None
        explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", body, flags=re.S)
        if explicit:
            title, body = explicit.group(1), explicit.group(2).strip()
        short = body.startswith("~")
        target = re.sub(r"\s+", "", body).lstrip("~!")  # a role may wrap across lines
        if target.endswith("()"):
            target = target[:-2]
        found = resolver.resolve(target, where)
        public = resolver.public_path(found.path) if found is not None else None
        if title is None:
            written = target.lstrip(".")
            if public is not None and _private(written):
                written = public  # the name a user imports, never the private module's
            title = written.rsplit(".", 1)[-1] if short else written
            if role in CALLABLE_ROLES:
                title += "()"
        code = f"<code>{html.escape(title)}</code>"
        if found is None or public is None:
            if stats is not None:
                stats["unresolved" if found is None else "private"].append(f"{where.path}: {match.group(0)}")
            return code
        if stats is not None:
            stats["public"].append(f"{where.path}: {match.group(0)}")
        # An optional autoref links when the object is rendered somewhere on the site; autorefs
        # also knows it by its canonical (defining) path, so either name finds the same page.
        return f'<autoref identifier="{html.escape(found.path)}" optional>{code}</autoref>'

    return ROLE.sub(replace, text)


DOCS = Path(__file__).resolve().parents[1]
#: ``docs/definitions/ranking.md#bounded-memory`` written in a docstring (not inside a code span).
DOC_PATH = re.compile(r"(?<![\w/.`])docs/([\w/-]+)\.md(?:#([\w-]+))?(?![\w`])")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*(?:\{#([\w-]+)\})?\s*$")


def _headings(page: Path) -> dict[str, str]:
    """``{anchor: heading text}`` of a Markdown page; ``""`` is its first heading."""
    found: dict[str, str] = {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        match = None if fenced else HEADING.match(line)
        if match:
            text = match.group(1).replace("`", "")
            found.setdefault("", text)
            found.setdefault(match.group(2) or slugify(text, "-"), text)
    return found


def link_doc_paths(text: str, depth: int = 2) -> str:
    """Paths of guide pages (``docs/x.md#anchor``) become links titled by the heading they name.

    The API pages are ``api/<name>/`` on the site, ``depth`` directories below its root. A path
    to a page or heading that does not exist is left as written (the page's text still says it).
    """

    def replace(match: re.Match[str]) -> str:
        page, anchor = match.group(1), match.group(2) or ""
        source = DOCS / f"{page}.md"
        if not source.is_file():
            return match.group(0)
        title = _headings(source).get(anchor)
        if title is None:
            return match.group(0)
        url = "" if page == "index" else (page[: -len("index")] if page.endswith("/index") else page + "/")
        href = "../" * depth + url + (f"#{anchor}" if anchor else "")
        return f'<a href="{html.escape(href)}">{html.escape(title)}</a>'

    return DOC_PATH.sub(replace, text)


def public_bases(cls: Any, resolver: _Resolver, seen: set[str] | None = None) -> list[tuple[str, str]]:
    """The bases a reader can look up: ``[(name shown, identifier)]``.

    A private base class (``RankingMetric``) is replaced by its own bases, recursively, up to the
    public ones (``Metric``); a base outside the package (``KeyError``) is kept as written.
    """
    seen = set() if seen is None else seen
    out: list[tuple[str, str]] = []
    for base in cls.bases:
        written = str(base)
        canonical = getattr(base, "canonical_path", written)
        found = resolver.lookup(canonical)
        if found is None or not found.is_class:
            out.append((written, canonical))
            continue
        if found.path in seen:
            continue
        seen.add(found.path)
        public = resolver.public_path(found.path)
        if public is not None:
            out.append((public.rsplit(".", 1)[-1], found.path))
        else:
            out += public_bases(found, resolver, seen)
    return out


#: reStructuredText's literal-block marker: ``text::`` before an indented block reads ``text:``.
LITERAL_MARK = re.compile(r"(?<=\S)::[ \t]*$(?=\n[ \t]*\n[ \t]+\S)", re.M)


def literal_blocks(text: str) -> str:
    """``Paragraph::`` followed by an indented block becomes ``Paragraph:`` (as Sphinx shows it);
    the block itself is already a code block in Markdown."""
    return LITERAL_MARK.sub(":", text)


class RolesToCrossRefs(griffe.Extension):
    """Rewrite the Sphinx roles of every docstring of the package once it is loaded."""

    def __init__(self) -> None:
        super().__init__()
        self.stats: dict[str, list[str]] = defaultdict(list)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name != PACKAGE:
            return
        resolver = _Resolver(pkg)
        stack: list[Any] = [pkg]
        while stack:
            obj = stack.pop()
            if obj.docstring is not None:
                value = obj.docstring.value
                if ROLE.search(value):
                    value = rewrite(value, obj, resolver, self.stats)
                obj.docstring.value = literal_blocks(link_doc_paths(value))
            if obj.is_class:  # read by docs/hooks/templates/python/material/class.html.jinja
                obj.extra["streammetrics"]["bases"] = public_bases(obj, resolver)
            stack.extend(m for m in obj.members.values() if not m.is_alias)
