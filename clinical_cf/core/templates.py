"""Template fields in user catalogs: plain `{name}` only.

Catalog templates (an intervention's `expected_change`, a seed's text parts) are filled with
`str.format_map`. A format spec or conversion is user-controlled work at fill time: a width
(`{board_date:>300000000}`) or precision (`{x:.99999999f}`) allocates that many characters for
every sample, and passed the old name-only check. No bundled template uses a spec, a conversion,
or attribute or index access, so all of them are refused rather than bounded.
"""

from __future__ import annotations

import string


def template_fields(text: str) -> list[str]:
    """The field names of a template, in order; a ValueError for anything but a plain `{name}`.

    Also a ValueError (from `string.Formatter`) for an unmatched brace.
    """
    names: list[str] = []
    for _, name, spec, conversion in string.Formatter().parse(text):
        if name is None:
            continue
        shown = name if len(name) <= 40 else name[:40] + "…"
        if conversion:
            raise ValueError(f"template field '{{{shown}!{conversion}…}}': conversions are not allowed; write '{{{shown}}}'")
        if spec:
            spec_shown = spec if len(spec) <= 20 else spec[:20] + "…"
            raise ValueError(
                f"template field '{{{shown}:{spec_shown}}}': format specs (width, precision) are not allowed; "
                f"write '{{{shown}}}'"
            )
        if not name.isidentifier():
            raise ValueError(f"template field '{{{shown}}}' must be a plain name (no attribute or index access)")
        names.append(name)
    return names
