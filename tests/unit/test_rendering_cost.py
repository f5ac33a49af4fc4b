"""What a page costs to render grows with its size, never faster: a body of repeated headings
(each needs its own id) renders in the time of a body of distinct ones."""

from __future__ import annotations

import time

from kb.rendering import document_render

HEADINGS = 3_000


def _best_seconds(*bodies: str, runs: int = 3) -> list[float]:
    """Each body's best time over ``runs``, the bodies rendered in turn, so a burst of other
    work on a shared machine slows them alike (three runs of one, then of the other, measured
    2.7x once under the parallel suite, against about 1x alone)."""
    best = [float("inf")] * len(bodies)
    for _ in range(runs):
        for index, body in enumerate(bodies):
            started = time.perf_counter()
            document_render(body=body)
            best[index] = min(best[index], time.perf_counter() - started)
    return best


def test_repeated_headings_render_as_fast_as_distinct_ones() -> None:
    # given two bodies of as many setext headings, one all alike, one all different
    repeated = "x\n===\n\n" * HEADINGS
    distinct = "".join(f"x{index}\n===\n\n" for index in range(HEADINGS))

    # when both are rendered, in turn (best of three each)
    repeated_seconds, distinct_seconds = _best_seconds(repeated, distinct)
    ratio = repeated_seconds / distinct_seconds

    # then the repeated ones cost no more than the distinct ones (before: 8x at 3,000 and
    # growing with the count, as each id was found by counting up from x-1 again)
    assert ratio < 2.5, f"repeated headings took {ratio:.1f}x as long as distinct ones"


def test_repeated_headings_still_get_unique_ids_around_the_ones_written() -> None:
    body = "## Step\n\n## Step {#step-1}\n\n## Step\n\n## Step\n"

    anchors = [heading.anchor for heading in document_render(body=body).headings]

    assert anchors == ["step", "step-1", "step-2", "step-3"]
