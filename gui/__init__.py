"""The desktop app: a thin PySide6 + pyqtgraph layer over `core`.

Nothing here measures or computes a figure; every number shown comes from `core`
(`JobResult.summary()` and the events the runner forwards). Each feature is a file:
`…Panel` widgets, `…Model` table models over core dataclasses, `…Chart` plots.
"""
