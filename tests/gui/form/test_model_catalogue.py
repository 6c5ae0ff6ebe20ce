"""The model list fills in two steps: torch's catalogue (the window is ready to run), then the
timm and Hugging Face names, which take seconds to tens of seconds to import."""
from __future__ import annotations

from gui.form.model_panel import ModelPanel
from gui.run import catalog_loader


def test_more_models_are_appended_without_duplicates(qtbot):
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.set_models(("resnet18", "alexnet"))
    panel.add_models(("timm:resnet50", "resnet18", "hf:bert"))
    assert panel.names.stringList() == ["resnet18", "alexnet", "timm:resnet50", "hf:bert"]


def test_the_catalogue_arrives_before_the_slow_names(qtbot, monkeypatch):
    from core.catalog import Catalog

    order = []
    monkeypatch.setattr(catalog_loader, "load_catalog", lambda: order.append("torch") or Catalog(backends=("eager",)))
    monkeypatch.setattr(catalog_loader, "load_more_models", lambda: order.append("more") or ("timm:x",))
    loader = catalog_loader.CatalogLoader()
    got = []
    loader.sig_loaded.connect(lambda c: got.append(("catalog", c.backends)))
    loader.sig_more_models.connect(lambda names: got.append(("more", names)))
    loader.start()
    qtbot.waitUntil(lambda: len(got) == 2, timeout=5000)
    assert order == ["torch", "more"] and got == [("catalog", ("eager",)), ("more", ("timm:x",))]
