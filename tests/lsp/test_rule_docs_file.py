"""Issue 15 point 3: the rule-docs file is written in a private directory, never at a
predictable name in the shared temporary directory, and never through a planted link."""
import os
import stat
import tempfile

from tfperf_lsp.lsp.features import commands
from tfperf_lsp.rules import rule_by_code


def test_without_a_usable_cache_dir_the_docs_go_to_a_private_temporary_dir(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the cache directory should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    monkeypatch.setattr(commands, "_PRIVATE_DOCS", None)
    path = commands._docs_file(rule_by_code("TFP101"))
    folder = os.path.dirname(path)
    assert folder != tempfile.gettempdir()
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert open(path, encoding="utf-8").read().startswith("# TFP101")


def test_a_planted_link_is_replaced_not_followed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    target = tmp_path / "victim.txt"
    target.write_text("precious")
    rules = tmp_path / "cache" / "tfperf" / "rules"
    rules.mkdir(parents=True, mode=0o700)
    os.symlink(target, rules / "TFP101.md")
    path = commands._docs_file(rule_by_code("TFP101"))
    assert target.read_text() == "precious"
    assert not os.path.islink(path) and open(path, encoding="utf-8").read().startswith("# TFP101")


def test_a_shared_cache_dir_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rules = tmp_path / "cache" / "tfperf" / "rules"
    rules.mkdir(parents=True)
    os.chmod(rules, 0o777)
    monkeypatch.setattr(commands, "_PRIVATE_DOCS", None)
    assert os.path.dirname(commands._docs_file(rule_by_code("TFP101"))) != str(rules)
