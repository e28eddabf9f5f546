"""Shortcut audit: could a model pass a family by noticing that *something* was edited?

For each family, over its expanded tuples: (1) a length-only two-alternative forced choice
(which of two packets is the edited one, from their length difference alone), (2) a bag-of-words
2AFC on the packets' word-count difference, both trained on other cases (5-fold, grouped by case)
with scikit-learn's logistic regression, and (3) a screen for templated insertions: the share of
a family's inserted words carried by its most frequent inserted word. A family whose edit is
detectable from the surface is flagged: a model that reacts to any visible edit can look
responsive on it, which the negative controls then have to rule out.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from clinical_cf.catalog.css.expand import CSSTuple

STOPWORDS = {"the", "a", "an", "of", "to", "and", "or", "on", "in", "for", "with", "is", "was", "at", "by", "per"}


def inserted_words(before: str, after: str) -> list[str]:
    a, b = re.findall(r"\w[\w/+-]*", before.lower()), re.findall(r"\w[\w/+-]*", after.lower())
    words: list[str] = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("insert", "replace"):
            words += [w for w in b[j1:j2] if w not in STOPWORDS and not w.isdigit()]
    return words


def _two_afc(features: np.ndarray, groups: list[str]) -> float:
    """Held-out accuracy of picking the edited packet from (edited - original) features, both orders."""
    x = np.vstack([features, -features])
    y = np.r_[np.ones(len(features)), np.zeros(len(features))]
    g = np.r_[groups, groups]
    folds = min(5, len(set(groups)))
    if folds < 2:
        return float("nan")
    correct = 0
    for train, test in GroupKFold(n_splits=folds).split(x, y, g):
        model = LogisticRegression(max_iter=1000).fit(x[train], y[train])
        correct += int((model.predict(x[test]) == y[test]).sum())
    return correct / len(y)


def audit(tuples: list[CSSTuple], flag_accuracy: float = 0.9, flag_length: float = 0.75, flag_share: float = 0.3) -> pd.DataFrame:
    """One row per family: 2AFC accuracies, the top inserted word and its share, and the flag."""
    out = []
    by_family: dict[str, list[CSSTuple]] = {}
    for t in tuples:
        by_family.setdefault(t.intervention.family, []).append(t)
    for family, items in sorted(by_family.items()):
        before = [t.baseline.text for t in items]
        after = [t.counterfactual.text for t in items]
        groups = [t.case.case_id for t in items]
        lengths = np.array([[len(b) - len(a)] for a, b in zip(before, after, strict=False)], dtype=float)
        vectorizer = CountVectorizer(token_pattern=r"\w[\w/+-]*", min_df=2).fit(before + after)
        bow = (vectorizer.transform(after) - vectorizer.transform(before)).toarray().astype(float)
        inserted = Counter(w for a, b in zip(before, after, strict=False) for w in inserted_words(a, b))
        total = sum(inserted.values())
        top, top_count = inserted.most_common(1)[0] if inserted else ("", 0)
        length_acc = _two_afc(lengths, groups)
        bow_acc = _two_afc(bow, groups)
        share = top_count / total if total else 0.0
        reasons = [
            why for why, hit in (
                (f"bag-of-words 2AFC {bow_acc:.2f}", bow_acc >= flag_accuracy),
                (f"length-only 2AFC {length_acc:.2f}", length_acc >= flag_length),
                (f"'{top}' carries {share:.0%} of inserted words", share >= flag_share),
            ) if hit
        ]
        out.append({"family": family, "tuples": len(items), "length_2afc": length_acc, "bow_2afc": bow_acc,
                    "top_inserted_word": top, "top_word_share": share, "flagged": bool(reasons),
                    "why": "; ".join(reasons)})
    return pd.DataFrame(out)
