"""Symbol digests: blind to formatting, comments, docstrings and other definitions; not to
meaning. Each check was run against a planted bug (see the names) and seen to fail."""

from __future__ import annotations

from kernel import symbols

BASE = '''def slugify(s):
    """Words joined by dashes."""
    return "-".join(s.lower().split())
'''
REFORMATTED = '''# helpers for URLs


def slugify( s ):
    # lower-case, then join
    """Lower-case words, joined by dashes (reworded docstring)."""
    return "-".join(
        s.lower().split()
    )


def unrelated(x):
    return x * 2
'''
SEMANTIC = '''def slugify(s):
    """Words joined by dashes."""
    return "_".join(s.lower().split())
'''
RENAMED = BASE.replace("slugify", "make_slug")


def digest(text: str, name: str = "slugify") -> str:
    return symbols.symbol_digest({"text.py": text}, name)


def test_blind_to_whitespace_comments_docstrings_and_other_definitions():
    assert digest(REFORMATTED) == digest(BASE)


def test_sees_a_body_change_with_the_same_name_and_arity():
    assert digest(SEMANTIC) != digest(BASE)


def test_sees_a_signature_change_and_a_default():
    assert digest(BASE.replace("(s)", "(s, sep)")) != digest(BASE)
    assert digest(BASE.replace("(s)", "(s='x')")) != digest(BASE)


def test_rename_makes_the_old_name_absent():
    assert digest(RENAMED) == symbols.ABSENT
    assert digest(BASE) != symbols.ABSENT


def test_a_second_definition_elsewhere_changes_the_digest():
    tree = {"text.py": BASE}
    assert symbols.symbol_digest({**tree, "urls.py": BASE}, "slugify") != \
        symbols.symbol_digest(tree, "slugify")


def test_unparsable_file_poisons_the_digest():
    assert symbols.symbol_digest({"text.py": BASE, "b.py": "def ("}, "slugify") != digest(BASE)


def test_reads_are_found_from_the_change_code():
    tree = {"text.py": BASE + "\ndef shout(s):\n    return s.upper()\n",
            "app.py": "import text\n\ndef page(t):\n    return t\n"}
    new_app = tree["app.py"] + "\ndef post_url(t):\n    return '/p/' + text.slugify(t)\n"
    assert symbols.reads(tree, {"app.py": new_app}) == {"slugify"}
    assert symbols.written(tree, {"app.py": new_app}) == {"post_url"}


def test_callees_are_followed_when_asked():
    tree = {"text.py": "def low(s):\n    return s.lower()\n\ndef slugify(s):\n"
                       "    return low(s)\n",
            "app.py": "from text import slugify\n"}
    new_app = tree["app.py"] + "\ndef post_url(t):\n    return slugify(t)\n"
    assert symbols.reads(tree, {"app.py": new_app}) == {"slugify"}
    assert symbols.reads(tree, {"app.py": new_app}, callees=1) == {"slugify", "low"}
