"""The model catalogs the app's picker shows: torchvision names (with their family), timm names
(timm.list_models(), with the timm module that defines each) and Hugging Face model types
(transformers' CONFIG_MAPPING keys, with their modality and whether inputs can be built for them).

Qt-free and cheap: names come from the libraries' own tables, no model is built and no model
module is imported, nothing is downloaded. Any thread may call these; importing the libraries
takes a few seconds the first time, so the app calls `load_model_catalog` off the GUI thread.
Each entry's `source` is what `profile MODEL` and `ModelSpec.source` take.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CATALOGS = ("torchvision", "timm", "hf")


@dataclass(frozen=True)
class CatalogEntry:
    """One model a user can pick. `family`: the torchvision family (classification, detection,
    ...), the timm module (resnet, vision_transformer, ...) or the Hugging Face modality (text,
    text encoder-decoder, vision, audio, text+vision, multimodal, other). `buildable` is False
    when the profiler cannot build inputs for it (`note` says why)."""

    source: str
    name: str
    catalog: str
    family: str
    buildable: bool = True
    note: str = ""


@dataclass(frozen=True)
class ModelCatalog:
    """Every catalog that could be read; `errors` maps a catalog that could not (a missing
    package: the message names the command that installs it) to its message."""

    entries: tuple[CatalogEntry, ...] = ()
    errors: dict[str, str] = field(default_factory=dict)

    def search(
        self, query: str = "", catalog: str | None = None, buildable_only: bool = False, limit: int | None = None
    ) -> list[CatalogEntry]:
        return search(self.entries, query, catalog, buildable_only, limit)


def torchvision_entries() -> list[CatalogEntry]:
    from core.models.torchvision_models import families

    return [CatalogEntry(name, name, "torchvision", family) for name, family in sorted(families().items())]


def timm_entries() -> list[CatalogEntry]:
    from core.models.base import TIMM_PREFIX
    from core.models.timm_models import families

    return [CatalogEntry(TIMM_PREFIX + name, name, "timm", module) for name, module in sorted(families().items())]


_NOT_BUILDABLE = {
    "multimodal": "a multimodal language model: its image tokens must match its images, which a config cannot "
    "give; write a model file",
    "other": "inputs other than text, images or audio (or no model class of its own): write a model file",
}


def hf_entries() -> list[CatalogEntry]:
    from core.models.base import HF_PREFIX
    from core.models.hf_config import COMPOSITE_TYPES, model_types
    from core.models.hf_inputs import BUILDABLE, mapped_types, modality_of

    mapped = mapped_types()
    entries = []
    for model_type in model_types():
        modality = modality_of(model_type)
        if model_type in COMPOSITE_TYPES:
            entries.append(
                CatalogEntry(
                    HF_PREFIX + model_type,
                    model_type,
                    "hf",
                    modality,
                    False,
                    "made of other models' configs: save one with save_pretrained and open its folder",
                )
            )
            continue
        if model_type not in mapped:
            entries.append(
                CatalogEntry(
                    HF_PREFIX + model_type,
                    model_type,
                    "hf",
                    modality,
                    False,
                    "no auto class builds it (a part of a composite model): profile the "
                    "composite or write a model file",
                )
            )
            continue
        buildable = modality in BUILDABLE
        entries.append(
            CatalogEntry(
                HF_PREFIX + model_type,
                model_type,
                "hf",
                modality,
                buildable,
                "" if buildable else _NOT_BUILDABLE.get(modality, ""),
            )
        )
    return entries


_READERS = {"torchvision": torchvision_entries, "timm": timm_entries, "hf": hf_entries}


def load_model_catalog(catalogs: tuple[str, ...] = CATALOGS) -> ModelCatalog:
    """Read the catalogs; never raises: a catalog that cannot be read (its package missing
    or broken) is left out with its message in `errors`. Seconds the first time (imports)."""
    from core.models.base import ModelLoadError

    entries: list[CatalogEntry] = []
    errors: dict[str, str] = {}
    for name in catalogs:
        try:
            entries += _READERS[name]()
        except ModelLoadError as exc:
            errors[name] = str(exc)
        except Exception as exc:  # a broken install must not take the app's other catalogs with it
            errors[name] = f"the {name} catalog could not be read: {type(exc).__name__}: {exc}"
    return ModelCatalog(tuple(entries), errors)


def search(
    entries, query: str = "", catalog: str | None = None, buildable_only: bool = False, limit: int | None = None
) -> list[CatalogEntry]:
    """Entries matching every word of `query` (case-insensitive, in the source or the family),
    best first: exact name, then names starting with the query, then names containing it, then
    family matches; shorter names first within each."""
    words = query.lower().split()
    # "timm convnext": the catalog's name narrows, the rest ranks
    text = " ".join(w for w in words if w not in CATALOGS and w.rstrip(":") not in CATALOGS)
    found = []
    for e in entries:
        if catalog and e.catalog != catalog:
            continue
        if buildable_only and not e.buildable:
            continue
        haystack = f"{e.source} {e.family}".lower()
        if not all(w in haystack for w in words):
            continue
        name = e.name.lower()
        rank = 0 if name == text else 1 if name.startswith(text) else 2 if text in e.source.lower() else 3
        found.append((rank, len(name), name, e))
    found.sort(key=lambda item: item[:3])
    result = [item[3] for item in found]
    return result[:limit] if limit is not None else result
