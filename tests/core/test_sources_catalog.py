"""The Qt-free model catalogue the app's picker lists: torchvision, timm and Hugging Face."""
import sys

from core.models.catalog import load_model_catalogue, search


def test_the_three_catalogues_are_listed_with_families_and_buildability():
    catalogue = load_model_catalogue()
    assert not catalogue.errors
    by_source = {e.source: e for e in catalogue.entries}
    assert by_source["resnet18"].family == "classification"
    assert by_source["fasterrcnn_mobilenet_v3_large_320_fpn"].family == "detection"
    assert by_source["raft_small"].family == "optical flow"
    assert by_source["timm:resnet50"].family == "resnet" and by_source["timm:resnet50"].catalogue == "timm"
    for model_type, modality in (("bert", "text"), ("t5", "text encoder-decoder"), ("vit", "vision"),
                                 ("whisper", "audio"), ("clip", "text+vision")):
        entry = by_source[f"hf:{model_type}"]
        assert (entry.family, entry.buildable) == (modality, True), entry
    llava = by_source["hf:llava"]
    assert not llava.buildable and "multimodal" in llava.note
    assert not by_source["hf:encoder-decoder"].buildable


def test_search_ranks_exact_names_first_and_filters():
    catalogue = load_model_catalogue()
    first = catalogue.search("resnet50", limit=3)
    assert [e.source for e in first[:2]] == ["resnet50", "timm:resnet50"]
    assert all(e.catalogue == "hf" for e in catalogue.search("bert", catalogue="hf"))
    assert catalogue.search("bert", catalogue="hf")[0].source == "hf:bert"
    assert {e.family for e in catalogue.search("detection", catalogue="torchvision")} >= {"detection"}
    assert all(e.buildable for e in catalogue.search("llama", buildable_only=True))
    assert search(catalogue.entries, "timm convnext_tiny")[0].source == "timm:convnext_tiny"


def test_a_missing_package_leaves_its_catalogue_out_with_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "timm", None)
    catalogue = load_model_catalogue(("torchvision", "timm"))
    assert "pip install timm" in catalogue.errors["timm"]
    assert catalogue.entries and all(e.catalogue == "torchvision" for e in catalogue.entries)
