"""The Examples runner's verdicts (spec/checker/examples_run.py), on made-up manifest rows."""
import json

from spec.checker.examples_run import runtime_seconds, verdict

OK = {"result": "success", "distinctStates": 10}


def test_agree_needs_the_same_result_and_count():
    assert verdict(OK, {"result": "ok", "distinct_states": 10})[0] == "agree"
    assert verdict(OK, {"result": "ok", "distinct_states": 11})[0] == "disagree"
    assert verdict({"result": "success"}, {"result": "ok", "distinct_states": 3})[0] == "agree"


def test_a_violation_or_spec_error_on_a_clean_model_is_blame():
    assert verdict(OK, {"result": "invariant", "violated": "Inv"})[0] == "blamed"
    assert verdict(OK, {"result": "error", "error": "x.tla:1:1: unknown operator P0"})[0] \
        == "blamed"


def test_refusals_and_failures_are_told_apart():
    refused = {"result": "error", "error": "x.tla:3:1: unsupported form of temporal property P"}
    assert verdict(OK, refused)[0] == "refused"
    assert verdict(OK, None)[0] == "unclear"


def test_failures_match_by_kind():
    safety = {"result": "safety failure"}
    assert verdict(safety, {"result": "invariant", "violated": "Inv"})[0] == "agree"
    assert verdict(safety, {"result": "property", "violated": "P"})[0] == "agree"
    assert verdict(safety, {"result": "ok", "distinct_states": 1})[0] == "disagree"
    assert verdict({"result": "liveness failure"}, {"result": "property"})[0] == "agree"
    assert verdict({"result": "deadlock failure"}, {"result": "invariant"})[0] == "disagree"


def test_runtime_field():
    assert runtime_seconds("00:01:05") == 65
    assert runtime_seconds("unknown") is None


def test_summary_counts_shares_and_names_what_did_not_agree():
    from spec.checker.examples_run import summary
    rows = [{"model": "A/a.cfg", "verdict": "agree", "detail": ""},
            {"model": "B/b.cfg", "verdict": "refused", "detail": "b.tla:3:1: unsupported X"},
            {"model": "C/c.cfg", "verdict": "unclear", "detail": "timeout (20 s of CPU)"},
            {"model": "D/d.cfg", "verdict": "agree", "detail": ""},
            {"model": "E/e.cfg", "verdict": "blamed", "detail": "property P"}]
    text = summary(rows)
    assert text.splitlines()[0] == ("5 models: agree 2 (40%), blamed 1 (20%), disagree 0 (0%), "
                                    "refused 1 (20%), unclear 1 (20%)")
    assert "  blamed    E/e.cfg: property P" in text
    assert "  refused   B/b.cfg: b.tla:3:1: unsupported X" in text
    assert "  unclear   C/c.cfg: timeout (20 s of CPU)" in text
    assert "A/a.cfg" not in text


def test_a_module_written_in_another_modules_file_is_found(tmp_path):
    from spec.checker.examples_run import standard_only
    (tmp_path / "Root.tla").write_text(
        "---- MODULE Root ----\nEXTENDS Naturals, Other\n====\n")
    (tmp_path / "Other.tla").write_text(
        "---- MODULE Other ----\nEXTENDS Shared\n====\n---- MODULE Shared ----\n====\n")
    assert standard_only(tmp_path / "Root.tla")
    (tmp_path / "Other.tla").write_text("---- MODULE Other ----\nEXTENDS Shared\n====\n")
    assert not standard_only(tmp_path / "Root.tla")


def test_tlc_tests_runner_reads_expectations_and_judges(tmp_path, capsys):
    """tlc_tests_run on a made-up tlatools tree: the expectation comes from the ExitStatus
    named, else from the violation asserted, else success; ignored tests are left out."""
    from spec.checker.tlc_tests_run import main
    tests, models = tmp_path / "test", tmp_path / "test-model"
    tests.mkdir()
    models.mkdir()
    (models / "Up.tla").write_text("---- MODULE Up ----\nEXTENDS Naturals\nVARIABLE x\n"
                                   "Init == x = 0\nNext == x < 3 /\\ x' = x + 1\n"
                                   "Small == x < 2\n====\n")
    (models / "Up.cfg").write_text("INIT Init\nNEXT Next\n")
    (models / "UpInv.cfg").write_text("INIT Init\nNEXT Next\nINVARIANT Small\n")
    java = {"UpTest": 'super("Up");\nEC.TLC_STATS, "4", "4"',
            "UpCountTest": 'super("Up");\nEC.TLC_STATS, "5", "5"',
            "UpInvTest": 'super("Up", new String[] {"-config", "UpInv.cfg"}, '
                         'ExitStatus.VIOLATION_SAFETY);',
            "UpAssertedTest": 'super("Up", new String[] {"-config", "UpInv.cfg"});\n'
                              'assertTrue(recorder.recorded(EC.TLC_INVARIANT_VIOLATED_BEHAVIOR));',
            "UpBlamedTest": 'super("Up", new String[] {"-config", "UpInv.cfg"});',
            "UpIgnoredTest": '@Ignore\nsuper("Up", new String[] {"-config", "UpInv.cfg"});',
            "UpSimTest": 'super("Up", new String[] {"-simulate"});'}
    for name, body in java.items():
        (tests / f"{name}.java").write_text(f"class {name} {{ {body} }}")
    out = tmp_path / "out.json"
    main([str(tmp_path), "--json", str(out)])
    got = {r["test"].split("/")[-1][:-5]: r["verdict"] for r in json.loads(out.read_text())}
    assert got == {"UpTest": "agree", "UpCountTest": "count", "UpInvTest": "agree",
                   "UpAssertedTest": "agree", "UpBlamedTest": "blamed", "UpSimTest": "skipped"}
    assert "6 tests: " in capsys.readouterr().out
