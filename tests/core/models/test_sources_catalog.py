"""The Qt-free model catalog the app's picker lists: torchvision, timm and Hugging Face."""

import sys

from core.models.catalog import load_model_catalog, search


def test_the_three_catalogs_are_listed_with_families_and_buildability():
    catalog = load_model_catalog()
    assert not catalog.errors
    by_source = {e.source: e for e in catalog.entries}
    assert by_source["resnet18"].family == "classification"
    assert by_source["fasterrcnn_mobilenet_v3_large_320_fpn"].family == "detection"
    assert by_source["raft_small"].family == "optical flow"
    assert by_source["timm:resnet50"].family == "resnet" and by_source["timm:resnet50"].catalog == "timm"
    for model_type, modality in (
        ("bert", "text"),
        ("t5", "text encoder-decoder"),
        ("vit", "vision"),
        ("whisper", "audio"),
        ("clip", "text+vision"),
    ):
        entry = by_source[f"hf:{model_type}"]
        assert (entry.family, entry.buildable) == (modality, True), entry
    llava = by_source["hf:llava"]
    assert not llava.buildable and "multimodal" in llava.note
    assert not by_source["hf:encoder-decoder"].buildable


def test_search_ranks_exact_names_first_and_filters():
    catalog = load_model_catalog()
    first = catalog.search("resnet50", limit=3)
    assert [e.source for e in first[:2]] == ["resnet50", "timm:resnet50"]
    assert all(e.catalog == "hf" for e in catalog.search("bert", catalog="hf"))
    assert catalog.search("bert", catalog="hf")[0].source == "hf:bert"
    assert {e.family for e in catalog.search("detection", catalog="torchvision")} >= {"detection"}
    assert all(e.buildable for e in catalog.search("llama", buildable_only=True))
    assert search(catalog.entries, "timm convnext_tiny")[0].source == "timm:convnext_tiny"


def test_a_missing_package_leaves_its_catalog_out_with_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "timm", None)
    catalog = load_model_catalog(("torchvision", "timm"))
    assert "pip install timm" in catalog.errors["timm"]
    assert catalog.entries and all(e.catalog == "torchvision" for e in catalog.entries)
