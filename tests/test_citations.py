"""Citations a stranger can follow: ``python/odp`` cites papers by author and year (the entries are
in docs/references.md), never by a file number of a private collection ("paper 002"), and never
an issue, an item of one, or a file that is not in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "odp"

#: What a stranger cannot follow.  A project's public issue is cited by its URL
#: (``github.com/<owner>/<repo>/issues/<n>``), which these do not match.
UNFOLLOWABLE = re.compile(
    r"\bpapers? 0*0[0-9]\b"          # "paper 002", "papers 001 and 004"
    r"|\bissues? #?[0-9]+"           # "issue 27", "Issue 14.5", "issue #3"
    r"|\bitems? [0-9]+"              # "item 4", "(item 5)"
    r"|\bdesign\.md\b|\bnotes/|shared/papers",  # files that are not in the repository
    re.IGNORECASE)

#: Files being rewritten elsewhere (by the change that owns them), each with at least one such
#: citation today.  ``_lean_rules.py`` is generated from ``Odp/LedgerCore.lean`` and follows it.
#: Remove an entry when its file is fixed: the second test fails on an entry that is clean.
PENDING: set[str] = set()


def _offences() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if UNFOLLOWABLE.search(line):
                out.setdefault(rel, []).append(f"{rel}:{number}: {line.strip()}")
    return out


def test_no_paper_numbers_issues_items_or_missing_files_in_the_package():
    found = _offences()
    outside = [hit for rel, hits in found.items() if rel not in PENDING for hit in hits]
    assert outside == []


def test_the_pending_list_names_only_files_that_still_need_it():
    assert sorted(PENDING - set(_offences())) == []


def test_the_pattern_catches_what_it_is_for():
    for bad in ("paper 002, Sec. 5", "Papers 001 and 004", "(issue 27, item 4)", "Issue 14.5: x",
                "(item 5)", "see design.md", "notes/seed_003.md", "``shared/papers/003``"):
        assert UNFOLLOWABLE.search(bad), bad
    for good in ("Hartmann et al. 2022, Lemma 11", "github.com/pytorch/opacus/issues/813",
                 "settle_many item: expected", "Alg. 1 line 4"):
        assert not UNFOLLOWABLE.search(good), good


def test_the_four_papers_odp_implements_are_cited_so_and_listed():
    """The four papers odp implements are cited in the package by author and year, as
    docs/references.md lists them."""
    refs = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    text = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))
    for cited in ("Hartmann et al. 2022", "Rogers, Roth, Ullman, Vadhan 2016", "Haney et al. 2023",
                  "Meiser and Mohammadi 2018"):
        assert cited in refs and cited in text, cited
