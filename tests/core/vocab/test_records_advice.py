"""GraphBreak.advice: torch's hints that say what to change, not those asking for an issue."""

from core.vocab.records import GraphBreak


def test_advice_leaves_out_every_hint_that_asks_for_an_issue():
    hints = (
        "This is likely to be a Dynamo bug. Please report an issue to PyTorch.",
        "It may be possible to write Dynamo tracing rules for this code. Please report an issue to PyTorch if you "
        "encounter this graph break often and it is causing performance issues.",
        "Use torch.cond instead of a Python if.",
        "Please file an issue on GitHub so the PyTorch team can add support for it.",
        "Please report an issue to PyTorch.",
    )
    assert GraphBreak("Data-dependent branching", hints=hints).advice == ("Use torch.cond instead of a Python if.",)
