"""Do the engines agree?  Per dataset, the ok runs' counts and fingerprints: the
summary's count column, the tables' MISMATCH marks, ``results/tables/agreement.txt``
and the ``check_counts`` rule's failure (``python -m mbebench check``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mbebench.report import select as sel
from mbebench.report.fmt import MISMATCH


class CountMismatchError(RuntimeError):
    """Two ok runs of one dataset disagree on the count or the fingerprint."""


class NotAllDatasetsRan(RuntimeError):
    """Some datasets are unavailable (their download or convert failed)."""


Groups = dict[tuple[int, "str | None"], list[str]]


def groups(rows_of_ds: Iterable[Mapping]) -> Groups:
    """(count, fingerprint or None) -> labels, over the ok rows (instrumented ones included)."""
    rows_of_ds = list(rows_of_ds)
    order = {c.key: i for i, c in enumerate(sel.configs(rows_of_ds))}
    out: Groups = {}
    for r in sorted(rows_of_ds, key=lambda r: order[sel.config_key(r)]):
        if r.get("status") == "ok":
            fp = str(r["fingerprint"]).lower() if r.get("fingerprint") else None
            out.setdefault((int(r["count"]), fp), []).append(r.get("label") or r["run_id"])
    return out


def agrees(g: Groups) -> bool | None:
    """Same count everywhere and one fingerprint among the runs that give one; None: no ok run."""
    if not g:
        return None
    return len({c for c, _ in g}) == 1 and len({f for _, f in g if f is not None}) <= 1


def count_fp(g: Groups) -> tuple[Any, Any]:
    """The tables' count and fingerprint cells ("3 / 4" where they disagree)."""
    if agrees(g):
        fps = {f for _, f in g if f is not None}
        return next(iter(g))[0], (fps.pop() if fps else None)
    if not g:
        return None, None
    counts = list(dict.fromkeys(c for c, _ in g))
    fps = list(dict.fromkeys(f or "–" for _, f in g))
    return " / ".join(map(str, counts)), " / ".join(fps)


COUNT = "count"
FINGERPRINT = "fingerprint"
# what a disagreement is about, as the tables say it
DISAGREE_TEXT = {COUNT: "the number of maximal bicliques",
                 FINGERPRINT: "which maximal bicliques they found (the same number, "
                              "another fingerprint)"}


def disagreement(g: Groups) -> str | None:
    """What the ok runs disagree on: :data:`COUNT` (the numbers differ), :data:`FINGERPRINT`
    (one number, fingerprints that differ), or None (they agree, or no ok run)."""
    if agrees(g) is not False:
        return None
    return COUNT if len({c for c, _ in g}) > 1 else FINGERPRINT


def disagreement_sentence(kinds: Mapping[str, str]) -> str:
    """"the engines disagree on <what> of <datasets>", one clause per kind (dataset -> kind)."""
    parts = []
    for kind in (COUNT, FINGERPRINT):
        names = [ds for ds, k in kinds.items() if k == kind]
        if names:
            parts.append(f"on {DISAGREE_TEXT[kind]} of {', '.join(names)}")
    return "the engines disagree " + " and ".join(parts)


def describe(g: Groups) -> str:
    return "; ".join(f"{', '.join(ids)} -> {c} ({fp or 'no fingerprint'})"
                     for (c, fp), ids in g.items())


def mismatches(rows: Iterable[Mapping]) -> dict[str, str]:
    """dataset -> one line saying which runs gave which count/fingerprint."""
    out = {}
    for ds, rs in sel.by_dataset(rows).items():
        g = groups(rs)
        if agrees(g) is False:
            out[ds] = describe(g)
    return out


def check_agreement(rows: Iterable[Mapping]) -> None:
    """Raise CountMismatchError when ok runs of a dataset disagree.

    The first line names the datasets (the CLI prints only that line); then one
    line per dataset: which runs gave which count (fingerprint).
    """
    bad = mismatches(list(rows))
    if bad:
        lines = [f"count/fingerprint mismatch in {len(bad)} dataset(s): {', '.join(bad)}"
                 " (see the tables' MISMATCH marks)"]
        lines += [f"{ds}: {text}" for ds, text in bad.items()]
        raise CountMismatchError("\n".join(lines))


def check_all(rows: Iterable[Mapping], unavailable: Mapping[str, str] | None = None) -> None:
    """The pipeline's final check: raise when ok runs of a dataset disagree
    (CountMismatchError) or when datasets are unavailable (NotAllDatasetsRan).

    The message has one line per dataset after a first line naming them all.
    """
    rows = list(rows)
    unav = sel.unavailable(rows, unavailable)
    lines = []
    if unav:
        lines.append(f"{len(unav)} dataset(s) unavailable, left out of the tables (the next run "
                     f"tries them again): {', '.join(unav)}")
        lines += [f"{ds}: unavailable: {why}" for ds, why in unav.items()]
    try:
        check_agreement(rows)
    except CountMismatchError as e:
        raise CountMismatchError("\n".join([str(e), *lines])) from None
    if lines:
        raise NotAllDatasetsRan("\n".join(lines))


def agreement_report(rows: Iterable[Mapping], unavailable: Mapping[str, str] | None = None) -> str:
    """One line per dataset: the count all ok runs agree on, who said what, or why the
    dataset is unavailable."""
    rows = list(rows)
    unav = sel.unavailable(rows, unavailable)
    lines = []
    for ds, rs in sel.by_dataset(rows).items():
        g = groups(rs)
        agree = agrees(g)
        if ds in unav:
            lines.append(f"{ds}: unavailable: {unav[ds]}")
        elif agree is None:
            lines.append(f"{ds}: no ok run")
        elif agree:
            count, fp = count_fp(g)
            n = sum(len(v) for v in g.values())
            lines.append(f"{ds}: {n} ok runs agree: {count} ({fp or 'no fingerprint'})")
        else:
            lines.append(f"{ds}: {MISMATCH}: {describe(g)}")
    with_rows = {r["dataset"] for r in rows}
    lines += [f"{ds}: unavailable: {why}" for ds, why in unav.items() if ds not in with_rows]
    return "\n".join(lines) + "\n"
