"""The start-up cache of attrs-generated code (tfperf_lsp/lsp/startup.py): a second start compiles
(almost) nothing, builds the same classes, and a cache it cannot trust is ignored."""
import json
import os
import subprocess
import sys
import textwrap

from tfperf_lsp.lsp import startup

# Imports the server through the cache in a fresh process and reports what the cache did and what
# the classes it built do.
SCRIPT = textwrap.dedent(
    """\
    import json
    from tfperf_lsp.lsp import startup
    with startup.quick_imports() as sources:
        import tfperf_lsp.lsp.server
    from lsprotocol import types
    from pygls.protocol import default_converter
    position = types.Position(line=1, character=2)
    converter = default_converter()
    params = converter.structure(
        {"textDocument": {"uri": "file:///a.py"}, "position": {"line": 3, "character": 4}},
        types.HoverParams,
    )
    print(json.dumps({
        "known": len(sources.known), "used": len(sources.used), "misses": sources.misses,
        "repr": repr(position), "equal": position == types.Position(line=1, character=2),
        "differs": position != types.Position(line=1, character=3),
        "unhashable": types.Position.__hash__ is None,  # attrs: eq without frozen is unhashable
        "params_repr": repr(params),
        "params": converter.unstructure(params),
    }))
    """
)


def _start(cache_dir: str) -> dict:
    env = dict(os.environ, TFPERF_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def _cache_file(cache_dir: str) -> str:
    previous = os.environ.get("TFPERF_CACHE_DIR")
    os.environ["TFPERF_CACHE_DIR"] = cache_dir
    try:
        return startup.cache_path()
    finally:
        if previous is None:
            del os.environ["TFPERF_CACHE_DIR"]
        else:
            os.environ["TFPERF_CACHE_DIR"] = previous


def test_second_start_compiles_from_the_cache_and_builds_the_same_classes(tmp_path):
    cache_dir = str(tmp_path / "cache")
    first = _start(cache_dir)
    assert first["known"] == 0 and first["misses"] > 100  # lsprotocol's classes, compiled
    assert os.path.isfile(_cache_file(cache_dir))
    second = _start(cache_dir)
    assert second["known"] >= first["used"] - first["misses"] // 10
    assert second["misses"] < startup.REWRITE_AFTER_MISSES
    for key in ("repr", "equal", "differs", "unhashable", "params", "params_repr"):
        assert second[key] == first[key], key
    assert first["repr"] == "1:2"  # lsprotocol's own __repr__
    assert first["equal"] and first["differs"] and first["unhashable"]
    assert first["params"]["position"] == {"line": 3, "character": 4}


def test_a_cache_others_can_write_is_not_read(tmp_path):
    cache_dir = str(tmp_path / "cache")
    _start(cache_dir)
    path = _cache_file(cache_dir)
    os.chmod(path, 0o666)
    assert _start(cache_dir)["known"] == 0
    os.chmod(path, 0o600)
    os.chmod(os.path.dirname(path), 0o777)
    assert _start(cache_dir)["known"] == 0


def test_a_broken_cache_is_ignored_and_rewritten(tmp_path):
    cache_dir = str(tmp_path / "cache")
    path = _cache_file(cache_dir)
    os.makedirs(os.path.dirname(path), mode=0o700)
    with open(path, "wb") as handle:
        handle.write(b"\x00not marshal data")
    os.chmod(path, 0o600)
    first = _start(cache_dir)
    assert first["known"] == 0 and first["repr"] == "1:2"
    assert _start(cache_dir)["known"] > 100


def test_the_collector_runs_as_before_after_the_imports(tmp_path):
    import gc

    before = gc.get_threshold()
    with startup.quick_imports(str(tmp_path / "c" / "codes.marshal")):
        assert gc.get_threshold() == startup.IMPORT_GC_THRESHOLDS
    assert gc.get_threshold() == before and gc.isenabled()


def test_the_server_module_is_imported_once(monkeypatch):
    """The launcher imports the server early (to fail clearly) and the command line asks again:
    the second time neither reads the cache nor changes the collector."""
    first = startup.import_server()

    def fail(*args, **kwargs):
        raise AssertionError("imported twice")

    monkeypatch.setattr(startup, "quick_imports", fail)
    assert startup.import_server() is first
