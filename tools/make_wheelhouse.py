"""Fill a wheelhouse for an offline image build: every wheel the Dockerfile installs, by hash.

    python tools/make_wheelhouse.py                 # ./wheelhouse, for x86_64 Linux images
    python tools/make_wheelhouse.py --lm            # also gguf, tokenizers and SmolLM2's wheel
    python tools/make_wheelhouse.py --arch aarch64  # for ARM images (a Raspberry Pi, an M1)

Run it on any machine with pip and internet (Linux, macOS or Windows: the wheels are chosen for
the image's platform, not this one's), then copy the checkout with its wheelhouse/ to the build
machine; `docker build .` (or `podman build .`) there needs no network at all, given a local
base image (docs/deployment.md, "Building without a registry").

The locks are universal (uv pip compile --universal), so their environment markers are decided
here for the image: Linux, this architecture, any CPython 3.11 (a marker true for some 3.11
release is kept: Debian bookworm's Python is 3.11.2, the official images' a later one). Each
wheel is downloaded with --no-deps and checked against the lock's hashes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.markers import Marker

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ("runtime.lock", "build.lock")
LM_LOCKS = ("lm.lock", "smollm2.lock")
# The oldest and newest 3.11 releases: a marker on python_full_version holds for one of them
# if it holds for any 3.11 (the locks only compare against single versions).
PYTHONS = ("3.11.0", "3.11.2", "3.11.99")


def _environments(arch: str) -> list[dict[str, str]]:
    return [
        {
            "sys_platform": "linux",
            "platform_system": "Linux",
            "os_name": "posix",
            "platform_machine": arch,
            "platform_python_implementation": "CPython",
            "implementation_name": "cpython",
            "python_version": "3.11",
            "python_full_version": version,
            "implementation_version": version,
        }
        for version in PYTHONS
    ]


def for_the_image(lock_text: str, arch: str) -> str:
    """The lock's entries whose marker holds in the image, with the markers dropped."""
    environments = _environments(arch)
    kept, keep = [], True
    for line in lock_text.splitlines():
        if line and not line[0].isspace() and not line.startswith(("#", "-")):
            requirement, _, marker = line.partition(" ; ")
            if marker:
                marker = marker.removesuffix("\\").strip()
                keep = any(Marker(marker).evaluate(env) for env in environments)
                line = f"{requirement} \\"
            else:
                keep = True
        if keep:
            kept.append(line)
    return "\n".join(kept) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", nargs="?", default=str(ROOT / "wheelhouse"))
    parser.add_argument("--arch", default="x86_64", choices=["x86_64", "aarch64"])
    parser.add_argument("--lm", action="store_true", help="add the WITH_LM=1 variant's wheels")
    args = parser.parse_args(argv)
    dest = Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    platforms = [f"manylinux_2_{minor}_{args.arch}" for minor in range(36, 16, -1)]
    platforms += [f"manylinux2014_{args.arch}", "linux_" + args.arch]
    locks = LOCKS + (LM_LOCKS if args.lm else ())
    with tempfile.TemporaryDirectory() as tmp:
        for name in locks:
            filtered = Path(tmp) / name
            filtered.write_text(
                for_the_image((ROOT / "requirements" / name).read_text(), args.arch)
            )
            command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
            command += ["--require-hashes", "--only-binary=:all:", "--implementation", "cp"]
            command += ["--python-version", "3.11", "--abi", "cp311", "--abi", "abi3"]
            command += ["--abi", "none", "--dest", str(dest), "-r", str(filtered)]
            for platform in platforms:
                command += ["--platform", platform]
            subprocess.run(command, check=True)
    wheels = sorted(dest.glob("*.whl"))
    size = sum(wheel.stat().st_size for wheel in wheels)
    print(f"{len(wheels)} wheels, {size / 1e6:.0f} MB in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
