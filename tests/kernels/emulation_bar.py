#!/usr/bin/env python3
"""The bar for the CUDA kernel tests under the emulation (kernels/emulation).

Reads ctest's JUnit report and counts the "emulated." tests: how many ran, how many skipped,
and why. A test skipped for want of a GPU means the emulation build lost a test that it
should execute, so that fails the run. Usage: emulation_bar.py CTEST_JUNIT.xml
"""
import sys
import xml.etree.ElementTree as ET


def main(path: str) -> int:
    cases = [c for c in ET.parse(path).getroot().iter("testcase")
             if c.get("name", "").startswith("emulated.")]
    if not cases:
        print("emulated kernel tests: none in the report (is KVSCOPE_CUDA_EMULATION on?)")
        return 1
    ran, skipped, failed, for_want_of_gpu = 0, [], [], []
    for c in cases:
        out = "".join(t.text or "" for t in c.iter("system-out"))
        if c.find("skipped") is not None or c.get("status") in ("notrun", "disabled"):
            skipped.append(c.get("name"))
            if "no CUDA device" in out:
                for_want_of_gpu.append(c.get("name"))
        else:
            ran += 1
            if c.find("failure") is not None:
                failed.append(c.get("name"))
    print(f"emulated kernel tests: {ran} ran ({len(failed)} failed), {len(skipped)} skipped, "
          f"{len(for_want_of_gpu)} of them for want of a GPU")
    for name in skipped:
        print(f"  skipped: {name}")
    for name in for_want_of_gpu:
        print(f"  error: {name} skipped for want of a GPU under the emulation")
    return 1 if for_want_of_gpu else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
