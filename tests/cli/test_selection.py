"""Which files and which rules `tfperf check` runs: excludes, .gitignore, stdin, selectors and
their precedence, per-file ignores, config typos."""
import io
import json
import textwrap

import pytest

from tfperf_lsp.cli import main

CODE = textwrap.dedent(
    """\
    import tensorflow as tf

    @tf.function(experimental_relax_shapes=True)
    def f(x, step):
        print("running", x)
        return x * tf.cast(step, tf.float32)

    for i in range(3):
        f(tf.ones([2]), i)
    """
)  # TFP106 (retrace, safe fix), TFP202 (correctness), TFP101 (retrace, unsafe fix)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(CODE)
    return tmp_path


def codes(capsys, *argv):
    rc = main(["check", "--output-format", "json", *argv])
    entries = json.loads(capsys.readouterr().out)
    return rc, sorted({(e["filename"], e["code"]) for e in entries})


def files(capsys, *argv):
    return sorted({f for f, _ in codes(capsys, *argv)[1]})


# ----------------------------------------------------------------------------- files
def test_a_package_named_env_or_build_is_checked_when_named_and_env_always(project, capsys):
    (project / "rl" / "env").mkdir(parents=True)
    (project / "rl" / "env" / "step.py").write_text(CODE)
    assert files(capsys, "rl") == ["rl/env/step.py"]  # no hard-coded `env` skip any more


def test_default_exclude_is_visible_and_replaceable(project, capsys):
    (project / "build").mkdir()
    (project / "build" / "gen.py").write_text(CODE)
    assert files(capsys, ".") == ["./train.py"]
    assert files(capsys, "--exclude", "nothing", ".") == ["./build/gen.py", "./train.py"]


def test_exclude_and_extend_exclude_from_pyproject_and_command_line(project, capsys):
    (project / "gen").mkdir()
    (project / "gen" / "a.py").write_text(CODE)
    (project / "scripts").mkdir()  # not tests/: rules are silent in test code
    (project / "scripts" / "try_a.py").write_text(CODE)
    (project / "pyproject.toml").write_text('[tool.tfperf]\nextend-exclude = ["gen"]\n')
    assert files(capsys, ".") == ["./scripts/try_a.py", "./train.py"]
    assert files(capsys, "--extend-exclude", "try_*.py", ".") == ["./train.py"]
    # explicitly named files are checked unless --force-exclude, as ruff
    assert files(capsys, "gen/a.py") == ["gen/a.py"]
    assert main(["check", "--force-exclude", "gen/a.py"]) == 2


def test_gitignore_is_respected_unless_told_not_to(project, capsys):
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("scratch/\nlocal_*.py\n")
    (project / "scratch").mkdir()
    (project / "scratch" / "x.py").write_text(CODE)
    (project / "local_try.py").write_text(CODE)
    assert files(capsys, ".") == ["./train.py"]
    assert files(capsys, "--no-respect-gitignore", ".") == ["./local_try.py", "./scratch/x.py", "./train.py"]


def test_nested_gitignore_applies_below_its_folder(project, capsys):
    (project / ".git").mkdir()
    (project / "pkg").mkdir()
    (project / "pkg" / ".gitignore").write_text("gen.py\n")
    (project / "pkg" / "gen.py").write_text(CODE)
    (project / "gen.py").write_text(CODE)
    assert files(capsys, ".") == ["./gen.py", "./train.py"]


def test_stdin_with_a_filename_uses_its_settings(project, capsys, monkeypatch):
    (project / "scripts").mkdir()
    (project / "pyproject.toml").write_text('[tool.tfperf]\nextend-select = ["TFP106"]\n\n'
                                           '[tool.tfperf.per-file-ignores]\n"scripts/*" = ["TFP202"]\n')
    monkeypatch.setattr("sys.stdin", io.StringIO(CODE))
    assert main(["check", "-", "--stdin-filename", "scripts/t.py"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("scripts/t.py:3:14: TFP106")
    assert "TFP202" not in out


def test_stdin_fix_prints_the_fixed_source(project, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(CODE))
    main(["check", "-", "--fix", "--extend-select", "TFP106"])  # opt-in: the example of a safe fix
    out, err = capsys.readouterr()
    assert "@tf.function(reduce_retracing=True)" in out and "TFP101" in err


# ----------------------------------------------------------------------------- rules
@pytest.mark.parametrize(
    "selector, expected",
    [
        ("TFP1", ["TFP101", "TFP106"]),
        ("TFP10", ["TFP101", "TFP106"]),
        ("TFP106", ["TFP106"]),
        ("retrace", ["TFP101", "TFP106"]),
        ("python-side-effect", ["TFP202"]),
        ("TFP", ["TFP101", "TFP106", "TFP202"]),
    ],
)
def test_selectors_are_codes_prefixes_categories_and_names(project, capsys, selector, expected):
    assert [c for _, c in codes(capsys, "--select", selector, "train.py")[1]] == expected


def test_more_specific_selector_wins_within_a_layer(project, capsys):
    assert [c for _, c in codes(capsys, "--select", "retrace", "--ignore", "TFP101", "train.py")[1]] == ["TFP106"]
    assert [c for _, c in codes(capsys, "--ignore", "retrace", "--select", "TFP101", "train.py")[1]] == ["TFP101"]


def test_command_line_select_reenables_what_the_file_ignores(project, capsys):
    (project / "pyproject.toml").write_text('[tool.tfperf]\nignore = ["retrace"]\n')
    assert [c for _, c in codes(capsys, "train.py")[1]] == ["TFP202"]
    assert [c for _, c in codes(capsys, "--select", "retrace", "train.py")[1]] == ["TFP101", "TFP106"]
    assert [c for _, c in codes(capsys, "--extend-select", "TFP101", "train.py")[1]] == ["TFP101", "TFP202"]


def test_extend_ignore_adds_to_the_file(project, capsys):
    (project / "pyproject.toml").write_text('[tool.tfperf]\nignore = ["TFP106"]\n')
    assert [c for _, c in codes(capsys, "--extend-ignore", "TFP202", "train.py")[1]] == ["TFP101"]


def test_per_file_ignores_from_file_and_command_line(project, capsys):
    (project / "scripts").mkdir()
    (project / "scripts" / "t.py").write_text(CODE)
    (project / "pyproject.toml").write_text('[tool.tfperf.per-file-ignores]\n"scripts/*" = ["retrace"]\n')
    assert codes(capsys, "--extend-select", "TFP106", ".")[1] == [
        ("./scripts/t.py", "TFP202"), ("./train.py", "TFP101"), ("./train.py", "TFP106"), ("./train.py", "TFP202"),
    ]
    assert codes(capsys, "--extend-select", "TFP106", "--extend-per-file-ignores", "train.py:TFP1", ".")[1] == [
        ("./scripts/t.py", "TFP202"), ("./train.py", "TFP202"),
    ]


def test_unknown_rule_codes_are_errors_that_name_them(project, capsys):
    assert main(["check", "--select", "TFP999,retrace", "train.py"]) == 2
    assert "TFP999" in capsys.readouterr().err
    (project / "pyproject.toml").write_text('[tool.tfperf]\nignore = ["TFP998"]\n')
    assert main(["check", "train.py"]) == 2
    assert "TFP998" in capsys.readouterr().err


def test_a_typo_in_the_config_warns_with_the_nearest_key(project, capsys):
    (project / "pyproject.toml").write_text('[tool.tfperf]\nselct = ["retrace"]\n')
    assert main(["check", "train.py"]) == 1
    err = capsys.readouterr().err
    assert "unknown key `selct`" in err and "did you mean `select`?" in err
    assert err.count("selct") == 1  # once, not once per file


def test_force_exclude_looks_at_folders_below_the_current_one_only(tmp_path, monkeypatch, capsys):
    project = tmp_path / "build" / "proj"  # a checkout inside a folder named like a default exclude
    (project / "gen").mkdir(parents=True)
    (project / "train.py").write_text(CODE)
    (project / "gen" / "x.py").write_text(CODE)
    monkeypatch.chdir(project)
    assert main(["check", "--force-exclude", "--extend-exclude", "gen", "train.py"]) == 1
    assert main(["check", "--force-exclude", "--extend-exclude", "gen", "gen/x.py"]) == 2
    assert main(["check", "."]) == 1
