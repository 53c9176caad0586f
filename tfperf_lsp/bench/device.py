"""Device facts: CPU model and features (pure Python), GPUs (TensorFlow passed in by the worker)."""
from __future__ import annotations

import os
import platform
import subprocess

from .protocol import Device, GpuInfo

# CPU flags that change what a TF rewrite can gain (bf16/fp16 paths, AMX tiles, AVX-512 kernels).
INTERESTING_FLAGS = (
    "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
    "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8", "amx_fp16",
    # aarch64 ("Features" line)
    "asimd", "asimdhp", "fphp", "sve", "sve2", "bf16", "i8mm", "sme",
)


def parse_cpuinfo(text: str) -> tuple[str, list[str]]:
    """(model name, interesting flags) from /proc/cpuinfo text (x86 or aarch64)."""
    name, flags = "", set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if not name and key in ("model name", "hardware", "cpu model", "processor") and value \
                and not value.isdigit():
            name = value
        elif key in ("flags", "features") and not flags:
            flags = set(value.split())
    return " ".join(name.split()), [f for f in INTERESTING_FLAGS if f in flags]


def cpu_info() -> tuple[str, list[str]]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            name, features = parse_cpuinfo(f.read())
    except OSError:
        name, features = "", []
    if not name and platform.system() == "Darwin":
        try:
            name = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True,
                                  text=True, timeout=5).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            name = ""
    return name or platform.processor() or platform.machine() or "unknown CPU", features


def probe(tf) -> Device:
    """Device facts from a worker that has imported TensorFlow as `tf`."""
    cpu_name, features = cpu_info()
    gpus = []
    for i, gpu in enumerate(tf.config.list_physical_devices("GPU")):
        try:
            details = tf.config.experimental.get_device_details(gpu) or {}
        except Exception:  # noqa: BLE001 - details are best-effort (some plugins lack them)
            details = {}
        cc = details.get("compute_capability")
        cc_text = f"{cc[0]}.{cc[1]}" if isinstance(cc, (tuple, list)) and len(cc) == 2 else None
        gpus.append(GpuInfo(index=i, name=str(details.get("device_name") or gpu.name),
                            compute_capability=cc_text))
    first = gpus[0] if gpus else None
    return Device(kind="gpu" if first else "cpu", name=first.name if first else cpu_name,
                  compute_capability=first.compute_capability if first else None,
                  cpu_features=features, gpus=gpus, cpu_name=cpu_name,
                  cpu_count=os.cpu_count() or 0, platform=platform.platform(terse=True))
