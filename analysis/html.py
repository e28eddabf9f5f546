"""Every HTML page the project writes comes from a Jinja2 template here, with autoescape on.

Values are escaped for the context they land in: `{{ value }}` for HTML text and attributes (Jinja's
autoescape), `{{ value | script_json }}` for data inside a `<script type="application/json">` block,
where `<`, `>` and `&` are written as JSON escapes so no string (a model's `</script>`, an HTML
comment opener) can end the block or be read as markup; the page reads it back with `JSON.parse`.
Fragments the code builds itself (a word diff, a pandas table) are escaped where they are built and
passed in as `Markup`.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from clinical_cf.analysis.tables import shown_cells

TEMPLATES = Path(__file__).parent / "templates"

_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(value: Any) -> Markup:
    """JSON safe inside a script element: `JSON.parse` gives back `value`, and no string can close the element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _SCRIPT_ESCAPES.items():
        text = text.replace(raw, escaped)
    return Markup(text)


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["script_json"] = script_json
    return env


ENV = _environment()


def render(template: str, **context: Any) -> str:
    return ENV.get_template(template).render(**context)


NO_DATA = "no data"
"""What a missing cell shows: a measured zero prints as 0, a value nobody measured never does."""


def _html_table(table: pd.DataFrame) -> Markup:
    # pandas escapes cell text (escape=True is its default); the markup around it is pandas' own.
    return Markup(shown_cells(table).to_html(index=False, escape=True))


def anchor(text: str, seen: dict[str, int]) -> str:
    """A stable id for a heading (lowercase words joined by '-'), numbered when one repeats."""

    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "section"
    seen[base] = seen.get(base, 0) + 1
    return base if seen[base] == 1 else f"{base}-{seen[base]}"


def render_report(blocks: list[tuple[str, Any]], title: str = "clinical_cf comparison report") -> str:
    """report.html: one self-contained page, tables inline, figures as data URIs, no scripts or network;
    a table of contents links every h2/h3 heading, and the side-by-side page and logs are linked. `title` names the
    suites the report covers (the browser tab and bookmarks show it)."""
    items = []
    toc = []
    seen: dict[str, int] = {}
    for kind, value in blocks:
        if kind in ("h2", "h3"):
            ident = anchor(str(value), seen)
            items.append({"kind": kind, "text": str(value), "id": ident})
            toc.append({"level": kind, "text": str(value), "id": ident})
            continue
        if kind == "link":
            label, href = value
            items.append({"kind": "link", "text": str(label), "href": str(href)})
            continue
        if kind == "table":
            items.append({"kind": "table", "empty": value.empty, "html": _html_table(value) if not value.empty else ""})
        elif kind == "img":
            path = Path(value)
            items.append({"kind": "img", "alt": path.stem, "data": base64.b64encode(path.read_bytes()).decode()})
        elif kind == "list":
            items.append({"kind": "list", "entries": [str(i) for i in value]})
        else:
            items.append({"kind": kind, "text": str(value)})
    return render("report.html.j2", items=items, toc=toc, title=title)
