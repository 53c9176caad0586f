"""Launcher an editor extension runs with the user's interpreter: ``python server/tfperf_server.py``.

It starts the same server as ``tfperf-lsp``. Plain syntax on purpose (no annotations or
f-strings): run by a too-old Python, it must still say so clearly. If this interpreter has no tfperf installed but a
bundled copy sits in ``server/libs`` (shipped inside an extension), that copy is used. The
interpreter matters: the benchmark worker is started with it, so it should be the environment
that has TensorFlow.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_PYTHON = (3, 10)


def _add_fallback_paths():
    # A checkout: the package sits next to server/. A bundle: it sits in server/libs.
    # Appended, not prepended, so an installed tfperf always wins over the fallback copy.
    for candidate in (os.path.dirname(HERE), os.path.join(HERE, "libs")):
        if os.path.isdir(os.path.join(candidate, "tfperf_lsp")) and candidate not in sys.path:
            sys.path.append(candidate)


def _forget_bundled_pythonpath():
    """tfperf.importStrategy "useBundled": the extension starts us with PYTHONPATH=bundled/libs
    (named again in TFPERF_BUNDLED_LIBS). It is on sys.path now; take it off PYTHONPATH so the
    processes we start (the benchmark worker runs the user's code in the user's environment) do
    not import the bundled libraries instead of the user's own."""
    libs = os.environ.pop("TFPERF_BUNDLED_LIBS", None)
    if not libs:
        return
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != libs]
    if rest:
        os.environ["PYTHONPATH"] = os.pathsep.join(rest)
    else:
        os.environ.pop("PYTHONPATH", None)


def _install_target():
    """What to pip-install: the wheel shipped beside this launcher, or the checkout it is in."""
    import glob

    wheels = sorted(glob.glob(os.path.join(HERE, "..", "bundled", "tfperf-*.whl")))
    if wheels:
        return '"%s"' % os.path.abspath(wheels[-1])
    checkout = os.path.dirname(HERE)
    if os.path.isfile(os.path.join(checkout, "pyproject.toml")):
        return '"%s"' % checkout
    return "tfperf"


def main():
    if sys.version_info < MIN_PYTHON:
        sys.stderr.write(
            "tfperf needs Python %d.%d or newer; %s is Python %s.\n"
            % (MIN_PYTHON[0], MIN_PYTHON[1], sys.executable, sys.version.split()[0])
        )
        return 3
    _add_fallback_paths()
    _forget_bundled_pythonpath()
    try:
        from tfperf_lsp.cli import lsp_main
        from tfperf_lsp.lsp.startup import import_server

        import_server()  # imports pygls & co. now, to fail with a clear message
    except ImportError as exc:  # a dependency such as pygls is missing in this interpreter
        sys.stderr.write(
            "tfperf cannot start with %s: %s.\nInstall it into this environment: "
            "%s -m pip install %s\n" % (sys.executable, exc, sys.executable, _install_target())
        )
        return 4
    return lsp_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
