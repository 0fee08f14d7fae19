"""Classify what a worker recorded for one test, and group outcomes into
categories so that one root cause shows up as one line of the report."""

from __future__ import annotations

import re
from typing import Any

# The classes of outcome, in report order, and what each means.
CLASSES: dict[str, str] = {
    "pass": "xpuc offloaded at least one parfor and the test passed",
    "refusal": "the test failed with xpuc.UnsupportedError (a construct xpuc does not "
    "offload) or xpuc.ConflictingOptionsError (a Numba option it cannot honour)",
    "no_parfor": "the test passed, but xpuc offloaded no parfor: its functions have none "
    "(or the test expects Numba to reject them)",
    "other": "a wrong answer, any other exception, a crash or a timeout",
    "skipped": "skipped by Numba's own decorators (the reason is listed)",
    "not_exercised": "the test made no call through xpuc: it checks Numba's IR, "
    "CPU code or diagnostics, or runs itself in a Numba subprocess",
}

# What Numba's test assertions say when results differ.
_WRONG_ANSWER = re.compile(r"^(Arrays are not|Items are not|Not equal to tolerance)| != ")
_PATH = re.compile(r"(?:\S*/)?[\w.-]+\.py(?::\d+)?:?\s*")
_NUMBA_VARIABLE = re.compile(r"\$[\w.]+")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
CATEGORY_CHARS = 140


def headline(message: str) -> str:
    """The first line of an exception's message; for a Numba pipeline error,
    whose first line only names the failing stage, the line after it."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    informative = [line for line in lines if not line.startswith("Failed in ")]
    return (informative or lines or [""])[0]


def _normalized(text: str) -> str:
    """``text`` without what differs between occurrences of one problem:
    file paths and lines, Numba's SSA variable names, numbers."""
    text = _PATH.sub("", text)
    text = _NUMBA_VARIABLE.sub("$v", text)
    text = _NUMBER.sub("N", text)
    return text.strip()[:CATEGORY_CHARS]


def _short_type(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1]


def problem_category(problem: dict[str, Any]) -> str:
    short = _short_type(problem["type"])
    line = headline(problem["message"])
    if short == "AssertionError" and _WRONG_ANSWER.search(line):
        return "wrong answer"
    if problem["refusal"]:  # a refusal, though it may restate one from deeper in
        return _normalized(line)
    if problem["refusal_in_chain"]:
        return f"UnsupportedError wrapped in {short}"
    return f"{short}: {_normalized(line)}"


def classify(record: dict[str, Any]) -> tuple[str, str]:
    """``(class, category)`` of a worker's record (see ``CLASSES``)."""
    if record.get("crash"):
        return "other", record["crash"]
    if record["skip_reason"] is not None:
        return "skipped", record["skip_reason"]
    problems = record["problems"]
    unclean = [p for p in problems if not p["refusal"]]
    if unclean:
        return "other", problem_category(unclean[0])
    if problems:
        return "refusal", problem_category(problems[0])
    activity = record["xpuc"]
    if activity["calls"] == 0:
        return "not_exercised", "no call through xpuc"
    # kernels loaded from the on-disk cache (a test with cache=True run
    # before) are launched without being compiled
    if activity["kernels_compiled"] == 0 and activity["kernel_launches"] == 0:
        return "no_parfor", "no parfor offloaded"
    return "pass", ""


def first_problem(record: dict[str, Any]) -> dict[str, Any] | None:
    """The problem that decided the record's class (unclean ones first)."""
    problems = record.get("problems", [])
    unclean = [p for p in problems if not p["refusal"]]
    return (unclean or problems or [None])[0]
