"""What a benchmark must never run: code that reads files, opens connections or downloads data.

Two layers, both fail closed:

- `outside_inputs` (server side, no TensorFlow): scans the statements a plan would run and names
  the calls that reach outside the file (``keras.datasets.*.load_data``, ``tfds.load``, ``open``,
  ``requests``, ``urllib``, file-backed tf.data sources, ...). The plan then refuses and says which
  value to declare with a ``# tfperf:`` comment instead.
- `block_network` (worker side, before any user code): an audit hook that refuses to create
  internet sockets or resolve host names in the job process, so a call the scan missed fails
  with a clear error instead of downloading.
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass

# Qualified-name prefixes of calls that read data from outside the file.
OUTSIDE_PREFIXES = (
    "keras.datasets", "tensorflow.keras.datasets", "tf_keras.datasets", "tensorflow_datasets",
    "requests", "urllib", "http.client", "socket", "ftplib", "smtplib", "subprocess", "shutil",
    "wget", "gdown", "pandas.read_", "PIL.Image.open", "cv2.imread", "cv2.VideoCapture",
    "h5py.File", "pickle.load", "json.load", "numpy.load", "numpy.loadtxt", "numpy.genfromtxt",
    "numpy.fromfile", "os.system", "os.popen", "os.listdir", "os.walk", "glob.glob", "glob.iglob",
    "tensorflow.io.read_file", "tensorflow.io.gfile", "tensorflow.io.TFRecordWriter",
    "tensorflow.data.TFRecordDataset", "tensorflow.data.TextLineDataset",
    "tensorflow.data.FixedLengthRecordDataset", "tensorflow.data.Dataset.list_files",
    "tensorflow.data.Dataset.load", "tensorflow.data.experimental.make_csv_dataset",
    "tensorflow.data.experimental.CsvDataset", "tensorflow.data.experimental.load",
    "tensorflow.keras.utils.get_file", "keras.utils.get_file",
    "tensorflow.keras.utils.image_dataset_from_directory", "keras.utils.image_dataset_from_directory",
    "tensorflow.keras.utils.text_dataset_from_directory", "keras.utils.text_dataset_from_directory",
    "tensorflow.keras.utils.audio_dataset_from_directory", "keras.utils.audio_dataset_from_directory",
    "tensorflow.keras.preprocessing.image_dataset_from_directory",
    "tensorflow.keras.preprocessing.text_dataset_from_directory",
    "tensorflow.keras.models.load_model", "keras.models.load_model", "keras.saving.load_model",
    "tensorflow.saved_model.load", "tensorflow.train.load_checkpoint",
)
OUTSIDE_BUILTINS = frozenset({"open", "input", "exec", "eval", "__import__", "breakpoint"})
# Method names that fetch data whatever their receiver is (``cifar10.load_data()``, ``builder.download``).
OUTSIDE_METHODS = frozenset({"load_data", "download", "download_and_prepare", "urlopen", "read_csv",
                             "load_weights", "restore", "read_text", "read_bytes"})


@dataclass
class OutsideCall:
    call: ast.Call
    what: str          # the call as written, shortened
    line: int          # 1-based
    assigned: list[str]  # names its statement assigns (what to declare instead)


def _is_outside(facts, call: ast.Call) -> bool:
    qualname = facts.qualname(call.func) or ""
    if qualname and any(qualname == p or qualname.startswith(p + ".") or
                        (p.endswith("_") and qualname.startswith(p)) for p in OUTSIDE_PREFIXES):
        return True
    if isinstance(call.func, ast.Name) and call.func.id in OUTSIDE_BUILTINS:
        return call.func.id not in facts.module_defs
    return isinstance(call.func, ast.Attribute) and call.func.attr in OUTSIDE_METHODS


def outside_calls(facts, nodes) -> list[OutsideCall]:
    """Calls inside ``nodes`` (statements or definitions) that read from outside the file."""
    found, seen = [], set()
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Call) and id(node) not in seen and _is_outside(facts, node):
                seen.add(id(node))
                text = ast.unparse(node)
                text = text if len(text) <= 60 else text[:57] + "..."
                found.append(OutsideCall(node, text, node.lineno, _assigned_by(facts, node)))
    found.sort(key=lambda c: c.line)
    return found


def _assigned_by(facts, call: ast.Call) -> list[str]:
    try:
        stmt = facts.statement_of(call)
    except Exception:  # noqa: BLE001 - a stand-in node without a parent
        return []
    targets = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, ast.For):  # (a `with open(...) as f` handle is nothing to declare)
        targets = [stmt.target]
    names = []
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and node.id not in names and node.id != "_":
                names.append(node.id)
    return names


def refusal(calls: list[OutsideCall]) -> str:
    """The user-facing reason, naming the values to declare."""
    first = calls[0]
    names = [n for c in calls for n in c.assigned]
    names = list(dict.fromkeys(names))
    head = (f"the code it would run reads data from outside the file (`{first.what}`, line {first.line}); "
            "a benchmark never opens files, downloads or connects")
    if names:
        example = " ".join(f"{n}=float32[...]" for n in names[:4])
        return f"{head}: declare {', '.join(f'`{n}`' for n in names[:4])} instead with a comment such as `# tfperf: {example}`"
    return f"{head}: declare the inputs it needs with a `# tfperf:` comment, e.g. `# tfperf: x=float32[32,10]`"


# ---------------------------------------------------------------------- worker side
NETWORK_MESSAGE = ("network access is blocked in the benchmark worker: the benchmark runs only the "
                   "finding's statements on synthetic inputs (declare inputs with `# tfperf:`)")
_INTERNET = {2, 10}  # AF_INET, AF_INET6 (numbers: the socket module need not be imported here)


def block_network() -> None:
    """Refuse internet sockets and DNS look-ups in this process from now on (audit hooks cannot
    be removed, so user code cannot turn this off from Python)."""

    def hook(event: str, args: tuple) -> None:
        if event == "socket.__new__" and args and _family(args[1]) in _INTERNET:
            raise PermissionError(NETWORK_MESSAGE)
        if event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
                     "socket.gethostbyaddr", "urllib.Request"):
            raise PermissionError(NETWORK_MESSAGE)
        if event == "socket.connect" and args and _family(getattr(args[0], "family", None)) in _INTERNET:
            raise PermissionError(NETWORK_MESSAGE)

    sys.addaudithook(hook)


def _family(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
