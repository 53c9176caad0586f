"""CPU facts from /proc/cpuinfo text (the GPU half needs TensorFlow and a GPU: untested here)."""
from tfperf_lsp.bench.device import cpu_info, parse_cpuinfo

X86 = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu sse sse2 avx avx2 fma avx512f avx512_bf16 amx_bf16 amx_tile amx_int8 avx512_fp16
processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu
"""

ARM = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes sve sve2 bf16 i8mm
CPU implementer\t: 0x41
"""


def test_x86_model_and_interesting_flags():
    name, flags = parse_cpuinfo(X86)
    assert name == "Intel(R) Xeon(R) Platinum 8480+"
    assert flags == ["avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16",
                     "amx_tile", "amx_bf16", "amx_int8"]


def test_arm_features_without_a_model_name():
    name, flags = parse_cpuinfo(ARM)
    assert name == ""
    assert flags == ["asimd", "sve", "sve2", "bf16", "i8mm"]


def test_this_machine_has_a_name():
    name, flags = cpu_info()
    assert name and isinstance(flags, list)
