"""Where a benchmark's numbers come from: the machine, the date, the command, the versions.

Every benchmark's JSON carries this record under ``"provenance"``, so that the tables
``write_results.py`` builds from the JSON say how they were measured.
"""
import datetime
import os
import platform
import shlex
import sys

#: Commands are written relative to the repository's root when the script is in it.
REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _total_memory_gib():
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def provenance(argv=None):
    """The record of this run: command, UTC date, machine and package versions.

    Parameters
    ----------
    argv : list of str, default=None
        The script's arguments; ``sys.argv`` by default.

    Returns
    -------
    dict
        ``command``, ``date`` (ISO 8601, UTC), ``machine`` (CPU model, cores,
        memory, OS) and ``versions`` (Python and the packages measured).
    """
    import numpy
    import scipy
    import sklearn

    import sklearn_sketch

    argv = sys.argv if argv is None else argv
    script = "python"
    if argv and argv[0]:
        path = os.path.abspath(argv[0])
        inside = os.path.commonpath([path, REPOSITORY]) == REPOSITORY
        script = os.path.relpath(path, REPOSITORY) if inside else path
    versions = {"python": platform.python_version(), "numpy": numpy.__version__,
                "scipy": scipy.__version__, "scikit-learn": sklearn.__version__,
                "sklearn-sketch": sklearn_sketch.__version__}
    try:
        import vowpalwabbit
        versions["vowpalwabbit"] = getattr(vowpalwabbit, "__version__", "installed")
    except ImportError:
        pass
    return {
        "command": "python " + shlex.join([script, *argv[1:]]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"cpu": _cpu_model(), "cores": os.cpu_count(),
                    "memory_gib": _total_memory_gib(),
                    "os": f"{platform.system()} {platform.release()}"},
        "versions": versions,
    }


def join_earlier_run(earlier, record):
    """Add to ``record``'s tables the rows of ``earlier`` (a loaded ``--json`` file)
    that this run did not measure, in the earlier file's order (this run's rows
    in their place, new rows after), in place. A table of ``earlier`` that this
    run has not, or whose columns differ (another number of orders), is left
    out. ``record`` gets ``earlier_run``: the earlier provenance and the rows
    taken from it. Where both have ``results`` (raw numbers by the name that
    opens a table's title, then by cell), the earlier cells of a joined table
    that this run did not measure join them too."""
    taken, joined = [], []
    tables = {(t["title"], tuple(t["columns"])): t for t in record["tables"]}
    for old in earlier["tables"]:
        table = tables.get((old["title"], tuple(old["columns"])))
        if table is None:
            continue
        joined.append(old["title"])
        measured = {tuple(row[:2]): row for row in table["rows"]}
        rows = []
        for row in old["rows"]:
            if tuple(row[:2]) in measured:
                rows.append(measured.pop(tuple(row[:2])))
            else:
                rows.append(row)
                taken.append(f"{old['title']}: {row[0]} ({row[1]})")
        table["rows"] = rows + list(measured.values())
    for name, cells in earlier.get("results", {}).items():
        if name in record.get("results", {}) and any(title.startswith(f"{name}:")
                                                      for title in joined):
            for key, cell in cells.items():
                record["results"][name].setdefault(key, cell)
    record["earlier_run"] = {"provenance": earlier["provenance"], "rows": taken}
