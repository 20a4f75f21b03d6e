"""The parser rebuilt from cached tables gives the trees tla's own parser gives."""
import contextlib
import io
import os
from pathlib import Path

import tla
from tla import _lre

from spec.checker import parsecache
from spec.checker.frontend import normalise

ROOT = Path(__file__).resolve().parents[2]
SPECS = [ROOT / "spec" / "Kernel.tla", ROOT / "spec" / "Coord.tla",
         *sorted((ROOT / "tests" / "checker" / "specs").glob("*.tla"))[:12]]


def trees(parser):
    out = []
    for path in SPECS:
        text = normalise(path.read_text())
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                out.append(repr(parser.parse(text)))
            except ValueError as exc:
                out.append(f"error {exc}")
    return out


def test_cached_tables_parse_like_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = parsecache.build_parser()          # no cache yet: built, then stored
    stored = list((tmp_path / "spec-checker").glob("tla_tables_*.pickle"))
    assert len(stored) == 1
    loaded = parsecache.build_parser()         # from the stored tables
    assert isinstance(loaded._parser, _lre.GeneratingParser)
    reference = trees(tla._lre.Parser())
    assert trees(built) == reference
    assert trees(loaded) == reference


def test_a_damaged_cache_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = Path(parsecache.cache_path())
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a pickle")
    parser = parsecache.build_parser()
    assert trees(parser)[:2] == trees(tla._lre.Parser())[:2]
    assert path.read_bytes() != b"not a pickle"


def test_trees_are_kept_per_text(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    one = "---- MODULE A ----\nVARIABLE x\nInit == x = 1\n====\n"
    two = one.replace("x = 1", "x = 2")
    first = parsecache.parse(one)
    assert list((tmp_path / "spec-checker" / "trees").glob("*.pickle"))
    assert parsecache.parse(one) == first                 # read back from the folder
    assert parsecache.parse(two) == tla._lre.Parser().parse(two) != first


def test_kept_trees_are_pruned_by_age_and_size(tmp_path, monkeypatch):
    folder = tmp_path / "trees"
    folder.mkdir()
    now = 1_000_000_000.0
    ages = {"new": 0, "day": 86400, "week": 7 * 86400, "old": 40 * 86400}
    for name, age in ages.items():
        path = folder / f"{name}.pickle"
        path.write_bytes(b"x" * 100)
        os.utime(path, (now - age, now - age))
    (folder / "other.txt").write_bytes(b"x" * 1000)   # not a tree: left alone
    parsecache.prune(str(folder), max_bytes=250, max_age=30 * 86400, now=now)
    assert sorted(p.name for p in folder.iterdir()) == ["day.pickle", "new.pickle", "other.txt"]
    # a new tree prunes the folder, and a tree read back counts as used
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    text = "---- MODULE A ----\nVARIABLE x\nInit == x = 1\n====\n"
    kept = Path(parsecache.tree_path(text))
    kept.parent.mkdir(parents=True)
    stale = kept.parent / "stale.pickle"
    stale.write_bytes(b"x")
    os.utime(stale, (1.0, 1.0))
    parsecache.parse(text)
    assert kept.exists() and not stale.exists()
    os.utime(kept, (1.0, 1.0))
    parsecache.parse(text)
    assert kept.stat().st_mtime > 1.0
