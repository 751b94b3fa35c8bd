"""`gaze view`: a static site for one benchmark run (or two, compared): an index, one page per
clip, and the side-by-side comparison. Pages are written one at a time, atomically, so a clip
that cannot be shown costs its own page only."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gaze.atomic import atomic_write_text, claim_folder, claim_output
from gaze.errors import GazeInputError
from gaze.report.html import render_html
from gaze.report.transcript import transcript_section
from gaze.view.compare import clip_folder, compare_html, scorer_matches
from gaze.view.pages import clip_nav, clip_page_name, index_html
from gaze.view.plots import plots_html
from gaze.view.runs import RunData, load_run
from gaze.view.serve import MEDIA_LIST
from gaze.view.trust import TRUST_FILE, trust_page


@dataclass
class Site:
    """What was written, for the command's summary and for serving."""

    folder: Path
    pages: list[Path] = field(default_factory=list)
    videos: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def index(self) -> Path:
        return self.folder / "index.html"


def _distinct_labels(runs: Sequence[RunData]) -> None:
    labels = [r.label for r in runs]
    for run in runs:
        if labels.count(run.label) > 1:
            run.label = f"{run.label} ({run.folder.name})"


def _claim_site(folder: Path, inputs: Sequence[Path]) -> None:
    """The site's folder is new, empty or an earlier site (its index a page gaze wrote), and
    holds none of the runs it shows: a user's own folder is never filled with pages."""
    claim_folder(folder, inputs, empty=False)
    if folder.is_dir() and any(folder.iterdir()):
        index = folder / "index.html"
        if not index.is_file():
            raise GazeInputError(
                f"{folder} holds files but no site gaze wrote (no index.html); name a new or "
                "empty folder (nothing there was touched)"
            )
        claim_output(index, "html")


def probe_run(folder: Path) -> Path:
    """A ``gaze probe`` folder stands for its run (``run/`` beside ``trust.json``)."""
    if (folder / TRUST_FILE).is_file() and (folder / "run" / "reports").is_dir():
        return folder / "run"
    return folder


def _trust_report(run: RunData, site: Site) -> bool:
    """Write the trust page of the probe this run belongs to, if it does."""
    path = run.folder / ".." / TRUST_FILE
    if not path.is_file():
        return False
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        html = trust_page(report, back="index.html")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        run.problems.append(f"{TRUST_FILE}: not shown ({exc})")
        return False
    target = site.folder / "trust.html"
    atomic_write_text(target, html)
    site.pages.append(target)
    return True


def build_site(
    rundirs: Sequence[Path],
    out: Path | None = None,
    scores: Sequence[Path] = (),
    progress: Callable[[str], None] | None = None,
) -> Site:
    """Write the viewer for ``rundirs[0]`` (compared with the others, if any) into ``out``
    (default: ``RUNDIR/view``)."""
    rundirs = [probe_run(Path(d)) for d in rundirs]
    runs = [load_run(d, list(scores) if i == 0 else None) for i, d in enumerate(rundirs)]
    manifests = {r.info.get("manifest_sha256") for r in runs} - {None}
    if len(manifests) > 1:
        raise GazeInputError(
            "the runs were made on different manifests (manifest_sha256 in their run.json "
            "differ); compare runs of the same clips"
        )
    _distinct_labels(runs)
    site = Site(Path(out) if out is not None else Path(rundirs[0]) / "view")
    _claim_site(site.folder, [*rundirs, *scores])
    try:
        for index in range(len(runs)):
            (site.folder / clip_folder(index)).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GazeInputError(f"cannot create {site.folder}: {exc.strerror}") from exc
    for index, run in enumerate(runs):
        ids = list(run.reports)
        for position, (clip_id, report) in enumerate(run.reports.items()):
            target = site.folder / clip_folder(index) / clip_page_name(clip_id)
            video = run.video(clip_id)
            try:
                row = run.rows.get(clip_id)
                html = render_html(
                    report,
                    target,
                    video=video,
                    references=row.events if row is not None else (),
                    nav=clip_nav(ids, position),
                    extra=transcript_section(run.transcript(clip_id)),
                )
            except Exception as exc:  # one clip's page must not cost the others theirs
                problem = f"{clip_id}: page not written ({exc})"
                site.problems.append(f"{run.label} / {problem}")
                run.problems.append(problem)
                continue
            atomic_write_text(target, html)
            site.pages.append(target)
            if video is not None and video.is_file():
                site.videos.append(video)
            if progress is not None:
                progress(clip_id)
    media = sorted({str(v.resolve()) for v in site.videos})
    atomic_write_text(site.folder / MEDIA_LIST, json.dumps(media, indent=1) + "\n")
    plots = plots_html(runs[0], *scorer_matches(runs[0]))
    trust = _trust_report(runs[0], site)
    atomic_write_text(
        site.index, index_html(runs, compared=len(runs) > 1, plots=plots, trust=trust)
    )
    site.pages.append(site.index)
    if len(runs) > 1:
        compare = site.folder / "compare.html"
        atomic_write_text(compare, compare_html(list(runs)))
        site.pages.append(compare)
    return site
