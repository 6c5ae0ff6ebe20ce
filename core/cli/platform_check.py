"""Can Qt's xcb platform plugin load here? Checked before the app creates its QApplication.

On a fresh Ubuntu desktop `libxcb-cursor0` (and sometimes a few other X11 libraries) is not
installed; Qt 6's xcb plugin then fails to load and Qt aborts with "Could not load the Qt
platform plugin xcb" and a list of plugins, which tells nobody what to install. This module
finds which shared libraries the plugin (`libqxcb.so`) cannot resolve and says which
Debian/Ubuntu packages provide them. No Qt: the caller passes the plugin's path. Any thread.
"""

from __future__ import annotations

import ctypes.util
import os
import re
import shutil
import subprocess
import sys
from typing import Callable, Iterable

# Libraries Qt 6's xcb plugin needs beyond libc and Qt itself, with the Debian/Ubuntu package
# that installs each (Qt's "X11 requirements" page; Ubuntu 22.04/24.04 package names).
XCB_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
}

# What Qt 6's libqxcb.so links beyond Qt (ldd of PySide6 6.11's plugin): looked up by name
# when ldd is not there to ask.
XCB_REQUIRED = (
    "libxcb-cursor.so.0",
    "libxcb-icccm.so.4",
    "libxcb-keysyms.so.1",
    "libxcb-image.so.0",
    "libxcb-render-util.so.0",
    "libxcb-util.so.1",
    "libxkbcommon-x11.so.0",
    "libxkbcommon.so.0",
    "libxcb-xkb.so.1",
    "libxcb-randr.so.0",
    "libxcb-shape.so.0",
    "libxcb-shm.so.0",
    "libxcb-sync.so.1",
    "libxcb-xfixes.so.0",
    "libxcb-render.so.0",
    "libxcb.so.1",
    "libX11-xcb.so.1",
)

_NOT_FOUND = re.compile(r"^\s*(\S+)\s*=>\s*not found", re.MULTILINE)


def platform_would_be_xcb(environ: dict | None = None, platform: str | None = None) -> bool:
    """True when Qt would load the xcb plugin: on Linux, QT_QPA_PLATFORM unset or naming xcb
    first, and not a Wayland session (where Qt 6 picks its wayland plugin first)."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return False
    requested = (environ.get("QT_QPA_PLATFORM") or "").strip()
    if requested:
        return requested.split(";")[0].split(":")[0].strip() == "xcb"
    wayland = environ.get("XDG_SESSION_TYPE", "").lower() == "wayland" and bool(environ.get("WAYLAND_DISPLAY"))
    return not wayland


def ldd_missing(library: str, run: Callable[[list[str]], str] | None = None) -> list[str] | None:
    """Shared libraries `library` needs that the dynamic loader cannot find, read from
    `ldd` (which follows every dependency, and their RUNPATHs); None when ldd cannot be run."""
    if run is None:
        if shutil.which("ldd") is None:
            return None

        def run(cmd: list[str]) -> str:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout

    try:
        output = run(["ldd", library])
    except (OSError, subprocess.SubprocessError):
        return None
    return list(dict.fromkeys(_NOT_FOUND.findall(output)))


def find_library_missing(
    names: Iterable[str] = XCB_REQUIRED, find: Callable[[str], str | None] = ctypes.util.find_library
) -> list[str]:
    """The libraries of `names` (sonames) that `find` (ctypes.util.find_library) cannot
    find: the fallback when ldd is not available."""
    missing = []
    for soname in names:
        stem = soname[3:].split(".so")[0] if soname.startswith("lib") else soname.split(".so")[0]
        if not find(stem):
            missing.append(soname)
    return missing


def missing_xcb_libraries(
    plugin: str | None,
    ldd: Callable[[str], list[str] | None] = ldd_missing,
    find: Callable[[str], str | None] = ctypes.util.find_library,
) -> list[str]:
    """The shared libraries Qt's xcb plugin at `plugin` cannot load. Asks ldd when it can;
    otherwise (no ldd, no plugin file) looks the known X11 libraries up by name."""
    if plugin and os.path.exists(plugin):
        missing = ldd(plugin)
        if missing is not None:
            return missing
    return find_library_missing(XCB_REQUIRED, find)


def install_command(missing: Iterable[str]) -> str:
    """The apt-get command that installs the packages providing `missing` (known ones)."""
    packages = list(dict.fromkeys(XCB_PACKAGES[m] for m in missing if m in XCB_PACKAGES))
    return f"sudo apt-get install {' '.join(packages)}" if packages else ""


def missing_libraries_message(missing: list[str]) -> str:
    """What to tell the user: which libraries are missing, how to install them, and how to
    profile without a window meanwhile."""
    command = install_command(missing)
    unknown = [m for m in missing if m not in XCB_PACKAGES]
    lines = [
        f"compile-profiler: the window cannot open: Qt's X11 (xcb) platform plugin needs "
        f"{'this library' if len(missing) == 1 else 'these libraries'}, which "
        f"{'is' if len(missing) == 1 else 'are'} not installed: {', '.join(missing)}."
    ]
    if command:
        lines.append(f"  - On Debian/Ubuntu, install {'it' if len(missing) == 1 else 'them'} with:  {command}")
    if unknown:
        lines.append(f"  - To find the package of {', '.join(unknown)}:  apt-file search {unknown[0]}")
    lines += [
        "  - Meanwhile, profile without a window:  python3 main.py profile MODEL --out DIR",
        "  - or render the window offscreen:      QT_QPA_PLATFORM=offscreen python3 main.py MODEL --run "
        "--screenshot out.png",
    ]
    return "\n".join(lines)
