"""The on-disk result cache: keys, persistence, clearing, corrupt files, locations."""
import os

import pytest

from tfperf_lsp.bench import cache as cache_mod
from tfperf_lsp.bench.cache import ResultCache, cache_key, default_cache_dir
from tfperf_lsp.bench.protocol import Device, Job, Result, Variant, error_result

RUN = "def __tfperf_run__():\n    return x\n"
CPU = Device(kind="cpu", name="AMD EPYC", cpu_name="AMD EPYC", cpu_features=["avx2"])


def job(prelude="x = 1\n", rewritten=RUN, **kw):
    return Job(prelude=prelude, variants=[Variant("original", RUN), Variant("rewritten", rewritten)], **kw)


def result(verdict="faster"):
    return Result(verdict=verdict, summary=f"{verdict}!", tf_version="2.21.0", device=CPU)


def test_key_is_stable_and_changes_with_everything_that_changes_a_measurement():
    k = cache_key(job(), CPU, "2.21.0")
    assert k == cache_key(job(), CPU, "2.21.0") and len(k) == 64
    others = {
        cache_key(job(prelude="x = 2\n"), CPU, "2.21.0"),
        cache_key(job(rewritten=RUN + "# edit\n"), CPU, "2.21.0"),
        cache_key(job(inputs="x: float32[8]"), CPU, "2.21.0"),
        cache_key(job(budget_s=1.0), CPU, "2.21.0"),
        cache_key(job(), Device(kind="cpu", name="Intel", cpu_name="Intel"), "2.21.0"),
        cache_key(job(), CPU, "2.20.0"),
    }
    assert k not in others and len(others) == 6
    # the caller's free-form meta (uri, finding id) does not change the measurement
    assert cache_key(job(meta={"uri": "file:///a.py"}), CPU, "2.21.0") == k


def test_put_get_and_survive_a_restart(tmp_path):
    c = ResultCache(tmp_path)
    k = cache_key(job(), CPU, "2.21.0")
    assert c.get(k) is None
    assert c.put(k, result(), uri="file:///a.py")
    assert c.get(k) == result()
    assert ResultCache(tmp_path).get(k) == result()   # a new server process finds it
    assert len(ResultCache(tmp_path)) == 1


def test_errors_are_not_cached(tmp_path):
    c = ResultCache(tmp_path)
    assert not c.put("k" * 64, error_result("timeout", "timed out"))
    assert c.get("k" * 64) is None


def test_clear_by_file_and_all(tmp_path):
    c = ResultCache(tmp_path)
    ka, kb, kc = (cache_key(job(prelude=f"x = {i}\n"), CPU, "2.21.0") for i in range(3))
    c.put(ka, result(), uri="file:///a.py")
    c.put(kb, result(), uri="file:///b.py")
    c.put(kc, result())
    assert c.clear("file:///a.py") == 1
    assert c.get(ka) is None and c.get(kb) is not None and c.get(kc) is not None
    assert c.clear() == 2
    assert c.get(kb) is None and c.get(kc) is None and len(c) == 0
    assert ResultCache(tmp_path / "missing").clear() == 0


@pytest.mark.parametrize("content", ["{not json", '{"format": 1, "key": "other", "result": {}}',
                                     '{"format": 99}', '{"format": 1, "key": "K", "result": {"verdict": 3}}', ""])
def test_corrupt_or_foreign_files_are_misses_and_are_removed(tmp_path, content):
    c = ResultCache(tmp_path)
    k = cache_key(job(), CPU, "2.21.0")
    c.put(k, result(), uri="file:///a.py")
    path = next(tmp_path.glob(f"*/{k}.json"))
    path.write_text(content.replace("K", k))
    assert c.get(k) is None
    assert not path.exists()
    assert c.put(k, result(), uri="file:///a.py") and c.get(k) == result()


def test_default_location_respects_xdg_and_the_override(monkeypatch, tmp_path):
    monkeypatch.delenv("TFPERF_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "tfperf" / "bench"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "tfperf" / "bench"
    monkeypatch.setenv("TFPERF_CACHE_DIR", str(tmp_path / "mine"))
    assert ResultCache().root == tmp_path / "mine"


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    c = ResultCache(tmp_path)

    def broken_dump(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(cache_mod.json, "dump", broken_dump)
    with pytest.raises(OSError):
        c.put("a" * 64, result())
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    assert os.listdir(tmp_path)  # the folder exists, empty
