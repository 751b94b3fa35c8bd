"""What reviewing taught the method: per failure type and per method, how many proposals a
person accepted, edited or rejected (and why), and what they added by hand (what the method
misses)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from gaze.view.review_store import ReviewStore


def review_summary(store: ReviewStore) -> dict[str, Any]:
    """Counts over the clips reviewed so far (every decision counts, finished clip or not)."""
    by_type: dict[str, Counter[str]] = defaultdict(Counter)
    by_method: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: Counter[str] = Counter()
    added: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    for clip_id in store.order:
        clip, state = store.clips[clip_id], store.state[clip_id]
        statuses[state.status or "to do"] += 1
        for index, decision in state.decisions.items():
            kind = clip.proposed[index].kind
            outcome = decision["decision"]
            by_type[kind][outcome] += 1
            by_method[clip.method][outcome] += 1
            if outcome == "reject":
                reasons[decision.get("reason", "")] += 1
        for event in state.added:
            added[event.get("type") or "untyped"] += 1

    def rates(counts: Counter[str]) -> dict[str, Any]:
        decided = sum(counts.values())
        kept = counts["accept"] + counts["edit"]
        return {
            "decided": decided,
            "accepted": counts["accept"],
            "edited": counts["edit"],
            "rejected": counts["reject"],
            "acceptance": kept / decided if decided else None,
        }

    return {
        "clips": dict(statuses),
        "by_type": {k: rates(v) for k, v in sorted(by_type.items())},
        "by_method": {k: rates(v) for k, v in sorted(by_method.items())},
        "rejection_reasons": dict(reasons.most_common()),
        "added_by_type": dict(added.most_common()),
    }
