"""Export: render the registry's promoted versions as an installable op library (kernels_generated)."""
from opforge.exporter.collect import ExportError
from opforge.exporter.library import ExportedOp, ExportResult, export_library

__all__ = ["ExportError", "ExportResult", "ExportedOp", "export_library"]
