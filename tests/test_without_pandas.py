"""The command line where pandas is not installed (``pip install .`` brings none).

The test environment has pandas, so these runs build a path without it: every
entry of the interpreter's site-packages linked into a folder, but pandas' and
pyarrow's, and the interpreter started with ``-S`` on that folder alone. Reads,
svmlight and VW inputs need no pandas; tables and ``explain`` say to install it.
"""
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import sklearn_sketch

HIDDEN = ("pandas", "pyarrow")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    sites = {Path(sysconfig.get_paths()[kind]).resolve() for kind in ("purelib", "platlib")}
    for site in sites:
        for entry in site.iterdir():
            if not entry.name.lower().startswith(HIDDEN) and not (folder / entry.name).exists():
                os.symlink(entry, folder / entry.name)
    path = [str(folder)]
    # An editable install finds the package through a .pth hook, which -S skips.
    package_parent = Path(sklearn_sketch.__file__).resolve().parent.parent
    if package_parent not in sites:
        path.insert(0, str(package_parent))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}

    def run(*argv):
        return subprocess.run([sys.executable, "-S", "-m", "sklearn_sketch", *argv],
                              capture_output=True, text=True, env=env, cwd=folder)
    probe = subprocess.run([sys.executable, "-S", "-c", "import pandas"], capture_output=True,
                           env=env)
    assert probe.returncode != 0, "pandas is still importable"
    return run


def _fastq(path, genome, rng, n=300, length=100):
    starts = rng.integers(0, len(genome) - length, n)
    path.write_text("".join(f"@{path.stem}_{i}\n{''.join(genome[s:s + length])}\n+\n"
                            f"{'I' * length}\n" for i, s in enumerate(starts)))


def test_reads_svmlight_and_vw_need_no_pandas(run, tmp_path):
    rng = np.random.default_rng(0)
    genomes = {name: rng.choice(list("ACGT"), 20_000) for name in ("ecoli", "saureus")}
    for name, genome in genomes.items():
        _fastq(tmp_path / f"{name}.fq", genome, rng)
    labelled = [f"{tmp_path / name}.fq:{name}" for name in genomes]
    model = str(tmp_path / "reads.skm")
    done = run("fit", *labelled, "--k", "8", "--quiet", "--output", model)
    assert done.returncode == 0, done.stderr
    done = run("evaluate", "--model", model, *labelled)
    assert done.returncode == 0 and "accuracy\t" in done.stdout, done.stderr
    done = run("predict", "--model", model, str(tmp_path / "ecoli.fq"))
    assert done.returncode == 0 and done.stdout.startswith("ecoli_0\t"), done.stderr
    done = run("compare", "--a", str(tmp_path / "ecoli.fq"), "--b", str(tmp_path / "saureus.fq"),
               "--k", "8", "--quiet", "--format", "json")
    assert done.returncode == 0 and '"more_in_a"' in done.stdout, done.stderr
    (tmp_path / "rows.vw").write_text("1 |w good great\n-1 |w bad awful\n" * 20)
    (tmp_path / "rows.svm").write_text("1 1:1 3:2\n0 2:1 4:1\n" * 20)
    for name in ("rows.vw", "rows.svm"):
        model = str(tmp_path / f"{name}.skm")
        done = run("fit", str(tmp_path / name), "--quiet", "--output", model)
        assert done.returncode == 0, done.stderr
        done = run("evaluate", "--model", model, str(tmp_path / name))
        assert done.returncode == 0 and "accuracy\t1.0000" in done.stdout, done.stderr


def test_tables_say_to_install_pandas(run, tmp_path):
    (tmp_path / "t.csv").write_text("a,b,y\n1,2,x\n3,4,z\n" * 20)
    for argv in (["fit", str(tmp_path / "t.csv"), "--label", "y", "--output",
                  str(tmp_path / "m.skm")],
                 ["explain", str(tmp_path / "t.csv"), "--outlier", "a > 2"]):
        done = run(*argv, "--quiet")
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "error:" in done.stderr and "pandas" in done.stderr and "pip install" in done.stderr
    assert not (tmp_path / "m.skm").exists()
