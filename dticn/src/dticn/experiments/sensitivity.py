"""One difference at a time: which setting of a profile moves which number (issue 13).

Starting from one profile (the artifact by default), each :class:`Difference` switches the
settings it names to the other profile's values and leaves every other setting alone; the
study runs the base, every switched variant and the other profile over the same seeds and
configurations. A row's ``variant`` says which difference it switched (``artifact+slots``:
the artifact with our slot placement). Pure data in, rows out: the command prints and plots.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dticn.edge_profiles import PROFILES, Profile, get_profile
from dticn.experiments.metrics import aggregate
from dticn.experiments.params import Experiment
from dticn.experiments.runner import run_many

SHOWN = (("success_ratio", "success", 2), ("latency_p50_s", "p50 time to content, s", 1),
         ("lora_frames_per_item", "LoRa frames per item", 2),
         ("lifetime_days", "lifetime, days", 0))
"""The four numbers of the sensitivity table: (row key, title, decimals)."""


@dataclass(frozen=True)
class Difference:
    """One way two settings differ, switched as a unit: between two profiles (``fields``),
    or to explicit ``values`` (the validation page's one-setting-at-a-time rows, which
    change a radio scenario of ours toward their simulation's).

    Args:
        key: short name and the row's id, appended to the base profile's
            (``artifact+slots``); what reports look a row up by.
        title: what is switched, in the field's words.
        fields: :class:`~dticn.edge_profiles.Profile` fields switched together (the item's
            size and its signature are one choice: the artifact's Data builder).
        flip: the two profiles agree on this setting (the CAP listen policy: off in both);
            the variant takes the other value, so the table still shows what it moves.
        source: where the switched values come from (their file; "none" when nobody's).
        values: the settings and their values, for a difference not between profiles.
        base: the key of the difference this one adds settings to ("" for none).
    """

    key: str
    title: str
    fields: tuple[str, ...] = ()
    flip: bool = False
    source: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)
    base: str = ""

    def plus(self, key: str, title: str, source: str, **values: Any) -> Difference:
        """This difference with more settings switched, as its own row (``base`` = ours)."""
        return Difference(f"{self.key}+{key}", self.title + title,
                          source=source, values={**self.values, **values}, base=self.key)

    def apply(self, base: Profile, other: Profile) -> Profile:
        """``base`` with this difference's fields set to ``other``'s (or flipped)."""
        changes = {f: (not getattr(base, f)) if self.flip else getattr(other, f)
                   for f in self.fields}
        said = ", ".join(f"{f}={v!r}" for f, v in changes.items())
        return base.with_(name=f"{base.name}+{self.key}",
                          description=f"{base.name} with {said}", **changes)


DIFFERENCES = (
    Difference("slots", "GTS placement", ("allocator",)),
    Difference("duty-cycle", "ETSI duty-cycle enforcement", ("enforce_duty_cycle",)),
    Difference("retx", "consumer retransmissions onto a live PIT entry",
               ("forward_retransmissions",)),
    Difference("hint", "RICE static hint", ("hint_s",)),
    Difference("registration", "node prefix: static FIB or registration", ("static_routes",)),
    Difference("item", "item size and signature", ("item_payload_bytes",
                                                   "item_empty_signature")),
    Difference("rnp", "/RNP and reflexive-state lifetime", ("reflexive_lifetime_s",)),
    Difference("energy", "energy profile (measured or optimised)", ("energy_profile",)),
    Difference("cap-rx", "CAP listen policy (same in both profiles)", ("cap_rx",), flip=True),
)


def variants(base: str | Profile = "artifact", other: str | Profile = "model"
             ) -> list[tuple[str, Profile]]:
    """``(title, profile)``: the base, each difference switched alone, then the other profile.

    Raises if the profiles differ in a field no :data:`DIFFERENCES` entry switches (a new
    profile field must get its own row, or the table would silently leave it out).
    """
    b, o = get_profile(base), get_profile(other)
    switched = {f for d in DIFFERENCES for f in d.fields}
    missing = [f for f in b.differences(o) if f not in switched]
    if missing:
        raise ValueError(f"profiles {b.name} and {o.name} differ in {missing}, which no "
                         "sensitivity Difference switches: add one to DIFFERENCES")
    out = [(f"{b.name} (base)", b)]
    for d in DIFFERENCES:
        if d.flip or any(getattr(b, f) != getattr(o, f) for f in d.fields):
            prof = d.apply(b, o)
            verb = (f"switched {'on' if getattr(prof, d.fields[0]) else 'off'}" if d.flip
                    else f"as in {o.name}")
            out.append((f"{d.title}: {verb}", prof))
    out.append((f"{o.name} (all switched)", o))
    return out


def other_profile(base: Profile) -> Profile:
    """The first registered profile that is not ``base`` (artifact <-> model)."""
    return next(p for p in PROFILES.values() if p.name != base.name)


def run_sensitivity(*, configs: Sequence[str], seeds: int, duration_s: float,
                    loss: float = 0.0, bases: Sequence[str | Profile] = ("artifact",),
                    workers: int | None = None,
                    progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Run one study per base profile (each against the other profile); a JSON-ready
    document with the settings and one row per (base, variant, configuration), mean over
    seeds; ``base``, ``variant``, ``title`` and ``changes`` (the fields that differ from the
    base) name the row. A profile that two studies share runs once."""
    studies = []
    for name in bases:
        b = get_profile(name)
        studies.append((b, variants(b, other_profile(b))))
    unique: dict[str, Profile] = {}
    for _, chosen in studies:
        for _, prof in chosen:
            unique.setdefault(prof.name, prof)
    exps = [Experiment(config=c, seed=s, duration_s=duration_s, loss=loss, profile=p)
            for p in unique.values() for c in configs for s in range(1, seeds + 1)]
    runs = run_many(exps, workers=workers, progress=progress)
    per = len(configs) * seeds
    by_profile = {name: runs[k * per:(k + 1) * per] for k, name in enumerate(unique)}
    rows: list[dict[str, Any]] = []
    for b, chosen in studies:
        for title, prof in chosen:
            for j, config in enumerate(configs):
                agg = aggregate(by_profile[prof.name][j * seeds:(j + 1) * seeds])
                agg.pop("latencies_s", None)
                agg.update(base=b.name, variant=prof.name, title=title,
                           changes={f: getattr(prof, f) for f in prof.differences(b)},
                           config=config)
                rows.append(agg)
    return {"settings": {"seeds": list(range(1, seeds + 1)), "duration_s": duration_s,
                         "loss": loss, "configs": list(configs),
                         "bases": [b.name for b, _ in studies],
                         "profiles": {name: p.as_dict() for name, p in unique.items()},
                         "topology": "consumer -20ms- forwarder -20ms- gateway =LoRa= 1 node",
                         "traffic": "one transaction every U(50, 70) s"},
            "rows": rows}


def cell(row: dict[str, Any], key: str, digits: int) -> str:
    """A mean without its interval ("-" where nothing was delivered)."""
    value = row.get(key)
    if value is None or value != value:
        return "-"
    return f"{value:.{digits}f}"


def table(doc: dict[str, Any], base: str, key: str, digits: int,
          configs: Sequence[str] | None = None, label: str = "title"
          ) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of one metric of the study from ``base``: one row per variant (named
    by its ``label``: ``title`` or the short ``variant``), one column per configuration."""
    shown = list(configs or doc["settings"]["configs"])
    order: list[str] = []
    by: dict[tuple[str, str], dict[str, Any]] = {}
    titles: dict[str, str] = {}
    for r in (r for r in doc["rows"] if r["base"] == base):
        if r["variant"] not in titles:
            order.append(r["variant"])
            titles[r["variant"]] = r[label]
        by[(r["variant"], r["config"])] = r
    body = [[titles[v], *(cell(by[(v, c)], key, digits) for c in shown)] for v in order]
    return ["switched", *shown], body


def markdown(doc: dict[str, Any], base: str, configs: Sequence[str] | None = None) -> str:
    """The four tables of :data:`SHOWN` of the study from ``base``, GitHub-flavoured
    Markdown (for the docs)."""
    parts = []
    for key, title, digits in SHOWN:
        head, body = table(doc, base, key, digits, configs)
        parts.append(f"**{title}**\n")
        parts.append("| " + " | ".join(head) + " |")
        parts.append("|" + "|".join("---" for _ in head) + "|")
        parts.extend("| " + " | ".join(cells) + " |" for cells in body)
        parts.append("")
    return "\n".join(parts)


DOCS_COLUMNS: tuple[tuple[str, str, int, tuple[tuple[str, tuple[str, ...]], ...]], ...] = (
    ("success_ratio", "success", 2,
     (("V2-INR", ("v2-inr",)), ("V2-CR", ("v2-cr",)), ("V3-CR", ("v3-cr",)),
      ("RICE", ("rice",)), ("RICE-sched", ("rice-schedule",)))),
    ("latency_p50_s", "p50 s", 1,
     (("V2-INR", ("v2-inr",)), ("V3-CR", ("v3-cr",)), ("RICE", ("rice",)),
      ("RICE-sched", ("rice-schedule",)), ("push", ("push",)))),
    ("lora_frames_per_item", "LoRa frames/item", 2,
     (("V1-INR", ("v1-inr",)), ("V2-INR", ("v2-inr",)), ("V2-CR", ("v2-cr",)),
      ("RICE", ("rice",)))),
    ("lifetime_days", "lifetime d", 0,
     (("V2", ("v2-inr", "v2-cr")), ("RICE", ("rice",)), ("push", ("push",)))),
)
"""The columns of the docs' sensitivity tables (docs/dticn-schemes.md): (row key, title,
decimals, (label, configurations)); a label over several configurations shows one number
where they agree and each with its variant's suffix where they do not (``588 (INR), 644
(CR)``). V1-CR, V3-INR and push-draft are left out: their success and p50 equal V1-INR's,
V3-CR's and push's (frames and lifetimes are in the JSON)."""


def _group_cell(by: dict[tuple[str, str], dict[str, Any]], variant: str,
                configs: tuple[str, ...], key: str, digits: int) -> str:
    """One cell over ``configs``: the shared value, or each named by its suffix."""
    values = [cell(by[(variant, c)], key, digits) for c in configs]
    if len(set(values)) == 1:
        return values[0]
    return ", ".join(f"{v} ({c.rsplit('-', 1)[-1].upper()})" for v, c in zip(values, configs,
                                                                            strict=True))


def docs_table(doc: dict[str, Any], base: str) -> str:
    """The study from ``base`` as one GitHub-flavoured Markdown table of
    :data:`DOCS_COLUMNS`, one row per variant, with the energy profile its lifetimes are
    computed under (the docs' table, rendered from the JSON so it cannot drift from it)."""
    rows = [r for r in doc["rows"] if r["base"] == base]
    if not rows:
        raise ValueError(f"no study from profile {base!r} in the report; it has "
                         f"{doc['settings']['bases']}")
    by = {(r["variant"], r["config"]): r for r in rows}
    order = list(dict.fromkeys(r["variant"] for r in rows))
    title = {r["variant"]: r["title"] for r in rows}
    head = ["switched alone"]
    for key, name, _, groups in DOCS_COLUMNS:
        if key == "lifetime_days":
            head.append("energy profile")
        head.append(f"{name} " + " / ".join(label for label, _ in groups))
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for v in order:
        cells = [title[v]]
        for key, _, digits, groups in DOCS_COLUMNS:
            if key == "lifetime_days":
                energy = dict.fromkeys(str(r.get("energy_profile", "?")) for r in rows
                                       if r["variant"] == v)
                cells.append(", ".join(energy))
            cells.append(" / ".join(_group_cell(by, v, configs, key, digits)
                                    for _, configs in groups))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def docs_tables(doc: dict[str, Any]) -> str:
    """:func:`docs_table` of every study in the report, each under its base profile."""
    return "\n".join(f"From **{base}**:\n\n{docs_table(doc, base)}"
                     for base in doc["settings"]["bases"])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dticn.experiments.sensitivity REPORT.json``: print the docs' tables of a
    ``dticn reproduce --sensitivity --json`` report (one error line on bad input)."""
    import json
    import sys
    from pathlib import Path

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m dticn.experiments.sensitivity REPORT.json (the JSON of "
              "dticn reproduce --sensitivity --json)", file=sys.stderr)
        return 2
    try:
        doc = json.loads(Path(args[0]).read_text(encoding="utf-8"))
        text = docs_tables(doc)
    except (OSError, ValueError) as exc:
        print(f"error: {args[0]}: {exc}", file=sys.stderr)
        return 1
    except (KeyError, TypeError) as exc:
        print(f"error: {args[0]} is not a dticn reproduce --sensitivity report (missing "
              f"{exc}); write one with dticn reproduce --sensitivity --json", file=sys.stderr)
        return 1
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
