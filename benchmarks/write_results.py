"""Write the benchmark tables from the JSON the benchmarks wrote; nothing is typed by hand.

Every ``benchmarks/results/*.json`` holds ``provenance`` (command, date,
machine, versions: ``_provenance.py``), ``tables`` (each a ``title``,
``columns`` and ``rows``, optionally ``"headline": true`` and a ``note``) and
optionally ``summary``, ``agreements`` and ``disagreements`` (sentences the
benchmark wrote from its own numbers). This script turns them into

- ``benchmarks/README.md``: every table of every result file;
- the README's results section (between ``.. begin-results`` and
  ``.. end-results``): the headline tables;
- ``doc/_generated/results.rst`` for the documentation site (``doc/conf.py``
  calls :func:`write_doc_page` on every build).

    python benchmarks/write_results.py [--results benchmarks/results] [--check]

``--check`` writes nothing and fails when a file is out of date.
"""
import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEGIN, END = ".. begin-results", ".. end-results"

#: Result files in the order their sections appear; others follow by name.
ORDER = ["bench_throughput", "bench_accuracy_memory", "bench_accuracy_memory_dna100k",
         "bench_bear_folds", "bench_dense_columns", "bench_schedules",
         "bench_binary_text",
         "bench_cli", "bench_parallel", "bench_explain", "bench_vw_interactions",
         "bench_streams",
         "reproduce_mission", "reproduce_bear", "reproduce_wm_sketch"]


def load_results(folder):
    """``(name, record)`` of every result file of ``folder``, in :data:`ORDER`."""
    records = {path.stem: json.loads(path.read_text()) for path in sorted(Path(folder).glob("*.json"))}
    for name, record in records.items():
        missing = {"provenance", "tables"} - set(record)
        if missing:
            raise ValueError(f"{folder}/{name}.json lacks {sorted(missing)}")
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(records.items(), key=lambda item: (rank.get(item[0], len(ORDER)), item[0]))


def _cell(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        if abs(value) < 1:
            return f"{value:.3f}"
        return f"{value:.2f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _how(record):
    p = record["provenance"]
    m = p["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in p["versions"].items())
    return (f"{p['date']}; {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, "
            f"{m['os']}; {versions}"), p["command"]


# --------------------------------------------------------------------- Markdown
def _md(text):
    """``text`` with Markdown's emphasis, code and table characters escaped."""
    return re.sub(r"([\\*_`|])", r"\\\1", str(text))


def _markdown_table(table):
    lines = [f"**{_md(table['title'])}**", ""]
    lines.append("| " + " | ".join(_md(c) for c in table["columns"]) + " |")
    lines.append("|" + "|".join("---" for _ in table["columns"]) + "|")
    lines += ["| " + " | ".join(_md(_cell(v)) for v in row) + " |" for row in table["rows"]]
    if table.get("note"):
        lines += ["", _md(table["note"])]
    return lines + [""]


def markdown(results):
    """``benchmarks/README.md``: every table, with how it was measured."""
    lines = ["# Benchmark results", "",
             "Written by `python benchmarks/write_results.py` from `benchmarks/results/*.json`;",
             "do not edit by hand. Each section names the command, machine and date of its run.",
             ""]
    for name, record in results:
        when, command = _how(record)
        lines += [f"## {name}", "", f"`{command}`", "", f"Measured {when}.", ""]
        lines += [f"- {_md(sentence)}" for sentence in record.get("summary", [])] + [""]
        for table in record["tables"]:
            lines += _markdown_table(table)
        for key, heading in (("agreements", "Where we agree with the paper"),
                             ("disagreements", "Where we differ from the paper, and why")):
            if record.get(key):
                lines += [f"**{heading}**", ""] + [f"- {_md(s)}" for s in record[key]] + [""]
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------- reStructuredText
def _rst(text):
    """``text`` with reStructuredText's inline markup characters escaped."""
    return re.sub(r"([\\*`|_<>\[\]])", r"\\\1", str(text))


def _rst_table(table):
    """A reStructuredText simple table, readable in the raw file too."""
    cells = [[_rst(_cell(v)) for v in row] for row in [table["columns"], *table["rows"]]]
    for row in cells:
        if len(row) != len(table["columns"]):
            raise ValueError(f"table {table['title']!r}: a row of {len(row)} cells, "
                             f"{len(table['columns'])} columns")
        row[0] = row[0] or "-"  # an empty first cell would continue the previous row
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    border = "  ".join("=" * w for w in widths)
    lines = [f"**{_rst(table['title'])}**", "", border,
             "  ".join(c.ljust(w) for c, w in zip(cells[0], widths)).rstrip(), border]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells[1:]]
    lines += [border, ""]
    if table.get("note"):
        lines += [_rst(table["note"]), ""]
    return lines


def _underline(text, char):
    return [text, char * len(text), ""]


def rst_page(results):
    """The body of the documentation's benchmarks page."""
    lines = []
    for name, record in results:
        when, command = _how(record)
        lines += _underline(name, "-")
        lines += ["::", "", f"    {command}", "", f"Measured {_rst(when)}.", ""]
        lines += [f"- {_rst(sentence)}" for sentence in record.get("summary", [])] + [""]
        for table in record["tables"]:
            lines += _rst_table(table)
        for key, heading in (("agreements", "Where we agree with the paper"),
                             ("disagreements", "Where we differ from the paper, and why")):
            if record.get(key):
                lines += [f"**{heading}**", ""] + [f"- {_rst(s)}" for s in record[key]] + [""]
    return "\n".join(lines).rstrip() + "\n"


def readme_section(results):
    """The README's results section: the headline tables and how they were measured."""
    lines = [BEGIN, ""]
    for name, record in results:
        headline = [t for t in record["tables"] if t.get("headline")]
        if not headline:
            continue
        when, command = _how(record)
        for table in headline:
            lines += _rst_table(table)
        lines += [f"``{command}``, {when}.", ""]
    lines += ["All tables, and the papers' results reproduced beside ours: "
              "``benchmarks/README.md`` (written by ``benchmarks/write_results.py``).", "",
              END]
    return "\n".join(lines)


def replace_section(text, section):
    """``text`` with the part between the markers replaced by ``section``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"README.rst lacks the markers {BEGIN!r} ... {END!r}")
    return text[:start] + section + text[end + len(END):]


def write_doc_page(results_dir, path):
    """Write the documentation's results page to ``path`` (made by ``doc/conf.py``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = rst_page(load_results(results_dir))
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(HERE / "results"))
    parser.add_argument("--check", action="store_true",
                        help="fail when a written file is out of date; write nothing")
    args = parser.parse_args(argv)
    results = load_results(args.results)
    readme = ROOT / "README.rst"
    outputs = {HERE / "README.md": markdown(results),
               readme: replace_section(readme.read_text(), readme_section(results))}
    stale = [path for path, text in outputs.items()
             if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"out of date: {path.relative_to(ROOT)} (run benchmarks/write_results.py)")
        return 1 if stale else 0
    for path in stale:
        path.write_text(outputs[path])
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
