"""One reader for model replies, shared by every suite's parser and by the judges' verdicts.

A score is only as good as the reading of the reply behind it, so every suite reads a reply in
the same order and records which step produced the reading (`Provenance`):

(a) `json`: a JSON object in the final answer that has the suite's schema (the contract: every
    reply is requested as structured output);
(b) `repaired`: the same, after repairing its syntax only (trailing commas, quotes, a missing
    closing brace), never its content;
(c) `field`: an explicit final-answer line in a closed grammar (`ANSWER: B, D`;
    `ACTION: ESCALATE, CONFIDENCE: 0.8`; `RECOMMENDED: X; Y` / `NOT RECOMMENDED: Z`;
    `Verdict: 1`), which must end the answer (a line the reply later takes back is not final);
(d) `reader`: the `reader` model role converts the final answer into the schema, quoting for
    every item, option, action or number the words of the reply that state it; the reading is
    verified here, deterministically (`verify_*`): each quote must occur in the reply (whitespace
    normalised, case folded) and contain the item and its polarity, or the whole reading is rejected;
(e) `unreadable`: nothing could be read without guessing (the scorer unscores it with a reason).

`invalid` replies (empty, the prompt's template echoed, degenerate repetition) are not answers at
all. No step here assigns a polarity, letter set, action, verdict, confidence or probability that
the reply does not state in one of the forms (a)-(c) or in a quote the reader returned.

The package is split by what it does: `canonical` (one shape for every format: serialised output decoded,
entities, citation markers, LaTeX, emoji and markdown through their parsers), `final` (the final answer, bounds, revisions and conflicts, invalid
output), `json_answers` (JSON, steps a-b), `contract` (closed grammars and judge verdicts, step c),
`verification` (structural checks of a reader's quotes), `reader` (the reader role, step d) and `judge_input`
(what a judge or reader sees). Every public name is importable from `clinical_cf.replies`.

Reading is bounded: a reply longer than `MAX_REPLY_CHARS` is cut before reading (and the reading
says so), JSON nested deeper than `MAX_JSON_DEPTH` is not read, and every pattern applied to
model text is linear in its length (no nested or adjacent overlapping quantifiers; bounded runs).
"""

from __future__ import annotations

from clinical_cf.replies import canonical, contract, final, items, json_answers, judge_input, reader, verification, whole
from clinical_cf.replies.canonical import canonical_text, decode_serialised, plain_text  # noqa: F401
from clinical_cf.replies.contract import (  # noqa: F401
    Reading,
    answer_lines,
    as_flag,
    read_flag,
    read_score,
    trailing_lines,
)
from clinical_cf.replies.final import (  # noqa: F401
    CONFLICT,
    MAX_JSON_DEPTH,
    MAX_NUMBER_DIGITS,
    MAX_REPAIR_CHARS,
    MAX_REPLY_CHARS,
    PROVENANCES,
    READ,
    READER_RULES_VERSION,
    REASONING_TAG_NAMES,
    Provenance,
    bounded,
    conflict_reason,
    degenerate,
    final_answer,
    had_reasoning,
    invalid_reason,
    is_conflict,
    is_placeholder,
    loads,
    none_like,
    number_problem,
    read_by,
    reply_cut,
    revision_in,
    squash,
    strip_markdown,
)
from clinical_cf.replies.items import (  # noqa: F401
    enumeration,
    is_pointer,
    resolve_pointer,
    struck,
    struck_conflict,
)
from clinical_cf.replies.json_answers import (  # noqa: F401
    Found,
    elision,
    find_object,
    json_cut,
    json_objects,
    lowered_keys,
    normal_key,
    outside_json,
)
from clinical_cf.replies.judge_input import (  # noqa: F401
    DATA_NOTICE,
    boundary,
    data_block,
    normalise_for_judge,
)
from clinical_cf.replies.reader import (  # noqa: F401
    CONFLICT_NOTE,
    READER_PROMPT,
    READER_ROLE,
    SECOND_READER_ROLE,
    Agreement,
    ReaderModel,
    ReaderOutcome,
    ReaderPanel,
    ReaderTask,
    agreed_reading,
    ask_reader,
    quoted_items,
    reader_prompt,
    readers_of,
    resolve_reader,
)
from clinical_cf.replies.verification import (  # noqa: F401
    ANSWER_STEMS,
    CHECKED,
    EXCLUDING_CUES,
    EXCLUDING_WORDS,
    HEDGE_WORDS,
    MAX_PLACES,
    NEGATION_WORDS,
    NEGATIVE_CUES,
    POSITIVE_STEMS,
    UNCHECKED,
    Place,
    check_place,
    excluded_before,
    grounded,
    has_negative_cue,
    has_stem,
    hedged,
    item_in_quote,
    letter_in_quote,
    negated,
    negated_near,
    number_grounded,
    numbers_in,
    occurrences,
    places,
    stated_extras,
    structure_text,
    tokens_of,
    verify_quote,
    words_of,
)
from clinical_cf.replies.whole import (  # noqa: F401
    STOP_REASON_CODES,
    UNREADABLE_CODES,
    SuiteReading,
    not_whole,
    output_facts,
    per_arm,
    unreadable_code,
)

MODULES = (canonical, final, json_answers, whole, items, contract, verification, judge_input, reader)
"""The package's modules, for the scoring contract (their rules and patterns are parts of every suite's fingerprint)."""
