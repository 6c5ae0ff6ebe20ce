"""Where a job's logs go: a private folder per user, and log files never opened through a link."""

import os
import stat
import tempfile

import pytest

from core.run.job_process import LOG_FOLDER_NAME, is_private_folder, launch_child, log_folder
from core.run.runner import JobRunner


@pytest.fixture
def temp_root(tmp_path, monkeypatch):
    """A temporary folder of the test's own, with no $XDG_RUNTIME_DIR."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    return tmp_path


def test_the_default_log_folder_is_private_to_the_user(temp_root):
    folder = JobRunner(gpu=object()).log_dir
    st = os.lstat(folder)
    assert folder == str(temp_root / f"{LOG_FOLDER_NAME}-{os.getuid()}")
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()
    assert not (temp_root / LOG_FOLDER_NAME).exists()  # the old folder shared by every user


def test_an_open_folder_of_ours_is_closed(temp_root):
    ours = temp_root / f"{LOG_FOLDER_NAME}-{os.getuid()}"
    ours.mkdir(mode=0o777)
    os.chmod(ours, 0o777)
    assert log_folder() == str(ours) and stat.S_IMODE(os.lstat(ours).st_mode) == 0o700


def test_a_link_in_the_folders_place_is_not_followed(temp_root):
    elsewhere = temp_root / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (temp_root / f"{LOG_FOLDER_NAME}-{os.getuid()}").symlink_to(elsewhere)
    folder = log_folder()
    assert os.path.realpath(folder) != str(elsewhere) and is_private_folder(folder)


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_owned_by_someone_else_is_not_used(temp_root):
    theirs = temp_root / f"{LOG_FOLDER_NAME}-{os.getuid()}"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 54321, 54321)
    folder = log_folder()
    assert folder != str(theirs) and is_private_folder(folder)


def test_xdg_runtime_dir_is_used_when_private(temp_root, monkeypatch):
    runtime = temp_root / "run-user"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert log_folder() == str(runtime / LOG_FOLDER_NAME)
    os.chmod(runtime, 0o755)  # not a runtime folder to trust
    assert log_folder() == str(temp_root / f"{LOG_FOLDER_NAME}-{os.getuid()}")


def test_a_log_name_taken_by_a_link_leaves_its_target_alone(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    stem = tmp_path / "job-1-1"
    (tmp_path / "job-1-1.log").symlink_to(victim)
    (tmp_path / "job-1-1-2.samples").symlink_to(victim)
    child = launch_child(str(stem))
    try:
        assert child.log_path == str(tmp_path / "job-1-1-3.log")
        assert child.sample_path == str(tmp_path / "job-1-1-3.samples")
        assert not os.path.islink(child.log_path) and not os.path.islink(child.sample_path)
    finally:
        child.discard()
    assert victim.read_text() == "precious"
    assert not os.path.exists(child.log_path) and not os.path.exists(child.sample_path)
