"""The check of Qt's xcb plugin before the app starts: which libraries are missing and what
installs them, with stand-ins for ldd and the library lookup."""

from __future__ import annotations

from core.cli import platform_check as pc

LDD_OUTPUT = """\
\tlinux-vdso.so.1 (0x00007ffc)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x00007f)
\tlibxcb-cursor.so.0 => not found
"""


def test_xcb_is_checked_only_where_qt_would_use_it():
    linux = "linux"
    assert pc.platform_would_be_xcb({}, linux)
    assert pc.platform_would_be_xcb({"QT_QPA_PLATFORM": "xcb"}, linux)
    assert pc.platform_would_be_xcb({"QT_QPA_PLATFORM": "xcb;wayland"}, linux)
    assert not pc.platform_would_be_xcb({"QT_QPA_PLATFORM": "offscreen"}, linux)
    assert not pc.platform_would_be_xcb({"QT_QPA_PLATFORM": "wayland"}, linux)
    assert not pc.platform_would_be_xcb({"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}, linux)
    assert not pc.platform_would_be_xcb({}, "darwin") and not pc.platform_would_be_xcb({}, "win32")


def test_ldd_output_names_the_missing_libraries_once():
    calls = []
    missing = pc.ldd_missing("/venv/libqxcb.so", run=lambda cmd: calls.append(cmd) or LDD_OUTPUT)
    assert calls == [["ldd", "/venv/libqxcb.so"]]
    assert missing == ["libxcb-cursor.so.0", "libxcb-icccm.so.4"]


def test_without_ldd_the_known_libraries_are_looked_up_by_name(tmp_path):
    plugin = tmp_path / "libqxcb.so"
    plugin.write_bytes(b"")
    looked_up = []

    def find(name):
        looked_up.append(name)
        return None if name in ("xcb-cursor", "xkbcommon-x11") else f"lib{name}.so"

    missing = pc.missing_xcb_libraries(str(plugin), ldd=lambda path: None, find=find)
    assert missing == ["libxcb-cursor.so.0", "libxkbcommon-x11.so.0"]
    assert "xcb-icccm" in looked_up and "X11-xcb" in looked_up
    # ldd, when it answers, decides; a plugin that is not there falls back to the names
    assert pc.missing_xcb_libraries(str(plugin), ldd=lambda path: ["libxcb-icccm.so.4"], find=find) == [
        "libxcb-icccm.so.4"
    ]
    assert pc.missing_xcb_libraries(str(tmp_path / "absent.so"), ldd=lambda path: [], find=lambda n: "x") == []


def test_message_says_what_to_install():
    text = pc.missing_libraries_message(["libxcb-cursor.so.0"])
    assert "libxcb-cursor.so.0" in text and "sudo apt-get install libxcb-cursor0" in text
    assert "profile MODEL --out DIR" in text
    text = pc.missing_libraries_message(["libxcb-cursor.so.0", "libxcb-icccm.so.4", "libweird.so.3"])
    assert "sudo apt-get install libxcb-cursor0 libxcb-icccm4" in text and "apt-file search libweird.so.3" in text
    assert pc.install_command(["libweird.so.3"]) == ""
