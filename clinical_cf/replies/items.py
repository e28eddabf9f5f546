"""Items are things, or the reply is unreadable (issue 37): pointers resolved against the reply's own
enumeration, struck text a conflict.

An item a reply lists may point elsewhere instead of naming a treatment: an option label ("Option (ii)",
"(iii)", "items 1 and 2 above"), or a pointer to other text ("see above", "See rationale", "as discussed").
A label is resolved against the reply's own enumeration when that enumeration is unambiguous (the label
enumerates exactly one line of the final answer); anything else is unreadable with code `pointer`, never
read as an item named "Option (ii)". Text the reply strikes through (`~~...~~`, `<del>`, `<s>`,
`<strike>`) is withdrawn by the reply's author: a reply that states an answer and strikes part of it is
`conflicting answers` (counted apart), never read with the struck item in it or silently without it.
"""

from __future__ import annotations

import re

from clinical_cf.replies.final import CONFLICT

# Struck text: markdown strike-through and the HTML elements that strike.
_STRUCK = re.compile(r"~~(?P<md>[^~\n]{1,300}?)~~|<(?P<tag>del|s|strike)\b[^<>]{0,100}>(?P<html>[^<]{1,300}?)</(?P=tag)[ \t]{0,4}>",
                     re.IGNORECASE)

_LABEL = r"(?:[ivx]{1,5}|\d{1,2}|[a-h])"
# An item that is only a label, or labels: "Option (ii)", "(iii)", "items 1 and 2 above", "options A and C", "#2".
_LABEL_ITEM = re.compile(
    rf"^(?:(?:the[ \t]{{1,3}})?(?:options?|items?|choices?|regimens?|arms?|numbers?|no\.?|#)[ \t]{{0,3}})?"
    rf"(?P<labels>[\(\[]?{_LABEL}[\)\]]?(?:[ \t]{{0,3}}(?:,|and|&|\+|or)[ \t]{{0,3}}[\(\[]?{_LABEL}[\)\]]?){{0,5}})"
    r"(?:[ \t]{1,3}(?:above|below|listed above|from above|from the list))?[ \t.]{0,3}$",
    re.IGNORECASE,
)
# An item that points to other text: "see above", "See rationale", "as discussed in the paragraph above", "ditto".
_POINTER = re.compile(
    r"^(?:(?:please[ \t]{1,3})?see\b|as[ \t]{1,3}(?:above|below|discussed|mentioned|stated|listed|noted|described)\b|per[ \t]{1,3}(?:above|the)\b"
    r"|(?:the[ \t]{1,3})?(?:above|former|latter)\b|ditto\b|same[ \t]{1,3}as\b|refer[ \t]{1,3}to\b|(?:both|all|either)[ \t]{1,3}(?:of[ \t]{1,3})?(?:the[ \t]{1,3})?(?:above|options?)\b)",
    re.IGNORECASE,
)
# A line of an enumeration: "(i) X", "ii. X", "1) X", "Option 2: X", "- (a) X".
_ENUMERATED = re.compile(
    rf"^[ \t>*_-]{{0,8}}(?:(?:options?|items?|choices?|regimens?|arms?)[ \t]{{1,3}})?[\(\[]?(?P<label>{_LABEL})[\)\]]?[ \t]{{0,2}}[.):\-–—]?[ \t]{{1,4}}(?P<text>\S[^\n]{{0,200}})$",
    re.IGNORECASE,
)


def struck(text: str) -> list[str]:
    """The struck-through passages of `text`, in order."""
    return [(m.group("md") or m.group("html") or "").strip() for m in _STRUCK.finditer(text)]


def struck_conflict(final: str) -> str | None:
    """`conflicting answers: ...` when the final answer strikes text through (the author withdrew part of its answer), else None."""
    found = struck(final)
    return f"{CONFLICT}: struck through {found[0][:80]!r}" if found else None


def is_pointer(item: str) -> bool:
    """Whether an item points elsewhere instead of naming a thing (an option label or a pointer phrase)."""
    text = item.strip().strip("\"'*_`").strip()
    return bool(_LABEL_ITEM.match(text) or _POINTER.match(text))


def _labels(item: str) -> list[str]:
    match = _LABEL_ITEM.match(item.strip().strip("\"'*_`").strip())
    if not match:
        return []
    return [m.lower() for m in re.findall(rf"(?<![A-Za-z0-9]){_LABEL}(?![A-Za-z0-9])", match.group("labels"), re.IGNORECASE)
            if m.lower() not in ("and", "or")]


def enumeration(final: str) -> dict[str, list[str]]:
    """Every enumerated line of the final answer by its label (lower case): label -> the texts it enumerates."""
    out: dict[str, list[str]] = {}
    for line in final.splitlines():
        for part in re.split(r"(?<=\S)[ \t]{1,4}(?=(?:\(?\d{1,2}[.)]|\([ivx]{1,5}\)|\([a-h]\))[ \t])", line[:2000]):  # "1. X 2. Y" on one line
            match = _ENUMERATED.match(part)
            if match:
                out.setdefault(match.group("label").lower(), []).append(match.group("text").strip().rstrip(".;,"))
    return out


def resolve_pointer(item: str, final: str) -> tuple[list[str], str]:
    """The items a pointer stands for (resolved against the reply's own unambiguous enumeration), or ([], why not)."""
    labels = _labels(item)
    if not labels:
        return [], f"pointer: item {item[:60]!r} points to other text, not to a thing"
    listed = enumeration(final)
    out = []
    for label in labels:
        texts = listed.get(label, [])
        if len(texts) != 1:
            why = "no line of the reply enumerates it" if not texts else f"{len(texts)} lines of the reply are labelled {label!r}"
            return [], f"pointer: item {item[:60]!r} cannot be resolved ({why})"
        if is_pointer(texts[0]):
            return [], f"pointer: item {item[:60]!r} resolves to another pointer"
        out.append(texts[0])
    return out, ""
