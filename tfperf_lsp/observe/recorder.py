"""Instruments TensorFlow in the observed process. Imported only there (it imports TensorFlow).

Public APIs first:
- ``tf.function`` is wrapped so that the Python function it traces is our thin wrapper around
  the user's: TensorFlow runs the Python body exactly once per trace, so each run of the
  wrapper is one trace, and it sees the arguments that trace was made for. The Function object
  returned is TensorFlow's own (``experimental_get_tracing_count()`` still works).
- ``tf.data.Dataset.map`` is wrapped the same way; Keras 3 builds its train/predict functions
  with ``tf.function``, so they are recorded too.
- ``keras.Model.fit/evaluate/predict`` are timed, and Keras' step functions (``make_train_function``...)
  wrapped: step times, input waits, --max-steps.
A thin, version-checked adapter covers what has no public hook (see ``_internals``): the
Function, EagerTensor and dataset-iterator classes, reached through the types of public
objects, whose ``__call__``, ``numpy``/``__float__``... and ``__next__`` are timed or counted.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import os
import sys
import threading
import time
import weakref

from tfperf_lsp.observe import sites
from tfperf_lsp.observe.describe import Serials, describe

SUPPORTED = ((2, 16), (2, 21))  # tested on the pinned 2.21
MAX_TRACES = 500                # kept per function; more are counted, not stored
SYNC_METHODS = ("numpy", "__float__", "__int__", "__bool__", "__index__", "__array__")


class Recorder:
    def __init__(self):
        self.lock = threading.RLock()
        self.serials = Serials()
        self.functions: dict[str, dict] = {}   # key -> function record
        self.wrappers: list = []               # (key, serial, weakref to the tf.function)
        self.tf_counts: dict[str, dict[int, int]] = {}  # key -> Function object -> its counter
        self.function_ids = 0
        self.calls: dict[tuple, dict] = {}     # (key, site) -> call timing
        self.site_cache: dict[tuple, tuple] = {}  # (code, line) of a user caller -> (site,)
        self.syncs: dict[tuple, int] = {}      # (site, method) -> count
        self.sync_site_cache: dict[tuple, tuple] = {}  # (code, line) of a user caller of .numpy()... -> (site,)
        self.shape_branches: dict[tuple, dict] = {}  # (key, site) -> Python branch on a static shape while tracing
        self.ag_lines: dict[str, dict[int, tuple[str, int]]] = {}  # autograph file -> its line -> source line
        self.loops: dict[int, dict] = {}       # id(iterator) -> stall record
        self.keras: list[dict] = []
        self.trace_total = 0
        self.fn_serial = 0
        self.local = threading.local()
        self.max_steps: int | None = None
        self.steps_done = 0
        self.started = time.time()
        self.notes: list[str] = []
        self.gpu = False

    # ---- traces ---------------------------------------------------------------------------
    def function_record(self, fn, kind: str) -> tuple[str, dict]:
        target = inspect.unwrap(fn) if callable(fn) else fn
        code = getattr(target, "__code__", None)
        name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or type(target).__name__
        if code is not None:
            path = code.co_filename if code.co_filename.startswith("<") else os.path.abspath(code.co_filename)
            line = code.co_firstlineno
        else:  # a callable object (a Keras model): where the tf.function was made
            site = sites.user_site(sys._getframe(2))
            path, line = site if site else ("<unknown>", 0)
        key = f"{path}:{line}:{name}"
        with self.lock:
            record = self.functions.get(key)
            if record is None:
                record = {"key": key, "name": name, "file": path, "line": line, "kind": kind,
                          "user": sites.classify(path) == sites.USER, "traces": [], "trace_count": 0,
                          "created": {}}
                self.functions[key] = record
        return key, record

    def on_trace(self, key: str, serial: int, signature, args, kwargs) -> None:
        record = self.functions[key]
        try:
            bound = signature.bind_partial(*args, **kwargs) if signature is not None else None
            items = bound.arguments.items() if bound is not None else enumerate(args)
        except TypeError:
            items = enumerate(args)
        described = {}
        for name, value in items:
            if signature is not None and name in signature.parameters and \
                    signature.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL:
                for i, v in enumerate(value):
                    described[f"{name}[{i}]"] = describe(v, self.serials)
            elif signature is not None and name in signature.parameters and \
                    signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
                for k, v in value.items():
                    described[k] = describe(v, self.serials)
            else:
                described[str(name)] = describe(value, self.serials)
        site = sites.user_site(sys._getframe(2))
        with self.lock:
            self.trace_total += 1
            record["trace_count"] += 1
            if len(record["traces"]) < MAX_TRACES:
                record["traces"].append({"site": site, "serial": serial, "args": described,
                                         "t": round(time.time() - self.started, 4)})

    def wrap_traced(self, fn, kind: str):
        """The function TensorFlow will trace in place of ``fn``: runs once per trace."""
        if not callable(fn) or getattr(fn, "_tfperf_key", None):
            return fn
        key, record = self.function_record(fn, kind)
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):
            signature = None
        with self.lock:
            self.fn_serial += 1
            serial = self.fn_serial
        created = sites.user_site(sys._getframe(2))
        if created is not None:
            record["created"][str(serial)] = list(created)
        on_trace = _do_not_convert(self.on_trace)

        local = self.local

        @functools.wraps(fn)
        def traced(*args, **kwargs):
            on_trace(key, serial, signature, args, kwargs)
            outer = getattr(local, "tracing", None)
            local.tracing = key
            try:
                return fn(*args, **kwargs)
            finally:
                local.tracing = outer

        traced._tfperf_key = key
        traced._tfperf_serial = serial
        return traced

    # ---- calls ----------------------------------------------------------------------------
    def time_call(self, function, original, args, kwargs):
        local = self.local
        python_function = getattr(function, "python_function", None)
        key = getattr(python_function, "_tfperf_key", None)
        if key is None:
            return original(function, *args, **kwargs)
        before = self.trace_total
        if getattr(local, "depth", 0):  # a call made while tracing or inside another call
            try:
                return original(function, *args, **kwargs)
            finally:
                # TensorFlow's counter moves only when this function traced, and every trace
                # runs our wrapper; a new Function object traces on its first call.
                if self.trace_total != before:
                    self._read_counter(key, function)
        frame = sys._getframe(2)
        code, line = frame.f_code, frame.f_lineno
        cached = self.site_cache.get((code, line))  # the same call line: no stack walk
        site = cached[0] if cached is not None else sites.user_site(frame)
        if cached is None and sites.classify(code.co_filename) == sites.USER:
            self.site_cache[(code, line)] = (site,)
        local.depth = 1
        start = time.perf_counter()
        try:
            return original(function, *args, **kwargs)
        finally:
            if self.gpu:
                _sync_devices()
            elapsed = time.perf_counter() - start
            local.depth = 0
            traced = self.trace_total != before
            self._add_call(key, site, elapsed, traced)
            if traced:
                self._read_counter(key, function)

    def _read_counter(self, key, function) -> None:
        """TensorFlow's own tracing counter of this Function object, kept after the object is
        gone (a tf.function created per call, a method bound to a short-lived object)."""
        fid = function.__dict__.get("_tfperf_fid")
        if fid is None:
            with self.lock:
                self.function_ids += 1
                fid = self.function_ids
            object.__setattr__(function, "_tfperf_fid", fid)
        try:
            self.tf_counts.setdefault(key, {})[fid] = int(function.experimental_get_tracing_count())
        except Exception:  # noqa: BLE001 - the counter is informative only
            pass

    def _add_call(self, key, site, elapsed, traced) -> None:
        with self.lock:
            stat = self.calls.get((key, site))
            if stat is None:
                self.calls[(key, site)] = {"key": key, "site": site, "first_s": elapsed, "n": 1,
                                           "traced_calls": int(traced), "steady_n": 0, "steady_s": 0.0,
                                           "steady_min_s": None}
                return
            stat["n"] += 1
            if traced:
                stat["traced_calls"] += 1
            else:
                stat["steady_n"] += 1
                stat["steady_s"] += elapsed
                stat["steady_min_s"] = elapsed if stat["steady_min_s"] is None else min(stat["steady_min_s"], elapsed)

    # ---- host syncs -----------------------------------------------------------------------
    def count_sync(self, method: str, frame) -> None:
        code, line = frame.f_code, frame.f_lineno
        cached = self.sync_site_cache.get((code, line))  # the user's own line called: no stack walk
        if cached is not None:
            site = cached[0]
        else:
            site = sites.direct_user_site(frame)
            if sites.classify(code.co_filename) == sites.USER:
                self.sync_site_cache[(code, line)] = (site,)
        if site is not None:
            if method == "__bool__" and sites.branch_kind(site):
                method = "branch"  # if/while/assert on a tensor's value
            key = (site, method)
            with self.lock:
                self.syncs[key] = self.syncs.get(key, 0) + 1

    def shape_read(self, key: str, frame) -> None:
        """A static shape read while tracing ``key``: kept when the user's line is a Python branch
        (the graph then depends on the shape, and a new shape must retrace)."""
        filename = frame.f_code.co_filename
        kind = sites.classify(filename)
        if kind == sites.USER:
            site = (os.path.abspath(filename) if not filename.startswith("<") else filename, frame.f_lineno)
        elif "__autograph_generated_file" in filename:
            site = self.ag_lines.get(filename, {}).get(frame.f_lineno)
            if site is None:
                return
        else:
            return
        branch = sites.branch_kind(site)
        if branch is None:
            return
        record = self.functions.get(key)
        trace = record["trace_count"] if record else 0
        with self.lock:
            stat = self.shape_branches.get((key, site))
            if stat is None:
                self.shape_branches[(key, site)] = {"key": key, "site": list(site), "branch": branch, "traces": 1,
                                                   "_last": trace}
            elif stat["_last"] != trace:
                stat["traces"] += 1
                stat["_last"] = trace

    # ---- input stalls ---------------------------------------------------------------------
    def loop_next(self, iterator, original):
        start = time.perf_counter()
        try:
            return original(iterator)
        finally:
            end = time.perf_counter()
            stat = self.loops.get(id(iterator))
            if stat is None or stat["ref"]() is not iterator:
                site = sites.direct_user_site(sys._getframe(2))
                dataset = getattr(iterator, "_tfperf_dataset_site", None)
                stat = {"ref": weakref.ref(iterator), "site": site, "dataset_site": dataset, "steps": 0,
                        "wait_s": 0.0, "first_wait_s": end - start, "first_end": end, "last_end": end}
                self.loops[id(iterator)] = stat
            else:
                stat["steps"] += 1
                stat["wait_s"] += end - start
                stat["last_end"] = end

    # ---- output ---------------------------------------------------------------------------
    def snapshot(self, status: str, error: str | None = None) -> dict:
        with self.lock:
            for key, _serial, ref in self.wrappers:
                function = ref()
                if function is not None:
                    self._read_counter(key, function)
            tf_counts = {key: sum(counts.values()) for key, counts in self.tf_counts.items()}
            functions = []
            for record in self.functions.values():
                functions.append({**record, "tf_count": tf_counts.get(record["key"])})
            loops = []
            for stat in self.loops.values():
                total = stat["last_end"] - stat["first_end"]
                loops.append({"site": stat["site"], "dataset_site": stat["dataset_site"], "steps": stat["steps"],
                              "wait_s": stat["wait_s"], "total_s": total, "first_wait_s": stat["first_wait_s"]})
            files = {}
            paths = {r["file"] for r in functions} | {c["site"][0] for c in self.calls.values() if c["site"]}
            paths |= {s[0] for s, _ in self.syncs} | {s for _k, (s, _l) in self.shape_branches} | {l["site"][0] for l in loops if l["site"]}
            paths |= {k["site"][0] for k in self.keras if k.get("site")}
            paths |= {k["dataset_site"][0] for k in self.keras if k.get("dataset_site")}
            paths |= {l["dataset_site"][0] for l in loops if l.get("dataset_site")}
            for r in functions:
                paths |= {t["site"][0] for t in r["traces"] if t["site"]}
            for path in paths:
                if sites.classify(path) == sites.USER and os.path.isfile(path):
                    files[path] = _file_sha(path)
            return {
                "format": 1, "status": status, "error": error, "tf": _tf_version(),
                "elapsed_s": round(time.time() - self.started, 3), "gpu": self.gpu,
                "files": files, "functions": functions,
                "calls": list(self.calls.values()),
                "syncs": [{"site": list(site), "method": m, "count": n} for (site, m), n in self.syncs.items()],
                "loops": loops, "keras": self.keras, "notes": self.notes,
                "shape_branches": [{k: v for k, v in b.items() if k != "_last"} for b in self.shape_branches.values()],
            }


_FILE_SHAS: dict[str, str] = {}


def _file_sha(path: str) -> str:
    """Hashed when first needed; the run cached in memory what it saw first."""
    sha = _FILE_SHAS.get(path)
    if sha is None:
        try:
            with open(path, "rb") as f:
                sha = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            sha = ""
        _FILE_SHAS[path] = sha
    return sha


def _tf_version() -> str | None:
    module = sys.modules.get("tensorflow")
    return getattr(module, "__version__", None)


def _do_not_convert(fn):
    """Autograph must not convert the recorder (it converts the wrapper, and through it the
    user's function, as it would without us)."""
    try:
        import tensorflow as tf

        return tf.autograph.experimental.do_not_convert(fn)
    except Exception:  # noqa: BLE001
        return fn


def _sync_devices() -> None:
    try:
        import tensorflow as tf

        tf.test.experimental.sync_devices()
    except Exception:  # noqa: BLE001 - timing without a sync is still a timing
        pass


RECORDER: Recorder | None = None


def install(max_steps: int | None = None) -> Recorder:
    """Import TensorFlow and instrument it (idempotent)."""
    global RECORDER
    if RECORDER is not None:
        return RECORDER
    recorder = RECORDER = Recorder()
    recorder.max_steps = max_steps
    import tensorflow as tf

    version = tuple(int(p) for p in tf.__version__.split(".")[:2] if p.isdigit())
    if not (SUPPORTED[0] <= version <= SUPPORTED[1]):
        recorder.notes.append(f"TensorFlow {tf.__version__} is not among the tested versions "
                              f"({SUPPORTED[0][0]}.{SUPPORTED[0][1]} to {SUPPORTED[1][0]}.{SUPPORTED[1][1]}); "
                              "what could not be instrumented is missing from the report")
    try:
        recorder.gpu = bool(tf.config.list_physical_devices("GPU"))
    except Exception:  # noqa: BLE001
        recorder.gpu = False
    _patch_function(tf, recorder)
    _patch_dataset(tf, recorder)
    _patch_syncs(tf, recorder)
    _patch_shapes(tf, recorder)
    _watch_keras(recorder)
    return recorder


def _patch_function(tf, recorder: Recorder) -> None:
    original = tf.function

    @functools.wraps(original)
    def function(func=None, *args, **kwargs):
        if func is None:
            decorator = original(None, *args, **kwargs)
            return functools.wraps(decorator)(lambda f: _wrap_result(decorator(recorder.wrap_traced(f, "function")), f))
        return _wrap_result(original(recorder.wrap_traced(func, "function"), *args, **kwargs), func)

    def _wrap_result(result, func):
        traced = getattr(result, "python_function", None)
        key = getattr(traced, "_tfperf_key", None)
        if key is not None:
            try:
                recorder.wrappers.append((key, traced._tfperf_serial, weakref.ref(result)))
            except TypeError:
                pass
        return result

    tf.function = function
    # Code that reached tf.function through these modules sees the same wrapper.
    from tensorflow.python.eager.polymorphic_function import polymorphic_function as module

    module_function = module.function
    if module_function is original or getattr(module_function, "__wrapped__", None) is original:
        module.function = function
    try:
        from tensorflow.python.eager import def_function

        if def_function.function is module_function:
            def_function.function = function
    except Exception:  # noqa: BLE001 - the alias module moved: the public symbol is enough
        pass

    cls = type(original(lambda: None))  # the Function class, reached through the public API
    call = cls.__call__
    if not getattr(call, "_tfperf", False):
        def __call__(self, *args, **kwargs):
            return recorder.time_call(self, call, args, kwargs)

        __call__._tfperf = True
        cls.__call__ = __call__


def _patch_dataset(tf, recorder: Recorder) -> None:
    dataset_cls = tf.data.Dataset
    original_map = dataset_cls.map

    @functools.wraps(original_map)
    def map(self, map_func, *args, **kwargs):
        return original_map(self, recorder.wrap_traced(map_func, "map"), *args, **kwargs)

    dataset_cls.map = map

    original_init = dataset_cls.__init__

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        site = sites.user_site(sys._getframe(1), 12)
        if site is not None:
            try:
                object.__setattr__(self, "_tfperf_site", list(site))
            except Exception:  # noqa: BLE001
                pass

    dataset_cls.__init__ = __init__

    original_iter = dataset_cls.__iter__

    def __iter__(self):
        iterator = original_iter(self)
        try:
            object.__setattr__(iterator, "_tfperf_dataset_site", getattr(self, "_tfperf_site", None))
        except Exception:  # noqa: BLE001
            pass
        return iterator

    dataset_cls.__iter__ = __iter__
    iterator_cls = _iterator_class(tf)
    original_next = iterator_cls.__next__

    def __next__(self):
        return recorder.loop_next(self, original_next)

    iterator_cls.__next__ = __next__


def _iterator_class(tf):
    """The class of ``iter(dataset)``: named by its module when it is the expected subclass of
    tf.data.Iterator (no dataset and iterator built at every start), else reached through a
    public object."""
    try:
        from tensorflow.python.data.ops import iterator_ops

        cls = iterator_ops.OwnedIterator
    except Exception:  # noqa: BLE001 - moved: the public way below
        cls = None
    if isinstance(cls, type) and issubclass(cls, tf.data.Iterator):
        return cls
    return type(iter(tf.data.Dataset.range(1)))


def _patch_syncs(tf, recorder: Recorder) -> None:
    tensor_cls = type(tf.constant(0.0))
    for name in SYNC_METHODS:
        owner = next((c for c in tensor_cls.__mro__ if name in c.__dict__), None)
        if owner is None or owner is object:
            continue
        original = owner.__dict__[name]

        def patched(self, *args, _original=original, _name=name, **kwargs):
            recorder.count_sync(_name, sys._getframe(1))
            return _original(self, *args, **kwargs)

        functools.update_wrapper(patched, original)
        setattr(owner, name, patched)


def _patch_shapes(tf, recorder: Recorder) -> None:
    """Static shape reads while a tf.function is traced (TensorShape is what ``tensor.shape``
    gives in a graph), and autograph's map from its generated lines to the user's."""
    shape_cls = type(tf.TensorShape([1]))
    local = recorder.local
    for name in ("__getitem__", "as_list", "__len__", "__iter__"):
        original = shape_cls.__dict__.get(name)
        if original is None:
            continue

        def patched(self, *args, _original=original):
            key = getattr(local, "tracing", None)
            if key is not None:
                recorder.shape_read(key, sys._getframe(1))
            return _original(self, *args)

        functools.update_wrapper(patched, original)
        setattr(shape_cls, name, patched)
    try:
        from tensorflow.python.autograph.impl import api

        convert = api._convert_actual

        def _convert_actual(entity, program_ctx):
            transformed = convert(entity, program_ctx)
            try:
                for location, origin in transformed.ag_source_map.items():
                    source = origin.loc.filename
                    if not source.startswith("<"):
                        source = os.path.abspath(source)
                    recorder.ag_lines.setdefault(location.filename, {})[location.lineno] = (source, origin.loc.lineno)
            except Exception:  # noqa: BLE001 - without the map, branches in converted code are not seen
                pass
            return transformed

        api._convert_actual = _convert_actual
    except Exception as exc:  # noqa: BLE001
        recorder.notes.append(f"autograph's source map is not available ({exc}): shape-driven branches "
                              "are seen only in functions that autograph does not convert")


# ---- Keras ------------------------------------------------------------------------------------
def _watch_keras(recorder: Recorder) -> None:
    """Patch keras.Model once keras is imported (importing it ourselves would slow every run)."""
    if "keras" in sys.modules and hasattr(sys.modules["keras"], "Model"):
        _patch_keras(sys.modules["keras"], recorder)
        return
    sys.meta_path.insert(0, _KerasFinder(recorder))


class _KerasFinder:
    def __init__(self, recorder):
        self.recorder = recorder

    def find_spec(self, name, path=None, target=None):
        if name != "keras":
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        recorder = self.recorder

        def exec_and_patch(module):
            exec_module(module)
            try:
                _patch_keras(module, recorder)
            except Exception as exc:  # noqa: BLE001 - Keras timing is optional
                recorder.notes.append(f"Keras was not instrumented: {exc}")

        spec.loader.exec_module = exec_and_patch
        return spec


def _patch_keras(keras, recorder: Recorder) -> None:
    model_cls = keras.Model
    if getattr(model_cls, "_tfperf", False):
        return
    model_cls._tfperf = True
    for method in ("fit", "evaluate", "predict"):
        original = getattr(model_cls, method)

        def patched(self, *args, _original=original, _method=method, **kwargs):
            site = sites.user_site(sys._getframe(1))
            x = args[0] if args else kwargs.get("x")
            dataset_site = getattr(x, "_tfperf_site", None)
            record = {"site": list(site) if site else None, "method": _method, "wall_s": 0.0, "steps": 0,
                      "first_step_s": None, "steady_step_s": None, "stopped_at_max_steps": False,
                      "dataset_site": dataset_site, "input_steps": 0, "input_wait_s": 0.0, "input_total_s": 0.0,
                      "input_measured": False}
            local = recorder.local
            outer = getattr(local, "keras_run", None)
            local.keras_run = record
            steps: list[float] = []
            record["_steps"] = steps
            start = time.perf_counter()
            try:
                return _original(self, *args, **kwargs)
            finally:
                local.keras_run = outer
                record["wall_s"] = time.perf_counter() - start
                del record["_steps"]
                record.pop("_first_end", None)
                record.pop("_last_end", None)
                record["steps"] = len(steps)
                record["first_step_s"] = steps[0] if steps else None
                record["steady_step_s"] = (sum(steps[1:]) / len(steps[1:])) if len(steps) > 1 else None
                recorder.keras.append(record)

        functools.update_wrapper(patched, original)
        setattr(model_cls, method, patched)
    for maker, attribute in (("make_train_function", "train_function"), ("make_test_function", "test_function"),
                             ("make_predict_function", "predict_function")):
        original_maker = getattr(model_cls, maker, None)
        if original_maker is None:
            continue

        def make(self, *args, _original=original_maker, _attribute=attribute, **kwargs):
            result = _original(self, *args, **kwargs)
            function = getattr(self, _attribute, None)
            if function is not None and not getattr(function, "_tfperf_step", False):
                setattr(self, _attribute, _step_wrapper(recorder, self, function, _attribute))
            return getattr(self, _attribute, None) if result is not None else result

        functools.update_wrapper(make, original_maker)
        setattr(model_cls, maker, make)


def _step_wrapper(recorder: Recorder, model, function, attribute: str):
    """Keras' per-step function, timed. For fit/evaluate over a tf.data iterator, the next element
    is taken in Python (timed: the input wait) and the step runs on it, as Keras itself does for
    Python iterators; otherwise the wait would happen inside the step's graph, out of sight."""
    import tensorflow as tf

    iterator_types = (tf.data.Iterator, tf.distribute.DistributedIterator)
    state = {"split": None}

    def split_step(iterator):
        """The step function that takes one element (Keras' own, from its closure), once its
        trace for the dataset's element spec (None batch, as the graph path traces it) exists."""
        if state["split"] is not None:
            return state["split"]
        state["split"] = False
        try:
            if getattr(model, "steps_per_execution", 1) != 1 or model.distribute_strategy.num_replicas_in_sync != 1:
                return False
            cells = dict(zip(function.__code__.co_freevars, (c.cell_contents for c in function.__closure__ or ())))
            one_step = cells.get("one_step_on_data")
            if one_step is None:
                return False
            inner = getattr(one_step, "__wrapped__", one_step)
            if hasattr(inner, "get_concrete_function"):
                before = recorder.trace_total
                inner.get_concrete_function(iterator.element_spec)
                key = getattr(getattr(inner, "python_function", None), "_tfperf_key", None)
                if key is not None and recorder.trace_total != before:
                    # A trace outside a call: read TensorFlow's counter now, since this Function
                    # may be gone (a new one per fit) before a call or the snapshot reads it.
                    recorder._read_counter(key, inner)
            state["split"] = one_step
        except Exception as exc:  # noqa: BLE001 - Keras internals moved: step times only
            recorder.notes.append(f"input waits inside Keras {attribute} not measured: {type(exc).__name__}: {exc}")
        return state["split"]

    def step(data):
        record = getattr(recorder.local, "keras_run", None)
        if record is None or "_steps" not in record:
            return function(data)
        one_step = split_step(data) if attribute != "predict_function" and isinstance(data, iterator_types) else False
        start = time.perf_counter()
        if one_step:
            element = next(data)  # StopIteration ends the epoch, as Keras' own step raises it
            got = time.perf_counter()
            result = one_step(element)
        else:
            got = start
            result = function(data)
        if recorder.gpu:
            _sync_devices()
        end = time.perf_counter()
        record["_steps"].append(end - start)
        if one_step:
            record["input_measured"] = True
            if "_first_end" not in record:
                record["_first_end"] = end
            else:
                record["input_steps"] += 1
                record["input_wait_s"] += got - start
                record["input_total_s"] = end - record["_first_end"]
        if attribute == "train_function" and recorder.max_steps is not None:
            recorder.steps_done += 1
            if recorder.steps_done >= recorder.max_steps:
                model.stop_training = True
                record["stopped_at_max_steps"] = True
        return result

    step._tfperf_step = True
    return step
