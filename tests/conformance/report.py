"""The conformance report: counts per class, per Numba test class and per
category, and every "other" outcome, as JSON and as Markdown."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from .outcome import CLASSES, first_problem, headline

JSON_NAME = "conformance.json"
MARKDOWN_NAME = "conformance.md"


def summarize(results: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """``results``: one entry per test with its record, class and category."""
    counts = Counter(r["class"] for r in results)
    by_test_class: dict[str, Counter] = defaultdict(Counter)
    categories: dict[str, Counter] = defaultdict(Counter)
    for result in results:
        by_test_class[result["test"].split(".")[0]][result["class"]] += 1
        categories[result["class"]][result["category"]] += 1
    return {
        "meta": meta,
        "classes": CLASSES,
        "counts": {"total": len(results), **{name: counts[name] for name in CLASSES}},
        "by_test_class": {
            name: {klass: tally[klass] for klass in CLASSES}
            for name, tally in sorted(by_test_class.items())
        },
        "categories": {
            klass: dict(categories[klass].most_common()) for klass in CLASSES if categories[klass]
        },
        "tests": sorted(results, key=lambda r: r["test"]),
    }


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(_cell(str(c)) for c in row) + " |" for row in rows]
    return lines + [""]


def markdown(summary: dict[str, Any]) -> str:
    meta, counts = summary["meta"], summary["counts"]
    lines = [
        "# xpuc conformance on Numba's parfor tests",
        "",
        f"`{meta['command']}` on {meta['device']}, {meta['date']}: Numba {meta['numba']}, "
        f"xpuc {meta['xpuc']} at {meta['commit']}, {meta['seconds']:.0f} s with "
        f"{meta['jobs']} workers, {meta['timeout']:g} s per test. "
        "One test again, with its traceback: `python -m tests.conformance.worker Class.test_name`.",
        "",
        "## Counts",
        "",
    ]
    lines += _table(
        ["class", "tests", "meaning"],
        [["total", counts["total"], ""]]
        + [[name, counts[name], meaning] for name, meaning in CLASSES.items()],
    )
    lines += ["## Per Numba test class", ""]
    lines += _table(
        ["test class", *CLASSES],
        [[name, *tally.values()] for name, tally in summary["by_test_class"].items()],
    )
    lines += ["## Categories", ""]
    for klass, tally in summary["categories"].items():
        if klass == "pass":
            continue
        lines += [f"### {klass}", ""]
        lines += _table(["tests", "category"], [[n, cat] for cat, n in tally.items()])
    lines += ["## Every \"other\"", ""]
    rows = []
    for test in summary["tests"]:
        if test["class"] != "other":
            continue
        problem = first_problem(test["record"])
        if problem is None:
            rows.append([test["test"], "(none: the worker died)", test["category"]])
        else:
            rows.append([test["test"], problem["type"], headline(problem["message"])])
    lines += _table(["test", "exception", "first line"], rows) if rows else ["None.", ""]
    delegated = Counter(
        name
        for test in summary["tests"]
        if test["class"] == "pass"
        for name in test["record"]["xpuc"]["delegated"]
    )
    if delegated:
        lines += [
            "## What passing tests read from Numba's own parallel compile",
            "",
            "Besides running through xpuc, some passing tests checked attributes of Numba's "
            "CPU backend (LLVM code, parfor diagnostics); those come from Numba's own "
            "`parallel=True` compile. Tests per attribute: "
            + ", ".join(f"`{name}` {n}" for name, n in delegated.most_common())
            + ".",
            "",
        ]
    return "\n".join(lines)


def write(summary: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    json_path, markdown_path = directory / JSON_NAME, directory / MARKDOWN_NAME
    json_path.write_text(json.dumps(summary, indent=1) + "\n")
    markdown_path.write_text(markdown(summary))
    return json_path, markdown_path
