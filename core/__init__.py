"""Qt-free profiling engine for torch.compile.

Everything the desktop app shows is computed here and runs headless: model loading
(`models`), compile settings (`config`), the child-process job (`job`), the parent-side
runner (`runner`), the event vocabulary they speak (`events`), result folding (`results`),
statistics (`stats`) and reports (`report`). This package never imports PySide6, pyqtgraph
or `gui`; `tests/core/test_headless.py` proves it.
"""
