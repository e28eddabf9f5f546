r"""Catalog patterns must run in time linear in the line they scan (issue 22).

Patterns are Python regular expressions (a backtracking engine: the bundled ones need
lookarounds and `\\g<1>` replacements, which linear-time engines do not offer). A pattern is
therefore checked when its catalog is loaded, and refused with the reason when it has a
construct that makes backtracking super-linear on long text:

* a backreference (`\\1`): matching it is NP-hard in general;
* a nested unbounded quantifier (`(a+)+`, `(?:x*y?)*`): exponential on a near-miss;
* an unbounded repeat that can start anywhere (`(?:[^.]|x)*\\bword`): every start position
  re-scans the rest of the line, quadratic on one long unpunctuated line. Anchor it (`^`, a
  lookbehind such as `(?<![^\\n.;,])`, a literal before it) or bound it (`{0,200}`).

`tests/catalog/css/test_patterns.py` also times every bundled pattern on a 150,000-character
line, so a construct this check does not know cannot slip back in.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]

_UNBOUNDED = C.MAXREPEAT
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (C.AT, C.ASSERT, C.ASSERT_NOT)


def _items(sub) -> list:
    return list(sub.data if hasattr(sub, "data") else sub)


def _children(op, av) -> list[list]:
    """The sub-patterns directly inside one parsed item."""
    if op in _REPEATS:
        return [_items(av[2])]
    if op == C.SUBPATTERN:
        return [_items(av[3])]
    if op == C.BRANCH:
        return [_items(b) for b in av[1]]
    if op in (C.ASSERT, C.ASSERT_NOT):
        return [_items(av[1])]
    if op == C.ATOMIC_GROUP:
        return [_items(av)]
    if op == C.GROUPREF_EXISTS:
        return [_items(av[1])] + ([_items(av[2])] if av[2] is not None else [])
    return []


def _has_unbounded(items: list) -> bool:
    for op, av in items:
        if op in _REPEATS and av[1] == _UNBOUNDED:
            return True
        if any(_has_unbounded(child) for child in _children(op, av)):
            return True
    return False


def _starts_with_unbounded(items: list) -> bool:
    """Whether a repeat body can begin with an unbounded repeat (so one text splits many ways)."""
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        if op == C.SUBPATTERN:
            return _starts_with_unbounded(_items(av[3]))
        if op == C.BRANCH:
            return any(_starts_with_unbounded(_items(b)) for b in av[1])
        if op in _REPEATS:
            if av[1] == _UNBOUNDED or _starts_with_unbounded(_items(av[2])):
                return True
            if av[0] == 0:
                continue
            return False
        return False
    return False


def _problems(items: list) -> list[str]:
    found = []
    for op, av in items:
        if op in (C.GROUPREF, C.GROUPREF_EXISTS):
            found.append("a backreference (matching it needs backtracking)")
        # "(a+)+", "(?:x*y)*": the body can begin with an unbounded repeat, so the same text
        # splits into iterations in exponentially many ways. "(?:word\s+)*" cannot: each
        # iteration starts with its own literal.
        if op in _REPEATS and av[1] == _UNBOUNDED and _starts_with_unbounded(_items(av[2])):
            found.append("a nested unbounded quantifier such as (a+)+ (exponential backtracking on a near-miss)")
        for child in _children(op, av):
            found.extend(_problems(child))
    return found


def _leading_unanchored_repeat(items: list) -> bool:
    """Whether the pattern can start with an unbounded repeat at any position of a line."""
    for op, av in items:
        if op in _ZERO_WIDTH:
            return False  # ^, \b, a lookbehind: start positions are restricted
        if op == C.SUBPATTERN:
            return _leading_unanchored_repeat(_items(av[3]))
        if op == C.BRANCH:
            return any(_leading_unanchored_repeat(_items(b)) for b in av[1])
        if op in _REPEATS:
            if av[1] == _UNBOUNDED and _starts_broad(_items(av[2])):
                return True
            if av[0] == 0:
                continue  # an optional prefix ("(?:no\s+)?"): look at what follows it
            return _leading_unanchored_repeat(_items(av[2]))
        return False  # a literal or a class of its own comes first
    return False


_BROAD = (C.IN, C.ANY, C.NOT_LITERAL, C.CATEGORY)


def _starts_broad(items: list) -> bool:
    r"""Whether a repeat body can begin with a character class (so it runs on at almost every position).

    "(?:prior\s+|systemic\s+)*" begins with literals: at most start positions it fails on the
    first character. "(?:[^.;]|x)*" begins with a class: it runs to the end of the line from each.
    """
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        if op in _BROAD:
            return True
        if op == C.SUBPATTERN:
            return _starts_broad(_items(av[3]))
        if op == C.BRANCH:
            return any(_starts_broad(_items(b)) for b in av[1])
        if op in _REPEATS:
            if _starts_broad(_items(av[2])):
                return True
            if av[0] == 0:
                continue
            return False
        return False
    return False


def backtracking_problem(pattern: str) -> str | None:
    """Why `pattern` could take super-linear time on a long line, or None when it cannot."""
    try:
        parsed = _parser.parse(pattern)
    except re.error as ex:
        return f"invalid regex: {ex}"
    problems = _problems(_items(parsed))
    if problems:
        return problems[0]
    if _leading_unanchored_repeat(_items(parsed)):
        return (
            "it starts with an unbounded repeat that can begin at every position (quadratic on one long line); "
            "anchor it (^, a lookbehind, a literal first) or bound it ({0,200})"
        )
    return None
