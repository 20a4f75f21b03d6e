"""The real repository target: atomic multi-file changes that recover forward after a real
crash, fencing tokens checked by the target, dedupe, lookup, verification by real pytest."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gate import repo
from gate.repo import Repo
from kernel import changes

ROOT = Path(__file__).resolve().parents[2]
FILES = {
    "text.py": "def slugify(s):\n    return '-'.join(s.lower().split())\n",
    "app.py": "import text\n\n\ndef page(t):\n    return '<h1>' + t + '</h1>'\n",
    "test_app.py": "import app\n\n\ndef test_page():\n    assert app.page('x') == '<h1>x</h1>'\n"
                   "\n\ndef test_post_url():\n    if hasattr(app, 'post_url'):\n"
                   "        assert app.post_url('A b') == '/p/a-b'\n",
}
POST_URL = "\n\ndef post_url(t):\n    return '/p/' + text.slugify(t)\n"


@pytest.fixture
def target(tmp_path: Path) -> Repo:
    for path, text in FILES.items():
        (tmp_path / path).write_text(text)
    return Repo(tmp_path, timeout=60)


def change(r: Repo, extra: dict[str, str | None] | None = None) -> changes.Change:
    tree = r.tree()
    writes = {"app.py": tree["app.py"] + POST_URL, "urls.py": "ROOT = '/p/'\n",
              **(extra or {})}
    c, premises = changes.plan(tree, "post_url", writes, tests=["test_app.py"])
    assert set(premises) >= {"file:app.py", "file:urls.py", "def:slugify", "def:post_url",
                             "test:test_app.py"}
    return c


def test_apply_lookup_dedupe(target: Repo):
    c = change(target)
    assert target.lookup(c) == "before"
    assert target.apply(c, token=5) == "applied"
    assert target.lookup(c) == "after"
    assert target.apply(c, token=5) == "deduplicated"
    assert not list(target.root.glob(".*.tmp-*"))


def test_another_change_with_the_same_after_images_is_not_this_one_landed(target: Repo):
    """Two units write the same lines; only the second lands. The first was never applied:
    its lookup must not say "after" (the kernel would commit it, executed=true, on the
    strength of someone else's write), nor may a resend of it be taken as a duplicate. A
    target that keeps no images can only judge by the files (journaled=False)."""
    mine = change(target)
    tree = target.tree()
    theirs, _ = changes.plan(tree, "post_url_dup", {w.path: w.after for w in mine.writes},
                             tests=["test_app.py"])
    assert theirs.id != mine.id
    assert target.apply(theirs, token=6) == "applied"
    assert target.lookup(mine) == "neither"
    assert target.lookup(mine, journaled=False) == "after"
    with pytest.raises(repo.BeforeImageMismatch):
        target.apply(mine, token=7)


def test_stale_token_is_rejected_by_the_target(target: Repo):
    newer = change(target)
    target.apply(newer, token=9)
    older, _ = changes.plan(target.tree(), "post_url",
                         {"app.py": target.read("app.py") + "\n# late\n"}, ["test_app.py"])
    with pytest.raises(repo.StaleToken):
        target.apply(older, token=3)
    assert "# late" not in target.read("app.py")


def test_before_image_mismatch_is_refused(target: Repo):
    c = change(target)
    target.write_blind("app.py", "x = 1\n")
    with pytest.raises(repo.BeforeImageMismatch):
        target.apply(c, token=1)


def test_a_change_that_edits_its_own_test_is_refused(target: Repo):
    c = change(target, {"test_app.py": "def test_nothing():\n    pass\n"})
    with pytest.raises(repo.RepoError):
        target.apply(c, token=1)
    assert target.read("test_app.py") == FILES["test_app.py"]


def test_a_real_crash_mid_change_recovers_forward(target: Repo):
    c = change(target)
    script = textwrap.dedent(f"""
        import json, os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from gate import repo
        def die(n):
            if n == 1:
                os._exit(17)  # the process dies after the first file is renamed into place
        r = repo.Repo({str(target.root)!r}, crash_hook=die)
        r.apply(repo.Change.from_json(json.loads(sys.argv[1])), token=1)
    """)
    import json
    done = subprocess.run([sys.executable, "-c", script, json.dumps(c.as_json())])
    assert done.returncode == 17
    assert target.lookup(c) == "mixed"
    assert Repo(target.root).recover() == [c.id]
    assert target.lookup(c) == "after"


def test_own_landing_is_not_the_world_moving(target: Repo):
    tree = target.tree()
    c, premises = changes.plan(tree, "post_url", {"app.py": tree["app.py"] + POST_URL},
                            ["test_app.py"])
    target.apply(c, token=1)
    now = target.tree()
    assert changes.facts(now, premises) != premises
    restore = changes.own_landed(now, c, target.befores(c))
    assert changes.facts(now, premises, restore) == premises


def test_verification_runs_real_pytest_and_restore_undoes(target: Repo):
    assert target.verify().outcome == "passed"
    tree = target.tree()
    broken = {"app.py": tree["app.py"] + "\n\ndef post_url(t):\n    return text.slug(t)\n"}
    c, _ = changes.plan(tree, "post_url", broken, ["test_app.py"])
    target.apply(c, token=1)
    result = target.verify(["test_app.py"])
    assert result.outcome == "failed", result
    target.restore(c)
    assert target.read("app.py") == FILES["app.py"]
    assert target.verify().outcome == "passed"
